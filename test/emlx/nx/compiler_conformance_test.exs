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
  end
end
