defmodule EMLX.AttentionTest do
  # The attention functions on small shapes against a reference written in
  # plain Elixir (softmax(scale * q k^T) v per query row, GQA head mapping,
  # the documented masking rules), and their error cases.
  use ExUnit.Case, async: true

  import EMLX.TestHelpers

  @tol 1.0e-5

  # Deterministic values in [-2, 2).
  defp vals(n, seed), do: for(i <- 0..(n - 1), do: rem(i * 37 + seed * 11, 64) / 16 - 2)

  defp at4(list, {_, n1, n2, n3}, {a, b, c, d}),
    do: Enum.at(list, ((a * n1 + b) * n2 + c) * n3 + d)

  # q {B, Nq, Tq, D}, k/v {B, Nkv, Tkv, D}; visible.(b, n, i, j); sinks list or nil.
  defp reference(q, k, v, {bs, nq, tq, d}, {_, nkv, tkv, _}, scale, visible, sinks \\ nil) do
    g = div(nq, nkv)

    for b <- 0..(bs - 1), n <- 0..(nq - 1), i <- 0..(tq - 1) do
      h = div(n, g)

      scores =
        for j <- 0..(tkv - 1), visible.(b, n, i, j) do
          s =
            Enum.sum(
              for x <- 0..(d - 1),
                  do:
                    at4(q, {bs, nq, tq, d}, {b, n, i, x}) *
                      at4(k, {bs, nkv, tkv, d}, {b, h, j, x})
            )

          {j, s * scale}
        end

      sink = if sinks, do: [Enum.at(sinks, n)], else: []
      m = Enum.max(Enum.map(scores, &elem(&1, 1)) ++ sink, fn -> nil end)

      cond do
        m == nil ->
          # nothing visible: MLX's mean of V
          for x <- 0..(d - 1),
              do:
                Enum.sum(for j <- 0..(tkv - 1), do: at4(v, {bs, nkv, tkv, d}, {b, h, j, x})) / tkv

        true ->
          den =
            Enum.sum(
              Enum.map(scores, fn {_, s} -> :math.exp(s - m) end) ++
                Enum.map(sink, &:math.exp(&1 - m))
            )

          for x <- 0..(d - 1) do
            Enum.sum(
              for {j, s} <- scores, do: :math.exp(s - m) * at4(v, {bs, nkv, tkv, d}, {b, h, j, x})
            ) / den
          end
      end
    end
    |> List.flatten()
  end

  defp assert_close(got, want, tol \\ @tol) do
    assert length(got) == length(want)

    for {g, w} <- Enum.zip(got, want),
        do: assert(abs(g - w) <= tol * (1 + abs(w)), "got #{inspect(got)}, want #{inspect(want)}")
  end

  setup do
    qs = {1, 4, 3, 4}
    ks = {1, 2, 5, 4}
    q = vals(48, 1)
    k = vals(40, 2)
    v = vals(40, 3)

    %{
      qs: qs,
      ks: ks,
      q: q,
      k: k,
      v: v,
      qt: tensor(q, qs),
      kt: tensor(k, ks),
      vt: tensor(v, ks)
    }
  end

  test "fast_sdpa with GQA, with and without sinks", c do
    want = reference(c.q, c.k, c.v, c.qs, c.ks, 0.5, fn _, _, _, _ -> true end)
    out = EMLX.fast_sdpa(c.qt, c.kt, c.vt, 0.5)
    assert EMLX.shape(out) == {1, 4, 3, 4}
    assert_close(values(out), want)

    sinks = [0.5, -1.0, 2.0, 0.0]
    want = reference(c.q, c.k, c.v, c.qs, c.ks, 0.5, fn _, _, _, _ -> true end, sinks)
    assert_close(values(EMLX.fast_sdpa(c.qt, c.kt, c.vt, 0.5, tensor(sinks, {4}))), want)
  end

  test "causal (bottom-right), bool mask with a dead row, key mask", c do
    want = reference(c.q, c.k, c.v, c.qs, c.ks, 0.5, fn _, _, i, j -> j <= i + 2 end)
    assert_close(values(EMLX.fast_sdpa_causal(c.qt, c.kt, c.vt, 0.5)), want)

    mask = for i <- 0..2, j <- 0..4, do: if(i == 1, do: 0, else: rem(i + j, 2))

    want =
      reference(c.q, c.k, c.v, c.qs, c.ks, 0.5, fn _, _, i, j -> Enum.at(mask, i * 5 + j) == 1 end)

    got = values(EMLX.fast_sdpa_masked(c.qt, c.kt, c.vt, 0.5, tensor(mask, {3, 5}, :bool)))
    assert_close(got, want)

    km = [1, 0, 1, 1, 0]

    want =
      reference(c.q, c.k, c.v, c.qs, c.ks, 0.5, fn _, _, i, j ->
        j <= i + 2 and Enum.at(km, j) == 1
      end)

    got =
      values(
        EMLX.fast_sdpa_causal_key_masked(c.qt, c.kt, c.vt, 0.5, tensor(km, {1, 5}, {:s, 32}))
      )

    assert_close(got, want)
  end

  test "additive mask", c do
    mask = for x <- 0..14, do: -rem(x, 3) * 1.5

    # scale 1: scores q.k plus the mask, softmax over all keys
    got = values(EMLX.fast_sdpa_masked(c.qt, c.kt, c.vt, 1.0, tensor(mask, {3, 5})))

    want =
      for n <- 0..3, i <- 0..2 do
        h = div(n, 2)

        s =
          for j <- 0..4 do
            Enum.sum(
              for x <- 0..3, do: at4(c.q, c.qs, {0, n, i, x}) * at4(c.k, c.ks, {0, h, j, x})
            ) +
              Enum.at(mask, i * 5 + j)
          end

        m = Enum.max(s)
        w = Enum.map(s, &:math.exp(&1 - m))
        den = Enum.sum(w)

        for x <- 0..3,
            do:
              Enum.sum(for {wj, j} <- Enum.with_index(w), do: wj * at4(c.v, c.ks, {0, h, j, x})) /
                den
      end
      |> List.flatten()

    assert_close(got, want)
  end

  test "kv_cache_attention (BTND) updates the caches and attends the prefix" do
    # B 1, T_max 6, N_kv 1, D 2; two cached rows, one new; q has 2 heads
    kc = tensor(List.duplicate(0.0, 12), {1, 6, 1, 2})
    vc = tensor(List.duplicate(0.0, 12), {1, 6, 1, 2})

    {_, kc, vc} =
      EMLX.kv_cache_attention(
        tensor([0.0, 0, 0, 0], {1, 1, 2, 2}),
        tensor([1.0, 0, 0, 1], {1, 2, 1, 2}),
        tensor([1.0, 2, 3, 4], {1, 2, 1, 2}),
        kc,
        vc,
        0,
        1.0
      )

    q = tensor([1.0, 0, 0, 1], {1, 1, 2, 2})

    {att, kc2, vc2} =
      EMLX.kv_cache_attention(
        q,
        tensor([1.0, 1], {1, 1, 1, 2}),
        tensor([5.0, 6], {1, 1, 1, 2}),
        kc,
        vc,
        2,
        1.0
      )

    assert EMLX.shape(att) == {1, 1, 2, 2}
    assert values(kc2) == [1.0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0]
    assert values(vc2) == [1.0, 2, 3, 4, 5, 6, 0, 0, 0, 0, 0, 0]
    # head 0 (q = [1, 0]) scores 1, 0, 1; head 1 (q = [0, 1]) scores 0, 1, 1
    e = :math.exp(1)
    h0 = [(e * 1 + 3 + e * 5) / (2 * e + 1), (e * 2 + 4 + e * 6) / (2 * e + 1)]
    h1 = [(1 + e * 3 + e * 5) / (2 * e + 1), (2 + e * 4 + e * 6) / (2 * e + 1)]
    assert_close(values(att), h0 ++ h1)
    # the inputs stay usable
    assert values(kc) |> length() == 12
  end

  test "kv_cache_sdpa_update takes the caches over and updates them in place" do
    kc = tensor(List.duplicate(1.0, 16), {1, 1, 8, 2})
    vc = tensor(List.duplicate(1.0, 16), {1, 1, 8, 2})

    {att, kc2, vc2} =
      EMLX.kv_cache_sdpa_update(
        tensor([1.0, 1], {1, 1, 1, 2}),
        tensor([2.0, 2], {1, 1, 1, 2}),
        tensor([3.0, 3], {1, 1, 1, 2}),
        kc,
        vc,
        1,
        0.5
      )

    assert_raise EMLX.NIFError, fn -> EMLX.to_blob(kc) end
    assert values(kc2) == [1.0, 1, 2, 2] ++ List.duplicate(1.0, 12)
    # scores 1 and 2 (times 0.5 of q.k = 2 and 4): weights e^1, e^2 over values 1 and 3
    w = :math.exp(1) / (:math.exp(1) + :math.exp(2))
    assert_close(values(att), List.duplicate(w * 1 + (1 - w) * 3, 2))
    assert length(values(vc2)) == 16
  end

  test "causal_kv_attention options" do
    kc = tensor(List.duplicate(0.0, 8), {1, 4, 1, 2})
    q = tensor([1.0, 0], {1, 1, 1, 2})
    nk = tensor([1.0, 2], {1, 1, 1, 2})

    {att, _, _} = EMLX.causal_kv_attention(q, nk, nk, kc, kc, 0, scale: 1.0)
    assert_close(values(att), [1.0, 2.0])

    {att, _, _} =
      EMLX.causal_kv_attention(q, nk, nk, kc, kc, 1,
        scale: 1.0,
        key_mask: tensor([0, 1], {1, 2}, {:s, 32})
      )

    assert_close(values(att), [1.0, 2.0])

    assert_raise ArgumentError, fn -> EMLX.causal_kv_attention(q, nk, nk, kc, kc, 0, []) end

    assert_raise ArgumentError, fn ->
      EMLX.causal_kv_attention(q, nk, nk, kc, kc, 0, scale: 1.0, bogus: 1)
    end
  end

  test "errors are EMLX.NIFError with the reason", c do
    e =
      assert_raise EMLX.NIFError, fn ->
        EMLX.fast_sdpa(tensor(c.q, {4, 3, 4}), c.kt, c.vt, 0.5)
      end

    assert e.message =~ "rank 4"

    bad_heads = tensor(vals(60, 4), {1, 3, 5, 4})
    e = assert_raise EMLX.NIFError, fn -> EMLX.fast_sdpa(c.qt, bad_heads, bad_heads, 0.5) end
    assert e.message =~ "multiple"

    e =
      assert_raise EMLX.NIFError, fn ->
        EMLX.fast_sdpa(c.qt, tensor(c.k, c.ks, {:f, 16}), c.vt, 0.5)
      end

    assert e.message =~ "same dtype"

    e =
      assert_raise EMLX.NIFError, fn ->
        EMLX.fast_sdpa_masked(c.qt, c.kt, c.vt, 0.5, tensor([1, 0], {2}, :bool))
      end

    assert e.message =~ "broadcast"

    kc = tensor(List.duplicate(0.0, 8), {1, 4, 1, 2})
    nk = tensor([1.0, 2], {1, 1, 1, 2})

    e =
      assert_raise EMLX.NIFError, fn ->
        EMLX.kv_cache_attention(tensor([1.0, 0], {1, 1, 1, 2}), nk, nk, kc, kc, 4, 1.0)
      end

    assert e.message =~ "offset"

    assert_raise EMLX.NIFError, fn -> EMLX.fast_sdpa(c.qt, c.kt, :not_a_tensor, 0.5) end
  end
end
