defmodule EMLX.Compiler.Program do
  @moduledoc false
  # An engine program: a spec (EMLX.Compiler.Recorder) compiled once and
  # replayed on new inputs of the same templates.
  #
  # The engine compiles the spec (`EMLX.NIF.program_compile/1`) and replays
  # it on a command queue (`EMLX.NIF.program_run/4`), loops and branches
  # included, without coming back to Elixir. When the loaded NIF has no
  # program functions (an older native library) the spec is replayed here
  # instead: node by node through the same NIF rows, a while's condition read
  # back once per iteration. Both give the same values; only the cost differs.

  defstruct [:spec, :native, :outputs, :bytes]

  @nif EMLX.NIF

  @doc false
  def native?, do: function_exported?(@nif, :program_compile, 1)

  @doc false
  def compile({_templates, _nodes, outputs} = spec) do
    native =
      if native?() do
        case apply(@nif, :program_compile, [spec]) do
          {:ok, program} -> program
          {:error, message} -> raise EMLX.NIFError, message
        end
      end

    %__MODULE__{spec: spec, native: native, outputs: length(outputs), bytes: constant_bytes(spec)}
  end

  @doc false
  # The output tensors for `inputs` (engine tensors, in the templates' order).
  def run(%__MODULE__{native: nil, spec: spec}, inputs, _device) do
    outputs = interpret(spec, inputs)
    # Computed here, so an engine failure surfaces at the call.
    Enum.each(outputs, &EMLX.eval/1)
    outputs
  end

  def run(%__MODULE__{native: program}, inputs, device) do
    {queue, _device} = EMLX.resolve_worker(device)
    ref = make_ref()

    case apply(@nif, :program_run, [program, inputs, queue, ref]) do
      {:ok, outputs} ->
        outputs

      :ok ->
        receive do
          {^ref, {:ok, outputs}} -> outputs
          {^ref, {:error, message}} -> raise EMLX.NIFError, message
        end

      {:error, message} ->
        raise EMLX.NIFError, message
    end
  end

  @doc false
  # The bytes of the constants a spec holds (nested specs included).
  def constant_bytes({_templates, nodes, _outputs}) do
    Enum.reduce(nodes, 0, fn
      {:constant, [t]}, acc ->
        {type, shape} = {EMLX.scalar_type(t), EMLX.shape(t)}
        acc + Tuple.product(shape) * type_bytes(type)

      {:while, [c, b, _]}, acc ->
        acc + constant_bytes(c) + constant_bytes(b)

      {:cond, [_, branches, _]}, acc ->
        acc + Enum.sum(Enum.map(branches, &constant_bytes/1))

      _, acc ->
        acc
    end)
  end

  defp type_bytes(:bool), do: 1
  defp type_bytes({_, bits}), do: max(div(bits, 8), 1)

  ## The Elixir replay

  defp interpret({templates, nodes, outputs}, inputs) do
    if length(inputs) != length(templates) do
      raise ArgumentError,
            "EMLX program: #{length(inputs)} inputs for #{length(templates)} templates"
    end

    values =
      inputs
      |> Enum.with_index()
      |> Map.new(fn {t, i} -> {i, t} end)

    {values, _} = Enum.reduce(nodes, {values, length(inputs)}, &step/2)
    Enum.map(outputs, fn {:ref, i} -> Map.fetch!(values, i) end)
  end

  defp step({:constant, [t]}, {values, n}), do: {Map.put(values, n, t), n + 1}

  defp step({:while, [cond_spec, body_spec, refs]}, {values, n}) do
    state = Enum.map(refs, &fetch(values, &1))
    push(values, n, loop(cond_spec, body_spec, state))
  end

  defp step({:cond, [preds, branches, operands]}, {values, n}) do
    args = Enum.map(operands, &fetch(values, &1))
    {taken, _} = preds |> Enum.map(&fetch(values, &1)) |> pick(branches)
    push(values, n, interpret(taken, args))
  end

  defp step({:elem, [ref, k]}, {values, n}) do
    push(values, n, [Enum.at(List.wrap(fetch(values, ref)), k)])
  end

  defp step({op, args}, {values, n}) do
    args = Enum.map(args, &subst(&1, values))

    case apply(@nif, op, args) do
      {:ok, value} -> push(values, n, flatten(value))
      {:error, message} -> raise EMLX.NIFError, message
    end
  end

  defp loop(cond_spec, body_spec, state) do
    [pred] = interpret(cond_spec, state)

    if EMLX.item(pred) != 0 do
      loop(cond_spec, body_spec, interpret(body_spec, state))
    else
      state
    end
  end

  defp pick([], [last]), do: {last, nil}

  defp pick([pred | preds], [branch | branches]) do
    if EMLX.item(pred) != 0, do: {branch, nil}, else: pick(preds, branches)
  end

  defp push(values, n, results) do
    Enum.reduce(results, {values, n}, fn t, {values, n} -> {Map.put(values, n, t), n + 1} end)
  end

  defp fetch(values, {:ref, i}), do: Map.fetch!(values, i)

  defp subst({:ref, i}, values), do: Map.fetch!(values, i)
  defp subst(list, values) when is_list(list), do: Enum.map(list, &subst(&1, values))
  defp subst(other, _values), do: other

  defp flatten({dev, ref} = t) when is_atom(dev) and is_reference(ref), do: [t]
  defp flatten(tuple) when is_tuple(tuple), do: tuple |> Tuple.to_list() |> flatten()
  defp flatten(list) when is_list(list), do: Enum.flat_map(list, &flatten/1)
end
