defmodule EMLX.FFTTest do
  # fft, ifft, fft2, ifft2 against a direct DFT computed here with :math.
  use ExUnit.Case, async: true

  import EMLX.TestHelpers

  @tol 1.0e-4

  # Direct DFT of a list of {re, im}; sign -1 forward, +1 inverse (scaled).
  defp dft(xs, sign) do
    n = length(xs)
    indexed = Enum.with_index(xs)

    for k <- 0..(n - 1) do
      {re, im} =
        Enum.reduce(indexed, {0.0, 0.0}, fn {{xr, xi}, j}, {sr, si} ->
          a = sign * 2 * :math.pi() * rem(j * k, n) / n
          {c, s} = {:math.cos(a), :math.sin(a)}
          {sr + xr * c - xi * s, si + xr * s + xi * c}
        end)

      if sign > 0, do: {re / n, im / n}, else: {re, im}
    end
  end

  # Pads with zeros or truncates to n.
  defp fit(xs, n), do: Enum.take(xs ++ List.duplicate({0.0, 0.0}, n), n)

  defp cplx(xs),
    do:
      Enum.map(xs, fn
        {_, _} = z -> z
        x -> {x * 1.0, 0.0}
      end)

  defp assert_close(got, want) do
    assert length(got) == length(want)

    for {{gr, gi}, {wr, wi}} <- Enum.zip(got, want) do
      assert abs(gr - wr) <= @tol * (1 + abs(wr)), "#{inspect(got)} vs #{inspect(want)}"
      assert abs(gi - wi) <= @tol * (1 + abs(wi)), "#{inspect(got)} vs #{inspect(want)}"
    end
  end

  # Applies a 1-D transform to every column of a row-major matrix.
  defp by_columns(rows, fun) do
    rows
    |> Enum.zip()
    |> Enum.map(&fun.(Tuple.to_list(&1)))
    |> Enum.zip()
    |> Enum.map(&Tuple.to_list/1)
  end

  test "fft of a real vector" do
    t = tensor([1.0, 2.0, 3.0, 4.0], {4})
    y = EMLX.fft(t, 0, 0)
    assert EMLX.scalar_type(y) == {:c, 64}
    assert EMLX.shape(y) == {4}
    assert_close(values(y), [{10.0, 0.0}, {-2.0, 2.0}, {-2.0, 0.0}, {-2.0, -2.0}])
  end

  test "fft and ifft of complex vectors of several lengths, with padding and truncation" do
    for n <- [1, 2, 3, 5, 7, 8, 12, 17] do
      xs = for j <- 1..n, do: {:math.sin(j * 1.3), :math.cos(j * 0.7)}
      t = tensor(xs, {n}, {:c, 64})
      assert_close(values(EMLX.fft(t, 0, -1)), dft(xs, -1))
      assert_close(values(EMLX.ifft(t, 0, 0)), dft(xs, 1))
      assert_close(values(EMLX.fft(t, n + 3, 0)), dft(fit(xs, n + 3), -1))
      m = max(div(n, 2), 1)
      assert_close(values(EMLX.ifft(t, m, 0)), dft(fit(xs, m), 1))
      assert_close(values(EMLX.ifft(EMLX.fft(t, 0, 0), 0, 0)), xs)
    end
  end

  test "fft along a non-last axis and of integer inputs" do
    rows = [[1, 2, 3], [4, 5, 6], [7, 8, 10], [0, -1, 2]]
    t = tensor(List.flatten(rows), {4, 3}, {:s, 32})
    y = EMLX.fft(t, 0, 0)
    assert EMLX.shape(y) == {4, 3}
    assert EMLX.scalar_type(y) == {:c, 64}
    want = rows |> Enum.map(&cplx/1) |> by_columns(&dft(&1, -1))
    assert_close(values(y), List.flatten(want))
  end

  test "fft2 and ifft2" do
    rows = for i <- 0..2, do: for(j <- 0..3, do: {i * 1.0 - j, :math.sin(i + 2.0 * j)})
    t = tensor(List.flatten(rows), {3, 4}, {:c, 64})
    want = rows |> Enum.map(&dft(&1, -1)) |> by_columns(&dft(&1, -1))
    assert_close(values(EMLX.fft2(t, [], nil)), List.flatten(want))
    assert_close(values(EMLX.fft2(t, [3, 4], [0, 1])), List.flatten(want))

    # Lengths (2, 5) over axes (0, 1): rows padded to 5, columns cut to 2.
    want = rows |> Enum.map(&dft(fit(&1, 5), -1)) |> by_columns(&dft(fit(&1, 2), -1))
    y = EMLX.fft2(t, [2, 5], [0, 1])
    assert EMLX.shape(y) == {2, 5}
    assert_close(values(y), List.flatten(want))

    back = EMLX.ifft2(EMLX.fft2(t, [], nil), [0, 0], [-2, -1])
    assert_close(values(back), List.flatten(rows))
  end

  test "errors raise EMLX.NIFError" do
    t = tensor([1.0, 2.0, 3.0, 4.0], {2, 2})
    assert_raise EMLX.NIFError, fn -> EMLX.fft(t, 0, 2) end
    assert_raise EMLX.NIFError, fn -> EMLX.ifft(t, -1, 0) end
    assert_raise EMLX.NIFError, fn -> EMLX.fft2(t, [2, 2, 2], nil) end
    assert_raise EMLX.NIFError, fn -> EMLX.fft2(t, [], [0, 0]) end
    assert_raise EMLX.NIFError, fn -> EMLX.ifft2(tensor([1.0], {1}), [], nil) end
  end
end
