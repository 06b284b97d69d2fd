if Code.ensure_loaded?(Nx) do
  defmodule EMLX.Nx.CompilerDefnTest.Defns do
    import Nx.Defn

    defn(affine(x, w, b), do: Nx.dot(x, w) + b)

    defn softmax_rows(x) do
      e = Nx.exp(x - Nx.reduce_max(x, axes: [1], keep_axes: true))
      e / Nx.sum(e, axes: [1], keep_axes: true)
    end

    defn count_up(x, n) do
      {_i, _n, acc} =
        while {i = 0, n, acc = x}, i < n do
          {i + 1, n, acc * 2 + i}
        end

      acc
    end

    defn pick(x, k) do
      cond do
        k == 0 -> x + 1
        k == 1 -> x * 10
        true -> -x
      end
    end

    # The branch not taken fails when computed (Cholesky of a matrix that is
    # not positive definite): only the taken branch may run.
    defn guarded_cholesky(a, ok) do
      if ok do
        Nx.LinAlg.cholesky(a)
      else
        a * 0
      end
    end

    defn(containers(x, y), do: %{sum: x + y, pair: {x * y, Nx.sum(x)}})

    defn(loss_grad(w, x), do: grad(w, fn w -> Nx.sum(Nx.tanh(Nx.dot(x, w))) end))

    defn(hooked(x), do: hook(x * 2, :doubled, &send(self(), {:hooked, &1})) + 1)

    defn with_runtime_call(x) do
      Nx.runtime_call(x, x, &triple/2)
    end

    def triple(t, _opts), do: Nx.multiply(t, 3)

    defn(cholesky(a), do: Nx.LinAlg.cholesky(a))
  end

  defmodule EMLX.Nx.CompilerDefnTest do
    @moduledoc """
    `EMLX` as the `Nx.Defn` compiler: values against `Nx.Defn.Evaluator` on
    `Nx.BinaryBackend` (an independent implementation), the shape of the
    lowered programs (a `while` stays a loop, a `cond` computes one branch),
    `EMLX.CompileCache` and the errors.
    """
    use ExUnit.Case, async: false

    alias EMLX.Nx.CompilerDefnTest.Defns

    setup do
      previous = Nx.default_backend(EMLX.Backend)
      on_exit(fn -> Nx.default_backend(previous) end)
      :ok
    end

    # Nx.Defn.Evaluator on Nx.BinaryBackend: the reference.
    defp reference(fun, args) do
      args = Enum.map(args, &to_binary_backend/1)
      previous = Nx.default_backend(Nx.BinaryBackend)

      try do
        Nx.Defn.jit_apply(fun, args, compiler: Nx.Defn.Evaluator)
      after
        Nx.default_backend(previous)
      end
    end

    defp to_binary_backend(%Nx.Tensor{} = t), do: Nx.backend_copy(t, Nx.BinaryBackend)
    defp to_binary_backend(other), do: other

    defp emlx(fun, args, opts \\ []), do: Nx.Defn.jit_apply(fun, args, [compiler: EMLX] ++ opts)

    defp assert_same(actual, expected, tol \\ 1.0e-5) do
      actual = Nx.Defn.Composite.flatten_list([actual])
      expected = Nx.Defn.Composite.flatten_list([expected])
      assert length(actual) == length(expected)

      for {a, e} <- Enum.zip(actual, expected) do
        assert a.shape == e.shape
        assert a.type == e.type
        a = Nx.backend_copy(a, Nx.BinaryBackend)

        assert Nx.all_close(a, e, atol: tol, rtol: tol) |> Nx.to_number() == 1,
               "#{inspect(a)}\n  vs\n#{inspect(e)}"
      end
    end

    defp random(shape, seed) do
      key = Nx.Random.key(seed)
      {t, _} = Nx.Random.uniform(key, -1.0, 1.0, shape: shape, type: {:f, 32})
      Nx.backend_copy(t, EMLX.Backend)
    end

    describe "values" do
      test "dense ops, reductions and tuples/maps match the Evaluator" do
        x = random({4, 3}, 1)
        w = random({3, 5}, 2)
        b = random({5}, 3)
        assert_same(emlx(&Defns.affine/3, [x, w, b]), reference(&Defns.affine/3, [x, w, b]))
        assert_same(emlx(&Defns.softmax_rows/1, [x]), reference(&Defns.softmax_rows/1, [x]))

        result = emlx(&Defns.containers/2, [x, x])
        assert %{sum: _, pair: {_, _}} = result
        assert_same(result, reference(&Defns.containers/2, [x, x]))
      end

      test "while loops run to the count given at run time" do
        x = random({3}, 4)

        for n <- [0, 1, 5] do
          assert_same(emlx(&Defns.count_up/2, [x, n]), reference(&Defns.count_up/2, [x, n]))
        end
      end

      test "cond takes the clause its predicate picks" do
        x = random({2, 2}, 5)

        for k <- [0, 1, 2] do
          assert_same(emlx(&Defns.pick/2, [x, k]), reference(&Defns.pick/2, [x, k]))
        end
      end

      test "gradients compile like any expression" do
        w = random({3, 2}, 6)
        x = random({4, 3}, 7)
        assert_same(emlx(&Defns.loss_grad/2, [w, x]), reference(&Defns.loss_grad/2, [w, x]))
      end

      test "inputs on another backend are taken as they are" do
        x = Nx.tensor([[1.0, 2.0]], backend: Nx.BinaryBackend)
        w = Nx.tensor([[1.0], [3.0]], backend: Nx.BinaryBackend)
        b = Nx.tensor([0.5], backend: Nx.BinaryBackend)
        assert emlx(&Defns.affine/3, [x, w, b]) |> Nx.to_flat_list() == [7.5]
      end
    end

    describe "lowering" do
      test "a while is one loop node, whatever the trip count" do
        spec = EMLX.Compiler.__spec__(&Defns.count_up/2, [Nx.template({3}, {:f, 32}), 7])
        {_templates, nodes, _outputs} = spec

        assert [{:while, [{_, cond_nodes, [_]}, {_, body_nodes, body_out}, state]}] =
                 Enum.filter(nodes, &match?({:while, _}, &1))

        assert cond_nodes != [] and body_nodes != []
        assert length(body_out) == length(state)
      end

      test "only the clause taken is computed" do
        bad = Nx.tensor([[1.0, 2.0], [2.0, 1.0]])
        assert_raise EMLX.NIFError, fn -> emlx(&Defns.cholesky/1, [bad]) |> Nx.to_binary() end

        # Computing both clauses and selecting would fail the same way.
        result = emlx(&Defns.guarded_cholesky/2, [bad, 0])
        assert Nx.to_flat_list(result) == [0.0, 0.0, 0.0, 0.0]

        good = Nx.tensor([[4.0, 2.0], [2.0, 5.0]])

        assert_same(
          emlx(&Defns.guarded_cholesky/2, [good, 1]),
          reference(&Defns.guarded_cholesky/2, [good, 1])
        )
      end

      test "top-level hooks run in Elixir with their values" do
        x = Nx.tensor([1.0, 2.0])
        assert emlx(&Defns.hooked/1, [x]) |> Nx.to_flat_list() == [3.0, 5.0]
        assert_received {:hooked, doubled}
        assert Nx.to_flat_list(doubled) == [2.0, 4.0]
      end

      test "runtime_call falls back to the Evaluator on EMLX.Backend" do
        x = Nx.tensor([1.0, 2.0])

        assert {:evaluator, reason} = EMLX.Compiler.__spec__(&Defns.with_runtime_call/1, [x])

        assert reason =~ "runtime_call"
        assert emlx(&Defns.with_runtime_call/1, [x]) |> Nx.to_flat_list() == [3.0, 6.0]
      end

      test "the lowering invariants (compiler_debug) reject a dangling reference" do
        good = {[{{:f, 32}, {2}}], [{:add, [{:ref, 0}, {:ref, 0}]}], [{:ref, 1}]}
        assert EMLX.Compiler.Lower.check_spec!(good) == :ok
        bad = {[{{:f, 32}, {2}}], [{:add, [{:ref, 0}, {:"$v", :n, 3}]}], [{:ref, 1}]}
        assert_raise EMLX.NIFError, ~r/unnumbered/, fn -> EMLX.Compiler.Lower.check_spec!(bad) end
      end
    end

    describe "compile once, replay" do
      test "an Nx.Defn.compile closure never looks anything up" do
        compiled =
          Nx.Defn.compile(&Defns.softmax_rows/1, [Nx.template({2, 3}, {:f, 32})], compiler: EMLX)

        x = random({2, 3}, 8)
        before = EMLX.CompileCache.stats()
        results = for _ <- 1..5, do: compiled.(x)
        after_calls = EMLX.CompileCache.stats()
        assert Map.take(before, [:hits, :misses]) == Map.take(after_calls, [:hits, :misses])
        for r <- results, do: assert_same(r, reference(&Defns.softmax_rows/1, [x]))
      end

      test "jit hits the cache on the second call of a call site" do
        x = random({3, 5}, 9)
        fun = fn x -> Nx.multiply(Nx.sin(x), 2) end
        _ = Nx.Defn.jit_apply(fun, [x], compiler: EMLX)
        before = EMLX.CompileCache.stats()
        _ = Nx.Defn.jit_apply(fun, [x], compiler: EMLX)
        after_call = EMLX.CompileCache.stats()
        assert after_call.hits == before.hits + 1
        assert after_call.misses == before.misses
      end

      test "structurally identical call sites share a program" do
        x = random({7, 2}, 10)
        a = fn x -> Nx.add(Nx.cos(x), 7) end
        b = fn x -> Nx.add(Nx.cos(x), 7) end
        _ = Nx.Defn.jit_apply(a, [x], compiler: EMLX)
        before = EMLX.CompileCache.stats()
        _ = Nx.Defn.jit_apply(b, [x], compiler: EMLX)
        after_call = EMLX.CompileCache.stats()
        # b's call site misses, its structure hits a's program.
        assert after_call.misses == before.misses + 1
        assert after_call.hits == before.hits + 1
      end

      test "the cache is bounded (LRU) and reports through :telemetry" do
        previous = Application.get_env(:emlx, :compile_cache)
        Application.put_env(:emlx, :compile_cache, max_entries: 4)
        ref = make_ref()
        me = self()

        :telemetry.attach_many(
          inspect(ref),
          for(e <- [:hit, :miss, :evict], do: [:emlx, :compile_cache, e]),
          fn event, measurements, meta, _ -> send(me, {ref, event, measurements, meta}) end,
          nil
        )

        try do
          x = random({2}, 11)

          for k <- 1..6 do
            Nx.Defn.jit_apply(fn x -> Nx.add(x, k) end, [x], compiler: EMLX)
          end

          stats = EMLX.CompileCache.stats()
          assert stats.entries <= 4
          assert stats.evictions > 0
          assert_received {^ref, [:emlx, :compile_cache, :miss], %{count: 1}, %{kind: :site}}
          assert_received {^ref, [:emlx, :compile_cache, :evict], %{count: 1}, _}
        after
          :telemetry.detach(inspect(ref))

          if previous,
            do: Application.put_env(:emlx, :compile_cache, previous),
            else: Application.delete_env(:emlx, :compile_cache)
        end
      end
    end

    describe "options and errors" do
      test "unknown options are ignored; device and queue are taken" do
        x = random({2, 2}, 12)
        queue = EMLX.CommandQueue.new!(:cpu)
        r = emlx(&Defns.softmax_rows/1, [x], cache: "ignored", device: :cpu, command_queue: queue)
        assert_same(r, reference(&Defns.softmax_rows/1, [x]))
        assert EMLX.__to_backend__(device: :cpu) == {EMLX.Backend, device: :cpu}
      end

      test "partitions get a command queue each" do
        parts = EMLX.__partitions_options__(max_concurrency: 3)
        assert length(parts) == 3
        queues = Enum.map(parts, & &1[:command_queue])
        assert Enum.all?(queues, &match?(%EMLX.CommandQueue{}, &1))
        assert length(Enum.uniq(queues)) == 3
      end

      test "an engine failure raises EMLX.NIFError; the process, cache and queue go on" do
        bad = Nx.tensor([[1.0, 2.0], [2.0, 1.0]])
        error = assert_raise EMLX.NIFError, fn -> emlx(&Defns.cholesky/1, [bad]) end
        assert error.message =~ "cholesky"

        good = Nx.tensor([[4.0, 2.0], [2.0, 5.0]])
        assert_same(emlx(&Defns.cholesky/1, [good]), reference(&Defns.cholesky/1, [good]))
        x = random({2, 3}, 13)
        assert_same(emlx(&Defns.softmax_rows/1, [x]), reference(&Defns.softmax_rows/1, [x]))
      end
    end
  end
else
  IO.puts(
    "test/emlx/nx/compiler_defn_test.exs: Nx is not available (set NX_PATH to an Nx " <>
      "source tree, or fetch deps/nx), so the Nx.Defn compiler tests are left out"
  )
end
