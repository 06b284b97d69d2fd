defmodule EMLX.LinalgTest do
  # The linear algebra functions on small matrices, checked by
  # reconstruction and against values worked out by hand (or MLX's documented
  # examples), with plain Elixir lists for the arithmetic.
  use ExUnit.Case, async: true

  import EMLX.TestHelpers

  @tol 1.0e-4

  defp rows(list, n), do: Enum.chunk_every(list, n)

  defp matmul(a, b) do
    cols = b |> Enum.zip() |> Enum.map(&Tuple.to_list/1)

    for r <- a,
        do: for(c <- cols, do: Enum.zip(r, c) |> Enum.map(fn {x, y} -> x * y end) |> Enum.sum())
  end

  defp assert_close(got, want, tol \\ @tol) do
    got = List.flatten(got)
    want = List.flatten(want)
    assert length(got) == length(want)

    for {g, w} <- Enum.zip(got, want) do
      assert abs(g - w) <= tol, "got #{inspect(got)}, want #{inspect(want)}"
    end
  end

  defp identity(n), do: for(i <- 1..n, do: for(j <- 1..n, do: if(i == j, do: 1.0, else: 0.0)))

  setup do
    %{
      spd: tensor([4.0, 1.0, 1.0, 3.0], {2, 2}),
      a3: tensor([2.0, 5, 7, 3, 4, 6, 1, 8, 9], {3, 3})
    }
  end

  test "inv and solve", %{spd: spd, a3: a3} do
    assert_close(values(EMLX.linalg_inv(spd)), [3 / 11, -1 / 11, -1 / 11, 4 / 11])

    inv3 = EMLX.linalg_inv(a3)
    assert_close(matmul(rows(values(a3), 3), rows(values(inv3), 3)), identity(3))

    x = EMLX.linalg_solve(spd, tensor([1.0, 9.0], {2}))
    assert read(x) |> elem(0) == {2}
    assert_close(values(x), [-6 / 11, 35 / 11])

    # batch axes broadcast: a {2, 2} against b {3, 2, 1}; each batch solves
    # its own right-hand side (A x = b, checked here in Elixir)
    bs = [[1.0, 9.0], [2.0, 0.0], [-1.0, 3.0]]
    xb = EMLX.linalg_solve(spd, tensor(List.flatten(bs), {3, 2, 1}))
    assert EMLX.shape(xb) == {3, 2, 1}
    xs = rows(values(xb), 2)
    a = [[4.0, 1.0], [1.0, 3.0]]

    for {x, b} <- Enum.zip(xs, bs) do
      assert_close(matmul(a, Enum.map(x, &[&1])), Enum.map(b, &[&1]))
    end

    # and against the inverse worked out by hand: 1/11 [[3, -1], [-1, 4]]
    assert_close(xs, [[-6 / 11, 35 / 11], [6 / 11, -2 / 11], [-6 / 11, 13 / 11]])

    # integer b promotes with a float a, and gives the same solution
    xi = EMLX.linalg_solve(spd, tensor([1, 9], {2}, {:s, 32}))
    assert EMLX.scalar_type(xi) == {:f, 32}
    assert_close(values(xi), [-6 / 11, 35 / 11])
  end

  test "cholesky, lower and upper", %{spd: spd} do
    l = EMLX.linalg_cholesky(spd)
    assert_close(values(l), [2.0, 0.0, 0.5, :math.sqrt(2.75)])
    u = EMLX.linalg_cholesky(spd, true)
    assert_close(values(u), [2.0, 0.5, 0.0, :math.sqrt(2.75)])
  end

  test "eigh: ascending eigenvalues, A v = w v" do
    a = tensor([1.0, -2.0, -2.0, 1.0], {2, 2})
    {w, v} = EMLX.linalg_eigh(a)
    assert_close(values(w), [-1.0, 3.0])
    vr = rows(values(v), 2)
    av = matmul([[1.0, -2.0], [-2.0, 1.0]], vr)
    [w0, w1] = values(w)
    assert_close(av, Enum.map(vr, fn [x, y] -> [x * w0, y * w1] end))
    {w_u, _} = EMLX.linalg_eigh(a, "U")
    assert_close(values(w_u), [-1.0, 3.0])
  end

  test "qr matches MLX's example; complete mode" do
    {q, r} = EMLX.linalg_qr(tensor([2.0, 3.0, 1.0, 2.0], {2, 2}))
    assert_close(values(q), [-0.894427, -0.447214, -0.447214, 0.894427])
    assert_close(values(r), [-2.236068, -3.577709, 0.0, 0.447214])

    a = tensor([1.0, 2, 3, 4, 5, 6], {3, 2})
    {q, r} = EMLX.linalg_qr(a, true)
    assert {EMLX.shape(q), EMLX.shape(r)} == {{3, 3}, {3, 2}}
    assert_close(matmul(rows(values(q), 3), rows(values(r), 2)), rows([1.0, 2, 3, 4, 5, 6], 2))
  end

  test "svd with and without U and Vt" do
    data = [1.0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13]
    a = tensor(data, {4, 3})
    {u, s, vt} = EMLX.linalg_svd(a)
    assert {EMLX.shape(u), EMLX.shape(s), EMLX.shape(vt)} == {{4, 4}, {3}, {3, 3}}

    us =
      for row <- rows(values(u), 4), do: Enum.zip_with(Enum.take(row, 3), values(s), &(&1 * &2))

    assert_close(matmul(us, rows(values(vt), 3)), rows(data, 3), 1.0e-3)
    s_only = EMLX.linalg_svd(a, false)
    assert_close(values(s_only), values(s))
    {u, _, vt} = EMLX.linalg_svd(a, true, false)
    assert {EMLX.shape(u), EMLX.shape(vt)} == {{4, 3}, {3, 3}}
  end

  test "lu and lu_factor match MLX's example", %{a3: a3} do
    {p, l, u} = EMLX.linalg_lu(a3)
    assert values(p) == [2, 0, 1]
    assert EMLX.scalar_type(p) == {:u, 32}
    lu = matmul(rows(values(l), 3), rows(values(u), 3))
    a_rows = rows(values(a3), 3)
    # row i of a is row p[i] of l @ u
    for {pi, i} <- Enum.with_index(values(p)),
        do: assert_close(Enum.at(lu, pi), Enum.at(a_rows, i))

    {_lu, pivots} = EMLX.linalg_lu_factor(a3)
    assert values(pivots) == [1, 2, 2]
  end

  test "tri_inv, solve_triangular and pinv", %{a3: a3} do
    assert_close(values(EMLX.tri_inv(tensor([4.0, 1.0, 1.0, 3.0], {2, 2}))), [
      0.25,
      0.0,
      -1 / 12,
      1 / 3
    ])

    b = tensor([1.0, 1.0, 1.0], {3})
    assert_close(values(EMLX.linalg_solve_triangular(a3, b)), [0.5, -0.125, 1 / 6])
    # (a^T) x = b with a's lower triangle: the same as solving with its transpose
    xt = EMLX.linalg_solve_triangular(a3, b, false, false, :transpose, false)
    lower = [[2.0, 0, 0], [3.0, 4, 0], [1.0, 8, 9]]
    lt = lower |> Enum.zip() |> Enum.map(&Tuple.to_list/1)
    assert_close(matmul(lt, Enum.map(values(xt), &[&1])), [[1.0], [1.0], [1.0]])
    ones = tensor(List.duplicate(1.0, 12), {4, 3})
    assert_close(values(EMLX.linalg_pinv(ones)), List.duplicate(1 / 12, 12))
    assert_close(values(EMLX.linalg_pinv(ones, 0, 100.0)), List.duplicate(0.0, 12))
  end

  test "errors: shapes and types raise at once; numerical failures on evaluation", %{spd: spd} do
    rect = tensor([1.0, 2, 3, 4, 5, 6], {2, 3})
    assert_raise EMLX.NIFError, ~r/square/, fn -> EMLX.linalg_inv(rect) end

    assert_raise EMLX.NIFError, ~r/float32, float64, complex64 or complex128/, fn ->
      EMLX.linalg_cholesky(tensor([1, 0, 0, 1], {2, 2}, {:s, 32}))
    end

    assert_raise EMLX.NIFError, ~r/uplo/, fn -> EMLX.linalg_eigh(spd, "X") end

    assert_raise EMLX.NIFError, ~r/argument 5/, fn ->
      EMLX.linalg_solve_triangular(spd, spd, false, false, :bad)
    end

    singular = EMLX.linalg_inv(tensor([1.0, 2, 2, 4, 4, 1, 1, 3], {2, 2, 2}))

    assert_raise EMLX.NIFError, ~r/linalg_inv: the matrix at batch index 0 is singular/, fn ->
      EMLX.eval(singular)
    end

    not_pd = EMLX.linalg_cholesky(tensor([4.0, 1, 1, 3, 1, 2, 2, 1], {2, 2, 2}))

    assert_raise EMLX.NIFError, ~r/batch index 1 is not positive definite/, fn ->
      EMLX.eval(not_pd)
    end
  end
end
