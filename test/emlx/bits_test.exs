defmodule EMLX.BitsTest do
  # count_leading_zeros / population_count against a bit-by-bit reference
  # written here, and the f8 / sub-byte conversions (from_nx_binary/5,
  # to_nx_binary/3): exact values from the format definitions, bit-exact
  # round trips of every code, and — when Nx is loaded — Nx.BinaryBackend's
  # own bytes for encoding, decoding and ops computed in the wide type.
  use ExUnit.Case, async: true
  import Bitwise
  import EMLX.TestHelpers

  @int_types [{:u, 8}, {:u, 16}, {:u, 32}, {:u, 64}, {:s, 8}, {:s, 16}, {:s, 32}, {:s, 64}]

  defp ref_clz(v, bits),
    do: Enum.count(Enum.take_while((bits - 1)..0//-1, &((v >>> &1 &&& 1) == 0)))

  defp ref_pop(v, bits), do: Enum.count(0..(bits - 1), &((v >>> &1 &&& 1) == 1))

  defp edge_values({kind, bits}) do
    mask = (1 <<< bits) - 1
    pows = for b <- 0..(bits - 1), do: [1 <<< b, (1 <<< b) - 1, mask <<< b &&& mask]
    :rand.seed(:exsss, {1, 2, bits})
    random = for _ <- 1..200, do: :rand.uniform(1 <<< bits) - 1

    unsigned =
      Enum.uniq([0, 1, mask, 1 <<< (bits - 1), mask >>> 1] ++ List.flatten(pows) ++ random)

    # the same bits as the signed type reads them
    if kind == :s,
      do: Enum.map(unsigned, &if(&1 >= 1 <<< (bits - 1), do: &1 - (1 <<< bits), else: &1)),
      else: unsigned
  end

  describe "count_leading_zeros and population_count" do
    for type <- @int_types do
      test "#{inspect(type)} against a bit loop" do
        {_, bits} = type = unquote(type)
        vals = edge_values(type)
        t = tensor(vals, {length(vals)}, type)
        mask = (1 <<< bits) - 1
        assert values(EMLX.count_leading_zeros(t)) == Enum.map(vals, &ref_clz(&1 &&& mask, bits))
        assert values(EMLX.population_count(t)) == Enum.map(vals, &ref_pop(&1 &&& mask, bits))
        assert EMLX.scalar_type(EMLX.population_count(t)) == type
      end
    end

    test "Nx's documented figures" do
      assert values(EMLX.count_leading_zeros(tensor([0, 0xF, 0xFF, 0xFFFF], {4}, {:s, 16}))) ==
               [16, 12, 8, 0]

      assert values(EMLX.count_leading_zeros(tensor([-1, 0, 1], {3}, {:s, 32}))) == [0, 32, 31]
      assert values(EMLX.population_count(tensor([-128], {1}, {:s, 32}))) == [25]

      assert values(EMLX.population_count(tensor([0, 1, 126, 127, -1, -127, -128], {7}, {:s, 8}))) ==
               [0, 1, 6, 7, 8, 2, 1]
    end

    test "strided and broadcast inputs" do
      t = tensor(Enum.to_list(0..11), {3, 4}, {:u, 8})
      tr = EMLX.transpose(t, [1, 0])

      assert values(EMLX.population_count(tr)) ==
               for(j <- 0..3, i <- 0..2, do: ref_pop(i * 4 + j, 8))

      b = EMLX.broadcast_to(tensor([1, 255], {2}, {:u, 8}), {3, 2})
      assert values(EMLX.count_leading_zeros(b)) == [7, 0, 7, 0, 7, 0]
    end

    test "floats, complex and bool raise" do
      for type <- [{:f, 32}, {:f, 16}, {:f, 64}, {:c, 64}, :bool] do
        t = tensor([0, 1], {2}, type)

        assert_raise EMLX.NIFError, ~r/count_leading_zeros.*integer/, fn ->
          EMLX.count_leading_zeros(t)
        end

        assert_raise EMLX.NIFError, ~r/population_count.*integer/, fn ->
          EMLX.population_count(t)
        end
      end
    end
  end

  # f8 values from the formats' definitions (Nx's bias 15 / 7), :nan for NaN codes
  defp f8_value({:f, 8}, c) do
    <<s::1, e::5, m::2>> = <<c>>

    v =
      cond do
        e == 31 and m != 0 -> :nan
        e == 31 -> :infinity
        e == 0 -> m / 4 * :math.pow(2, -14)
        true -> (1 + m / 4) * :math.pow(2, e - 15)
      end

    sign(v, s)
  end

  defp f8_value({:f8_e4m3fn, 8}, c) do
    <<s::1, e::4, m::3>> = <<c>>

    v =
      cond do
        e == 15 and m == 7 -> :nan
        e == 0 -> m / 8 * :math.pow(2, -6)
        true -> (1 + m / 8) * :math.pow(2, e - 7)
      end

    sign(v, s)
  end

  defp sign(:nan, _), do: :nan
  defp sign(:infinity, 1), do: :neg_infinity
  defp sign(v, 1) when is_float(v), do: v * -1.0
  defp sign(v, _), do: v

  @codes for c <- 0..255, into: <<>>, do: <<c>>

  describe "f8" do
    for type <- [{:f, 8}, {:f8_e4m3fn, 8}], storage <- [{:f, 16}, {:f, 32}, {:f, 64}] do
      test "#{inspect(type)} in #{inspect(storage)}: every code's value and back" do
        type = unquote(type)
        storage = unquote(storage)
        t = EMLX.from_nx_binary(@codes, type, {16, 16}, :cpu, type: storage)
        assert EMLX.scalar_type(t) == storage
        assert EMLX.shape(t) == {16, 16}
        got = values(t)

        for {v, c} <- Enum.with_index(got) do
          want = f8_value(type, c)
          # 0.0 == -0.0 in Elixir; compare signs through the bits
          assert v == want and (not is_float(v) or <<v::float-64>> == <<want::float-64>>),
                 "code #{c}: #{inspect(v)} vs #{inspect(want)}"
        end

        assert EMLX.to_nx_binary(t, type) == @codes
        # a view moves NaN codes too
        tt = EMLX.transpose(t, [1, 0])
        want = for j <- 0..15, i <- 0..15, into: <<>>, do: <<i * 16 + j>>
        assert EMLX.to_nx_binary(tt, type) == want
      end
    end

    test "the default storage is {:f, 32}" do
      t = EMLX.from_nx_binary(@codes, :f8_e4m3fn, {256}, :cpu)
      assert EMLX.scalar_type(t) == {:f, 32}
      assert EMLX.to_nx_binary(t, :f8_e4m3fn) == @codes
    end

    test "-0.0 in E4M3FN: 0x80, or 0x00 on request" do
      t = tensor([-0.0], {1}, {:f, 64})
      assert EMLX.to_nx_binary(t, {:f8_e4m3fn, 8}) == <<0x80>>
      assert EMLX.to_nx_binary(t, {:f8_e4m3fn, 8}, negative_zero: :positive) == <<0x00>>

      assert_raise EMLX.NIFError, ~r/negative_zero/, fn ->
        EMLX.to_nx_binary(t, {:f8_e4m3fn, 8}, negative_zero: :maybe)
      end
    end
  end

  describe "sub-byte integers" do
    for {type, storage} <- [
          {{:s, 2}, {:s, 8}},
          {{:s, 4}, {:s, 8}},
          {{:u, 2}, {:u, 8}},
          {{:u, 4}, {:u, 8}}
        ] do
      @tag nx_type: type, storage: storage
      test "#{inspect(type)}: every code at every position, both ways", ctx do
        {kind, bits} = type = ctx.nx_type
        storage = ctx.storage
        n = 1 <<< bits

        for len <- 0..9, shift <- 0..(n - 1) do
          codes = for i <- 0..(len - 1)//1, do: rem(i + shift, n)

          ints =
            if kind == :s,
              do: Enum.map(codes, &if(&1 >= div(n, 2), do: &1 - n, else: &1)),
              else: codes

          packed = for c <- codes, into: <<>>, do: <<c::size(bits)>>
          t = EMLX.from_nx_binary(packed, type, {len}, :cpu)
          assert EMLX.scalar_type(t) == storage
          assert values(t) == ints
          assert EMLX.to_nx_binary(t, type) == packed
          # from a wide type, the low bits
          w = tensor(Enum.map(ints, &(&1 + 16 * n)), {len}, {:s, 64})
          assert EMLX.to_nx_binary(w, type) == packed
        end
      end
    end

    test "signed sub-byte types need a signed storage type" do
      assert_raise EMLX.NIFError, ~r/signed/, fn ->
        EMLX.from_nx_binary(<<0xF0>>, {:s, 4}, {2}, :cpu, type: {:u, 8})
      end

      t = EMLX.from_nx_binary(<<0xF0>>, {:u, 4}, {2}, :cpu, type: {:u, 32})
      assert values(t) == [15, 0]
    end
  end

  describe "bad input" do
    test "unknown types, wrong sizes, wrong storage" do
      assert_raise EMLX.NIFError, ~r/f8 or sub-byte/, fn ->
        EMLX.from_nx_binary(<<0>>, {:f, 16}, {1}, :cpu)
      end

      assert_raise EMLX.NIFError, ~r/f8 or sub-byte/, fn ->
        EMLX.to_nx_binary(tensor([1], {1}, {:s, 8}), {:s, 3})
      end

      assert_raise EMLX.NIFError, ~r/bytes/, fn ->
        EMLX.from_nx_binary(<<1, 2>>, {:f, 8}, {3}, :cpu)
      end

      assert_raise EMLX.NIFError, ~r/bytes/, fn ->
        EMLX.from_nx_binary(<<1::4>>, {:u, 4}, {2, 2}, :cpu)
      end

      assert_raise EMLX.NIFError, ~r/float16, float32 or float64/, fn ->
        EMLX.from_nx_binary(<<1>>, {:f, 8}, {1}, :cpu, type: {:s, 32})
      end

      assert_raise EMLX.NIFError, ~r/integer tensor/, fn ->
        EMLX.to_nx_binary(tensor([1.5], {1}, {:f, 32}), {:s, 4})
      end

      assert_raise EMLX.NIFError, ~r/float16, float32 or float64/, fn ->
        EMLX.to_nx_binary(tensor([1], {1}, {:s, 32}), {:f, 8})
      end
    end
  end

  if Code.ensure_loaded?(Nx) do
    describe "against Nx.BinaryBackend" do
      @neg_zero if :erlang.system_info(:otp_release) |> List.to_integer() < 27,
                  do: :positive,
                  else: :signed

      defp nx_bin(list, type),
        do: Nx.tensor(list, type: type, backend: Nx.BinaryBackend) |> Nx.to_binary()

      defp nx_list(bin, type, n),
        do:
          Nx.from_binary(bin, type, backend: Nx.BinaryBackend)
          |> Nx.reshape({n})
          |> Nx.to_flat_list()

      # Codes whose value Nx.Floating reads differently from the format (and
      # from its own dump_f8): E5M2 subnormals, which load_f8 reads as
      # 2^-15 * (1 + m/4), and, on OTP < 27, E5M2 0x00, which it reads as -0.0
      # (its `if sign == 0, do: 0.0, else: -0.0` has one literal there).
      # EMLX keeps the format's values; ops on these codes differ from Nx.
      defp nx_quirks(type) do
        for c <- 0..255,
            nx = nx_list(<<c>>, type, 1) |> hd(),
            want = f8_value(type, c),
            not same_float?(nx, want),
            do: c
      end

      defp same_float?(a, b) when is_float(a) and is_float(b),
        do: <<a::float-64>> == <<b::float-64>>

      defp same_float?(a, b), do: a == b

      @e5m2_known_quirks [0x00, 0x01, 0x02, 0x03, 0x81, 0x82, 0x83]

      for type <- [{:f, 8}, {:f8_e4m3fn, 8}] do
        @tag known_quirks: if(type == {:f, 8}, do: @e5m2_known_quirks, else: [])
        test "#{inspect(type)}: decoding gives Nx's values, encoding Nx's bytes", ctx do
          type = unquote(type)
          quirks = nx_quirks(type)
          known = ctx.known_quirks
          assert quirks -- known == [], "Nx reads #{inspect(quirks -- known)} differently"
          nx_vals = nx_list(@codes, type, 256)
          t = EMLX.from_nx_binary(@codes, type, {256}, :cpu, type: {:f, 64})

          for {{got, nx}, c} <- Enum.with_index(Enum.zip(values(t), nx_vals)), c not in quirks do
            assert same_float?(got, nx), "code #{c}: #{inspect(got)} vs Nx #{inspect(nx)}"
          end

          # every value, the ties between neighbours and random doubles
          pos = nx_vals |> Enum.filter(&(is_float(&1) and &1 > 0)) |> Enum.sort()
          mids = Enum.zip(pos, tl(pos)) |> Enum.map(fn {a, b} -> (a + b) / 2 end)
          :rand.seed(:exsss, {3, 4, 5})

          rand =
            for _ <- 1..500, do: :math.pow(2, :rand.uniform() * 40 - 24) * Enum.random([1, -1])

          xs = Enum.filter(nx_vals, &is_float/1) ++ mids ++ Enum.map(mids, &(&1 * -1.0)) ++ rand
          xs = xs ++ [:nan, :infinity, :neg_infinity, 1.0e9, -1.0e9, 65520.0, -0.0, 0.0]
          w = tensor(xs, {length(xs)}, {:f, 64})
          assert EMLX.to_nx_binary(w, type, negative_zero: @neg_zero) == nx_bin(xs, type)
        end

        for op <- [:add, :multiply] do
          test "#{inspect(type)}: #{op} of every pair of codes, computed in f32, encodes as Nx's" do
            type = unquote(type)
            op = unquote(op)
            quirks = nx_quirks(type)
            pairs = for x <- 0..255, y <- 0..255, do: {x, y}
            a = for {x, _} <- pairs, into: <<>>, do: <<x>>
            b = for {_, y} <- pairs, into: <<>>, do: <<y>>
            nx_a = Nx.from_binary(a, type, backend: Nx.BinaryBackend)
            nx_b = Nx.from_binary(b, type, backend: Nx.BinaryBackend)
            want = apply(Nx, op, [nx_a, nx_b]) |> Nx.to_binary() |> :binary.bin_to_list()
            ea = EMLX.from_nx_binary(a, type, {65536}, :cpu)
            eb = EMLX.from_nx_binary(b, type, {65536}, :cpu)

            got =
              apply(EMLX, op, [ea, eb])
              |> EMLX.to_nx_binary(type, negative_zero: @neg_zero)
              |> :binary.bin_to_list()

            bad =
              for {{{x, y}, g}, w} <- Enum.zip(Enum.zip(pairs, got), want),
                  x not in quirks and y not in quirks,
                  g != w,
                  do: {x, y, g, w}

            checked = Enum.count(pairs, fn {x, y} -> x not in quirks and y not in quirks end)
            assert checked > 60_000

            assert bad == [],
                   "#{length(bad)} of #{checked} differ from Nx: #{inspect(Enum.take(bad, 5))}"
          end
        end
      end

      for type <- [{:s, 2}, {:s, 4}, {:u, 2}, {:u, 4}] do
        test "#{inspect(type)}: Nx's bytes both ways, and add in the wide type" do
          type = unquote(type)
          ints = Enum.to_list(-20..20)
          nx_t = Nx.tensor(ints, type: type, backend: Nx.BinaryBackend)
          nx = Nx.to_binary(nx_t)
          assert EMLX.to_nx_binary(tensor(ints, {41}, {:s, 64}), type) == nx
          t = EMLX.from_nx_binary(nx, type, {41}, :cpu)
          assert values(t) == Nx.to_flat_list(nx_t)

          # add of two sub-byte tensors in the storage type, encoded: Nx's wrapped result
          want = Nx.add(nx_t, Nx.reverse(nx_t)) |> Nx.to_binary()
          rev = EMLX.from_nx_binary(Nx.reverse(nx_t) |> Nx.to_binary(), type, {41}, :cpu)
          assert EMLX.to_nx_binary(EMLX.add(t, rev), type) == want
        end
      end
    end
  else
    @tag skip: "Nx is not loaded (set NX_PATH to an Nx tree to compare against Nx.BinaryBackend)"
    test "against Nx.BinaryBackend"
  end
end
