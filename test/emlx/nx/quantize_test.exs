if Code.ensure_loaded?(Nx) do
  defmodule EMLX.Nx.QuantizeTest do
    # Quantized Nx tensors: EMLX.quantize/2, EMLX.dequantize/1, Nx.dot with a
    # quantized right operand (the quantized kernel) against the dense product
    # of the dequantized weights on Nx.BinaryBackend, gather_quantized_matmul,
    # and the errors every other use raises.
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
      diff = Nx.subtract(on_bb(got), on_bb(want)) |> Nx.abs() |> Nx.reduce_max() |> Nx.to_number()
      scale = on_bb(want) |> Nx.abs() |> Nx.reduce_max() |> Nx.to_number()
      assert diff <= tol * max(scale, 1.0), "max diff #{diff} (scale #{scale})"
    end

    test "quantize keeps the shape, gives the storage type and a config; dequantize inverts it" do
      w = random({16, 128}, 1) |> on_emlx()
      qw = EMLX.quantize(w, type: {:s, 4}, group_size: 64)
      assert qw.shape == {16, 128}
      assert qw.type == {:s, 4}
      c = EMLX.Quantization.config(qw)
      assert %EMLX.Quantization.Config{group_size: 64, bits: 4, mode: "affine"} = c
      # the packed data is exactly the low-level function's
      {wq, s, b} = EMLX.quantize(EMLX.Backend.from_nx(w), 64, 4, "affine")
      assert EMLX.to_blob(qw.data.ref) == EMLX.to_blob(wq)
      assert EMLX.to_blob(c.scales) == EMLX.to_blob(s)
      assert EMLX.to_blob(c.biases) == EMLX.to_blob(b)

      d = EMLX.dequantize(qw)
      assert d.type == {:f, 32} and d.shape == {16, 128}
      assert Nx.to_binary(d) == EMLX.to_blob(EMLX.dequantize(wq, s, b, 64, 4, "affine"))
      # within a quantization step of the original
      assert_close(d, w, 0.2)
    end

    test "Nx.dot with a quantized right operand equals the dense product, both layouts and modes" do
      for {mode, type, gs} <- [
            {"affine", {:s, 4}, 64},
            {"affine", {:s, 8}, 32},
            {"mxfp4", nil, nil}
          ] do
        w = random({32, 128}, 2) |> on_emlx()

        opts =
          [mode: mode] ++
            if(type, do: [type: type], else: []) ++ if(gs, do: [group_size: gs], else: [])

        qw = EMLX.quantize(w, opts)
        dense = qw |> EMLX.dequantize() |> on_bb()

        x = random({3, 5, 128}, 3)
        got = Nx.dot(on_emlx(x), [2], qw, [1])
        want = Nx.dot(x, [2], dense, [1])
        assert got.shape == {3, 5, 32}
        assert_close(got, want, 1.0e-4)
        assert_close(EMLX.quantized_matmul(on_emlx(x), qw), want, 1.0e-4)

        # x @ W: W {32, 128} quantized along its 128 columns, contracted on axis 0
        x2 = random({4, 32}, 4)
        got2 = Nx.dot(on_emlx(x2), qw)
        assert got2.shape == {4, 128}
        assert_close(got2, Nx.dot(x2, dense), 1.0e-4)
      end
    end

    test "gather_quantized_matmul picks one expert per row" do
      w = random({3, 16, 64}, 5) |> on_emlx()
      qw = EMLX.quantize(w, group_size: 32)
      dense = qw |> EMLX.dequantize() |> on_bb()
      x = random({4, 1, 64}, 6)
      idx = Nx.tensor([2, 0, 2, 1], type: {:s, 32})
      got = EMLX.gather_quantized_matmul(on_emlx(x), qw, on_emlx(idx))
      assert got.shape == {4, 1, 16}

      for i <- 0..3 do
        e = Nx.to_number(idx[i])
        want = Nx.dot(x[i], [1], dense[e], [1])
        assert_close(got[i], want, 1.0e-4)
      end
    end

    test "a quantized left operand or any other op raises ArgumentError" do
      qw = random({8, 64}, 7) |> on_emlx() |> EMLX.quantize(group_size: 32)
      x = random({2, 64}, 8) |> on_emlx()
      assert_raise ArgumentError, ~r/right operand/, fn -> Nx.dot(qw, [1], x, [1]) end
      assert_raise ArgumentError, ~r/right operand of Nx.dot/, fn -> Nx.add(qw, 1) end
      assert_raise ArgumentError, ~r/right operand of Nx.dot/, fn -> Nx.sum(qw) end

      assert_raise ArgumentError, fn ->
        EMLX.quantize(on_emlx(random({8, 60}, 9)), group_size: 32)
      end

      assert_raise ArgumentError, fn ->
        EMLX.quantize(on_emlx(random({8, 64}, 9)), type: {:s, 3})
      end

      assert_raise ArgumentError, fn -> EMLX.dequantize(x) end
    end
  end
end
