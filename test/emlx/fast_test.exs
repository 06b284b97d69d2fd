defmodule EMLX.FastTest do
  # The fused transformer kernels through the NIF (EMLX.fast_*): values
  # against references computed here with :math and list arithmetic, the
  # {B, T, H, D} layout of the rope entry points that take tensors of
  # positions, and bad arguments raising EMLX.NIFError.
  use ExUnit.Case, async: true

  import EMLX.TestHelpers

  @x [[1.0, -2.0, 3.0, 0.5, -1.5], [0.25, 4.0, -0.75, 2.0, 1.0]]
  @w [0.5, 1.0, 1.5, 2.0, -1.0]
  @b [0.1, -0.2, 0.3, 0.0, 1.0]

  defp mean_of(xs), do: Enum.sum(xs) / length(xs)

  defp rms_ref(row, w, eps) do
    r = 1.0 / :math.sqrt(mean_of(Enum.map(row, &(&1 * &1))) + eps)
    Enum.zip_with(row, w, &(&1 * r * &2))
  end

  defp ln_ref(row, w, b, eps) do
    m = mean_of(row)
    v = mean_of(Enum.map(row, &((&1 - m) * (&1 - m))))
    r = 1.0 / :math.sqrt(v + eps)
    Enum.zip_with([row, w, b], fn [x, wi, bi] -> (x - m) * r * wi + bi end)
  end

  # split-half rope of one row at position pos (dims = length(row))
  defp rope_row(row, pos, base) do
    half = div(length(row), 2)
    {x1, x2} = Enum.split(row, half)

    turned =
      for {{a, b}, i} <- Enum.with_index(Enum.zip(x1, x2)) do
        th = pos * :math.pow(base, -2.0 * i / length(row))
        {a * :math.cos(th) - b * :math.sin(th), a * :math.sin(th) + b * :math.cos(th)}
      end

    Enum.map(turned, &elem(&1, 0)) ++ Enum.map(turned, &elem(&1, 1))
  end

  test "rms_norm, layer_norm and layer_norm_no_bias against the formulas" do
    x = tensor(List.flatten(@x), {2, 5})
    w = tensor(@w, {5})
    b = tensor(@b, {5})

    assert close?(
             values(EMLX.fast_rms_norm(x, w, 1.0e-5)),
             Enum.flat_map(@x, &rms_ref(&1, @w, 1.0e-5))
           )

    ones = List.duplicate(1.0, 5)
    zeros = List.duplicate(0.0, 5)

    assert close?(
             values(EMLX.fast_rms_norm(x, nil, 1.0e-5)),
             Enum.flat_map(@x, &rms_ref(&1, ones, 1.0e-5))
           )

    assert close?(
             values(EMLX.fast_layer_norm(x, w, b, 1.0e-5)),
             Enum.flat_map(@x, &ln_ref(&1, @w, @b, 1.0e-5))
           )

    assert close?(
             values(EMLX.fast_layer_norm_no_bias(x, w, 1.0e-5)),
             Enum.flat_map(@x, &ln_ref(&1, @w, zeros, 1.0e-5))
           )

    # bf16 in, bf16 out; bf16 x with an f32 weight promotes to f32 (MLX)
    xb = EMLX.astype(x, {:bf, 16})

    assert EMLX.scalar_type(EMLX.fast_rms_norm(xb, EMLX.astype(w, {:bf, 16}), 1.0e-5)) ==
             {:bf, 16}

    assert EMLX.scalar_type(EMLX.fast_rms_norm(xb, w, 1.0e-5)) == {:f, 32}

    assert close?(
             values(EMLX.fast_layer_norm(xb, nil, nil, 1.0e-5)),
             Enum.flat_map(@x, &ln_ref(&1, ones, zeros, 1.0e-5)),
             2.0e-2
           )
  end

  test "swiglu is silu(gate) * up" do
    g = [-30.0, -2.0, -0.5, 0.0, 0.5, 3.0, 30.0]
    u = [1.0, 2.0, -1.0, 5.0, 0.25, -3.0, 0.5]
    got = values(EMLX.fast_swiglu(tensor(g, {7}), tensor(u, {7})))
    ref = Enum.zip_with(g, u, fn gi, ui -> gi / (1.0 + :math.exp(-gi)) * ui end)
    assert close?(got, ref)
  end

  test "rope: T on axis -2; offset shifts positions" do
    # {1, 2, 3, 4}: {B, H, T, D}; every row turned by offset + t
    vals = for i <- 0..23, do: :math.sin(i * 0.7)
    rows = Enum.chunk_every(vals, 4)
    got = values(EMLX.fast_rope(tensor(vals, {1, 2, 3, 4}), 4, false, 10_000.0, 1.0, 7))

    ref =
      rows
      |> Enum.with_index()
      |> Enum.flat_map(fn {row, r} -> rope_row(row, 7 + rem(r, 3), 10_000.0) end)

    assert close?(got, ref)
  end

  test "rope_ids, rope_positions and rope_with_freqs take {B, T, H, D}: heads share an angle" do
    # {2, 3, 2, 4}: token t of batch b at offsets[b] + t, both heads alike
    vals = for i <- 0..47, do: :math.cos(i * 0.3)
    x = tensor(vals, {2, 3, 2, 4})
    offs = tensor([5, 40], {2}, {:s, 32})
    rows = Enum.chunk_every(vals, 4)

    pos_of = fn r -> Enum.at([5, 40], div(r, 6)) + rem(div(r, 2), 3) end

    ref =
      rows
      |> Enum.with_index()
      |> Enum.flat_map(fn {row, r} -> rope_row(row, pos_of.(r), 10_000.0) end)

    assert close?(values(EMLX.fast_rope_ids(x, 4, false, 10_000.0, 1.0, offs)), ref)

    positions = tensor([5, 6, 7, 40, 41, 42], {2, 3}, {:s, 64})
    assert close?(values(EMLX.fast_rope_positions(x, 4, false, 10_000.0, 1.0, positions)), ref)

    # MLX's freqs are base ** (2i / dims): the same rotation
    freqs = tensor([1.0, :math.pow(10_000.0, 0.5)], {2})
    assert close?(values(EMLX.fast_rope_with_freqs(x, 4, false, 1.0, offs, freqs)), ref)
  end

  test "bad arguments raise EMLX.NIFError" do
    x = tensor(List.flatten(@x), {2, 5})
    x3 = tensor(Enum.map(0..23, &(&1 * 1.0)), {1, 2, 3, 4})

    assert_raise EMLX.NIFError, ~r/weight has 4 elements/, fn ->
      EMLX.fast_rms_norm(x, tensor([1.0, 1.0, 1.0, 1.0], {4}), 1.0e-5)
    end

    assert_raise EMLX.NIFError, ~r/float32, float16 or bfloat16/, fn ->
      EMLX.fast_layer_norm(tensor([1, 2], {2}, {:s, 32}), nil, nil, 1.0e-5)
    end

    assert_raise EMLX.NIFError, ~r/rank >= 3/, fn ->
      EMLX.fast_rope(x, 4, false, 10_000.0, 1.0, 0)
    end

    assert_raise EMLX.NIFError, ~r/dims must be even/, fn ->
      EMLX.fast_rope(x3, 3, false, 10_000.0, 1.0, 0)
    end

    assert_raise EMLX.NIFError, ~r/position_ids must be \{B, T\}/, fn ->
      EMLX.fast_rope_positions(x3, 4, false, 10_000.0, 1.0, tensor([0, 1, 2], {1, 3}, {:s, 32}))
    end

    assert_raise EMLX.NIFError, ~r/offset must have an integer dtype/, fn ->
      EMLX.fast_rope_ids(x3, 4, false, 10_000.0, 1.0, tensor([0.0], {1}))
    end

    assert_raise EMLX.NIFError, ~r/same dtype/, fn ->
      EMLX.fast_swiglu(x, EMLX.astype(x, {:f, 16}))
    end

    assert_raise EMLX.NIFError, ~r/same shape/, fn ->
      EMLX.fast_swiglu(x, tensor([1.0, 2.0], {2}))
    end

    assert_raise EMLX.NIFError, fn -> EMLX.fast_rms_norm(x, nil, :nan) end
  end
end
