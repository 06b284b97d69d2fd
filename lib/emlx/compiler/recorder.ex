defmodule EMLX.Compiler.Recorder do
  @moduledoc false
  # The recording mode of the low-level call layer: how `EMLX` (the
  # `Nx.Defn` compiler) turns a defn into an engine program spec without a
  # second implementation of every op.
  #
  # While a process records, every lazy NIF call made through `EMLX` (the
  # `deftensor`/`defdevice` wrappers of EMLX.Macro and the hand-written
  # tensor functions of lib/emlx.ex) still runs — on placeholder inputs, so
  # it only builds graph nodes whose shape and dtype the backend can read —
  # and is also appended to the current scope as a spec node
  # `{erlang_name, args}` whose tensor arguments are value-table references.
  # A computing call (`eval`, `item`, `to_blob`, ...) throws
  # `{:emlx_fallback, reason}`: the backend wanted data at trace time.
  #
  # A scope is one program of the spec (the top level, a while's condition
  # or body, a cond branch). Values are tagged while recording — `{:"$v", :i, k}`
  # declared input, `{:"$v", :c, k}` capture of an enclosing scope's value,
  # `{:"$v", :n, j}` the j-th value made by a node — and numbered when the scope is
  # finished (inputs, then captures, then node values, as the spec wants).
  # A tensor that belongs to no scope is a real tensor (a constant captured
  # by the defn): it becomes a `{:constant, [tensor]}` node.
  #
  # The state lives in the process dictionary under @key as a stack of
  # scopes, innermost first.

  @key :emlx_recorder

  @doc false
  def key, do: @key

  @doc false
  def recording?, do: Process.get(@key) != nil

  # The hook: called by the wrappers after a successful lazy NIF call.
  @doc false
  def hook(value, name, args) do
    case Process.get(@key) do
      nil -> value
      stack -> record(stack, name, args, value)
    end
  end

  # The hook of the computing wrappers.
  @doc false
  def needs_data!(name) do
    if Process.get(@key) != nil do
      throw({:emlx_fallback, "the backend reads data at trace time (EMLX.#{name})"})
    end

    :ok
  end

  ## Scopes

  @doc false
  # Opens a scope whose declared inputs are the given real tensors
  # (placeholders), `nil` at the top level or a scope map for nesting.
  def push(inputs) do
    stack = Process.get(@key) || []
    n = length(inputs)

    vals =
      inputs
      |> Enum.with_index()
      |> Map.new(fn {{_dev, ref}, k} -> {ref, {:"$v", :i, k}} end)

    templates = Enum.map(inputs, &template/1)

    scope = %{
      vals: vals,
      inputs: templates,
      n_in: n,
      caps: [],
      n_caps: 0,
      nodes: [],
      n_vals: 0,
      known: %{}
    }

    Process.put(@key, [scope | stack])
    :ok
  end

  @doc false
  # Closes the innermost scope and returns it (to be finished with `finish/3`).
  def pop do
    [scope | rest] = Process.get(@key)

    case rest do
      [] ->
        Process.delete(@key)

      [parent | outer] ->
        # Values of a closed scope must never be seen again: remember them so
        # a later use is caught instead of being taken for a constant.
        parent = %{parent | known: Map.merge(parent.known, scope.known) |> Map.merge(scope.vals)}
        Process.put(@key, [parent | outer])
    end

    scope
  end

  @doc false
  def abort, do: Process.delete(@key)

  @doc false
  # The tags of `tensors` in the current scope (capturing or making constants).
  def tags(tensors) do
    stack = Process.get(@key)
    {tags, stack} = Enum.map_reduce(tensors, stack, &resolve/2)
    Process.put(@key, stack)
    tags
  end

  @doc false
  # Appends a node made here (a pseudo-op: while, cond) whose results are the
  # given real tensors (placeholders with the results' templates).
  def put_node(op, args, results) do
    [scope | outer] = Process.get(@key)
    scope = add_node(scope, {op, args}, results)
    Process.put(@key, [scope | outer])
    :ok
  end

  ## Recording

  defp record(stack, name, args, value) do
    {args, stack} = map_tensors(args, stack)
    [scope | outer] = stack
    scope = add_node(scope, {name, args}, flatten(value))
    Process.put(@key, [scope | outer])
    value
  end

  defp add_node(scope, node, results) do
    {vals, n} =
      Enum.reduce(results, {scope.vals, scope.n_vals}, fn {_dev, ref}, {vals, n} ->
        {Map.put(vals, ref, {:"$v", :n, n}), n + 1}
      end)

    %{scope | nodes: [node | scope.nodes], vals: vals, n_vals: n}
  end

  defp flatten({dev, ref} = t) when is_atom(dev) and is_reference(ref), do: [t]
  defp flatten(tuple) when is_tuple(tuple), do: tuple |> Tuple.to_list() |> flatten()
  defp flatten(list) when is_list(list), do: Enum.flat_map(list, &flatten/1)
  defp flatten(_other), do: []

  defp map_tensors({dev, ref} = t, stack) when is_atom(dev) and is_reference(ref) do
    resolve(t, stack)
  end

  defp map_tensors(list, stack) when is_list(list),
    do: Enum.map_reduce(list, stack, &map_tensors/2)

  defp map_tensors(other, stack), do: {other, stack}

  # The tag of a tensor in the innermost scope.
  defp resolve({_dev, ref} = t, [scope | outer]) do
    case scope.vals do
      %{^ref => tag} ->
        {tag, [scope | outer]}

      %{} ->
        case resolve_outer(t, outer) do
          {:ok, outer_tag, outer} ->
            k = scope.n_caps

            scope = %{
              scope
              | vals: Map.put(scope.vals, ref, {:"$v", :c, k}),
                caps: [{outer_tag, template(t)} | scope.caps],
                n_caps: k + 1
            }

            {{:"$v", :c, k}, [scope | outer]}

          :error ->
            if Map.has_key?(scope.known, ref) do
              raise EMLX.NIFError,
                    "EMLX compiler: a value of a closed scope (a while body or a cond " <>
                      "branch) was used outside it"
            end

            scope = add_node(scope, {:constant, [t]}, [t])
            {Map.fetch!(scope.vals, ref), [scope | outer]}
        end
    end
  end

  defp resolve_outer(_t, []), do: :error

  defp resolve_outer({_dev, ref} = t, [scope | _] = stack) do
    if Map.has_key?(scope.vals, ref) or found_above?(ref, tl(stack)) do
      {tag, stack} = resolve(t, stack)
      {:ok, tag, stack}
    else
      :error
    end
  end

  defp found_above?(_ref, []), do: false

  defp found_above?(ref, [scope | rest]),
    do: Map.has_key?(scope.vals, ref) or found_above?(ref, rest)

  ## Finishing a scope into a spec

  @doc false
  # `{spec, captured}`: the spec of `scope` with `outputs` (real tensors or
  # tags) as its outputs, and the captured values as tags of the enclosing
  # scope, in the order of the spec's extra inputs. `order` (a list of outer
  # tags) fixes that order when several scopes must share one input list.
  def finish(scope, output_tags, order \\ nil) do
    caps = Enum.reverse(scope.caps)
    # `order` may carry the templates ({tag, template}): captures of other
    # scopes that share this input list.
    {order, cap_templates} =
      case order do
        nil -> {Enum.map(caps, &elem(&1, 0)), Map.new(caps)}
        [{{:"$v", _, _}, _} | _] -> {Enum.map(order, &elem(&1, 0)), Map.new(order ++ caps)}
        order -> {order, Map.new(caps)}
      end

    position = order |> Enum.with_index() |> Map.new()
    cap_tags = caps |> Enum.map(&elem(&1, 0)) |> List.to_tuple()
    base = scope.n_in + length(order)

    index = fn
      {:"$v", :i, k} -> k
      {:"$v", :c, k} -> scope.n_in + Map.fetch!(position, elem(cap_tags, k))
      {:"$v", :n, j} -> base + j
    end

    nodes =
      scope.nodes
      |> Enum.reverse()
      |> Enum.map(fn {op, args} -> {op, renumber(args, index)} end)

    templates =
      scope.inputs ++
        Enum.map(order, fn tag ->
          Map.get_lazy(cap_templates, tag, fn -> raise ArgumentError, "unknown capture" end)
        end)

    {{templates, nodes, Enum.map(output_tags, &{:ref, index.(&1)})}, order}
  end

  @doc false
  # The captured outer tags of a scope with their templates.
  def captures(scope), do: Enum.reverse(scope.caps)

  @doc false
  # The tag of a tensor inside a closed scope (its outputs).
  def tag_in(scope, {_dev, ref}), do: Map.fetch!(scope.vals, ref)

  defp renumber({:"$v", _, _} = t, index), do: {:ref, index.(t)}

  defp renumber(list, index) when is_list(list), do: Enum.map(list, &renumber(&1, index))
  defp renumber(other, _index), do: other

  @doc false
  def template(t), do: {EMLX.scalar_type(t), EMLX.shape(t)}
end
