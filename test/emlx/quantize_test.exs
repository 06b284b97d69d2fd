defmodule EMLX.QuantizeTest do
  # The low-level quantization functions: quantize / dequantize bit for bit
  # against MLX's own golden vectors (tests/quantize/quant_golden.bin, written
  # by tests/quantize/gen_golden.py with mlx[cpu]), quantized_matmul and
  # gather_qmm against a dequantize-then-multiply computed here in Elixir
  # floats, and the errors bad input raises.
  use ExUnit.Case, async: true

  import EMLX.TestHelpers

  @golden Path.expand("../../tests/quantize/quant_golden.bin", __DIR__)
  @modes %{0 => "affine", 1 => "mxfp4", 2 => "mxfp8", 3 => "nvfp4"}
  @dtypes %{0 => {{:f, 32}, 4}, 1 => {{:f, 16}, 2}, 2 => {{:bf, 16}, 2}}

  # Every record of the golden file: MLX's input, packed words, scales,
  # biases and dequantized values (layout in gen_golden.py).
  defp golden_records(bin, acc \\ [])
  defp golden_records(<<>>, acc), do: Enum.reverse(acc)

  defp golden_records(bin, acc) do
    <<0x51524543::32-little, mode, bits, dcode, 0, gs::16-little, 0::16, rows::32-little,
      k::32-little, rest::binary>> = bin

    {type, es} = @dtypes[dcode]
    n = rows * k
    s_es = if mode == 0, do: es, else: 1
    b_bytes = if mode == 0, do: div(n, gs) * es, else: 0
    out_es = if mode == 0, do: es, else: 2

    <<input::binary-size(n * es), wq::binary-size(div(n * bits, 8)),
      scales::binary-size(div(n, gs) * s_es), biases::binary-size(b_bytes),
      deq::binary-size(n * out_es), rest::binary>> = rest

    rec = %{
      mode: @modes[mode],
      bits: bits,
      gs: gs,
      type: type,
      rows: rows,
      k: k,
      input: input,
      wq: wq,
      scales: scales,
      biases: biases,
      deq: deq
    }

    golden_records(rest, [rec | acc])
  end

  test "quantize and dequantize agree with MLX bit for bit in every mode" do
    records = golden_records(File.read!(@golden))
    assert length(records) == 43

    for r <- records do
      label = "#{r.mode} bits=#{r.bits} group=#{r.gs} #{inspect(r.type)}"
      w = EMLX.from_blob(r.input, {r.rows, r.k}, r.type, :cpu)
      {wq, scales, biases} = EMLX.quantize(w, r.gs, r.bits, r.mode)
      assert EMLX.scalar_type(wq) == {:u, 32}
      assert EMLX.shape(wq) == {r.rows, div(r.k * r.bits, 32)}
      assert EMLX.to_blob(wq) == r.wq, label
      assert EMLX.to_blob(scales) == r.scales, label

      if r.mode == "affine" do
        assert EMLX.to_blob(biases) == r.biases, label
      else
        assert biases == nil
        assert EMLX.scalar_type(scales) == {:u, 8}
      end

      d = EMLX.dequantize(wq, scales, biases, r.gs, r.bits, r.mode)
      assert EMLX.to_blob(d) == r.deq, label
    end
  end

  # Dense {rows, cols} values of a quantized matrix, decoded here from its
  # affine formula: scale * q + bias with q read from the packed bit stream.
  defp decode_affine(wq, scales, biases, bits, gs) do
    {rows, _} = EMLX.shape(wq)
    bin = EMLX.to_blob(wq)
    s = values(scales)
    b = values(biases)
    cols = div(byte_size(bin) * 8, bits * rows)
    row_bytes = div(cols * bits, 8)

    for r <- 0..(rows - 1) do
      <<_::binary-size(r * row_bytes), row::binary-size(row_bytes), _::binary>> = bin
      codes = for <<c::size(bits) <- reverse_bits(row)>>, do: c

      codes
      |> Enum.reverse()
      |> Enum.with_index()
      |> Enum.map(fn {q, c} ->
        g = r * div(cols, gs) + div(c, gs)
        Enum.at(s, g) * q + Enum.at(b, g)
      end)
    end
  end

  # The bit stream is little-endian: as one big-endian integer its codes run
  # from the last to the first.
  defp reverse_bits(row) do
    n = :binary.decode_unsigned(row, :little)
    <<n::size(byte_size(row) * 8)>>
  end

  defp dot_rows(x_rows, w_rows) do
    for xr <- x_rows,
        do:
          for(
            wr <- w_rows,
            do: Enum.zip(xr, wr) |> Enum.map(fn {a, b} -> a * b end) |> Enum.sum()
          )
  end

  defp random_values(n, seed) do
    :rand.seed(:exsss, {seed, 7, 11})
    for _ <- 1..n, do: :rand.uniform() * 2 - 1
  end

  test "quantized_matmul is x times the dequantized weights, both layouts" do
    for bits <- [3, 4, 8] do
      wv = random_values(8 * 64, bits)
      w = tensor(wv, {8, 64})
      {wq, s, b} = EMLX.quantize(w, 32, bits, "affine")
      dense = decode_affine(wq, s, b, bits, 32)
      xv = random_values(2 * 64, 100 + bits)
      x = tensor(xv, {2, 64})
      want = dot_rows(Enum.chunk_every(xv, 64), dense)
      got = EMLX.quantized_matmul(x, wq, s, b, true, 32, bits, "affine")
      assert EMLX.shape(got) == {2, 8}
      assert close?(values(got), List.flatten(want), 1.0e-4)

      # transpose false: the same packed {8, 64} read as W = {K = 8, N = 64}.
      x2v = random_values(3 * 8, 200 + bits)
      x2 = tensor(x2v, {3, 8})
      got2 = EMLX.quantized_matmul(x2, wq, s, b, false, 32, bits, "affine")
      cols = dense |> Enum.zip() |> Enum.map(&Tuple.to_list/1)
      want2 = dot_rows(Enum.chunk_every(x2v, 8), cols)
      assert EMLX.shape(got2) == {3, 64}
      assert close?(values(got2), List.flatten(want2), 1.0e-4)
    end
  end

  test "gather_qmm picks experts by index, and matches one quantized_matmul per pair" do
    w = tensor(random_values(3 * 16 * 64, 5), {3, 16, 64})
    {wq, s, nil} = EMLX.quantize(w, 32, 4, :mxfp4)
    x = tensor(random_values(2 * 1 * 64, 6), {2, 1, 64})
    lhs = tensor([1, 0, 1], {3}, {:s, 32})
    rhs = tensor([2, 2, 0], {3}, {:u, 32})
    got = EMLX.gather_qmm(x, wq, s, nil, lhs, rhs, true, 32, 4, "mxfp4", false)
    assert EMLX.shape(got) == {3, 1, 16}

    for {{li, ri}, i} <- Enum.with_index([{1, 2}, {0, 2}, {1, 0}]) do
      xi = EMLX.slice(x, [li, 0, 0], [li + 1, 1, 64], [1, 1, 1])
      wi = EMLX.slice(wq, [ri, 0, 0], [ri + 1, 16, 8], [1, 1, 1]) |> EMLX.reshape({16, 8})
      si = EMLX.slice(s, [ri, 0, 0], [ri + 1, 16, 2], [1, 1, 1]) |> EMLX.reshape({16, 2})
      one = EMLX.quantized_matmul(xi, wi, si, nil, true, 32, 4, "mxfp4")
      row = EMLX.slice(got, [i, 0, 0], [i + 1, 1, 16], [1, 1, 1])
      assert close?(values(row), values(one), 1.0e-5)
    end

    # sorted_indices is a hint: same answer
    sorted =
      EMLX.gather_qmm(
        x,
        wq,
        s,
        nil,
        nil,
        tensor([0, 2], {2}, {:s, 64}),
        true,
        32,
        4,
        "mxfp4",
        true
      )

    unsorted =
      EMLX.gather_qmm(
        x,
        wq,
        s,
        nil,
        nil,
        tensor([0, 2], {2}, {:s, 64}),
        true,
        32,
        4,
        "mxfp4",
        false
      )

    assert values(sorted) == values(unsorted)
  end

  test "bad input raises with a message naming the problem" do
    w = tensor(random_values(4 * 96, 1), {4, 96})

    assert_raise EMLX.NIFError, ~r/not divisible by the group size 64/, fn ->
      EMLX.quantize(w, 64, 4, "affine")
    end

    assert_raise EMLX.NIFError, ~r/7 bits is not supported/, fn -> EMLX.quantize(w, 32, 7) end

    assert_raise EMLX.NIFError, ~r/unsupported quantization mode "int4"/, fn ->
      EMLX.quantize(w, 32, 4, "int4")
    end

    assert_raise EMLX.NIFError, ~r/mxfp4 quantization requires group size 32/, fn ->
      EMLX.quantize(w, 64, 4, "mxfp4")
    end

    {wq, s, b} = EMLX.quantize(tensor(random_values(4 * 64, 2), {4, 64}), 32, 4)
    bad_scales = tensor(random_values(4 * 3, 3), {4, 3})

    assert_raise EMLX.NIFError, ~r/shape of scales does not match/, fn ->
      EMLX.dequantize(wq, bad_scales, bad_scales, 32, 4)
    end

    assert_raise EMLX.NIFError, ~r/biases must be given/, fn ->
      EMLX.dequantize(wq, s, nil, 32, 4)
    end

    assert_raise EMLX.NIFError, ~r/last axis of x \(10\)/, fn ->
      EMLX.quantized_matmul(tensor(random_values(10, 4), {1, 10}), wq, s, b, true, 32, 4)
    end

    out_of_range = tensor([7], {1}, {:s, 32})
    x = tensor(random_values(64, 5), {1, 1, 64})

    g =
      EMLX.gather_qmm(
        x,
        EMLX.reshape(wq, {1, 4, 8}),
        EMLX.reshape(s, {1, 4, 2}),
        EMLX.reshape(b, {1, 4, 2}),
        nil,
        out_of_range,
        true,
        32,
        4
      )

    assert_raise EMLX.NIFError, ~r/rhs_indices\[0\] = 7 is out of range for 1 experts/, fn ->
      EMLX.eval(g)
    end

    assert_raise EMLX.NIFError, ~r/group size -3 is not supported/, fn ->
      EMLX.quantize(w, -3, 4)
    end

    assert_raise EMLX.NIFError, fn -> EMLX.quantize(w, 32, 4, 17) end
    assert_raise EMLX.NIFError, fn -> EMLX.dequantize(w) end
    assert_raise EMLX.NIFError, fn -> EMLX.quantized_matmul(w, w) end
  end
end
