defmodule EMLX.ModelOpsTest do
  # MLX's everyday model ops through the NIF: values against references
  # computed here with :math and list arithmetic, and bad arguments raising
  # EMLX.NIFError (never crashing the BEAM).
  use ExUnit.Case, async: true

  import EMLX.TestHelpers
  import Bitwise

  @rows [[1.0, 2.0, 4.0, -1.0], [0.5, 0.5, 3.0, 10.0], [-2.0, 0.0, 1.0, 1.0]]

  defp t34, do: tensor(List.flatten(@rows), {3, 4})
  defp mean_of(xs), do: Enum.sum(xs) / length(xs)

  defp var_of(xs, ddof) do
    m = mean_of(xs)
    Enum.sum(Enum.map(xs, &((&1 - m) * (&1 - m)))) / (length(xs) - ddof)
  end

  defp lse(xs) do
    m = Enum.max(xs)
    m + :math.log(Enum.sum(Enum.map(xs, &:math.exp(&1 - m))))
  end

  defp cols, do: Enum.zip_with(@rows, & &1)

  describe "statistics" do
    test "mean, var, std, logsumexp over rows and columns" do
      t = t34()
      assert close?(values(EMLX.mean(t, [1], false)), Enum.map(@rows, &mean_of/1))
      assert close?(values(EMLX.mean(t, [0], false)), Enum.map(cols(), &mean_of/1))
      assert close?(values(EMLX.mean(t, nil, false)), [mean_of(List.flatten(@rows))])
      assert close?(values(EMLX.var(t, [-1], false, 0)), Enum.map(@rows, &var_of(&1, 0)))
      assert close?(values(EMLX.var(t, [0], false, 1)), Enum.map(cols(), &var_of(&1, 1)))

      assert close?(
               values(EMLX.std(t, [1], false, 1)),
               Enum.map(@rows, &:math.sqrt(var_of(&1, 1)))
             )

      assert close?(values(EMLX.logsumexp(t, [1], false)), Enum.map(@rows, &lse/1))
      assert EMLX.shape(EMLX.mean(t, [1], true)) == {3, 1}
      assert EMLX.shape(EMLX.var(t, [], false, 0)) == {}
    end

    test "integer inputs give f32; ddof >= n gives infinity; empty means are NaN" do
      i = tensor([1, 2, 3, 6], {4}, {:s, 32})
      m = EMLX.mean(i, nil, false)
      assert EMLX.scalar_type(m) == {:f, 32}
      assert values(m) == [3.0]
      assert values(EMLX.var(tensor([1.0, 2.0], {2}), nil, false, 2)) == [:infinity]
      assert values(EMLX.var(tensor([1.0, 1.0], {2}), nil, false, 5)) == [:nan]
      empty = EMLX.reshape(tensor([], {0}), {0, 3})
      assert values(EMLX.mean(empty, [0], false)) == [:nan, :nan, :nan]
      assert values(EMLX.logsumexp(empty, [0], false)) == List.duplicate(:neg_infinity, 3)
    end

    test "softmax and log_softmax sum to one / are x - logsumexp" do
      t = t34()
      s = values(EMLX.softmax(t, [1], false))

      ref = for row <- @rows, l = lse(row), x <- row, do: :math.exp(x - l)

      assert close?(s, ref)

      assert close?(
               values(EMLX.log_softmax(t, [-1], true)),
               for(row <- @rows, l = lse(row), x <- row, do: x - l)
             )

      # over axis 0: each column sums to one
      c = EMLX.softmax(t, [0], false) |> EMLX.sum([0], false) |> values()
      assert close?(c, [1.0, 1.0, 1.0, 1.0])
      big = tensor([1000.0, 1000.0], {2})
      assert values(EMLX.softmax(big, nil, false)) == [0.5, 0.5]
      h = EMLX.softmax(tensor([60000.0, 59000.0], {2}, {:f, 16}), nil, true)
      assert EMLX.scalar_type(h) == {:f, 16}
      assert values(h) == [1.0, 0.0]
    end
  end

  describe "elementwise" do
    test "logaddexp, log2, log10, isfinite, nan_to_num, square, reciprocal" do
      a = tensor([0.0, 1.0, 700.0], {3})
      b = tensor([0.0, -2.0, 699.0], {3})

      assert close?(values(EMLX.logaddexp(a, b)), [
               :math.log(2),
               1 + :math.log(1 + :math.exp(-3)),
               700 + :math.log(1 + :math.exp(-1))
             ])

      x = tensor([1.0, 8.0, 1000.0], {3})
      assert values(EMLX.log2(x)) |> close?([0.0, 3.0, :math.log2(1000)])
      assert close?(values(EMLX.log10(x)), [0.0, :math.log10(8.0), 3.0])

      s =
        EMLX.from_blob(
          <<0::16, 0x7E00::16-native, 0x7C00::16-native, 0xFC00::16-native>>,
          {4},
          {:f, 16},
          :cpu
        )

      assert values(EMLX.isfinite(s)) == [1, 0, 0, 0]
      assert values(EMLX.isposinf(s)) == [0, 0, 1, 0]
      assert values(EMLX.isneginf(s)) == [0, 0, 0, 1]
      assert values(EMLX.nan_to_num(s, 0.0)) == [0.0, 0.0, 65504.0, -65504.0]
      assert values(EMLX.nan_to_num(s, -1.0, 7.0, -7.0)) == [0.0, -1.0, 7.0, -7.0]
      assert values(EMLX.square(tensor([-3, 4], {2}, {:s, 32}))) == [9, 16]
      assert values(EMLX.reciprocal(tensor([4, -2], {2}, {:s, 32}))) == [0.25, -0.5]
    end

    test "linspace and tri" do
      assert values(EMLX.linspace(0, 1, 5, {:f, 64}, :cpu)) == [0.0, 0.25, 0.5, 0.75, 1.0]
      assert values(EMLX.linspace(2, 3, 1, {:f, 32}, :cpu)) == [2.0]
      assert values(EMLX.tri(2, 3, 0, {:s, 32}, :cpu)) == [1, 0, 0, 1, 1, 0]
    end
  end

  describe "layout" do
    test "tril, triu, diagonal, trace, flip, roll, tile, repeat" do
      t = t34()
      flat = List.flatten(@rows)

      assert values(EMLX.tril(t, 0)) == [
               1.0,
               0.0,
               0.0,
               0.0,
               0.5,
               0.5,
               0.0,
               0.0,
               -2.0,
               0.0,
               1.0,
               0.0
             ]

      assert values(EMLX.triu(t, 1)) == [
               0.0,
               2.0,
               4.0,
               -1.0,
               0.0,
               0.0,
               3.0,
               10.0,
               0.0,
               0.0,
               0.0,
               1.0
             ]

      assert values(EMLX.diagonal(t, 1, 0, 1)) == [2.0, 3.0, 1.0]
      assert values(EMLX.trace(t, 0, 0, 1)) == [1.0 + 0.5 + 1.0]
      assert values(EMLX.flip(t, [1])) == Enum.flat_map(@rows, &Enum.reverse/1)
      assert values(EMLX.flip(t, nil)) == Enum.reverse(flat)
      assert values(EMLX.roll(t, [1], nil)) == [List.last(flat) | Enum.drop(flat, -1)]
      assert values(EMLX.roll(t, [-1], [0])) == List.flatten(tl(@rows) ++ [hd(@rows)])
      assert EMLX.shape(EMLX.tile(t, [2, 1])) == {6, 4}
      assert values(EMLX.tile(t, [2, 1])) == flat ++ flat
      assert values(EMLX.repeat(tensor([1.0, 2.0], {2}), 2)) == [1.0, 1.0, 2.0, 2.0]
      assert EMLX.shape(EMLX.repeat(t, 3, 0)) == {9, 4}
    end

    test "flatten, moveaxis, swapaxes, split, outer, put_along_axis" do
      t = EMLX.reshape(t34(), {3, 2, 2})
      assert EMLX.shape(EMLX.flatten(t, 1, 2)) == {3, 4}
      assert EMLX.shape(EMLX.moveaxis(t, 0, -1)) == {2, 2, 3}
      assert EMLX.shape(EMLX.swapaxes(t, 0, 2)) == {2, 2, 3}
      parts = EMLX.split(t34(), 2, 1)

      assert Enum.map(parts, &values/1) == [
               Enum.flat_map(@rows, &Enum.take(&1, 2)),
               Enum.flat_map(@rows, &Enum.drop(&1, 2))
             ]

      assert t34() |> EMLX.split_at([1], 0) |> Enum.map(&EMLX.shape/1) == [{1, 4}, {2, 4}]

      assert values(EMLX.outer(tensor([1.0, 2.0], {2}), tensor([3.0, 4.0], {2}))) == [
               3.0,
               4.0,
               6.0,
               8.0
             ]

      base = tensor([0.0, 0.0, 0.0, 0.0, 0.0, 0.0], {2, 3})
      idx = tensor([2, 0], {2, 1}, {:s, 32})
      vals = tensor([5.0, 7.0], {2, 1})
      assert values(EMLX.put_along_axis(base, idx, vals, 1)) == [0.0, 0.0, 5.0, 7.0, 0.0, 0.0]
    end

    test "topk, partition, argpartition, addmm" do
      t = t34()
      assert values(EMLX.topk(t, 2, 1)) == [2.0, 4.0, 3.0, 10.0, 1.0, 1.0]
      assert values(EMLX.topk(t, 1)) == [10.0]
      p = values(EMLX.partition(t, 1, 1))
      assert Enum.chunk_every(p, 4) |> Enum.map(&Enum.at(&1, 1)) == [1.0, 0.5, 0.0]
      assert EMLX.scalar_type(EMLX.argpartition(t, 1, 1)) == {:u, 32}
      a = tensor([1.0, 2.0, 3.0, 4.0], {2, 2})
      i = tensor([1.0, 0.0, 0.0, 1.0], {2, 2})
      assert values(EMLX.addmm(i, a, i, 2.0, 3.0)) == [5.0, 4.0, 6.0, 11.0]
    end
  end

  describe "bad arguments raise EMLX.NIFError" do
    test "axes, ddof, k, shapes and types" do
      t = t34()

      assert_raise EMLX.NIFError, ~r/mean: axis 2 is out of range/, fn ->
        EMLX.mean(t, [2], false)
      end

      assert_raise EMLX.NIFError, ~r/var.*repeated/, fn -> EMLX.var(t, [1, -1], false, 0) end
      assert_raise EMLX.NIFError, ~r/ddof/, fn -> EMLX.var(t, [1], false, 1 <<< 40) end
      c = EMLX.scalar_tensor({1.0, 2.0}, {:c, 64}, :cpu)
      assert_raise EMLX.NIFError, ~r/softmax: complex64/, fn -> EMLX.softmax(c, nil, false) end
      assert_raise EMLX.NIFError, ~r/topk: k 5/, fn -> EMLX.topk(t, 5, 1) end
      assert_raise EMLX.NIFError, ~r/split.*equal parts/, fn -> EMLX.split(t, 3, 1) end
      assert_raise EMLX.NIFError, ~r/tril/, fn -> EMLX.tril(tensor([1.0], {1}), 0) end

      assert_raise EMLX.NIFError, ~r/linspace: argument 3/, fn ->
        EMLX.linspace(0, 1, -1, {:f, 32}, :cpu)
      end

      assert_raise EMLX.NIFError, ~r/roll/, fn -> EMLX.roll(t, [1, 2], [0]) end
      assert_raise EMLX.NIFError, ~r/diagonal/, fn -> EMLX.diagonal(t, 0, 1, 1) end
      assert_raise EMLX.NIFError, ~r/addmm|matmul/, fn -> EMLX.addmm(t, t, t, 1.0, 1.0) end
      assert_raise EMLX.NIFError, fn -> EMLX.mean(:not_a_tensor, nil, false) end
    end
  end
end
