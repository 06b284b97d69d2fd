if Code.ensure_loaded?(Nx) do
  defmodule EMLX.Nx.FastTest do
    # EMLX.Fast against references written in plain Elixir floats (one loop
    # per output element, f64 arithmetic), on every backend the block can run
    # on: Nx.BinaryBackend (the default formula), EMLX.Backend (the engine's
    # kernel, when it has one) and inside defn (Nx.Defn.Evaluator), and
    # through Nx.Defn.grad (the default formula's gradient).
    use ExUnit.Case, async: false

    alias EMLX.Fast

    @backends [Nx.BinaryBackend, EMLX.Backend]

    setup do
      previous = Nx.default_backend(Nx.BinaryBackend)
      on_exit(fn -> Nx.default_backend(previous) end)
      :ok
    end

    defp random(shape, seed, scale \\ 1.0) do
      :rand.seed(:exsss, {seed, seed * 7 + 1, seed * 13 + 2})
      n = Tuple.product(shape)
      for(_ <- 1..n, do: :rand.normal() * scale) |> Nx.tensor(type: :f32) |> Nx.reshape(shape)
    end

    defp on(t, backend), do: Nx.backend_copy(t, backend)

    # Row-major flat list <-> index helpers.
    defp strides(shape) do
      dims = Tuple.to_list(shape)

      {strides, _} = dims |> Enum.reverse() |> Enum.map_reduce(1, fn d, acc -> {acc, acc * d} end)

      Enum.reverse(strides)
    end

    defp at(flat, shape, idx) do
      offset = idx |> Enum.zip(strides(shape)) |> Enum.map(fn {i, s} -> i * s end) |> Enum.sum()
      elem(flat, offset)
    end

    defp indices(shape) do
      shape
      |> Tuple.to_list()
      |> Enum.reduce([[]], fn d, acc -> for i <- acc, j <- 0..(d - 1)//1, do: i ++ [j] end)
    end

    defp flat(t), do: t |> Nx.as_type(:f64) |> Nx.to_flat_list() |> List.to_tuple()

    defp assert_close(actual, expected, tol) do
      a = Nx.to_flat_list(Nx.as_type(actual, :f64))
      e = expected

      assert length(a) == length(e)

      Enum.zip(a, e)
      |> Enum.with_index()
      |> Enum.each(fn {{x, y}, i} ->
        assert abs(x - y) <= tol * (1 + abs(y)),
               "element #{i}: got #{x}, expected #{y} (tolerance #{tol})"
      end)
    end

    ## references

    defp ref_rms_norm(x, w, eps) do
      {_, d} = {nil, elem(x.shape, tuple_size(x.shape) - 1)}
      xs = Nx.to_flat_list(Nx.as_type(x, :f64))
      ws = Nx.to_flat_list(Nx.as_type(w, :f64))

      xs
      |> Enum.chunk_every(d)
      |> Enum.flat_map(fn row ->
        r = :math.sqrt(Enum.sum(Enum.map(row, &(&1 * &1))) / d + eps)
        Enum.zip_with(row, ws, fn v, g -> g * v / r end)
      end)
    end

    defp ref_layer_norm(x, w, b, eps) do
      d = elem(x.shape, tuple_size(x.shape) - 1)
      ws = Nx.to_flat_list(Nx.as_type(w, :f64))
      bs = if b, do: Nx.to_flat_list(Nx.as_type(b, :f64)), else: List.duplicate(0.0, d)

      x
      |> Nx.as_type(:f64)
      |> Nx.to_flat_list()
      |> Enum.chunk_every(d)
      |> Enum.flat_map(fn row ->
        mean = Enum.sum(row) / d
        var = Enum.sum(Enum.map(row, &((&1 - mean) * (&1 - mean)))) / d
        r = :math.sqrt(var + eps)
        Enum.zip_with([row, ws, bs], fn [v, g, c] -> (v - mean) / r * g + c end)
      end)
    end

    # angle(pos, i) for pair i; pair (i, i + dims/2) or (2i, 2i + 1).
    defp ref_rope(x, dims, traditional, pos_of, freq_of) do
      shape = x.shape
      rank = tuple_size(shape)
      d = elem(shape, rank - 1)
      half = div(dims, 2)
      xs = flat(x)

      for idx <- indices(shape) do
        j = List.last(idx)
        pos = pos_of.(idx)

        cond do
          j >= dims ->
            at(xs, shape, idx)

          traditional ->
            i = div(j, 2)
            a = pos * freq_of.(i)
            x1 = at(xs, shape, List.replace_at(idx, rank - 1, 2 * i))
            x2 = at(xs, shape, List.replace_at(idx, rank - 1, 2 * i + 1))

            if rem(j, 2) == 0,
              do: x1 * :math.cos(a) - x2 * :math.sin(a),
              else: x1 * :math.sin(a) + x2 * :math.cos(a)

          true ->
            i = rem(j, half)
            a = pos * freq_of.(i)
            x1 = at(xs, shape, List.replace_at(idx, rank - 1, i))
            x2 = at(xs, shape, List.replace_at(idx, rank - 1, i + half))

            if j < half,
              do: x1 * :math.cos(a) - x2 * :math.sin(a),
              else: x1 * :math.sin(a) + x2 * :math.cos(a)
        end
      end
      |> tap(fn _ -> d end)
    end

    defp base_freq(base, dims), do: fn i -> :math.pow(base, -2 * i / dims) end

    # visible.(b, h, i, j) -> boolean; additive.(b, h, i, j) -> float
    defp ref_sdpa(q, k, v, scale, visible, additive \\ fn _, _, _, _ -> 0.0 end) do
      {b, nq, tq, d} = q.shape
      {_, nkv, tkv, dv} = v.shape
      rep = div(nq, nkv)
      qs = flat(q)
      ks = flat(k)
      vs = flat(v)

      for bi <- 0..(b - 1), h <- 0..(nq - 1), i <- 0..(tq - 1), c <- 0..(dv - 1) do
        kh = div(h, rep)

        # a row that sees no key averages all of them (MLX's answer)
        any? = Enum.any?(0..(tkv - 1), &visible.(bi, h, i, &1))

        scores =
          for j <- 0..(tkv - 1), visible.(bi, h, i, j) or not any? do
            s =
              Enum.sum(
                for e <- 0..(d - 1),
                    do: at(qs, q.shape, [bi, h, i, e]) * at(ks, k.shape, [bi, kh, j, e])
              )

            {j, s * scale + additive.(bi, h, i, j)}
          end

        scores = if any?, do: scores, else: Enum.map(scores, fn {j, _} -> {j, 0.0} end)

        case scores do
          [] ->
            0.0

          _ ->
            m = scores |> Enum.map(&elem(&1, 1)) |> Enum.max()
            ws = Enum.map(scores, fn {j, s} -> {j, :math.exp(s - m)} end)
            total = ws |> Enum.map(&elem(&1, 1)) |> Enum.sum()
            Enum.sum(for {j, w} <- ws, do: w * at(vs, v.shape, [bi, kh, j, c])) / total
        end
      end
    end

    ## norms

    for backend <- @backends do
      @backend backend

      test "rms_norm on #{inspect(backend)}" do
        x = random({3, 5, 24}, 1)
        w = random({24}, 2)
        expected = ref_rms_norm(x, w, 1.0e-5)
        assert_close(Fast.rms_norm(on(x, @backend), on(w, @backend), 1.0e-5), expected, 2.0e-6)

        assert_close(
          Fast.rms_norm(on(x, @backend), on(w, @backend), eps: 1.0e-5),
          expected,
          2.0e-6
        )
      end

      test "layer_norm with and without bias on #{inspect(backend)}" do
        x = random({4, 33}, 3, 3.0) |> Nx.add(5.0)
        w = random({33}, 4)
        b = random({33}, 5)

        assert_close(
          Fast.layer_norm(on(x, @backend), on(w, @backend), on(b, @backend), 1.0e-5),
          ref_layer_norm(x, w, b, 1.0e-5),
          1.0e-5
        )

        assert_close(
          Fast.layer_norm(on(x, @backend), on(w, @backend), 1.0e-5),
          ref_layer_norm(x, w, nil, 1.0e-5),
          1.0e-5
        )
      end

      test "rms_norm in bf16 keeps its type and accumulates in f32 on #{inspect(backend)}" do
        x = random({2, 64}, 6) |> Nx.as_type(:bf16)
        w = random({64}, 7) |> Nx.as_type(:bf16)
        out = Fast.rms_norm(on(x, @backend), on(w, @backend), 1.0e-6)
        assert out.type == {:bf, 16}
        # bf16 has 8 bits of mantissa: two roundings (normalised value, product)
        assert_close(out, ref_rms_norm(x, w, 1.0e-6), 1.6e-2)
      end

      ## rope

      test "rope, split-half and traditional, partial dims, on #{inspect(backend)}" do
        x = random({2, 3, 5, 8}, 8)

        for traditional <- [false, true], dims <- [8, 4] do
          expected =
            ref_rope(
              x,
              dims,
              traditional,
              fn idx -> 7 + Enum.at(idx, 2) end,
              base_freq(10_000.0, dims)
            )

          assert_close(
            Fast.rope(on(x, @backend), dims, traditional, 10_000.0, 1.0, 7),
            expected,
            2.0e-5
          )
        end
      end

      test "rope with a position scale on #{inspect(backend)}" do
        x = random({1, 4, 6}, 9)

        expected =
          ref_rope(x, 6, false, fn idx -> 0.5 * (3 + Enum.at(idx, 1)) end, base_freq(500.0, 6))

        assert_close(Fast.rope(on(x, @backend), 6, false, 500.0, 0.5, 3), expected, 2.0e-5)
      end

      test "rope_with_positions on {B, T, H, D} rotates every head by its token's position on #{inspect(backend)}" do
        x = random({2, 3, 4, 8}, 10)
        ids = Nx.tensor([[5, 9, 2], [0, 1, 40]])
        id_list = Nx.to_list(ids)

        expected =
          ref_rope(
            x,
            8,
            false,
            fn [b, t | _] -> id_list |> Enum.at(b) |> Enum.at(t) end,
            base_freq(10_000.0, 8)
          )

        got =
          Fast.rope_with_positions(on(x, @backend), 8, false, 10_000.0, 1.0, on(ids, @backend))

        assert_close(got, expected, 2.0e-5)
      end

      test "rope_with_freqs with per-batch offsets, sequence on axis 1, on #{inspect(backend)}" do
        x = random({2, 3, 2, 6}, 11)
        freqs = Nx.tensor([1.0, 3.0, 100.0])
        offsets = Nx.tensor([4, 11])
        fl = Nx.to_list(freqs)
        ol = Nx.to_list(offsets)

        expected =
          ref_rope(x, 6, false, fn [b, t | _] -> Enum.at(ol, b) + t end, &(1 / Enum.at(fl, &1)))

        got =
          Fast.rope_with_freqs(
            on(x, @backend),
            6,
            false,
            1.0,
            on(offsets, @backend),
            on(freqs, @backend)
          )

        assert_close(got, expected, 2.0e-5)
      end

      ## attention

      test "sdpa, grouped-query, no mask, on #{inspect(backend)}" do
        q = random({2, 4, 3, 8}, 12)
        k = random({2, 2, 5, 8}, 13)
        v = random({2, 2, 5, 8}, 14)
        expected = ref_sdpa(q, k, v, 0.35, fn _, _, _, _ -> true end)

        got =
          Fast.scaled_dot_product_attention(
            on(q, @backend),
            on(k, @backend),
            on(v, @backend),
            0.35
          )

        assert_close(got, expected, 2.0e-5)
      end

      test "sdpa causal is aligned bottom-right on #{inspect(backend)}" do
        q = random({1, 2, 3, 4}, 15)
        k = random({1, 1, 7, 4}, 16)
        v = random({1, 1, 7, 4}, 17)
        expected = ref_sdpa(q, k, v, 0.5, fn _, _, i, j -> j <= i + 4 end)

        got =
          Fast.scaled_dot_product_attention_causal(
            on(q, @backend),
            on(k, @backend),
            on(v, @backend),
            0.5
          )

        assert_close(got, expected, 2.0e-5)
      end

      test "sdpa with boolean and additive masks, a fully hidden row averages v, on #{inspect(backend)}" do
        q = random({1, 2, 3, 4}, 18)
        k = random({1, 2, 5, 4}, 19)
        v = random({1, 2, 5, 4}, 20)
        # row 1 of every head sees nothing
        bool = Nx.tensor([[1, 0, 1, 1, 0], [0, 0, 0, 0, 0], [1, 1, 1, 1, 1]], type: :u8)
        bl = Nx.to_list(bool)
        expected = ref_sdpa(q, k, v, 0.5, fn _, _, i, j -> Enum.at(Enum.at(bl, i), j) == 1 end)

        got =
          Fast.scaled_dot_product_attention(
            on(q, @backend),
            on(k, @backend),
            on(v, @backend),
            0.5,
            on(bool, @backend)
          )

        assert_close(got, expected, 2.0e-5)
        refute got |> Nx.is_nan() |> Nx.any() |> Nx.to_number() == 1

        add = random({1, 2, 1, 5}, 21)
        al = add |> Nx.as_type(:f64) |> Nx.to_flat_list() |> List.to_tuple()

        expected =
          ref_sdpa(q, k, v, 0.5, fn _, _, _, _ -> true end, fn _, h, _, j ->
            elem(al, h * 5 + j)
          end)

        got =
          Fast.scaled_dot_product_attention(
            on(q, @backend),
            on(k, @backend),
            on(v, @backend),
            0.5,
            on(add, @backend)
          )

        assert_close(got, expected, 2.0e-5)
      end

      test "sdpa causal with a key mask on #{inspect(backend)}" do
        q = random({2, 4, 2, 4}, 22)
        k = random({2, 1, 4, 4}, 23)
        v = random({2, 1, 4, 4}, 24)
        key_mask = Nx.tensor([[0, 1, 1, 1], [1, 1, 0, 1]])
        kl = Nx.to_list(key_mask)

        expected =
          ref_sdpa(q, k, v, 0.5, fn b, _, i, j ->
            j <= i + 2 and Enum.at(Enum.at(kl, b), j) == 1
          end)

        got =
          Fast.scaled_dot_product_attention_causal_key_masked(
            on(q, @backend),
            on(k, @backend),
            on(v, @backend),
            0.5,
            on(key_mask, @backend)
          )

        assert_close(got, expected, 2.0e-5)
      end

      test "swiglu on #{inspect(backend)}" do
        g = random({3, 17}, 25, 3.0)
        u = random({3, 17}, 26)

        expected =
          Enum.zip_with(Nx.to_flat_list(g), Nx.to_flat_list(u), fn a, b ->
            a / (1 + :math.exp(-a)) * b
          end)

        assert_close(Fast.swiglu(on(g, @backend), on(u, @backend)), expected, 2.0e-6)
      end
    end

    test "in bf16 the kernels and the default formulas agree" do
      q = random({1, 4, 3, 16}, 50) |> Nx.as_type(:bf16)
      k = random({1, 2, 9, 16}, 51) |> Nx.as_type(:bf16)
      v = random({1, 2, 9, 16}, 52) |> Nx.as_type(:bf16)
      x = random({3, 40}, 53) |> Nx.as_type(:bf16)
      w = random({40}, 54) |> Nx.as_type(:bf16)

      cases = [
        fn q, k, v, _x, _w -> Fast.scaled_dot_product_attention_causal(q, k, v, 0.25) end,
        fn _q, _k, _v, x, w -> Fast.rms_norm(x, w, 1.0e-5) end,
        fn _q, _k, _v, x, w -> Fast.layer_norm(x, w, w, 1.0e-5) end,
        fn q, _k, _v, _x, _w -> Fast.rope(q, 16, false, 10_000.0, 1.0, 5) end,
        fn _q, _k, _v, x, _w -> Fast.swiglu(x, x) end
      ]

      for f <- cases do
        native = apply(f, Enum.map([q, k, v, x, w], &on(&1, EMLX.Backend)))
        default = apply(f, [q, k, v, x, w])
        assert native.type == {:bf, 16}
        # the two may round on different sides (rms_norm and rope round an
        # intermediate to bf16, as MLX does): two bf16 steps (2^-7 relative)
        assert_close(native, Nx.to_flat_list(Nx.as_type(default, :f64)), 1.6e-2)
      end
    end

    ## defn and grad

    test "inside defn the blocks give the eager results" do
      x = random({2, 3, 4, 8}, 30)
      w = random({8}, 31)

      f =
        Nx.Defn.jit(fn x, w ->
          x |> Fast.rms_norm(w, 1.0e-5) |> Fast.rope(8, false, 10_000.0, 1.0, 2)
        end)

      eager = x |> Fast.rms_norm(w, 1.0e-5) |> Fast.rope(8, false, 10_000.0, 1.0, 2)
      assert_close(f.(x, w), Nx.to_flat_list(Nx.as_type(eager, :f64)), 1.0e-6)
    end

    test "compiled by EMLX, each block lowers to its fused kernel and gives the eager result" do
      e = &on(&1, EMLX.Backend)
      x = e.(random({2, 3, 4, 16}, 60))
      w = e.(random({16}, 61))
      q = e.(random({2, 4, 3, 16}, 63))
      k = e.(random({2, 2, 5, 16}, 62))
      ids = e.(Nx.tensor([[1, 2, 3], [7, 8, 9]]))
      mask = e.(Nx.tensor([[1, 1, 0, 1, 1]], type: :u8))

      cases = [
        {:fast_rms_norm, fn x, w -> Fast.rms_norm(x, w, 1.0e-5) end, [x, w]},
        {:fast_layer_norm, fn x, w -> Fast.layer_norm(x, w, w, 1.0e-5) end, [x, w]},
        {:fast_layer_norm_no_bias, fn x, w -> Fast.layer_norm(x, w, 1.0e-5) end, [x, w]},
        {:fast_rope, fn x -> Fast.rope(x, 16, false, 10_000.0, 1.0, 3) end, [x]},
        {:fast_rope_positions,
         fn x, ids -> Fast.rope_with_positions(x, 8, true, 10_000.0, 1.0, ids) end, [x, ids]},
        {:fast_swiglu, fn x -> Fast.swiglu(x, x) end, [x]},
        {:fast_sdpa, fn q, k -> Fast.scaled_dot_product_attention(q, k, k, 0.25) end, [q, k]},
        {:fast_sdpa_causal,
         fn q, k -> Fast.scaled_dot_product_attention_causal(q, k, k, 0.25) end, [q, k]},
        {:fast_sdpa_masked, fn q, k, m -> Fast.scaled_dot_product_attention(q, k, k, 0.25, m) end,
         [q, k, mask]}
      ]

      for {op, f, args} <- cases do
        {_templates, nodes, _outputs} = spec = EMLX.Compiler.__spec__(f, args)
        assert is_tuple(spec), "#{op}: the defn fell back: #{inspect(spec)}"
        assert Enum.any?(nodes, &match?({^op, _}, &1)), "#{op} is not in #{inspect(nodes)}"

        compiled = apply(Nx.Defn.jit(f, compiler: EMLX), args)
        eager = apply(f, args)
        assert Nx.to_binary(compiled) == Nx.to_binary(eager), "#{op}: compiled != eager"
      end
    end

    test "grad goes through the default formula (and a closed-over weight)" do
      x = random({2, 6}, 32)
      w = random({6}, 33)
      h = 1.0e-3

      g =
        Nx.Defn.grad(fn x -> x |> Fast.rms_norm(w, 1.0e-5) |> Nx.multiply(x) |> Nx.sum() end).(x)

      # central differences of the reference, in f64
      f = fn xs ->
        xt = Nx.tensor(xs, type: :f64) |> Nx.reshape({2, 6})
        ref_rms_norm(xt, w, 1.0e-5) |> Enum.zip_with(xs, &(&1 * &2)) |> Enum.sum()
      end

      xs = Nx.to_flat_list(Nx.as_type(x, :f64))

      numeric =
        for i <- 0..11 do
          (f.(List.update_at(xs, i, &(&1 + h))) - f.(List.update_at(xs, i, &(&1 - h)))) / (2 * h)
        end

      assert_close(g, numeric, 2.0e-3)
    end

    ## errors

    test "bad shapes raise ArgumentError naming the problem" do
      x = random({2, 8}, 40)

      assert_raise ArgumentError, ~r/weight must have shape \{8\}/, fn ->
        Fast.rms_norm(x, random({7}, 41))
      end

      assert_raise ArgumentError, ~r/dims must be an even integer/, fn ->
        Fast.rope(random({1, 2, 8}, 42), 3, false, 10_000.0, 1.0, 0)
      end

      assert_raise ArgumentError, ~r/\{B, T, H, D\}/, fn ->
        Fast.rope_with_positions(random({2, 8}, 43), 8, false, 10_000.0, 1.0, Nx.tensor([[0]]))
      end

      q = random({1, 3, 2, 4}, 44)
      k = random({1, 2, 2, 4}, 45)

      assert_raise ArgumentError, ~r/multiple of the key\/value heads/, fn ->
        Fast.scaled_dot_product_attention(q, k, k, 1.0)
      end

      assert_raise ArgumentError, ~r/rank 4/, fn ->
        Fast.scaled_dot_product_attention(random({3, 2, 4}, 46), k, k, 1.0)
      end

      assert_raise ArgumentError, ~r/does not broadcast/, fn ->
        Fast.scaled_dot_product_attention(random({1, 2, 2, 4}, 47), k, k, 1.0, Nx.iota({3}))
      end

      assert_raise ArgumentError, ~r/one shape/, fn ->
        Fast.swiglu(x, random({8, 2}, 48))
      end
    end
  end
else
  IO.puts(
    "test/emlx/nx/fast_test.exs: Nx is not available (set NX_PATH to an Nx " <>
      "source tree), so the EMLX.Fast tests are left out"
  )
end
