if Code.ensure_loaded?(Nx) do
  defmodule EMLX.Nx.CompilerConformanceTest.Defns do
    import Nx.Defn

    defn(window_add(t, acc), do: Nx.window_reduce(t, acc, {2}, [padding: :valid], &(&1 + &2)))

    # A constant inside the function; max with it is still associative.
    defn window_clamped_max(t) do
      Nx.window_reduce(t, -100, {2, 2}, [strides: [1, 1]], fn x, acc ->
        Nx.max(Nx.max(x, acc), -5)
      end)
    end

    defn(rows_product(t), do: Nx.reduce(t, 1, [axes: [1]], &(&1 * &2)))

    defn(nested_forced_jit(x), do: x + forced_jit_transform())

    deftransformp forced_jit_transform do
      eleven = Nx.tensor(11, backend: Nx.BinaryBackend)
      Nx.Defn.jit(&Nx.Defn.Kernel.*/2, compiler: EMLX, on_conflict: :force).(eleven, eleven)
    end

    # Depends on the singular vectors' signs (grad_test "svd").
    defn svd_signed_grad(t) do
      value_and_grad(t, fn t ->
        {u, s, vt} = Nx.LinAlg.svd(t)
        s |> Nx.make_diagonal() |> Nx.add(Nx.cos(u) |> Nx.sum()) |> Nx.add(vt) |> Nx.sum()
      end)
    end
  end

  defmodule EMLX.Nx.CompilerConformanceTest do
    @moduledoc """
    Regressions found by running Nx's own defn test files with `EMLX` as the
    compiler (scripts/nx_defn_conformance.exs): each test names the Nx test
    that showed the bug. Values are checked against `Nx.Defn.Evaluator` on
    `Nx.BinaryBackend`.
    """
    use ExUnit.Case, async: false

    alias EMLX.Nx.CompilerConformanceTest.Defns

    setup do
      previous = Nx.default_backend(EMLX.Backend)
      on_exit(fn -> Nx.default_backend(previous) end)
      :ok
    end

    defp reference(fun, args) do
      args = Enum.map(args, &binary/1)
      previous = Nx.default_backend(Nx.BinaryBackend)

      try do
        Nx.Defn.jit_apply(fun, args, compiler: Nx.Defn.Evaluator)
      after
        Nx.default_backend(previous)
      end
    end

    defp on_binary(fun) do
      previous = Nx.default_backend(Nx.BinaryBackend)

      try do
        fun.()
      after
        Nx.default_backend(previous)
      end
    end

    defp binary(%Nx.Tensor{} = t), do: Nx.backend_copy(t, Nx.BinaryBackend)

    defp binary(tuple) when is_tuple(tuple),
      do: tuple |> Tuple.to_list() |> Enum.map(&binary/1) |> List.to_tuple()

    defp binary(other), do: other

    defp run(fun, args, compiler), do: Nx.Defn.jit_apply(fun, args, compiler: compiler)

    describe "a reduction function given by a defn" do
      # evaluator_test "window reduce": the compiler's function computed its
      # nodes with the trace's scalar shapes (reshape: cannot reshape 2
      # elements into 1); on the Evaluator the scalar fallback made the
      # function's constants on EMLX.Backend (Nx.BinaryBackend.to_binary/1
      # failed on them).
      test "window_reduce and reduce match the Evaluator on Nx.BinaryBackend" do
        cases = [
          {&Defns.window_add/2, [Nx.tensor([1, 2, 3]), 0]},
          {&Defns.window_add/2, [Nx.tensor([1.5, -2.0, 3.25, 4.0, 8.0]), 0.5]},
          {&Defns.window_clamped_max/1, [Nx.iota({3, 4}) |> Nx.subtract(8)]},
          {&Defns.rows_product/1, [Nx.iota({3, 4}) |> Nx.add(1)]}
        ]

        for {fun, args} <- cases, compiler <- [EMLX, Nx.Defn.Evaluator] do
          got = run(fun, args, compiler)
          assert %Nx.Tensor{data: %EMLX.Backend{}} = got
          assert binary(got) == reference(fun, args), "#{inspect(compiler)} #{inspect(args)}"
        end
      end

      test "the compiler lowers it to a program (no fallback to the Evaluator)" do
        for {fun, args} <- [
              {&Defns.window_add/2, [Nx.template({5}, {:s, 32}), Nx.template({}, {:s, 32})]},
              {&Defns.window_clamped_max/1, [Nx.template({3, 4}, {:s, 32})]}
            ] do
          assert {_templates, [_ | _], _outputs} = EMLX.Compiler.__spec__(fun, args)
        end
      end
    end

    # defn_test "jit raises on nested JIT unless forcing": the forced jit's
    # EMLX.Backend result could not be a constant of the enclosing trace
    # ("cannot convert tensor allocated on EMLX.Backend to an expression").
    test "a jit forced inside a defn's trace gives a constant of the trace" do
      for compiler <- [EMLX, Nx.Defn.Evaluator] do
        got = run(&Defns.nested_forced_jit/1, [Nx.tensor([1, 2])], compiler)
        assert binary(got) == Nx.tensor([122, 123], backend: Nx.BinaryBackend)
      end
    end

    describe "eigenvector and singular vector signs" do
      # grad_test "svd computes grad for tensor" (and the two composed
      # ones): Nx's SVD gradient differentiates Nx's own SVD computation,
      # which takes V from Nx.LinAlg.eigh (run by the engine); the engine's
      # SVD (the values) had LAPACK's signs, its eigh others, so the gradient
      # was that of different singular vectors than the values returned.
      test "the engine's SVD has the signs of Nx's SVD computed on the engine" do
        for {shape, seed} <- [{{2, 2}, 1}, {{3, 2}, 2}, {{4, 3}, 3}, {{2, 3}, 4}, {{3, 5}, 5}] do
          {a, _} = Nx.Random.normal(Nx.Random.key(seed), shape: shape)
          {u, s, vt} = Nx.LinAlg.svd(a, full_matrices?: false)
          {nu, ns, nvt} = Nx.LinAlg.SVD.svd(a, full_matrices?: false, max_iter: 100)

          for {x, y} <- [{u, nu}, {s, ns}, {vt, nvt}] do
            assert Nx.all_close(binary(x), binary(y), atol: 1.0e-4) |> Nx.to_number() == 1,
                   "#{inspect(shape)}: #{inspect(x)} vs #{inspect(y)}"
          end
        end
      end

      test "eigh gives each eigenvector its largest component positive, as Nx's 2x2 Jacobi" do
        for seed <- 1..6 do
          {a, _} = Nx.Random.normal(Nx.Random.key(seed), shape: {2, 2})
          h = Nx.add(a, Nx.transpose(a))
          {_w, v} = Nx.LinAlg.eigh(h)
          {_w, nx_v} = on_binary(fn -> Nx.LinAlg.eigh(binary(h)) end)
          assert Nx.all_close(binary(v), nx_v, atol: 1.0e-5) |> Nx.to_number() == 1
        end

        {a, _} = Nx.Random.normal(Nx.Random.key(9), shape: {5, 5})
        {_w, v} = Nx.LinAlg.eigh(Nx.add(a, Nx.transpose(a)))
        v = binary(v)

        on_binary(fn ->
          index = Nx.argmax(Nx.abs(v), axis: 0, keep_axis: true)
          largest = Nx.take_along_axis(v, index, axis: 0)
          assert Nx.to_flat_list(Nx.greater(largest, 0)) == List.duplicate(1, 5)
        end)
      end

      test "the SVD gradient matches the Evaluator on Nx.BinaryBackend" do
        for t <- [
              Nx.tensor([[3.0, 0.0], [1.0, 2.0]]),
              Nx.tensor([[3.0, 0.0], [1.0, 2.0], [1.0, 1.0]])
            ],
            compiler <- [EMLX, Nx.Defn.Evaluator] do
          {value, grad} =
            run(&Defns.svd_signed_grad/1, [Nx.backend_copy(t, EMLX.Backend)], compiler)

          {nx_value, nx_grad} = reference(&Defns.svd_signed_grad/1, [t])
          assert Nx.all_close(binary(value), nx_value, atol: 1.0e-4) |> Nx.to_number() == 1

          assert Nx.all_close(binary(grad), nx_grad, atol: 1.0e-4) |> Nx.to_number() == 1,
                 "#{inspect(compiler)}: #{inspect(grad)} vs #{inspect(nx_grad)}"
        end
      end
    end
  end
else
  IO.puts(
    "test/emlx/nx/compiler_conformance_test.exs: Nx is not available (set NX_PATH to an Nx " <>
      "source tree, or fetch deps/nx), so the conformance regressions are left out"
  )
end
