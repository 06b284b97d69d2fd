defmodule EMLX.MathTest do
  # The math family (elementwise functions, integer division, powers,
  # comparisons, logical and bitwise ops, where, clip, isclose) against
  # values computed here with :math and Elixir integer arithmetic.
  use ExUnit.Case, async: true

  import EMLX.TestHelpers

  defp near?(got, want, tol \\ 1.0e-5) do
    length(got) == length(want) and
      Enum.all?(Enum.zip(got, want), fn {g, w} -> abs(g - w) <= tol * max(1.0, abs(w)) end)
  end

  @xs [-2.5, -1.0, -0.5, 0.0, 0.25, 0.5, 1.5, 2.5]

  describe "unary functions" do
    test "transcendentals match :math in f32" do
      t = tensor(@xs, {8})

      for {fun, ref} <- [
            sin: &:math.sin/1,
            cos: &:math.cos/1,
            tan: &:math.tan/1,
            atan: &:math.atan/1,
            sinh: &:math.sinh/1,
            cosh: &:math.cosh/1,
            tanh: &:math.tanh/1,
            asinh: &:math.asinh/1,
            erf: &:math.erf/1,
            expm1: &(:math.exp(&1) - 1),
            sigmoid: &(1 / (1 + :math.exp(-&1)))
          ] do
        out = apply(EMLX, fun, [t])
        assert EMLX.scalar_type(out) == {:f, 32}
        assert near?(values(out), Enum.map(@xs, ref)), "#{fun}"
      end

      pos = tensor([0.25, 1.0, 4.0, 9.0], {4})
      assert near?(values(EMLX.sqrt(pos)), [0.5, 1.0, 2.0, 3.0])
      assert near?(values(EMLX.rsqrt(pos)), [2.0, 1.0, 0.5, 1 / 3])
      assert near?(values(EMLX.log(pos)), Enum.map([0.25, 1.0, 4.0, 9.0], &:math.log/1))
      assert near?(values(EMLX.log1p(pos)), Enum.map([0.25, 1.0, 4.0, 9.0], &:math.log(1 + &1)))
      unit = tensor([-0.5, 0.0, 0.5], {3})
      assert near?(values(EMLX.asin(unit)), Enum.map([-0.5, 0.0, 0.5], &:math.asin/1))
      assert near?(values(EMLX.acos(unit)), Enum.map([-0.5, 0.0, 0.5], &:math.acos/1))
      assert near?(values(EMLX.atanh(unit)), Enum.map([-0.5, 0.0, 0.5], &:math.atanh/1))

      assert near?(
               values(EMLX.acosh(pos |> EMLX.add(tensor([1.0], {1})))),
               Enum.map([1.25, 2.0, 5.0, 10.0], &:math.acosh/1)
             )

      # erf_inv inverts erf; the ends of its domain are infinite.
      y = tensor([-0.9, -0.3, 0.0, 0.3, 0.9], {5})
      assert near?(values(EMLX.erf(EMLX.erf_inv(y))), [-0.9, -0.3, 0.0, 0.3, 0.9])
      assert values(EMLX.erf_inv(tensor([1.0, -1.0], {2}))) == [:infinity, :neg_infinity]
    end

    test "integers compute in f32; predicates" do
      assert EMLX.sqrt(tensor([4, 9], {2}, {:s, 32})) |> values() == [2.0, 3.0]
      assert EMLX.sqrt(tensor([4, 9], {2}, {:s, 32})) |> EMLX.scalar_type() == {:f, 32}
      t = tensor([:nan, :infinity, 1.0, :neg_infinity], {4})
      assert values(EMLX.is_nan(t)) == [1, 0, 0, 0]
      assert values(EMLX.is_infinity(t)) == [0, 1, 0, 1]
      assert values(EMLX.logical_not(tensor([0, 3, -1], {3}, {:s, 8}))) == [1, 0, 0]
      assert values(EMLX.is_nan(tensor([1, 2], {2}, {:s, 32}))) == [0, 0]
    end

    test "rounding, sign, abs and the complex parts" do
      t = tensor([-1.5, -0.5, 0.5, 1.5, 2.5], {5})
      assert values(EMLX.round(t)) == [-2.0, -0.0, 0.0, 2.0, 2.0]
      assert values(EMLX.round_half_away(t)) == [-2.0, -1.0, 1.0, 2.0, 3.0]
      assert values(EMLX.floor(t)) == [-2.0, -1.0, 0.0, 1.0, 2.0]
      assert values(EMLX.ceil(t)) == [-1.0, -0.0, 1.0, 2.0, 3.0]
      assert values(EMLX.sign(tensor([-2, 0, 5], {3}, {:s, 32}))) == [-1, 0, 1]
      assert values(EMLX.abs(tensor([-128, -3, 4], {3}, {:s, 8}))) == [-128, 3, 4]
      assert values(EMLX.bitwise_not(tensor([0, 5], {2}, {:u, 8}))) == [255, 250]

      z = tensor([{3.0, 4.0}, {1.0, -2.0}], {2}, {:c, 64})
      assert near?(values(EMLX.abs(z)), [5.0, :math.sqrt(5.0)])

      assert values(EMLX.real(z)) == [3.0, 1.0]
      assert values(EMLX.imag(z)) == [4.0, -2.0]
      assert values(EMLX.conjugate(z)) == [{3.0, -4.0}, {1.0, 2.0}]
    end
  end

  describe "binary ops" do
    test "quotient truncates, floor_divide floors; remainders by sign; x / 0 is 0" do
      a = tensor([-7, 7, -7, 7, 5], {5}, {:s, 32})
      b = tensor([2, -2, -2, 2, 0], {5}, {:s, 32})
      assert values(EMLX.quotient(a, b)) == [-3, -3, 3, 3, 0]
      assert values(EMLX.floor_divide(a, b)) == [-4, -4, 3, 3, 0]
      assert values(EMLX.remainder(a, b)) == [1, -1, -1, 1, 0]
      assert values(EMLX.remainder_trunc(a, b)) == [-1, 1, -1, 1, 0]

      # INT_MIN / -1 wraps instead of trapping.
      m = tensor([-2_147_483_648], {1}, {:s, 32})
      assert values(EMLX.quotient(m, tensor([-1], {1}, {:s, 32}))) == [-2_147_483_648]
    end

    test "pow, atan2, maximum and minimum" do
      assert values(
               EMLX.pow(
                 tensor([2, 3, -2, 2], {4}, {:s, 32}),
                 tensor([10, 2, 3, -1], {4}, {:s, 32})
               )
             ) ==
               [1024, 9, -8, 0]

      assert near?(
               values(EMLX.pow(tensor([2.0, 9.0], {2}), tensor([0.5, 0.5], {2}))),
               [:math.sqrt(2.0), 3.0]
             )

      assert near?(
               values(EMLX.atan2(tensor([1.0, -1.0], {2}), tensor([2.0, -2.0], {2}))),
               [:math.atan2(1.0, 2.0), :math.atan2(-1.0, -2.0)]
             )

      a = tensor([1.0, :nan, -0.0, 3.0], {4})
      b = tensor([2.0, 1.0, 0.0, -3.0], {4})
      assert values(EMLX.maximum(a, b)) == [2.0, :nan, 0.0, 3.0]
      assert values(EMLX.minimum(a, b)) == [1.0, :nan, -0.0, -3.0]
    end

    test "comparisons, logical and bitwise ops, shifts" do
      a = tensor([1.0, :nan, 3.0], {3})
      b = tensor([1.0, :nan, 2.0], {3})
      assert values(EMLX.equal(a, b)) == [1, 0, 0]
      assert values(EMLX.not_equal(a, b)) == [0, 1, 1]
      assert values(EMLX.greater(a, b)) == [0, 0, 1]
      assert values(EMLX.greater_equal(a, b)) == [1, 0, 1]
      assert values(EMLX.less(a, b)) == [0, 0, 0]
      assert values(EMLX.less_equal(a, b)) == [1, 0, 0]
      assert EMLX.equal(a, b) |> EMLX.scalar_type() == :bool

      p = tensor([0, 1, 1, 0], {4}, :bool)
      q = tensor([0, 0, 1, 1], {4}, :bool)
      assert values(EMLX.logical_and(p, q)) == [0, 0, 1, 0]
      assert values(EMLX.logical_or(p, q)) == [0, 1, 1, 1]
      assert values(EMLX.logical_xor(p, q)) == [0, 1, 0, 1]

      x = tensor([12, 10, -16], {3}, {:s, 32})
      y = tensor([10, 6, 2], {3}, {:s, 32})
      assert values(EMLX.bitwise_and(x, y)) == [8, 2, 0]
      assert values(EMLX.bitwise_or(x, y)) == [14, 14, -14]
      assert values(EMLX.bitwise_xor(x, y)) == [6, 12, -14]
      assert values(EMLX.left_shift(x, tensor([1, 32, 2], {3}, {:s, 32}))) == [24, 0, -64]
      assert values(EMLX.right_shift(x, tensor([2, 40, 2], {3}, {:s, 32}))) == [3, 0, -4]
    end

    test "bad dtypes and shapes raise" do
      f = tensor([1.0], {1})
      assert_raise EMLX.NIFError, fn -> EMLX.bitwise_and(f, f) end

      assert_raise EMLX.NIFError, fn ->
        EMLX.add(f, tensor([1.0, 2.0, 3.0], {3})) |> EMLX.maximum(tensor([1.0, 2.0], {2}))
      end

      z = tensor([{1.0, 1.0}], {1}, {:c, 64})
      assert_raise EMLX.NIFError, fn -> EMLX.erf(z) end
      assert_raise EMLX.NIFError, fn -> EMLX.clip(f, nil, nil) end
      assert_raise EMLX.NIFError, fn -> EMLX.isclose(f, f, -1.0, 0.0, false) end
    end
  end

  describe "where, clip, isclose" do
    test "where broadcasts and promotes" do
      cond = tensor([1, 0], {2, 1}, {:s, 32})
      out = EMLX.where(cond, tensor([1, 2, 3], {3}, {:s, 8}), tensor([0.5], {1}))
      assert read(out) == {{2, 3}, [1.0, 2.0, 3.0, 0.5, 0.5, 0.5]}
      assert EMLX.scalar_type(out) == {:f, 32}
    end

    test "clip with one or two bounds" do
      t = tensor([-3.0, 0.0, 5.0, :nan], {4})
      lo = tensor([-1.0], {1})
      hi = tensor([2.0], {1})
      assert values(EMLX.clip(t, lo, hi)) == [-1.0, 0.0, 2.0, :nan]
      assert values(EMLX.clip(t, lo, nil)) == [-1.0, 0.0, 5.0, :nan]
      assert values(EMLX.clip(t, nil, hi)) == [-3.0, 0.0, 2.0, :nan]
    end

    test "isclose and allclose" do
      a = tensor([1.0, 1.0, :nan, :infinity], {4})
      b = tensor([1.000001, 1.1, :nan, :infinity], {4})
      assert values(EMLX.isclose(a, b, 1.0e-5, 1.0e-8, false)) == [1, 0, 0, 1]
      assert values(EMLX.isclose(a, b, 1.0e-5, 1.0e-8, true)) == [1, 0, 1, 1]
      assert EMLX.item(EMLX.allclose(a, a, 1.0e-5, 1.0e-8, true)) in [true, 1]
      assert EMLX.item(EMLX.allclose(a, b, 1.0e-5, 1.0e-8, false)) in [false, 0]

      assert EMLX.allclose(a, b, 1.0e-5, 1.0e-8, true) |> EMLX.shape() == {}
    end
  end
end
