if Code.ensure_loaded?(Nx) do
  defmodule EMLX.Nx.QuantizeDefnTest do
    # Quantized parameters inside defn compiled by EMLX: the program takes
    # the packed weights, scales and biases as inputs and calls the quantized
    # kernel (quantized_matmul), with the results of the eager path and,
    # within tolerance, of the dense product of the dequantized weights on
    # Nx.BinaryBackend; the quantization config is part of the cache keys.
    use ExUnit.Case, async: false

    alias Nx.BinaryBackend, as: BB

    defp random(shape, seed) do
      :rand.seed(:exsss, {seed, seed + 1, seed + 2})
      n = Tuple.product(shape)

      Nx.tensor(for(_ <- 1..n, do: :rand.normal()), type: {:f, 32}, backend: BB)
      |> Nx.reshape(shape)
    end

    defp on_emlx(t), do: Nx.backend_copy(t, EMLX.Backend)
    defp on_bb(t), do: Nx.backend_copy(t, BB)

    defp assert_close(got, want, tol) do
      assert got.shape == want.shape
      diff = Nx.subtract(on_bb(got), on_bb(want)) |> Nx.abs() |> Nx.reduce_max() |> Nx.to_number()
      scale = on_bb(want) |> Nx.abs() |> Nx.reduce_max() |> Nx.to_number()
      assert diff <= tol * max(scale, 1.0), "max diff #{diff} (scale #{scale})"
    end

    # x @ dequantize(qw)^T on the binary backend, in f64.
    defp reference(x, qw, contract_r) do
      w = qw |> EMLX.dequantize() |> on_bb() |> Nx.as_type({:f, 64})
      Nx.dot(on_bb(x) |> Nx.as_type({:f, 64}), [1], w, [contract_r])
    end

    defp nodes({_templates, nodes, _outputs}), do: Enum.map(nodes, &elem(&1, 0))

    defp jit(fun, args), do: Nx.Defn.jit_apply(fun, args, compiler: EMLX)

    test "x . W^T with a quantized W runs the quantized kernel inside the program" do
      x = random({5, 128}, 1) |> on_emlx()
      qw = random({24, 128}, 2) |> on_emlx() |> EMLX.quantize(type: {:s, 4}, group_size: 64)
      fun = fn x, w -> Nx.dot(x, [1], w, [1]) end

      got = jit(fun, [x, qw])
      assert got.type == {:f, 32}
      assert_close(got, Nx.dot(x, [1], qw, [1]), 1.0e-6)
      assert_close(got, reference(x, qw, 1), 1.0e-4)

      {templates, _, _} = spec = EMLX.Compiler.__spec__(fun, [x, qw])
      # x, then the packed weights, the scales and the biases
      assert [{_, {5, 128}}, {{:u, 32}, {24, 16}}, {_, {24, 2}}, {_, {24, 2}}] = templates
      assert :quantized_matmul in nodes(spec)
      refute :dequantize in nodes(spec)

      {_, [{:quantized_matmul, args}], _} = spec
      assert [{:ref, 0}, {:ref, 1}, {:ref, 2}, {:ref, 3}, true, 64, 4, "affine"] = args
    end

    test "x . W (transpose: false) and a microscaled mode without biases" do
      x = random({3, 32}, 3) |> on_emlx()
      qw = random({32, 64}, 4) |> on_emlx() |> EMLX.quantize(type: {:s, 8}, group_size: 32)
      fun = fn x, w -> Nx.dot(x, [1], w, [0]) end
      got = jit(fun, [x, qw])
      assert_close(got, Nx.dot(x, [1], qw, [0]), 1.0e-6)
      assert_close(got, reference(x, qw, 0), 1.0e-4)
      spec = EMLX.Compiler.__spec__(fun, [x, qw])
      assert {_, [{:quantized_matmul, [_, _, _, _, false, 32, 8, "affine"]}], _} = spec

      x = random({2, 64}, 5) |> on_emlx()
      qw = random({16, 64}, 6) |> on_emlx() |> EMLX.quantize(mode: :mxfp4)
      fun = fn x, w -> Nx.exp(Nx.dot(x, [1], w, [1])) end
      got = jit(fun, [x, qw])
      assert_close(got, Nx.exp(Nx.dot(x, [1], qw, [1])), 1.0e-6)
      assert_close(got, Nx.exp(reference(x, qw, 1)), 1.0e-4)
      {templates, _, _} = spec = EMLX.Compiler.__spec__(fun, [x, qw])
      # no biases input
      assert [_, {{:u, 32}, {16, 8}}, {{:u, 8}, {16, 2}}] = templates
      assert {:quantized_matmul, [_, _, _, nil, true, 32, 4, "mxfp4"]} = hd(elem(spec, 1))
    end

    test "a layout the kernel does not run lowers to a recorded dequantize" do
      # a batched contraction: the backend's dense product of the dequantized
      # weights, recorded over the placeholders (not a constant)
      x = random({2, 3, 64}, 7) |> on_emlx()
      qw = random({2, 8, 64}, 8) |> on_emlx() |> EMLX.quantize(type: {:s, 4}, group_size: 32)
      fun = fn x, w -> Nx.dot(x, [2], [0], w, [2], [0]) end
      got = jit(fun, [x, qw])
      want = Nx.dot(on_bb(x), [2], [0], on_bb(EMLX.dequantize(qw)), [2], [0])
      assert_close(got, want, 1.0e-5)
      spec = EMLX.Compiler.__spec__(fun, [x, qw])
      assert :dequantize in nodes(spec)
      refute :constant in nodes(spec)
    end

    test "Nx.Defn.compile with a template, called with quantized weights" do
      x = random({4, 64}, 9) |> on_emlx()
      qw = random({8, 64}, 10) |> on_emlx() |> EMLX.quantize(type: {:s, 4}, group_size: 32)
      fun = fn x, w -> Nx.add(Nx.dot(x, [1], w, [1]), 1) end

      compiled =
        Nx.Defn.compile(fun, [Nx.template({4, 64}, {:f, 32}), Nx.template({8, 64}, {:s, 4})],
          compiler: EMLX
        )

      for _ <- 1..2 do
        assert_close(compiled.(x, qw), Nx.add(reference(x, qw, 1), 1), 1.0e-4)
      end

      # and the same closure still runs dense {:s, 4} weights
      dense =
        random({8, 64}, 15)
        |> Nx.multiply(3)
        |> Nx.round()
        |> Nx.clip(-8, 7)
        |> Nx.as_type({:s, 4})
        |> on_emlx()

      want = Nx.add(Nx.dot(on_bb(x), [1], on_bb(dense), [1]), 1)
      assert_close(compiled.(x, dense), want, 1.0e-5)
    end

    test "two configs with the same template never share a program" do
      x = random({2, 128}, 11) |> on_emlx()
      w = random({16, 128}, 12) |> on_emlx()
      fun = fn x, w -> Nx.dot(x, [1], w, [1]) end

      configs = [
        [type: {:s, 4}, group_size: 64],
        # the same Nx type and shape as the first: only the config differs
        [type: {:s, 4}, group_size: 32],
        [type: {:s, 8}, group_size: 32]
      ]

      for opts <- configs do
        qw = EMLX.quantize(w, opts)
        before = EMLX.CompileCache.stats()
        got = jit(fun, [x, qw])
        after_call = EMLX.CompileCache.stats()
        # a new call site and a new structure
        assert after_call.misses == before.misses + 2, inspect(opts)
        assert after_call.hits == before.hits, inspect(opts)
        assert_close(got, Nx.dot(x, [1], qw, [1]), 1.0e-6)
        assert_close(got, reference(x, qw, 1), 1.0e-4)
      end

      # the first config again: its call site hits
      qw = EMLX.quantize(w, hd(configs))
      before = EMLX.CompileCache.stats()
      got = jit(fun, [x, qw])
      after_call = EMLX.CompileCache.stats()
      assert after_call.hits == before.hits + 1
      assert after_call.misses == before.misses
      assert_close(got, reference(x, qw, 1), 1.0e-4)
    end

    def triple(t, _opts), do: Nx.multiply(t, 3)

    test "a defn that falls back to the Evaluator still takes quantized weights" do
      x = random({2, 64}, 16) |> on_emlx()
      qw = random({8, 64}, 17) |> on_emlx() |> EMLX.quantize(type: {:s, 4}, group_size: 32)

      fun = fn x, w ->
        y = Nx.dot(x, [1], w, [1])
        Nx.runtime_call(y, y, &triple/2)
      end

      assert {:evaluator, _reason} = EMLX.Compiler.__spec__(fun, [x, qw])
      assert_close(jit(fun, [x, qw]), Nx.multiply(reference(x, qw, 1), 3), 1.0e-4)
    end

    test "any other use of a quantized parameter raises ArgumentError" do
      x = random({2, 64}, 13) |> on_emlx()
      qw = random({8, 64}, 14) |> on_emlx() |> EMLX.quantize(type: {:s, 4}, group_size: 32)

      assert_raise ArgumentError, ~r/right operand/, fn ->
        jit(fn x, w -> Nx.add(Nx.dot(x, [1], w, [1]), Nx.sum(w)) end, [x, qw])
      end

      assert_raise ArgumentError, ~r/right operand/, fn ->
        jit(fn x, w -> Nx.dot(w, [1], x, [1]) end, [x, qw])
      end
    end
  end
end
