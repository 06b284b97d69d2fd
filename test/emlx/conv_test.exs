defmodule EMLX.ConvTest do
  # The window and convolution functions of EMLX against values computed
  # here (the C suite, tests/test_conv.c and tests/test_window.c, covers the
  # semantics in depth; these check the bindings: argument order, options,
  # errors).
  use ExUnit.Case, async: true

  import EMLX.TestHelpers

  describe "window reductions" do
    test "window_sum/max/min/product with strides and padding" do
      t = tensor([1.0, 2.0, 3.0, 4.0, 5.0], {5})
      assert read(EMLX.window_sum(t, [2], [2], [1], [0], [1])) == {{3}, [1.0, 5.0, 9.0]}
      assert read(EMLX.window_max(t, [2], [2], [0], [1], [1])) == {{3}, [2.0, 4.0, 5.0]}
      assert read(EMLX.window_min(t, [3], [1], [0], [0], [2])) == {{1}, [1.0]}

      assert read(EMLX.window_product(t, [2], [1], [0], [0], [1])) ==
               {{4}, [2.0, 6.0, 12.0, 20.0]}
    end

    test "2-D integer window_max with dilation (the dtype minimum pads)" do
      t = tensor(Enum.to_list(1..12), {3, 4}, {:s, 32})

      assert read(EMLX.window_max(t, [2, 2], [1, 2], [0, 0], [0, 0], [1, 1])) ==
               {{2, 2}, [6, 8, 10, 12]}
    end

    test "bad windows raise" do
      t = tensor([1.0, 2.0], {2})
      assert_raise EMLX.NIFError, fn -> EMLX.window_sum(t, [0], [1], [0], [0], [1]) end
      assert_raise EMLX.NIFError, fn -> EMLX.window_sum(t, [1, 1], [1], [0], [0], [1]) end
      assert_raise EMLX.NIFError, fn -> EMLX.window_sum(t, [1], [1, 1], [0], [0], [1]) end
    end
  end

  describe "window_scatter_max/7 and window_scatter_min/7" do
    test "Nx's example" do
      t =
        tensor(
          [7, 2, 5, 3, 10, 2, 3, 8, 9, 3, 4, 2, 1, 5, 7, 5, 6, 1, 0, 6, 2, 7, 2, 8],
          {4, 6},
          {:s, 64}
        )

      src = tensor([2, 6, 3, 1], {2, 2}, {:s, 64})
      init = EMLX.scalar_tensor(0, {:s, 64}, :cpu)

      assert read(EMLX.window_scatter_max(t, src, init, [2, 3], [2, 3], [0, 0], [0, 0])) ==
               {{4, 6}, [0, 0, 0, 0, 6, 0, 0, 0, 2, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 1]}

      assert read(EMLX.window_scatter_min(t, src, init, [2, 3], [2, 3], [0, 0], [0, 0])) ==
               {{4, 6}, [0, 2, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 3, 0, 0, 0, 0, 0]}
    end

    test "a source of the wrong shape raises" do
      t = tensor([1.0, 2.0, 3.0], {3})
      src = tensor([1.0], {1})
      init = EMLX.scalar_tensor(0.0, {:f, 32}, :cpu)

      assert_raise EMLX.NIFError, fn ->
        EMLX.window_scatter_max(t, src, init, [2], [1], [0], [0])
      end
    end
  end

  describe "conv_general" do
    test "1-D correlation, padding and flip" do
      x = tensor([1.0, 2.0, 3.0, 4.0], {1, 4, 1})
      w = tensor([1.0, 0.0, -1.0], {1, 3, 1})

      assert read(EMLX.conv_general(x, w, [1], [1], [1], [1], [1], 1)) ==
               {{1, 4, 1}, [-2.0, -2.0, -2.0, 3.0]}

      assert read(EMLX.conv_general(x, w, [1], [1], [1], [1], [1], 1, 1, true)) ==
               {{1, 4, 1}, [2.0, 2.0, 2.0, -3.0]}
    end

    test "2-D with stride, groups and batch groups" do
      # two channels, groups 2: each output channel sees its own input channel
      x = tensor(Enum.map(1..18, &(&1 * 1.0)), {1, 3, 3, 2})
      w = tensor([1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0], {2, 2, 2, 1})

      {{1, 1, 1, 2}, [a, b]} =
        read(EMLX.conv_general(x, w, [2, 2], [0, 0], [0, 0], [1, 1], [1, 1], 2))

      assert a == 1.0 + 3.0 + 7.0 + 9.0
      assert b == 2.0 * (2.0 + 4.0 + 8.0 + 10.0)

      # batch groups 2: output channel g reads batch g
      xb = tensor([1.0, 2.0, 10.0, 20.0], {2, 2, 1})
      wb = tensor([1.0, 1.0, 1.0, -1.0], {2, 2, 1})

      assert read(EMLX.conv_general(xb, wb, [1], [0], [0], [1], [1], 1, 2, false)) ==
               {{1, 1, 2}, [3.0, -10.0]}
    end

    test "channel mismatch and bad groups raise" do
      x = tensor(List.duplicate(1.0, 12), {1, 3, 4})
      w = tensor(List.duplicate(1.0, 6), {2, 1, 3})
      assert_raise EMLX.NIFError, fn -> EMLX.conv_general(x, w, [1], [0], [0], [1], [1], 1) end
      assert_raise EMLX.NIFError, fn -> EMLX.conv_general(x, w, [1], [0], [0], [1], [1], 3) end
      assert_raise EMLX.NIFError, fn -> EMLX.conv_general(x, w, [1, 1], [0], [0], [1], [1], 1) end
    end
  end
end
