# examples/decode.exs — the Elixir twin of examples/decode.c: a Llama/Qwen-
# shaped decoder (RMSNorm, RoPE, grouped-query attention over a KV cache,
# SwiGLU MLP) running prefill and greedy decode through EMLX.Fast and defn
# on EMLX.Backend.
#
#   NX_PATH=<nx tree>/nx mix run examples/decode.exs [--layers N] [--prompt N] [--gen N]
#       [--weights q4|bf16] [--compiler emlx|evaluator]
#
# Weights, as in the C demo: by default 4-bit affine, group 64 (as the
# mlx-community 4-bit models: every linear layer, the LM head and the
# embedding), each made as a bf16 {out, in} matrix and quantized along `in`
# by EMLX.quantize/2; Nx.dot of an activation with such a weight runs
# quantized_matmul (x @ W^T), and the embedding takes the packed rows of
# the tokens and dequantizes only those. `--weights bf16` keeps them dense
# bf16 {in, out}. The norm weights are bf16 either way.
#
# Needs Nx (NX_PATH or deps/nx); weights are deterministic pseudo-random
# values made at start-up (no downloads). Each layer is one defn, compiled
# with EMLX when it is the Nx.Defn compiler in this build (else
# Nx.Defn.Evaluator on EMLX.Backend) and replayed for every layer and step:
# the cache position and the token positions are tensors, so no step
# retraces. `--compiler evaluator` runs the layers and the head under
# Nx.Defn.Evaluator on EMLX.Backend even where EMLX is there, to compare the
# two (the weights are made as before). Prints prefill and decode tokens/s,
# ms per token and the peak of the engine's memory counters, and checks that
# the last logits are finite and that a second decode from the same prompt
# gives the same tokens.

unless Code.ensure_loaded?(Nx) do
  IO.puts(
    "examples/decode.exs needs Nx: set NX_PATH to an Nx source tree (its nx/ folder), " <>
      "or fetch deps/nx"
  )

  System.halt(1)
end

defmodule EMLX.Examples.Decode do
  import Nx.Defn

  @hidden 2048
  @nq 16
  @nkv 4
  @head 128
  @inter 5632
  @vocab 32000
  @rope_base 10_000.0
  @eps 1.0e-5
  @attn_scale 1.0 / :math.sqrt(@head)

  ## weights: w[i] = (frac(sin(i * 12.9898 + seed) * 43758.5453) - 0.5) * scale

  # One compiled program per weight (with EMLX as the compiler the chain is
  # one fused pass; eager calls would hold every intermediate).
  defp weight(shape, seed, scale) do
    Nx.Defn.jit(fn -> weight_formula(shape, seed, scale) end, compiler: compiler()).()
    |> evaluated()
  end

  defp weight_formula(shape, seed, scale) do
    Nx.iota(shape, type: :f32)
    |> Nx.multiply(12.9898)
    |> Nx.add(seed * 78.233)
    |> Nx.sin()
    |> Nx.multiply(43758.5453)
    |> then(&Nx.subtract(&1, Nx.floor(&1)))
    |> Nx.subtract(0.5)
    |> Nx.multiply(scale)
    |> Nx.as_type(:bf16)
  end

  # made now, not at first use (so the timings below are of the model alone)
  defp evaluated(%Nx.Tensor{} = t) do
    EMLX.eval(EMLX.Backend.from_nx(t))
    t
  end

  # The weight of a linear layer from `in` to `out` features: dense bf16
  # {in, out}, or quantized {out, in} (MLX's layout, along `in`).
  defp linear_weight(in_f, out_f, seed, scale, true),
    do: weight({out_f, in_f}, seed, scale) |> quantized()

  defp linear_weight(in_f, out_f, seed, scale, false), do: weight({in_f, out_f}, seed, scale)

  # 4-bit affine, group 64, evaluated now (an unevaluated quantization would
  # keep its bf16 input alive until first use)
  defp quantized(dense) do
    q = EMLX.quantize(dense, group_size: 64)
    c = EMLX.Quantization.config(q)
    Enum.each([q.data.ref, c.scales, c.biases], &EMLX.eval/1)
    q
  end

  # The embedding table {vocab, hidden}: dense, or its packed rows, scales
  # and biases as three tensors (so that Nx.take can pick a token's rows).
  defp embedding(true) do
    q = weight({@vocab, @hidden}, 1, 1.0) |> quantized()
    c = EMLX.Quantization.config(q)
    to_nx = &EMLX.Backend.to_nx/1
    {:quantized, to_nx.(q.data.ref), to_nx.(c.scales), to_nx.(c.biases)}
  end

  defp embedding(false), do: weight({@vocab, @hidden}, 1, 1.0)

  # x @ W for either form of linear_weight/5 (a quantized tensor's type is
  # its storage, {:s, 4}).
  deftransformp linear(x, w) do
    last = Nx.rank(x) - 1

    case w.type do
      {:s, 4} -> Nx.dot(x, [last], w, [1])
      _ -> Nx.dot(x, [last], w, [0])
    end
  end

  # The embedding rows of `tokens`, {T, hidden} bf16.
  def embed({:quantized, q, scales, biases}, tokens) do
    [q, s, b] = Enum.map([q, scales, biases], &EMLX.Backend.from_nx(Nx.take(&1, tokens)))
    EMLX.dequantize(q, s, b, 64, 4, "affine") |> EMLX.Backend.to_nx()
  end

  def embed(table, tokens), do: Nx.take(table, tokens)

  defp norm_weight(seed),
    do: weight({@hidden}, seed, 0.2) |> Nx.add(1.0) |> Nx.as_type(:bf16) |> evaluated()

  def model(nlayers, q?) do
    s = 1.0 / :math.sqrt(@hidden)

    layers =
      for l <- 0..(nlayers - 1) do
        base = 100 * (l + 1)

        %{
          attn_norm: norm_weight(base),
          wq: linear_weight(@hidden, @nq * @head, base + 1, 2 * s, q?),
          wk: linear_weight(@hidden, @nkv * @head, base + 2, 2 * s, q?),
          wv: linear_weight(@hidden, @nkv * @head, base + 3, 2 * s, q?),
          wo: linear_weight(@nq * @head, @hidden, base + 4, 2 * s, q?),
          mlp_norm: norm_weight(base + 5),
          wg: linear_weight(@hidden, @inter, base + 6, 2 * s, q?),
          wu: linear_weight(@hidden, @inter, base + 7, 2 * s, q?),
          wd: linear_weight(@inter, @hidden, base + 8, 2 / :math.sqrt(@inter), q?)
        }
      end

    %{
      embed: embedding(q?),
      final_norm: norm_weight(2),
      lm_head: linear_weight(@hidden, @vocab, 3, 2 * s, q?),
      layers: layers
    }
  end

  def cache(nlayers, tmax) do
    zeros =
      Nx.broadcast(Nx.tensor(0, type: :bf16, backend: EMLX.Backend), {1, @nkv, tmax, @head})
      |> evaluated()

    for _ <- 1..nlayers, do: {zeros, zeros}
  end

  ## one decoder layer: x {1, T, hidden}; offset: the cache rows already filled

  defn layer(x, offset, k_cache, v_cache, w) do
    {_, t, _} = Nx.shape(x)
    tmax = Nx.axis_size(k_cache, 2)
    positions = Nx.iota({1, t}, type: :s32) + offset

    h = EMLX.Fast.rms_norm(x, w.attn_norm, @eps)

    q =
      linear(h, w.wq)
      |> Nx.reshape({1, t, @nq, @head})
      |> EMLX.Fast.rope_with_positions(@head, false, @rope_base, 1.0, positions)
      |> Nx.transpose(axes: [0, 2, 1, 3])

    k =
      linear(h, w.wk)
      |> Nx.reshape({1, t, @nkv, @head})
      |> EMLX.Fast.rope_with_positions(@head, false, @rope_base, 1.0, positions)
      |> Nx.transpose(axes: [0, 2, 1, 3])

    v = linear(h, w.wv) |> Nx.reshape({1, t, @nkv, @head}) |> Nx.transpose(axes: [0, 2, 1, 3])

    k_cache = Nx.put_slice(k_cache, [0, 0, offset, 0], k)
    v_cache = Nx.put_slice(v_cache, [0, 0, offset, 0], v)

    # token i (at offset + i) sees cache rows j <= offset + i
    rows = Nx.iota({t, 1}) + offset
    mask = Nx.less_equal(Nx.iota({1, tmax}), rows) |> Nx.reshape({1, 1, t, tmax})

    attn =
      q
      |> EMLX.Fast.scaled_dot_product_attention(k_cache, v_cache, @attn_scale, mask)
      |> Nx.transpose(axes: [0, 2, 1, 3])
      |> Nx.reshape({1, t, @nq * @head})

    x = x + linear(attn, w.wo)

    h = EMLX.Fast.rms_norm(x, w.mlp_norm, @eps)
    mlp = EMLX.Fast.swiglu(linear(h, w.wg), linear(h, w.wu)) |> linear(w.wd)
    {x + mlp, k_cache, v_cache}
  end

  # the logits of the last token, {vocab}, in f32
  defn head(x, final_norm, lm_head) do
    {_, t, _} = Nx.shape(x)

    x
    |> Nx.slice_along_axis(t - 1, 1, axis: 1)
    |> Nx.reshape({1, @hidden})
    |> EMLX.Fast.rms_norm(final_norm, @eps)
    |> linear(lm_head)
    |> Nx.reshape({@vocab})
    |> Nx.as_type(:f32)
  end

  ## the loop

  def compiler do
    if Code.ensure_loaded?(EMLX) and function_exported?(EMLX, :__jit__, 5),
      do: EMLX,
      else: Nx.Defn.Evaluator
  end

  defp model_compiler(nil), do: compiler()
  defp model_compiler("emlx"), do: EMLX
  defp model_compiler("evaluator"), do: Nx.Defn.Evaluator

  defp model_compiler(other) do
    IO.puts("--compiler: #{inspect(other)} is not emlx or evaluator")
    System.halt(1)
  end

  def forward(m, tokens, offset, caches, fns) do
    x = embed(m.embed, tokens) |> Nx.new_axis(0)
    off = Nx.tensor(offset, type: :s32, backend: EMLX.Backend)

    {x, caches} =
      m.layers
      |> Enum.zip(caches)
      |> Enum.map_reduce(x, fn {w, {kc, vc}}, x ->
        {x, kc, vc} = fns.layer.(x, off, kc, vc, w)
        {{kc, vc}, x}
      end)
      |> then(fn {caches, x} -> {x, caches} end)

    {fns.head.(x, m.final_norm, m.lm_head), caches}
  end

  def generate(m, prompt, ngen, fns, progress?) do
    tmax = length(prompt) + ngen
    caches = cache(length(m.layers), tmax)
    tokens = Nx.tensor(prompt, type: :s32, backend: EMLX.Backend)

    # The argmax runs in the engine: only the token id leaves it.
    {t_prefill, {logits, caches, first}} =
      :timer.tc(fn ->
        {logits, caches} = forward(m, tokens, 0, caches, fns)
        {logits, caches, logits |> Nx.argmax() |> Nx.to_number()}
      end)

    {t_decode, {generated, last_logits}} =
      :timer.tc(fn ->
        Enum.reduce(1..(ngen - 1)//1, {[first], caches, logits}, fn step, {acc, caches, _} ->
          [tok | _] = acc
          tokens = Nx.tensor([tok], type: :s32, backend: EMLX.Backend)
          {logits, caches} = forward(m, tokens, length(prompt) + step - 1, caches, fns)
          next = logits |> Nx.argmax() |> Nx.to_number()

          if progress?,
            do: IO.write("\r  decoding: #{step + 1}/#{ngen} tokens")

          {[next | acc], caches, logits}
        end)
        |> then(fn {acc, _caches, logits} -> {Enum.reverse(acc), logits} end)
      end)

    if progress?, do: IO.write("\n")
    %{tokens: generated, logits: last_logits, prefill_us: t_prefill, decode_us: t_decode}
  end

  def main(argv) do
    {opts, _, _} =
      OptionParser.parse(argv,
        strict: [
          layers: :integer,
          prompt: :integer,
          gen: :integer,
          weights: :string,
          compiler: :string
        ]
      )

    nlayers = Keyword.get(opts, :layers, 8)
    nprompt = Keyword.get(opts, :prompt, 32)
    ngen = Keyword.get(opts, :gen, 16)

    q? =
      case Keyword.get(opts, :weights, "q4") do
        "q4" -> true
        "bf16" -> false
        other -> raise ArgumentError, "--weights must be q4 or bf16, got: #{inspect(other)}"
      end

    wname = if q?, do: "4-bit affine (group 64) weights", else: "bf16 weights"
    Nx.default_backend(EMLX.Backend)
    compiler = model_compiler(opts[:compiler])

    IO.puts(
      "EMLX decode (Elixir): #{nlayers} layers, hidden #{@hidden}, #{@nq}/#{@nkv} heads of " <>
        "#{@head}, MLP #{@inter}, vocab #{@vocab}, #{wname}; compiler #{inspect(compiler)}"
    )

    {t_init, m} = :timer.tc(fn -> model(nlayers, q?) end)
    # The compile cache keeps each weight program (no inputs) with its
    # result: dropping them frees the dense weights the quantized ones were
    # made from (the layer programs are compiled below).
    EMLX.CompileCache.clear()
    IO.puts("  weights made in #{Float.round(t_init / 1.0e6, 2)} s")

    fns = %{
      layer: Nx.Defn.jit(&layer/5, compiler: compiler),
      head: Nx.Defn.jit(&head/3, compiler: compiler)
    }

    prompt = for i <- 0..(nprompt - 1), do: rem(i * 7919 + 13, @vocab)
    EMLX.reset_peak_memory()
    run = generate(m, prompt, ngen, fns, true)
    again = generate(m, prompt, ngen, fns, false)
    peak = EMLX.memory_info().peak_memory

    finite? = run.logits |> Nx.is_nan() |> Nx.logical_or(Nx.is_infinity(run.logits)) |> Nx.any()

    decode_steps = max(ngen - 1, 1)
    prefill_s = run.prefill_us / 1.0e6
    decode_s = run.decode_us / 1.0e6

    IO.puts(
      "  prefill: #{nprompt} tokens in #{fmt(prefill_s)} s, #{fmt(nprompt / prefill_s)} tokens/s"
    )

    IO.puts(
      "  decode: #{decode_steps} tokens in #{fmt(decode_s)} s, " <>
        "#{fmt(decode_steps / decode_s)} tokens/s, #{fmt(1000 * decode_s / decode_steps)} ms per token"
    )

    IO.puts("  peak engine memory: #{fmt(peak / 1_048_576)} MiB")
    IO.puts("  tokens: #{Enum.join(run.tokens, " ")}")

    cond do
      Nx.to_number(finite?) == 1 ->
        IO.puts("FAIL: the last logits are not finite")
        System.halt(1)

      run.tokens != again.tokens ->
        IO.puts("FAIL: a second decode from the same prompt gave other tokens")
        System.halt(1)

      true ->
        IO.puts("  checks: logits finite, greedy decode deterministic")
    end
  end

  defp fmt(x), do: :erlang.float_to_binary(x / 1, decimals: 2)
end

EMLX.Examples.Decode.main(System.argv())
