if Code.ensure_loaded?(Nx) do
  defmodule EMLX.Nx.DoctestTest do
    @moduledoc """
    Nx's own doctests (`doctest Nx`, with its moduledoc, and `doctest
    Nx.LinAlg`) with `EMLX.Backend` as the default backend, as EXLA and
    Torchx run them. Each exclusion is listed with its reason.
    """
    use ExUnit.Case, async: false

    setup do
      previous = Nx.default_backend(EMLX.Backend)
      on_exit(fn -> Nx.default_backend(previous) end)
      :ok
    end

    # Every exclusion is Nx.LinAlg's: the expected values are the f32
    # rounding of Nx's own algorithms, step by step, as Nx.BinaryBackend runs
    # them (its dot products accumulate f32 in f64 and round once). Where the
    # engine computes Nx's arithmetic (LU, and so solve, determinant and
    # invert; triangular_solve in f64 rounded once; QR's signs) the doctests
    # run. The factorisations below are checked by reconstruction in
    # test/emlx/nx/backend_test.exs.
    @linalg_exclusions [
      # Nx's Cholesky-Banachiewicz with f64-accumulated dots (2.1213205,
      # 0.7071065); LAPACK's potrf gives 2.1213202, 0.7071071.
      cholesky: 1,
      # Nx's Jacobi eigensolver: the basis it picks for a repeated
      # eigenvalue, and last digits (0.8280672 vs 0.8280673). The signs agree
      # (EMLX.Backend.Block signs each eigenvector by its largest component).
      eigh: 2,
      # Through pinv, i.e. Nx's SVD (1.0000005, -2.3841858e-7 for [1, 0]).
      least_squares: 3,
      # L and U are Nx's bits; the doctest multiplies P L U with Nx.dot, which
      # Nx.BinaryBackend accumulates in f64 (3.9999998) and the engine's f32
      # matmul in f32 (4.0).
      lu: 1,
      # The same f32 dot accumulation in the repeated products (92.24976 vs
      # 92.24977); the inverse itself is Nx's (solve on Nx's LU).
      matrix_power: 2,
      # Nx's SVD in f32 (4.0000577, -1.0000169 where the exact pinv is 4, -1).
      pinv: 2,
      # Q and R have Nx's signs; R's last digit is Nx's Householder products
      # in f32 (1.4142137; LAPACK 1.4142135, the correctly rounded sqrt(2)).
      qr: 2,
      # Nx's SVD in f32 (0.99999994 where LAPACK gives 1.0).
      svd: 2
    ]

    doctest Nx
    doctest Nx.LinAlg, except: @linalg_exclusions
  end
else
  IO.puts(
    "test/emlx/nx/nx_doctest_test.exs: Nx is not available (set NX_PATH to an Nx " <>
      "source tree, or fetch deps/nx), so the Nx conformance doctests are left out"
  )
end
