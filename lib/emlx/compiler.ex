if Code.ensure_loaded?(Nx) do
  defmodule EMLX.Compiler do
    @moduledoc false
    # The `Nx.Defn.Compiler` behind `EMLX` (the callbacks on `EMLX` delegate
    # here; their documentation is on `EMLX`).
    #
    # `__compile__/4` traces the defn once, lowers it to an engine program
    # (EMLX.Compiler.Lower) and returns a closure that only replays it
    # (EMLX.Compiler.Program). Programs are kept in EMLX.CompileCache under
    # two keys: the call site (function identity, input templates, device,
    # the hooks given), looked up before tracing, and the program's
    # structure (its spec: ops, arguments, shapes, types; constants by
    # value), looked up after tracing, so structurally identical call sites
    # share one program.
    #
    # A defn whose lowering needs data at trace time, or runs Elixir inside
    # the program (`Nx.runtime_call/4`, a hook inside a while or a cond),
    # falls back to Nx.Defn.Evaluator on EMLX.Backend for that defn.

    alias Nx.Defn.Composite
    alias EMLX.Backend, as: B
    alias EMLX.Compiler.{Lower, Program, Recorder}
    alias EMLX.Quantization.Config

    @doc false
    def __jit__(key, vars, fun, args_list, opts) do
      cond do
        EMLX.Compiler.Recorder.recording?() ->
          Nx.Defn.Evaluator.__compile__(key, vars, fun, opts).(args_list)

        Nx.Defn.Compiler.current() != nil ->
          # A jit forced (`on_conflict: :force`) while another defn is traced:
          # its results become constants of that trace, and Nx.Defn.Expr
          # takes only Nx.BinaryBackend tensors as constants.
          compile(key, vars, fun, opts, false).(args_list)
          |> Enum.map(
            &Composite.traverse(&1, fn
              %Nx.Tensor{} = t -> Nx.backend_copy(t, Nx.BinaryBackend)
              other -> other
            end)
          )

        true ->
          compile(key, vars, fun, opts, false).(args_list)
      end
    end

    @doc false
    def __compile__(key, vars, fun, opts) do
      if EMLX.Compiler.Recorder.recording?() do
        # A defn called by a backend op while another defn is lowered: its
        # ops are recorded into the enclosing program as the Evaluator runs
        # them (running a program here would compute on placeholders).
        Nx.Defn.Evaluator.__compile__(key, vars, fun, opts)
      else
        compile(key, vars, fun, opts, true)
      end
    end

    # The closure that runs the defn on a list of lazy parameters. Parameter
    # templates say nothing of quantization (a quantized tensor's template
    # is a dense `{:s, 4}` one), so the program is chosen by the actual
    # parameters' quantization keys (`quantized_key/1`) on each call: with
    # `eager`, the dense program is built now and kept (Nx.Defn.compile: a
    # call with dense parameters looks nothing up); a call with quantized
    # parameters (and every jit call) finds its program in the cache.
    defp compile(key, vars, fun, opts, eager) do
      device = device(opts)
      hooks = Keyword.get(opts, :hooks, %{})
      queue = opts[:command_queue]
      flat_vars = Composite.flatten_list(vars)

      runner_for = fn quantized ->
        compiled_for(quantized, key, vars, fun, flat_vars, device, hooks)
        |> runner(hooks, queue, device, key, vars, fun, opts)
      end

      dense = if eager, do: runner_for.(nil)

      fn [params] ->
        tensors = Enum.map(params, fn param -> param.() end)

        case quantized_keys(tensors) do
          nil when dense != nil -> dense.(tensors)
          quantized -> runner_for.(quantized).(tensors)
        end
      end
    end

    defp compiled_for(quantized, key, vars, fun, flat_vars, device, hooks) do
      build = fn -> build(vars, fun, flat_vars, device, quantized) end

      case site_key(key) do
        nil ->
          {compiled, _bytes} = build.()
          compiled

        site ->
          # The containers' structure too (map keys, tuples): two calls with
          # the same tensors in different containers are different programs.
          templates =
            Enum.map(vars, fn var ->
              Composite.traverse(var, &{&1.type, &1.shape, &1.names, &1.vectorized_axes})
            end)

          EMLX.CompileCache.fetch(
            {:site, site, templates, quantized, device, Map.keys(hooks)},
            build
          )
      end
    end

    @doc false
    # The static part of a tensor's quantization, what its lowering depends
    # on: `{:quantized, {group_size, bits, mode, transpose, type}, packed,
    # scales, biases}` with the `{type, shape}` templates of the engine
    # tensors (`biases` nil when absent); `nil` for a dense tensor.
    def quantized_key(%Nx.Tensor{data: %B{ref: ref, quantization: %Config{} = c}}) do
      static = {c.group_size, c.bits, c.mode, c.transpose, c.type}
      biases = if c.biases, do: Recorder.template(c.biases)
      {:quantized, static, Recorder.template(ref), Recorder.template(c.scales), biases}
    end

    def quantized_key(_tensor), do: nil

    # One key per flat parameter, or nil when none is quantized.
    defp quantized_keys(tensors) do
      keys = Enum.map(tensors, &quantized_key/1)
      if Enum.all?(keys, &is_nil/1), do: nil, else: keys
    end

    # The program inputs a parameter feeds, in the order of its placeholders
    # (EMLX.Compiler.Lower): packed weights, scales, biases when present.
    defp input_refs(%Nx.Tensor{data: %B{ref: ref, quantization: %Config{} = c}}) do
      if c.biases, do: [ref, c.scales, c.biases], else: [ref, c.scales]
    end

    defp input_refs(tensor), do: [tensor |> Nx.devectorize() |> B.from_nx()]

    # The function's identity as a cache key. A closure's environment is
    # part of it; one too big to copy into the cache's table (a copy loses
    # the sharing of, say, a captured expression) is not cached by call site
    # (its program is still found by structure).
    @max_env_words 4096
    defp site_key(fun) when is_function(fun) do
      case Function.info(fun, :env) do
        {:env, []} ->
          fun

        {:env, env} ->
          if budget(env, @max_env_words) == :over, do: nil, else: fun
      end
    end

    defp site_key(other), do: other

    # What is left of `n` after counting the term's words without sharing (the
    # size of its copy), or :over; stops as soon as the budget is spent.
    defp budget(_term, n) when n < 0, do: :over
    defp budget(_term, :over), do: :over

    defp budget(term, n) when is_tuple(term),
      do: term |> Tuple.to_list() |> budget(n - 1)

    defp budget([head | tail], n), do: budget(tail, budget(head, n - 1))
    defp budget(map, n) when is_map(map), do: map |> Map.to_list() |> budget(n - 1)

    defp budget(fun, n) when is_function(fun) do
      {:env, env} = Function.info(fun, :env)
      budget(env, n - 1)
    end

    defp budget(_term, n), do: n - 1

    @doc false
    def __partitions_options__(opts) do
      device = device(opts)

      for _ <- 1..Keyword.get(opts, :max_concurrency, 1)//1 do
        Keyword.put(opts, :command_queue, EMLX.CommandQueue.new!(device))
      end
    end

    @doc false
    def __to_backend__(opts), do: {B, device: device(opts)}

    defp device(opts) do
      case opts[:device] do
        nil ->
          case opts[:command_queue] do
            %EMLX.CommandQueue{device: device} -> device
            _ -> EMLX.default_device()
          end

        device ->
          device
      end
    end

    @doc false
    # The program spec `fun` lowers to for `args` (tensors or templates), or
    # `{:evaluator, reason}`: for tests and debugging.
    def __spec__(fun, args, opts \\ []) do
      device = device(opts)
      {fun, params, _templates, flatten} = Nx.Defn.Compiler.to_lazy_params(fun, args)
      quantized = flatten |> Enum.map(fn param -> param.() end) |> quantized_keys()

      expr =
        Nx.Defn.Compiler.__compile__(fun, params, compiler: __MODULE__.Tracer)
        |> then(fn tracer -> tracer.(nil) end)

      expr = Composite.traverse(expr, &Nx.devectorize/1)

      try do
        {spec, _n_out, _hooks} =
          Lower.lower(expr, Composite.flatten_list(params), device, quantized)

        spec
      catch
        {:emlx_fallback, reason} -> {:evaluator, reason}
      end
    end

    defmodule Tracer do
      @moduledoc false
      # A compiler that only hands back the traced expression (for __spec__/3).
      @behaviour Nx.Defn.Compiler
      def __jit__(_key, vars, fun, _args, _opts), do: fun.(vars)
      def __compile__(_key, vars, fun, _opts), do: fn _ -> fun.(vars) end
      def __partitions_options__(opts), do: [opts]
      def __to_backend__(_opts), do: {Nx.BinaryBackend, []}
      def __shard_jit__(_key, _mesh, vars, fun, _args, _opts), do: fun.(vars)
    end

    ## Building

    # `{:program, program, output_templates, n_outputs, hook_specs}` or
    # `{:evaluator, reason}`; with the bytes of constants it holds.
    defp build(vars, fun, flat_vars, device, quantized) do
      expr = fun.(vars)
      output = Composite.traverse(expr, &Nx.to_template/1)
      expr = Composite.traverse(expr, &Nx.devectorize/1)

      try do
        {spec, n_out, hooks} = Lower.lower(expr, flat_vars, device, quantized)

        hook_specs =
          Enum.map(hooks, fn {fun, value} ->
            {fun, Composite.traverse(value, &Nx.to_template/1)}
          end)

        program =
          case spec do
            # Nothing to compute (the defn returns no tensor).
            {_templates, _nodes, []} ->
              nil

            spec ->
              # The quantization keys too: the spec holds them (the packed
              # inputs' templates, the kernel's arguments), but a program is
              # never shared across quantization configs even if it did not.
              EMLX.CompileCache.fetch({:structure, quantized, structural_key(spec)}, fn ->
                program = Program.compile(spec)
                {program, program.bytes}
              end)
          end

        bytes = if program, do: program.bytes, else: 0
        {{:program, program, output, n_out, hook_specs}, bytes}
      catch
        {:emlx_fallback, reason} -> {{:evaluator, reason}, 0}
      end
    end

    # The spec with each constant replaced by its value (small ones) or its
    # identity (large ones, over @by_value bytes: hashing them on every
    # lookup would cost more than it saves).
    @by_value 4096
    defp structural_key({templates, nodes, outputs}) do
      {templates, Enum.map(nodes, &node_key/1), outputs}
    end

    defp node_key({:constant, [t]}) do
      {type, shape} = {EMLX.scalar_type(t), EMLX.shape(t)}

      if Tuple.product(shape) <= @by_value do
        {:constant, type, shape, EMLX.to_blob(t)}
      else
        {:constant, type, shape, t}
      end
    end

    defp node_key({:while, [c, b, refs]}),
      do: {:while, [structural_key(c), structural_key(b), refs]}

    defp node_key({:cond, [preds, branches, ops]}),
      do: {:cond, [preds, Enum.map(branches, &structural_key/1), ops]}

    defp node_key(node), do: node

    ## Running

    defp runner({:evaluator, _reason}, _hooks, queue, _device, key, vars, fun, opts) do
      previous = Nx.default_backend()
      evaluated = Nx.Defn.Evaluator.__compile__(key, vars, fun, opts)

      fn tensors ->
        Nx.default_backend(B)
        args_list = [Enum.map(tensors, fn t -> fn -> t end end)]

        try do
          with_queue(queue, fn -> evaluated.(args_list) end)
        after
          Nx.default_backend(previous)
        end
      end
    end

    defp runner(
           {:program, program, output, n_out, hook_specs},
           hooks,
           queue,
           device,
           _key,
           _vars,
           _fun,
           _opts
         ) do
      fn tensors ->
        inputs = Enum.flat_map(tensors, &input_refs/1)

        refs =
          if program,
            do: with_queue(queue, fn -> Program.run(program, inputs, device) end),
            else: []

        {outs, hooked} = Enum.split(refs, n_out)
        run_hooks(hook_specs, hooked, hooks)
        [wrap(output, outs)]
      end
    end

    defp with_queue(nil, fun), do: fun.()
    defp with_queue(queue, fun), do: EMLX.CommandQueue.with_queue(queue, fun)

    defp run_hooks([], _refs, _hooks), do: :ok

    defp run_hooks([{fun, template} | rest], refs, hooks) do
      n = length(Composite.flatten_list([template]))
      {mine, refs} = Enum.split(refs, n)

      fun =
        case fun do
          {:named, name, default} -> hooks[name] || default
          fun -> fun
        end

      if fun, do: fun.(wrap(template, mine))
      run_hooks(rest, refs, hooks)
    end

    # The outputs as Nx tensors with `output`'s templates (vectorized axes
    # included). Only templates are kept with a program: an expression copied
    # into the cache's table would lose its sharing (and can be exponential).
    defp wrap(output, refs) do
      {result, []} =
        Composite.traverse(output, refs, fn tmpl, [ref | refs] ->
          {%{tmpl | data: %B{ref: ref}}, refs}
        end)

      result
    end
  end
end
