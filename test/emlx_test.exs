defmodule EMLXTest do
  # Every public function of EMLX against values computed here, in Elixir.
  use ExUnit.Case, async: true

  import EMLX.TestHelpers

  doctest EMLX

  @all_types [
    :bool,
    {:u, 8},
    {:u, 16},
    {:u, 32},
    {:u, 64},
    {:s, 8},
    {:s, 16},
    {:s, 32},
    {:s, 64},
    {:f, 16},
    {:f, 32},
    {:f, 64},
    {:bf, 16},
    {:c, 64},
    {:c, 128}
  ]

  defp sample(:bool), do: [1, 0, 1, 1, 0, 0]
  defp sample({:u, bits}), do: [0, 1, 2, 3, Bitwise.bsl(1, bits) - 1, 7]

  defp sample({:s, bits}),
    do: [0, -1, 2, -3, Bitwise.bsl(1, bits - 1) - 1, -Bitwise.bsl(1, bits - 1)]

  defp sample({:c, _}),
    do: [{1.0, 2.0}, {-0.5, 0.0}, {0.0, 3.0}, {4.0, -4.0}, {0.0, 0.0}, {1.5, 2.5}]

  defp sample(_float), do: [0.0, -1.5, 2.25, 1024.0, -0.125, 3.0]

  describe "from_blob/4 and to_blob/1,2" do
    test "round-trip every dtype" do
      for type <- @all_types do
        bin = encode(sample(type), type)
        t = EMLX.from_blob(bin, {2, 3}, type, :cpu)
        assert EMLX.shape(t) == {2, 3}
        assert EMLX.scalar_type(t) == type
        assert EMLX.to_blob(t) == bin, "to_blob of #{inspect(type)}"
        assert values(t) == sample(type)
      end
    end

    test "accepts MLX names and Nx short atoms as types" do
      bin = encode([1.0, 2.0], {:f, 32})

      for type <- [:float32, :f32, {:f, 32}] do
        assert EMLX.from_blob(bin, {2}, type, :cpu) |> EMLX.scalar_type() == {:f, 32}
      end

      assert EMLX.from_blob(<<1, 0>>, [2], :bool, :cpu) |> EMLX.scalar_type() == :bool

      assert EMLX.from_blob(<<1::16, 2::16>>, {2}, :bfloat16, :cpu) |> EMLX.scalar_type() ==
               {:bf, 16}
    end

    test "device may be {device, index}" do
      assert {:cpu, _} = EMLX.from_blob(<<1::8>>, {1}, {:u, 8}, {:cpu, 0})
    end

    test "empty and 0-d tensors" do
      assert EMLX.from_blob(<<>>, {0, 3}, {:f, 32}, :cpu) |> EMLX.to_blob() == <<>>
      assert EMLX.from_blob(<<7::32-native>>, {}, {:s, 32}, :cpu) |> EMLX.item() == 7
    end

    test "the binary must match the shape" do
      assert_raise EMLX.NIFError, ~r/from_blob: the binary has 4 bytes, but shape/, fn ->
        EMLX.from_blob(<<1::32>>, {2}, {:f, 32}, :cpu)
      end
    end

    test "a binary shorter or longer than the shape needs is refused" do
      for type <- @all_types, shape <- [{2, 3}, {}, {0, 4}] do
        itemsize = if type == :bool, do: 1, else: div(elem(type, 1), 8)
        need = itemsize * (shape |> Tuple.to_list() |> Enum.product())

        for size <- [need - itemsize, need - 1, need + 1, need + itemsize, 2 * need + 1],
            size >= 0,
            size != need do
          bin = :binary.copy(<<7>>, size)

          result = EMLX.NIF.from_blob(bin, shape, type, :cpu)

          assert match?({:error, _}, result),
                 "#{size} bytes for #{inspect(shape)} of #{inspect(type)}: #{inspect(result)}"

          {:error, message} = result

          assert message =~
                   ~r/^from_blob: the binary has #{size} bytes, but shape .* needs #{need}$/

          assert_raise EMLX.NIFError, fn -> EMLX.from_blob(bin, shape, type, :cpu) end
        end

        # the exact size is accepted
        t = EMLX.from_blob(:binary.copy(<<0>>, need), shape, type, :cpu)
        assert {EMLX.shape(t), EMLX.scalar_type(t)} == {shape, type}
      end
    end

    test "large binaries (copied on a dirty scheduler)" do
      values = Enum.to_list(1..500_000)
      bin = encode(values, {:s, 32})
      t = EMLX.from_blob(bin, {500, 1000}, {:s, 32}, :cpu)
      assert EMLX.to_blob(t) == bin
      assert EMLX.astype(t, {:s, 64}) |> EMLX.sum(nil, false) |> EMLX.item() == Enum.sum(values)
    end

    test "to_blob/2 returns the first limit elements" do
      t = tensor([1, 2, 3, 4, 5, 6], {2, 3}, {:s, 16})
      assert EMLX.to_blob(t, 4) == encode([1, 2, 3, 4], {:s, 16})
      assert EMLX.to_blob(t, 0) == <<>>
      assert EMLX.to_blob(t, 100) == EMLX.to_blob(t)
      # a non-contiguous view is copied row-major first
      tt = EMLX.transpose(t, [1, 0])
      assert EMLX.to_blob(tt, 3) == encode([1, 4, 2], {:s, 16})
    end

    test "large contiguous results come back without a copy and stay valid" do
      t = EMLX.full(1.5, {1000, 100}, {:f, 64}, :cpu)
      bin = EMLX.to_blob(t)
      EMLX.deallocate(t)
      :erlang.garbage_collect()
      assert byte_size(bin) == 800_000
      assert bin == :binary.copy(<<1.5::float-64-native>>, 100_000)
    end
  end

  describe "scalar_tensor/3" do
    test "integers are exact in every integer type" do
      assert EMLX.scalar_tensor(9_007_199_254_740_993, {:s, 64}, :cpu) |> EMLX.item() ==
               9_007_199_254_740_993

      assert EMLX.scalar_tensor(18_446_744_073_709_551_615, {:u, 64}, :cpu) |> EMLX.item() ==
               18_446_744_073_709_551_615

      assert EMLX.scalar_tensor(-128, {:s, 8}, :cpu) |> EMLX.item() == -128
      assert EMLX.scalar_tensor(300, {:u, 8}, :cpu) |> EMLX.item() == 44
    end

    test "floats, special values, booleans and complex numbers" do
      assert EMLX.scalar_tensor(2.5, {:f, 32}, :cpu) |> EMLX.item() == 2.5
      assert EMLX.scalar_tensor(7, {:f, 64}, :cpu) |> EMLX.item() == 7.0
      assert EMLX.scalar_tensor(:nan, {:f, 32}, :cpu) |> EMLX.item() == :nan
      assert EMLX.scalar_tensor(:infinity, {:f, 16}, :cpu) |> EMLX.item() == :infinity
      assert EMLX.scalar_tensor(:neg_infinity, {:bf, 16}, :cpu) |> EMLX.item() == :neg_infinity
      assert EMLX.scalar_tensor(true, :bool, :cpu) |> EMLX.item() == 1
      assert EMLX.scalar_tensor(2.75, {:s, 32}, :cpu) |> EMLX.item() == 2
      assert EMLX.scalar_tensor({1.0, -2.0}, {:c, 64}, :cpu) |> values() == [{1.0, -2.0}]
      assert EMLX.scalar_tensor(%{re: 3.0, im: 4.0}, {:c, 64}, :cpu) |> values() == [{3.0, 4.0}]
      assert EMLX.scalar_tensor({3.0, 4.0}, {:f, 32}, :cpu) |> EMLX.item() == 3.0
    end

    test "item/1 on complex gives {re, im} or a Complex struct" do
      value = EMLX.scalar_tensor({1.5, -2.0}, {:c, 64}, :cpu) |> EMLX.item()

      if Code.ensure_loaded?(Complex) do
        assert value == apply(Complex, :new, [1.5, -2.0])
      else
        assert value == {1.5, -2.0}
      end
    end
  end

  describe "full/4, ones/3, arange/5, eye/4" do
    test "full" do
      assert read(EMLX.full(3, {2, 2}, {:s, 64}, :cpu)) == {{2, 2}, [3, 3, 3, 3]}
      assert read(EMLX.full(-0.5, [3], {:f, 32}, :cpu)) == {{3}, [-0.5, -0.5, -0.5]}
      big = 9_007_199_254_740_993
      assert values(EMLX.full(big, {2}, {:s, 64}, :cpu)) == [big, big]
      assert values(EMLX.full({1.0, 1.0}, {2}, {:c, 64}, :cpu)) == [{1.0, 1.0}, {1.0, 1.0}]
      # complex128 keeps the parts' doubles
      assert values(EMLX.full({0.1, -1 / 3}, {2}, {:c, 128}, :cpu)) == [
               {0.1, -1 / 3},
               {0.1, -1 / 3}
             ]

      assert EMLX.scalar_tensor({0.1, 0.2}, {:c, 128}, :cpu) |> values() == [{0.1, 0.2}]
      assert values(EMLX.full(:nan, {1}, {:f, 64}, :cpu)) == [:nan]
      assert read(EMLX.full(1, {}, :bool, :cpu)) == {{}, [1]}
    end

    test "ones" do
      assert read(EMLX.ones({2, 3}, {:u, 8}, :cpu)) == {{2, 3}, List.duplicate(1, 6)}
      assert read(EMLX.ones({0}, {:f, 32}, :cpu)) == {{0}, []}
    end

    test "arange" do
      assert read(EMLX.arange(0, 5, 1, true, :cpu)) == {{5}, [0, 1, 2, 3, 4]}
      assert EMLX.arange(0, 5, 1, true, :cpu) |> EMLX.scalar_type() == {:s, 32}
      assert read(EMLX.arange(1, 2, 0.25, false, :cpu)) == {{4}, [1.0, 1.25, 1.5, 1.75]}
      assert EMLX.arange(1, 2, 0.25, false, :cpu) |> EMLX.scalar_type() == {:f, 32}
      assert read(EMLX.arange(10, 0, -3, {:s, 64}, :cpu)) == {{4}, [10, 7, 4, 1]}
      assert read(EMLX.arange(0, 0, 1, true, :cpu)) == {{0}, []}

      assert_raise EMLX.NIFError, ~r/arange: step must not be zero/, fn ->
        EMLX.arange(0, 5, 0, true, :cpu)
      end
    end

    test "eye" do
      expected = for i <- 0..1, j <- 0..2, do: if(i == j, do: 1.0, else: 0.0)
      assert read(EMLX.eye(2, 3, {:f, 32}, :cpu)) == {{2, 3}, expected}
      assert values(EMLX.eye(3, 3, {:s, 32}, :cpu)) == [1, 0, 0, 0, 1, 0, 0, 0, 1]
    end
  end

  describe "elementwise" do
    setup do
      xs = [1.0, -2.0, 3.5, 0.0, 4.0, -0.5]
      ys = [0.5, 2.0, -1.0]
      %{x: tensor(xs, {2, 3}), y: tensor(ys, {3}), xs: xs, ys: ys}
    end

    test "add, subtract, multiply, divide broadcast", %{x: x, y: y, xs: xs, ys: ys} do
      yb = ys ++ ys

      for {op, fun} <- [
            add: &+/2,
            subtract: &-/2,
            multiply: &*/2,
            divide: &//2
          ] do
        expected = Enum.zip_with(xs, yb, fun)
        result = apply(EMLX, op, [x, y])
        assert EMLX.shape(result) == {2, 3}
        assert close?(values(result), expected), "#{op}"
      end
    end

    test "type promotion follows MLX" do
      s32 = tensor([1, 2], {2}, {:s, 32})
      f32 = tensor([0.5, 0.5], {2})
      u8 = tensor([200, 1], {2}, {:u, 8})
      s8 = tensor([-1, 1], {2}, {:s, 8})
      assert EMLX.add(s32, f32) |> EMLX.scalar_type() == {:f, 32}
      assert EMLX.add(u8, s8) |> EMLX.scalar_type() == {:s, 16}
      assert values(EMLX.add(u8, s8)) == [199, 2]
      assert EMLX.divide(s32, s32) |> EMLX.scalar_type() == {:f, 32}
      # integer arithmetic wraps
      assert values(EMLX.add(u8, u8)) == [144, 2]
    end

    test "negate and exp", %{x: x, xs: xs} do
      assert values(EMLX.negate(x)) == Enum.map(xs, &(-&1))
      assert close?(values(EMLX.exp(x)), Enum.map(xs, &:math.exp/1))
      assert EMLX.exp(tensor([0, 1], {2}, {:s, 32})) |> EMLX.scalar_type() == {:f, 32}

      assert_raise EMLX.NIFError, ~r/negate: not supported for bool/, fn ->
        EMLX.negate(tensor([1, 0], {2}, :bool))
      end
    end

    test "astype" do
      f = tensor([2.7, -2.7, 0.0, 300.0], {4})
      assert values(EMLX.astype(f, {:s, 32})) == [2, -2, 0, 300]
      assert values(EMLX.astype(f, :bool)) == [1, 1, 0, 1]
      assert values(EMLX.astype(f, {:u, 8})) == [2, 0, 0, 255]
      assert values(EMLX.astype(f, {:f, 16})) == [2.69921875, -2.69921875, 0.0, 300.0]
      c = tensor([{1.5, 2.0}], {1}, {:c, 64})
      assert values(EMLX.astype(c, {:f, 32})) == [1.5]
    end
  end

  describe "shape functions" do
    setup do
      %{t: tensor(Enum.map(0..11, &(&1 * 1.0)), {2, 3, 2})}
    end

    test "broadcast_to", %{t: _} do
      v = tensor([1.0, 2.0], {2})
      assert read(EMLX.broadcast_to(v, {3, 2})) == {{3, 2}, [1.0, 2.0, 1.0, 2.0, 1.0, 2.0]}
    end

    test "reshape", %{t: t} do
      assert EMLX.reshape(t, {6, -1}) |> EMLX.shape() == {6, 2}
      assert values(EMLX.reshape(t, [12])) == values(t)

      assert_raise EMLX.NIFError, ~r/reshape: cannot reshape 12 elements into/, fn ->
        EMLX.reshape(t, {5})
      end
    end

    test "transpose", %{t: t} do
      r = EMLX.transpose(t, [2, 0, 1])
      assert EMLX.shape(r) == {2, 2, 3}
      expected = for k <- 0..1, i <- 0..1, j <- 0..2, do: (i * 6 + j * 2 + k) * 1.0
      assert values(r) == expected
      assert EMLX.transpose(t, nil) |> EMLX.shape() == {2, 3, 2}
    end

    test "slice", %{t: t} do
      m = tensor(Enum.map(0..19, &(&1 * 1.0)), {4, 5})
      r = EMLX.slice(m, [1, 0], [4, 5], [2, 2])
      assert read(r) == {{2, 3}, [5.0, 7.0, 9.0, 15.0, 17.0, 19.0]}
      # negative strides walk backwards; indices clamp like Python's
      r = EMLX.slice(m, [0, -1], [1, -100], [1, -2])
      assert read(r) == {{1, 3}, [4.0, 2.0, 0.0]}
      assert EMLX.slice(t, [0, 0, 0], [2, 3, 2], [1, 1, 1]) |> values() == values(t)

      assert_raise EMLX.NIFError, ~r/slice: starts, stops and strides must have one entry/, fn ->
        EMLX.slice(m, [0], [1, 1], [1, 1])
      end
    end

    test "squeeze and copy" do
      s = tensor([1.0, 2.0, 3.0], {1, 3, 1})
      assert EMLX.squeeze(s, [0]) |> EMLX.shape() == {3, 1}
      assert EMLX.squeeze(s, nil) |> EMLX.shape() == {3}
      assert EMLX.squeeze(s, [-1]) |> EMLX.shape() == {1, 3}

      assert_raise EMLX.NIFError, ~r/squeeze: axis 1 has size 3, not 1/, fn ->
        EMLX.squeeze(s, [1])
      end

      c = EMLX.copy(EMLX.transpose(s, nil))
      assert read(c) == {{1, 3, 1}, [1.0, 2.0, 3.0]}
      assert EMLX.strides(c) == {3, 1, 1}
    end

    test "strides", %{t: t} do
      assert EMLX.strides(t) == row_major_strides(EMLX.shape(t))
      assert EMLX.strides(EMLX.transpose(t, nil)) == {1, 2, 6}
      assert EMLX.strides(EMLX.slice(t, [0, 0, 0], [2, 3, 2], [1, 2, 1])) == {6, 4, 1}
      assert EMLX.strides(EMLX.broadcast_to(tensor([1.0], {1}), {4})) == {0}
      assert EMLX.strides(EMLX.scalar_tensor(1, {:f, 32}, :cpu)) == {}
    end
  end

  describe "reductions" do
    setup do
      xs = [3.0, -1.0, 4.0, 1.0, -5.0, 9.0]
      %{t: tensor(xs, {2, 3}), xs: xs}
    end

    test "sum", %{t: t, xs: xs} do
      assert EMLX.sum(t, nil, false) |> EMLX.item() == Enum.sum(xs)
      assert read(EMLX.sum(t, [0], false)) == {{3}, [4.0, -6.0, 13.0]}
      assert read(EMLX.sum(t, [1], true)) == {{2, 1}, [6.0, 5.0]}
      assert read(EMLX.sum(t, [-1, 0], false)) == {{}, [11.0]}
      # [] means every axis, as nil (the original EMLX's convention)
      assert read(EMLX.sum(t, [], false)) == {{}, [11.0]}

      assert EMLX.sum(tensor([100, 100], {2}, {:s, 8}), nil, false) |> EMLX.scalar_type() ==
               {:s, 32}

      assert EMLX.sum(tensor([100, 100], {2}, {:s, 8}), nil, false) |> EMLX.item() == 200

      assert_raise EMLX.NIFError, ~r/sum:/, fn -> EMLX.sum(t, [0, 0], false) end
    end

    test "max", %{t: t, xs: xs} do
      assert EMLX.max(t, nil, false) |> EMLX.item() == Enum.max(xs)
      assert read(EMLX.max(t, [0], true)) == {{1, 3}, [3.0, -1.0, 9.0]}
      assert EMLX.max(tensor([1.0, :nan], {2}), nil, false) |> EMLX.item() == :nan

      assert_raise EMLX.NIFError, ~r/max: cannot reduce over an axis of size 0/, fn ->
        EMLX.max(tensor([], {0}), nil, false)
      end
    end
  end

  describe "item/1 and eval/1" do
    test "item on every dtype" do
      for type <- @all_types -- [{:c, 64}, {:c, 128}] do
        [first | _] = sample(type)
        t = tensor(sample(type), {6}, type) |> EMLX.slice([0], [1], [1]) |> EMLX.reshape({})
        assert EMLX.item(t) == first, inspect(type)
      end

      assert EMLX.scalar_tensor(0.1, {:bf, 16}, :cpu) |> EMLX.item() == 0.10009765625
    end

    test "item needs exactly one element" do
      assert_raise EMLX.NIFError,
                   ~r/item: the tensor has 2 elements; item needs exactly one/,
                   fn ->
                     EMLX.item(tensor([1.0, 2.0], {2}))
                   end
    end

    test "eval computes and keeps the tensor usable" do
      t = EMLX.add(tensor([1.0], {1}), tensor([2.0], {1}))
      assert EMLX.eval(t) == :ok
      assert EMLX.eval(t) == :ok
      assert values(t) == [3.0]
    end

    test "evaluation errors are raised, naming the function" do
      previous = EMLX.set_memory_limit(1_000_000)

      try do
        big = EMLX.full(1.0, {1000, 1000}, {:f, 64}, :cpu)

        assert_raise EMLX.NIFError, ~r/^eval: .*too large|^eval: .*memory/, fn ->
          EMLX.eval(big)
        end
      after
        EMLX.set_memory_limit(previous)
      end
    end
  end

  describe "deallocate/1" do
    test "is idempotent and later use raises" do
      t = tensor([1.0], {1})
      assert EMLX.deallocate(t) == :ok
      assert EMLX.deallocate(t) == :already_deallocated

      for fun <- [
            fn -> EMLX.add(t, t) end,
            fn -> EMLX.eval(t) end,
            fn -> EMLX.item(t) end,
            fn -> EMLX.to_blob(t) end,
            fn -> EMLX.shape(t) end,
            fn -> EMLX.strides(t) end,
            fn -> EMLX.tensor_data_ptr(t) end,
            fn -> EMLX.to_device(t, :gpu) end
          ] do
        assert_raise EMLX.NIFError, ~r/argument 1: the tensor was deallocated/, fun
      end
    end

    test "results built from a deallocated tensor stay valid" do
      a = tensor([1.0, 2.0], {2})
      b = EMLX.multiply(a, a)
      EMLX.deallocate(a)
      assert values(b) == [1.0, 4.0]
    end
  end

  describe "devices" do
    test "to_device/2 to the same device is a no-op" do
      t = tensor([1.0], {1})
      assert EMLX.to_device(t, :cpu) === t
      assert EMLX.to_device(t, {:cpu, 0}) === t
    end

    test "to_device/2 to an unavailable device raises" do
      t = tensor([1.0], {1})

      assert_raise EMLX.NIFError, ~r/to_device: device gpu is not available/, fn ->
        EMLX.to_device(t, :gpu)
      end

      assert_raise EMLX.NIFError, ~r/to_device: argument 2: expected a device/, fn ->
        EMLX.to_device(t, :tpu)
      end
    end

    test "is_tensor/2 is a guard" do
      tensor? = fn
        {d, r} when EMLX.is_tensor(d, r) -> true
        _ -> false
      end

      assert tensor?.(tensor([1.0], {1}))
      refute tensor?.(Enum.random([{:cpu, 1}]))
      refute tensor?.(Enum.random([{"cpu", make_ref()}]))
    end
  end

  describe "tensor_data_ptr/1" do
    test "returns the address and byte size of evaluated data" do
      t = EMLX.add(tensor([1.0, 2.0, 3.0], {3}), tensor([1.0], {1}))
      assert {address, 12} = EMLX.tensor_data_ptr(t)
      assert is_integer(address) and address > 0
      assert EMLX.tensor_data_ptr(t) == {address, 12}
    end

    test "a strided view becomes a dense copy with the same values" do
      t = tensor(Enum.map(0..5, &(&1 * 1.0)), {2, 3}) |> EMLX.transpose(nil)
      assert EMLX.strides(t) == {1, 3}
      assert {_address, 24} = EMLX.tensor_data_ptr(t)
      assert EMLX.strides(t) == {2, 1}
      assert values(t) == [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
    end
  end

  describe "shared memory" do
    test "tensor_to_shm/2 and array_from_shm/4 round-trip" do
      for {t, type} <- [
            {tensor([1.0, 2.0, 3.0, 4.0], {2, 2}), {:f, 32}},
            {tensor([-10, 0, 10], {3}, {:s, 64}), {:s, 64}},
            {tensor(Enum.map(0..11, &(&1 * 1.0)), {3, 4}) |> EMLX.transpose(nil), {:f, 32}}
          ] do
        {name, size} = EMLX.tensor_to_shm(t, 0o600)
        assert "/emlx_" <> _ = name
        assert size == byte_size(EMLX.to_blob(t))
        assert File.exists?("/dev/shm" <> name)
        back = EMLX.array_from_shm(name, EMLX.shape(t), type, size)
        assert EMLX.to_blob(back) == EMLX.to_blob(t)
        # the receiver unlinked it; unlinking again is fine
        refute File.exists?("/dev/shm" <> name)
        assert EMLX.shm_unlink(name) == :ok
      end
    end

    test "names are unique and unclaimed segments can be unlinked" do
      t = tensor([1.0], {1})
      {a, 4} = EMLX.tensor_to_shm(t, 0o600)
      {b, 4} = EMLX.tensor_to_shm(t, 0o400)
      assert a != b
      assert EMLX.shm_unlink(a) == :ok
      assert EMLX.shm_unlink(b) == :ok
      refute File.exists?("/dev/shm" <> b)
    end

    test "empty tensors and errors" do
      {name, 0} = EMLX.tensor_to_shm(tensor([], {0}), 0o600)
      assert EMLX.array_from_shm(name, {0}, {:f, 32}, 0) |> EMLX.shape() == {0}

      assert_raise EMLX.NIFError, ~r/array_from_shm: shm_open\(\/emlx_missing\) failed/, fn ->
        EMLX.array_from_shm("/emlx_missing", {1}, {:f, 32}, 4)
      end

      assert_raise EMLX.NIFError, ~r/array_from_shm: byte_size 3 does not match/, fn ->
        EMLX.array_from_shm("/emlx_missing", {1}, {:f, 32}, 3)
      end

      assert_raise EMLX.NIFError, ~r/tensor_to_shm: permissions/, fn ->
        EMLX.tensor_to_shm(tensor([1.0], {1}), 0o77777)
      end
    end
  end

  describe "metal capture" do
    test "raises a clear error without Metal" do
      assert_raise EMLX.NIFError,
                   ~r/metal_start_capture: Metal GPU capture is not available/,
                   fn ->
                     EMLX.metal_start_capture("/tmp/trace.gputrace")
                   end

      assert_raise EMLX.NIFError,
                   ~r/metal_stop_capture: Metal GPU capture is not available/,
                   fn ->
                     EMLX.metal_stop_capture()
                   end

      assert_raise EMLX.NIFError,
                   ~r/metal_start_capture: argument 1: expected a non-empty string/,
                   fn ->
                     EMLX.metal_start_capture(:trace)
                   end
    end
  end
end
