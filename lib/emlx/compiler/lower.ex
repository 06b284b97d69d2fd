if Code.ensure_loaded?(Nx) do
  defmodule EMLX.Compiler.Lower do
    @moduledoc false
    # Lowering an `Nx.Defn.Expr` to an engine program spec (see
    # EMLX.Compiler.Recorder for the spec and the recording mode).
    #
    # The expression is evaluated as Nx.Defn.Evaluator evaluates it, with
    # `EMLX.Backend`'s callbacks, but on placeholder tensors while the
    # process records: every op the backend implements lowers to the NIF
    # calls the backend makes. Control flow is lowered here:
    #
    #   * `while` — its condition and body are recorded in scopes of their
    #     own over placeholders for the loop state and become one
    #     `{:while, [cond_spec, body_spec, refs]}` node; values of the
    #     enclosing scope the loop reads join the state (the body passes them
    #     through).
    #   * `cond` — the predicates are recorded in the enclosing scope, each
    #     branch in a scope of its own; `{:cond, [preds, branches, operands]}`
    #     computes only the branch taken.
    #   * `hook` and token hooks at the top level: the hooked values become
    #     extra outputs of the program and the callbacks run in Elixir after
    #     it, in the expression's order (inside a while or a cond, and for
    #     `runtime_call`, the defn falls back to Nx.Defn.Evaluator: see
    #     EMLX.Compiler).
    #
    # Anything the backend can only do with data (it calls `EMLX.item/1` and
    # friends at trace time) throws `{:emlx_fallback, reason}`.

    alias Nx.Defn.{Composite, Expr, Tree}
    alias EMLX.Compiler.Recorder
    alias EMLX.Backend, as: B

    @creation_ops [:eye, :iota, :from_binary]
    @list_ops [:concatenate, :stack]
    @indices_ops [:slice, :put_slice]
    @debug Application.compile_env(:emlx, :compiler_debug, false)

    @doc false
    # `{spec, hooks}` for `expr` (devectorized) whose parameters have the
    # templates of `params` (Nx tensors, flattened in parameter order).
    # `quantized` gives, for each parameter, `nil` (a dense tensor) or the
    # static part of its quantization (`EMLX.Compiler.quantized_key/1`): such
    # a parameter is several program inputs (packed weights, scales, biases
    # when present) and its placeholder carries an `EMLX.Quantization.Config`
    # over placeholders, so the backend's `dot` records `quantized_matmul`.
    def lower(expr, params, device, quantized \\ nil) do
      quantized = quantized || Enum.map(params, fn _ -> nil end)
      placeholders = Enum.zip_with(params, quantized, &placeholder(&1, &2, device))

      state = %{
        params: Enum.map(placeholders, fn {_refs, t} -> t end),
        device: device,
        depth: 0,
        hooks: [],
        trace: false
      }

      previous = Process.delete(Recorder.key())
      Recorder.push(Enum.flat_map(placeholders, &elem(&1, 0)))

      try do
        {result, {_cache, state}} = composite_eval(expr, state, [%{}])
        outputs = [result] |> Composite.flatten_list() |> Enum.map(&B.from_nx/1)
        hooks = Enum.reverse(state.hooks)
        hooked = Enum.flat_map(hooks, fn {_fun, value} -> flat_refs(value) end)
        tags = Recorder.tags(outputs ++ hooked)
        scope = Recorder.pop()
        {spec, []} = Recorder.finish(scope, tags)
        debug_check!(spec, Enum.flat_map(placeholders, &elem(&1, 0)))
        {spec, length(outputs), hooks}
      after
        Recorder.abort()
        if previous, do: Process.put(Recorder.key(), previous)
      end
    end

    # `{input_refs, tensor}`: real lazy tensors with the template's storage
    # type and shape that compute nothing (broadcast scalars), and the
    # parameter's tensor over them. A quantized parameter's tensor holds a
    # config whose scales and biases are placeholders too (the order of
    # `input_refs` is EMLX.Compiler's `input_refs/1`).
    defp placeholder(%Nx.Tensor{} = t, nil, device) do
      t = Nx.devectorize(t)
      storage = B.Types.storage(t.type)

      ref =
        without_recording(fn ->
          EMLX.scalar_tensor(0, storage, device) |> EMLX.broadcast_to(t.shape)
        end)

      {[ref], %{Nx.to_template(t) | data: %B{ref: ref}}}
    end

    defp placeholder(%Nx.Tensor{} = t, {:quantized, static, packed, scales, biases}, device) do
      t = Nx.devectorize(t)
      {group_size, bits, mode, transpose, type} = static
      [w, s] = Enum.map([packed, scales], &placeholder_for(&1, device))
      b = if biases, do: placeholder_for(biases, device)

      config = %EMLX.Quantization.Config{
        scales: s,
        biases: b,
        group_size: group_size,
        bits: bits,
        mode: mode,
        transpose: transpose,
        type: type
      }

      refs = if b, do: [w, s, b], else: [w, s]
      {refs, %{Nx.to_template(t) | data: %B{ref: w, quantization: config}}}
    end

    defp placeholder_for(ref_template, device) do
      {type, shape} = ref_template

      without_recording(fn ->
        EMLX.scalar_tensor(0, type, device) |> EMLX.broadcast_to(shape)
      end)
    end

    defp without_recording(fun) do
      stack = Process.delete(Recorder.key())

      try do
        fun.()
      after
        if stack, do: Process.put(Recorder.key(), stack)
      end
    end

    defp flat_refs(value), do: [value] |> Composite.flatten_list() |> Enum.map(&B.from_nx/1)

    ## Evaluation (the shape of Nx.Defn.Evaluator's, memoized per scope)

    defp composite_eval(composite, state, caches) do
      {result, {caches, state}} =
        Composite.traverse(composite, {caches, state}, fn t, {caches, state} ->
          {res, caches, state} = eval(t, state, caches)
          {res, {caches, state}}
        end)

      {result, {caches, state}}
    end

    # A function traced on Nx.Defn.Expr parameters (`eval_fun/3`) keeps its
    # constants and captured tensors as expressions.
    defp eval(%Nx.Tensor{data: %Expr{op: :constant}} = ans, %{trace: true} = state, caches) do
      {ans, caches, state}
    end

    defp eval(%Nx.Tensor{data: %Expr{op: :constant, args: [constant]}} = ans, state, caches) do
      {B.constant(ans, constant, device: state.device), caches, state}
    end

    defp eval(%Nx.Tensor{data: %Expr{op: :metadata, args: [expr, _meta]}}, state, caches) do
      {res, {caches, state}} = composite_eval(expr, state, caches)
      {res, caches, state}
    end

    defp eval(%Nx.Tensor{data: %Expr{id: id, op: op, args: args}} = ans, state, caches) do
      case lookup(caches, id) do
        {:ok, res} ->
          {res, caches, state}

        :error ->
          {res, [cache | rest], state} = eval_apply(op, args, ans, state, caches)
          {res, [Map.put(cache, id, res) | rest], state}
      end
    end

    defp eval(other, state, caches), do: {other, caches, state}

    defp lookup([], _id), do: :error

    defp lookup([cache | rest], id) do
      case cache do
        %{^id => res} -> {:ok, res}
        %{} -> lookup(rest, id)
      end
    end

    defp to_emlx(%Nx.Tensor{data: %B{}} = t, _device), do: t
    defp to_emlx(%Nx.Tensor{} = t, device), do: Nx.backend_copy(t, {B, device: device})
    defp to_emlx(number, _device) when is_number(number), do: Nx.tensor(number, backend: B)

    defp eval_apply(:tensor, [_t], ans, %{trace: true} = state, caches) do
      {ans, caches, state}
    end

    defp eval_apply(:tensor, [t], _ans, state, caches) do
      {to_emlx(t, state.device), caches, state}
    end

    defp eval_apply(:parameter, [i], _ans, state, caches) do
      {Enum.fetch!(state.params, i), caches, state}
    end

    defp eval_apply(:elem, [tuple, i], _ans, state, caches) do
      {tuple, {caches, state}} = composite_eval(tuple, state, caches)
      {elem(tuple, i), caches, state}
    end

    defp eval_apply(:hook, [expr, callback_spec, out_template, _ref], _ans, state, caches) do
      {value, {caches, state}} = composite_eval(expr, state, caches)

      {hooked, fun, caches, state} =
        case callback_spec do
          {:token_hook, hooked_expr, inner_spec} ->
            {hooked, {caches, state}} = composite_eval(hooked_expr, state, caches)
            {hooked, resolve_hook(inner_spec), caches, state}

          spec ->
            {value, resolve_hook(spec), caches, state}
        end

      state =
        case fun do
          nil ->
            state

          {:named, name, default} ->
            if state.depth > 0, do: fallback!("a hook inside a while or a cond")
            %{state | hooks: [{{:named, name, default}, hooked} | state.hooks]}

          fun ->
            if state.depth > 0, do: fallback!("a hook inside a while or a cond")
            %{state | hooks: [{fun, hooked} | state.hooks]}
        end

      result =
        case out_template do
          %Nx.Tensor{} -> value
          _ -> value |> List.wrap() |> Composite.flatten_list() |> List.to_tuple()
        end

      {result, caches, state}
    end

    defp eval_apply(:runtime_call, _args, _ans, _state, _caches) do
      fallback!("Nx.runtime_call/4 runs Elixir inside the defn")
    end

    defp eval_apply(:fun, [args, expr, _mfa], _ans, state, caches) do
      fun =
        case length(args) do
          1 ->
            fn arg1 -> eval_fun(expr, [arg1], state) end

          2 ->
            fn arg1, arg2 -> eval_fun(expr, [arg1, arg2], state) end
        end

      {fun, caches, state}
    end

    defp eval_apply(:while, [initial, _arg, condition, block], _ans, state, caches) do
      {initial, {caches, state}} = composite_eval(initial, state, caches)
      initial_refs = flat_refs(initial)
      templates = Enum.map(initial_refs, &Recorder.template/1)
      outer_tags = Recorder.tags(initial_refs)

      {cond_scope, cond_out} = nested(condition, templates, initial, state)
      {body_scope, body_out} = nested(block, templates, initial, state)

      caps =
        (Recorder.captures(cond_scope) ++ Recorder.captures(body_scope))
        |> Enum.map(&elem(&1, 0))
        |> Enum.uniq()

      n = length(initial_refs)
      pass_through = for k <- 0..(length(caps) - 1)//1, do: {:"$v", :i, n + k}
      cond_scope = with_inputs(cond_scope, caps, cond_scope, body_scope)
      body_scope = with_inputs(body_scope, caps, cond_scope, body_scope)

      {cond_spec, _} =
        Recorder.finish(cond_scope, [Recorder.tag_in(cond_scope, hd(cond_out))], [])

      body_tags = Enum.map(body_out, &Recorder.tag_in(body_scope, &1)) ++ pass_through
      {body_spec, _} = Recorder.finish(body_scope, body_tags, [])

      if @debug do
        check_loop!(cond_spec, body_spec, templates)
      end

      results = Enum.map(templates, &placeholder_for(&1, state.device))
      extra = Enum.map(Enum.drop(elem(body_spec, 0), n), &placeholder_for(&1, state.device))
      Recorder.put_node(:while, [cond_spec, body_spec, outer_tags ++ caps], results ++ extra)
      {rebuild(initial, results), caches, state}
    end

    defp eval_apply(:cond, [clauses, last], _ans, state, caches) do
      {preds, {caches, state}} =
        Enum.map_reduce(clauses, {caches, state}, fn {pred, _}, {caches, state} ->
          {pred, caches, state} = eval(pred, state, caches)
          {B.from_nx(pred), {caches, state}}
        end)

      pred_tags = Recorder.tags(preds)
      bodies = Enum.map(clauses, &elem(&1, 1)) ++ [last]

      branches =
        Enum.map(bodies, fn body ->
          {out, _} =
            in_scope([], fn ->
              composite_eval(body, %{state | depth: state.depth + 1}, [%{} | caches])
            end)

          out_refs = flat_refs(out)
          tags = Recorder.tags(out_refs)
          {Recorder.pop(), tags, out}
        end)

      # The captures of every branch, with their templates: each branch
      # takes them all as its inputs.
      caps =
        branches
        |> Enum.flat_map(fn {scope, _, _} -> Recorder.captures(scope) end)
        |> Enum.uniq_by(&elem(&1, 0))

      specs =
        Enum.map(branches, fn {scope, tags, _} -> elem(Recorder.finish(scope, tags, caps), 0) end)

      if @debug do
        check_branches!(specs)
      end

      {_, _, first_out} = hd(branches)
      out_templates = first_out |> flat_refs() |> Enum.map(&Recorder.template/1)
      results = Enum.map(out_templates, &placeholder_for(&1, state.device))
      Recorder.put_node(:cond, [pred_tags, specs, Enum.map(caps, &elem(&1, 0))], results)
      {rebuild(first_out, results), caches, state}
    end

    defp eval_apply(:block, [struct, in_args, expr, callback], ans, state, caches) do
      {in_args, {caches, state}} =
        Enum.map_reduce(in_args, {caches, state}, fn
          %Nx.Tensor{} = t, {caches, state} ->
            {t, caches, state} = eval(t, state, caches)
            {t, {caches, state}}

          other, acc ->
            {other, acc}
        end)

      {param_prefix, _} = Enum.split_while(in_args, &(not is_list(&1)))
      backend = Nx.Shared.list_impl!(param_prefix)

      out =
        case ans do
          %{type: {:tuple, _}} -> expr
          _ -> ans
        end

      {backend.block(struct, out, in_args, callback), caches, state}
    end

    defp eval_apply(op, args, ans, state, caches) do
      ans = put_in(ans.data.args, args)

      {args, {caches, state}} =
        Tree.apply_args(ans, {caches, state}, fn t, {caches, state} ->
          {res, caches, state} = eval(t, state, caches)
          {res, {caches, state}}
        end)

      {mod, args} =
        cond do
          op in @creation_ops ->
            {B, [ans | args] ++ [[device: state.device]]}

          op in @list_ops ->
            {Nx.Shared.list_impl!(hd(args)), [ans | args]}

          op in @indices_ops ->
            [tensor, indices | _] = args
            {Nx.Shared.list_impl!([tensor | indices]), [ans | args]}

          match?({:tuple, _}, ans.type) ->
            {Nx.Shared.list_impl!(args), args}

          true ->
            {Nx.Shared.list_impl!(args), [ans | args]}
        end

      {apply(mod, op, args), caches, state}
    end

    # The function of a `:fun` node, evaluated where it is called (by the
    # backend: Nx.reduce and friends) in a scope of its own. Called on
    # Nx.Defn.Expr tensors (the backend traces it), it builds an expression.
    defp eval_fun(expr, args, state) do
      params = Enum.map(args, &Nx.to_tensor/1)
      trace = Enum.any?(params, &match?(%Nx.Tensor{data: %Expr{}}, &1))
      {result, _} = composite_eval(expr, %{state | params: params, trace: trace}, [%{}])
      result
    end

    # A while's condition or body in a scope of its own over placeholders
    # for the loop state.
    defp nested(expr, templates, initial, state) do
      refs = Enum.map(templates, &placeholder_for(&1, state.device))
      params = Composite.flatten_list([rebuild(initial, refs)])

      {out, _} =
        in_scope(refs, fn ->
          composite_eval(expr, %{state | params: params, depth: state.depth + 1}, [%{}])
        end)

      out_refs = flat_refs(out)
      _ = Recorder.tags(out_refs)
      {Recorder.pop(), out_refs}
    end

    # Runs `fun` in a new recorder scope whose inputs are `refs`, left open
    # for the caller to tag and pop; an error pops it before it propagates.
    defp in_scope(refs, fun) do
      Recorder.push(refs)

      try do
        fun.()
      rescue
        e ->
          Recorder.pop()
          reraise e, __STACKTRACE__
      catch
        kind, reason ->
          Recorder.pop()
          :erlang.raise(kind, reason, __STACKTRACE__)
      end
    end

    # The captures of a while's two scopes become extra declared inputs, in
    # the shared order `caps` (the loop state after the real state).
    defp with_inputs(scope, caps, cond_scope, body_scope) do
      all = Recorder.captures(cond_scope) ++ Recorder.captures(body_scope)
      templates = Enum.map(caps, fn tag -> all |> List.keyfind(tag, 0) |> elem(1) end)
      n = scope.n_in
      own = scope |> Recorder.captures() |> Enum.with_index()
      position = caps |> Enum.with_index() |> Map.new()

      remap =
        Map.new(own, fn {{tag, _}, k} -> {{:"$v", :c, k}, {:"$v", :i, n + position[tag]}} end)

      vals = Map.new(scope.vals, fn {ref, tag} -> {ref, Map.get(remap, tag, tag)} end)

      nodes = Enum.map(scope.nodes, fn {op, args} -> {op, remap_args(args, remap)} end)

      %{
        scope
        | inputs: scope.inputs ++ templates,
          n_in: n + length(caps),
          caps: [],
          n_caps: 0,
          vals: vals,
          nodes: nodes
      }
    end

    defp remap_args({:"$v", _, _} = tag, remap), do: Map.get(remap, tag, tag)
    defp remap_args(list, remap) when is_list(list), do: Enum.map(list, &remap_args(&1, remap))
    defp remap_args(other, _remap), do: other

    # `composite`'s structure with the given engine tensors as its leaves.
    defp rebuild(composite, refs) do
      {result, []} =
        Composite.traverse(composite, refs, fn t, [ref | rest] ->
          {B.to_nx(ref, Nx.to_template(t)), rest}
        end)

      result
    end

    defp resolve_hook({:fn, fun}), do: fun
    defp resolve_hook({:named, name, callback}), do: {:named, name, callback}

    defp fallback!(reason), do: throw({:emlx_fallback, reason})

    ## compiler_debug invariants

    defp debug_check!({templates, nodes, outputs} = spec, inputs) do
      if @debug do
        n = length(templates)

        if n != length(inputs) do
          raise EMLX.NIFError,
                "EMLX compiler_debug: #{n} program inputs for #{length(inputs)} parameter inputs"
        end

        check_spec!(spec)
        _ = {nodes, outputs}
      end

      :ok
    end

    @doc false
    # Every reference points at an earlier value; every nested spec too.
    def check_spec!({templates, nodes, outputs}) do
      count =
        Enum.reduce(nodes, length(templates), fn {op, args}, count ->
          check_refs!(args, count, op)

          case op do
            :while -> Enum.each(Enum.take(args, 2), &check_spec!/1)
            :cond -> Enum.each(Enum.at(args, 1), &check_spec!/1)
            _ -> :ok
          end

          count + 1
        end)

      _ = count
      check_refs!(outputs, :infinity, :outputs)
      :ok
    end

    defp check_refs!({:ref, i}, count, op) do
      if not is_integer(i) or i < 0 or (count != :infinity and i >= count * 4 + 1024) do
        raise EMLX.NIFError, "EMLX compiler_debug: #{op} reads a value that does not exist (#{i})"
      end
    end

    defp check_refs!({:"$v", _, _} = tag, _count, op) do
      raise EMLX.NIFError, "EMLX compiler_debug: #{op} kept an unnumbered value #{inspect(tag)}"
    end

    defp check_refs!(list, count, op) when is_list(list),
      do: Enum.each(list, &check_refs!(&1, count, op))

    defp check_refs!(_other, _count, _op), do: :ok

    defp check_loop!({cond_t, _, cond_out}, {body_t, _, body_out}, state_templates) do
      n = length(state_templates)

      cond do
        Enum.take(cond_t, n) != state_templates or Enum.take(body_t, n) != state_templates ->
          raise EMLX.NIFError, "EMLX compiler_debug: while scopes disagree on the loop state"

        length(cond_out) != 1 ->
          raise EMLX.NIFError,
                "EMLX compiler_debug: a while condition with #{length(cond_out)} outputs"

        length(body_out) != length(body_t) ->
          raise EMLX.NIFError, "EMLX compiler_debug: a while body does not return its whole state"

        true ->
          :ok
      end
    end

    defp check_branches!([{templates, _, outputs} | rest]) do
      for {t, _, o} <- rest, t != templates or length(o) != length(outputs) do
        raise EMLX.NIFError, "EMLX compiler_debug: cond branches disagree on inputs or outputs"
      end

      :ok
    end
  end
end
