defmodule EMLX.OpsTest do
  # Reductions, scans, sorting, indexing and contractions against values
  # computed here with Enum.
  use ExUnit.Case, async: true

  import EMLX.TestHelpers

  # rows of a row-major list
  defp rows(list, n), do: Enum.chunk_every(list, n)
  defp transpose_rows(rows), do: rows |> Enum.zip() |> Enum.map(&Tuple.to_list/1)

  setup do
    xs = [3.0, -1.0, 4.0, 1.0, -5.0, 9.0, 2.0, 6.0, -5.0, 3.0, 5.0, 8.0]
    %{xs: xs, t: tensor(xs, {3, 4})}
  end

  describe "reductions" do
    test "product, min, all, any", %{xs: xs, t: t} do
      by_col = transpose_rows(rows(xs, 4))
      assert EMLX.product(t, nil, false) |> EMLX.item() == Enum.reduce(xs, &*/2)

      assert values(EMLX.product(t, [0], false)) ==
               Enum.map(by_col, &Enum.reduce(&1, fn a, b -> a * b end))

      assert EMLX.min(t, [], false) |> EMLX.item() == Enum.min(xs)
      assert read(EMLX.min(t, [1], true)) == {{3, 1}, Enum.map(rows(xs, 4), &Enum.min/1)}

      z = tensor([1, 0, 2, 3, 4, 5], {2, 3}, {:s, 32})
      assert read(EMLX.all(z, [1], false)) == {{2}, [0, 1]}
      assert read(EMLX.any(z, nil, false)) == {{}, [1]}
      assert EMLX.all(z, nil, false) |> EMLX.scalar_type() == :bool
      assert EMLX.any(tensor([0, 0], {2}, {:u, 8}), [], false) |> EMLX.item() == 0
    end

    test "argmax and argmin", %{xs: xs, t: t} do
      index_of = fn list, value -> Enum.find_index(list, &(&1 == value)) end
      assert EMLX.argmax(t, false) |> EMLX.item() == index_of.(xs, Enum.max(xs))
      assert EMLX.argmin(t, false) |> EMLX.item() == index_of.(xs, Enum.min(xs))
      assert EMLX.argmax(t, true) |> EMLX.shape() == {1, 1}

      expected = Enum.map(rows(xs, 4), &index_of.(&1, Enum.max(&1)))
      assert read(EMLX.argmax(t, 1, false)) == {{3}, expected}
      expected = Enum.map(transpose_rows(rows(xs, 4)), &index_of.(&1, Enum.min(&1)))
      assert read(EMLX.argmin(t, 0, true)) == {{1, 4}, expected}
      assert EMLX.argmax(t, 0, false) |> EMLX.scalar_type() == {:u, 32}
    end

    test "cumulative sums, products, max and min", %{xs: xs, t: t} do
      scan = fn list, fun -> list |> Enum.scan(fun) end
      by_row = rows(xs, 4)

      assert values(EMLX.cumulative_sum(t, 1, false, true)) ==
               Enum.flat_map(by_row, &scan.(&1, fn x, acc -> x + acc end))

      assert values(EMLX.cumulative_max(t, 1, false, true)) ==
               Enum.flat_map(by_row, &scan.(&1, fn x, acc -> max(x, acc) end))

      assert values(EMLX.cumulative_min(t, -1, false, true)) ==
               Enum.flat_map(by_row, &scan.(&1, fn x, acc -> min(x, acc) end))

      v = tensor([1, 2, 3, 4], {4}, {:s, 32})
      assert values(EMLX.cumulative_product(v, 0, false, true)) == [1, 2, 6, 24]
      assert values(EMLX.cumulative_sum(v, 0, true, true)) == [10, 9, 7, 4]
      assert values(EMLX.cumulative_sum(v, 0, false, false)) == [0, 1, 3, 6]
    end

    test "sort and argsort", %{xs: xs, t: t} do
      assert values(EMLX.sort(t, 1)) == Enum.flat_map(rows(xs, 4), &Enum.sort/1)
      v = tensor([3.0, 1.0, 2.0, 1.0], {4})
      assert values(EMLX.argsort(v, 0)) == [1, 3, 2, 0]
      assert values(EMLX.sort(tensor([2.0, :nan, 1.0], {3}), 0)) == [1.0, 2.0, :nan]
    end
  end

  describe "indexing" do
    test "take and take_along_axis", %{xs: xs, t: t} do
      idx = tensor([2, 0], {2}, {:s, 32})
      by_row = rows(xs, 4)
      assert read(EMLX.take(t, idx, 0)) == {{2, 4}, Enum.at(by_row, 2) ++ Enum.at(by_row, 0)}

      assert read(EMLX.take(t, idx, 1)) ==
               {{3, 2}, Enum.flat_map(by_row, &[Enum.at(&1, 2), Enum.at(&1, 0)])}

      along = tensor([3, 0, 1], {3, 1}, {:s, 32})

      assert read(EMLX.take_along_axis(t, along, 1)) ==
               {{3, 1},
                [
                  Enum.at(Enum.at(by_row, 0), 3),
                  Enum.at(Enum.at(by_row, 1), 0),
                  Enum.at(Enum.at(by_row, 2), 1)
                ]}
    end

    test "gather, scatter and scatter_add" do
      m = tensor(Enum.map(0..11, &(&1 * 1.0)), {3, 4})
      rows_idx = tensor([2, 0], {2}, {:s, 32})
      g = EMLX.gather(m, [rows_idx], [0], [1, 4])
      assert read(g) == {{2, 1, 4}, [8.0, 9.0, 10.0, 11.0, 0.0, 1.0, 2.0, 3.0]}

      updates = tensor([100.0, 200.0], {2, 1, 1})
      cols = tensor([1, 3], {2}, {:s, 32})
      s = EMLX.scatter(m, [rows_idx, cols], updates, [0, 1])

      expected =
        Enum.map(0..11, &(&1 * 1.0)) |> List.replace_at(9, 100.0) |> List.replace_at(3, 200.0)

      assert values(s) == expected

      dup = tensor([0, 0], {2}, {:s, 32})
      ones = tensor([1.0, 1.0], {2, 1, 1})
      sa = EMLX.scatter_add(m, [dup, dup], ones, [0, 1])
      assert values(sa) |> hd() == 2.0
    end

    test "slice_update" do
      m = tensor(Enum.map(0..5, &(&1 * 1.0)), {2, 3})
      u = tensor([-1.0, -2.0], {1, 2})
      assert values(EMLX.slice_update(m, u, [1, 1], [2, 3])) == [0.0, 1.0, 2.0, 3.0, -1.0, -2.0]
      # the original is unchanged
      assert values(m) == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    end

    test "pad" do
      v = tensor([1.0, 2.0], {1, 2})
      zero = EMLX.scalar_tensor(0.0, {:f, 32}, :cpu)
      assert read(EMLX.pad(v, [1], [1], [2], zero)) == {{1, 5}, [0.0, 1.0, 2.0, 0.0, 0.0]}
      nine = EMLX.scalar_tensor(9, {:f, 32}, :cpu)
      assert read(EMLX.pad(v, [0, -1], [1, -1], [0, 0], nine)) == {{2, 1}, [9.0, 2.0]}
    end

    test "concatenate and stack" do
      a = tensor([1.0, 2.0], {1, 2})
      b = tensor([3, 4], {1, 2}, {:s, 32})
      assert read(EMLX.concatenate([a, b], 0)) == {{2, 2}, [1.0, 2.0, 3.0, 4.0]}
      assert read(EMLX.concatenate([a, a, a], 1)) == {{1, 6}, [1.0, 2.0, 1.0, 2.0, 1.0, 2.0]}
      assert read(EMLX.stack([a, b], 1)) == {{1, 2, 2}, [1.0, 2.0, 3.0, 4.0]}
    end

    test "as_strided and view" do
      v = tensor(Enum.map(0..5, &(&1 * 1.0)), {6})
      assert read(EMLX.as_strided(v, {2, 2}, [2, 1], 1)) == {{2, 2}, [1.0, 2.0, 3.0, 4.0]}

      assert_raise EMLX.NIFError, ~r/as_strided:/, fn -> EMLX.as_strided(v, {2}, [10], 0) end

      f = tensor([1.0], {1})
      assert read(EMLX.view(f, {:u, 8})) == {{4}, :binary.bin_to_list(<<1.0::float-32-native>>)}
      assert read(EMLX.view(f, {:s, 32})) == {{1}, [0x3F800000]}
    end
  end

  describe "contractions" do
    test "tensordot is a matrix product", %{xs: xs, t: t} do
      w = Enum.map(1..8, &(&1 * 0.5))
      b = tensor(w, {4, 2})
      a_rows = rows(xs, 4)
      b_cols = transpose_rows(rows(w, 2))

      expected = for r <- a_rows, c <- b_cols, do: Enum.zip_with(r, c, &*/2) |> Enum.sum()

      assert read(EMLX.tensordot(t, b, [1], [0])) |> elem(0) == {3, 2}
      assert close?(values(EMLX.tensordot(t, b, [1], [0])), expected)
      # no contracting axes: the outer product
      assert EMLX.tensordot(t, b, [], []) |> EMLX.shape() == {3, 4, 4, 2}
    end

    test "tensordot with batch axes" do
      a = tensor(Enum.map(1..12, &(&1 * 1.0)), {2, 2, 3})
      b = tensor(Enum.map(1..6, &(&1 * 1.0)), {2, 3})
      r = EMLX.tensordot(a, b, [2], [1], [0], [0])
      assert EMLX.shape(r) == {2, 2}

      expected =
        for batch <- 0..1, row <- 0..1 do
          av = for k <- 0..2, do: (batch * 6 + row * 3 + k + 1) * 1.0
          bv = for k <- 0..2, do: (batch * 3 + k + 1) * 1.0
          Enum.zip_with(av, bv, &*/2) |> Enum.sum()
        end

      assert values(r) == expected
    end

    test "einsum" do
      a = tensor([1.0, 2.0, 3.0, 4.0], {2, 2})
      b = tensor([5.0, 6.0, 7.0, 8.0], {2, 2})
      assert values(EMLX.einsum([a, b], "ij,jk->ik")) == [19.0, 22.0, 43.0, 50.0]
      assert EMLX.einsum([a], "ii->") |> EMLX.item() == 5.0

      assert_raise EMLX.NIFError, ~r/^einsum:/, fn -> EMLX.einsum([a, b], "ij->") end
    end
  end
end
