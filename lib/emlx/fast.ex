if Code.ensure_loaded?(Nx) do
  defmodule EMLX.Fast do
    @moduledoc """
    Fused transformer kernels callable from `defn` and from eager code.

    Each function is an `Nx.block/4` whose struct names the kernel and whose
    default function is the same computation written in ordinary Nx ops:

      * on `EMLX.Backend` (eager calls, `Nx.Defn.Evaluator`, or a `defn`
        compiled by `EMLX`) the block runs the engine's single-pass kernel
        (`EMLX.fast_rms_norm/3`, `EMLX.fast_sdpa/5`, …);
      * under any other backend or compiler (`Nx.BinaryBackend`, EXLA, …) the
        default function runs, so a model written with `EMLX.Fast` runs
        everywhere;
      * gradients (`Nx.Defn.grad/2`) go through the default function, as Nx
        differentiates every block.

    The kernels and the formulas agree within the tolerance of their
    accumulation: both accumulate in f32 for f16 and bf16 inputs, as MLX's
    `mx.fast` does.

    ## Layouts

      * Norms normalise over the last axis; `weight` (and `bias`) have the
        size of that axis.
      * `rope/6` takes `{..., T, D}` inputs: the sequence axis is the
        second-to-last (`{B, T, D}` or heads-first `{B, H, T, D}`); position
        `offset + t` rotates row `t`. `rope_with_positions/6` and
        `rope_with_freqs/6` take the sequence on axis 1 (Bumblebee's
        heads-last `{B, T, H, D}`), every head of a token turning by the same
        angle.
      * Attention takes `q` as `{B, N_q, T_q, D}` and `k`, `v` as
        `{B, N_kv, T_kv, D}` with `N_q` a multiple of `N_kv` (grouped-query
        attention, never tiled in memory by the kernel). The causal mask is
        aligned bottom-right: query `i` sees keys `j <= i + T_kv - T_q`.
        Keys hidden by a boolean rule (causal, a boolean or integer mask, a
        key mask) score as the most negative finite float, as in MLX, so a
        query that sees no key at all gets the mean of `v`; a row that an
        additive mask sets to `-inf` everywhere gives 0 (MLX gives NaN).
    """

    import Nx.Defn

    defmodule RMSNorm do
      @moduledoc false
      defstruct eps: 1.0e-5
    end

    defmodule LayerNorm do
      @moduledoc false
      defstruct eps: 1.0e-5, bias?: true
    end

    defmodule RoPE do
      @moduledoc false
      # offset is an integer (scalar offset) or :tensor (per-batch {B} offsets
      # passed as an argument); positions: true means per-token {B, T} ids.
      defstruct dims: nil,
                traditional: false,
                base: 10_000.0,
                scale: 1.0,
                offset: 0,
                positions: false,
                freqs: false
    end

    defmodule SDPA do
      @moduledoc false
      # mask: :none | :causal | :mask (an argument) | :causal_key_mask (an argument)
      defstruct scale: 1.0, mask: :none
    end

    defmodule SwiGLU do
      @moduledoc false
      defstruct []
    end

    ## Norms

    @doc """
    RMS normalisation over the last axis: `weight * x / sqrt(mean(x²) + eps)`.

    `eps` is a number or `[eps: number]` (default `1.0e-5`). The statistics
    are computed in f32 (f64 for f64 input) and the normalised value is cast
    to the input's type before it is scaled by `weight`, as MLX does.
    """
    deftransform rms_norm(x, weight, eps \\ 1.0e-5) do
      eps = eps!(eps)
      x = Nx.to_tensor(x)
      weight = Nx.to_tensor(weight)
      check_last_axis!(:rms_norm, x, weight, "weight")
      out = Nx.template(x.shape, Nx.Type.merge(x.type, weight.type))
      block(%RMSNorm{eps: eps}, [x, weight], out, &rms_norm_default/3)
    end

    @doc false
    def rms_norm_default(%RMSNorm{eps: eps}, x, weight) do
      acc = accumulation_type(x.type)
      x32 = Nx.as_type(x, acc)
      ms = x32 |> Nx.multiply(x32) |> Nx.mean(axes: [-1], keep_axes: true)
      normed = x32 |> Nx.multiply(Nx.rsqrt(Nx.add(ms, eps))) |> Nx.as_type(x.type)
      Nx.multiply(weight, normed)
    end

    @doc """
    Layer normalisation over the last axis with the biased variance:
    `(x - mean) / sqrt(var + eps) * weight + bias`.

    `layer_norm/3` (`x, weight, eps`) has no bias; `layer_norm/4`
    (`x, weight, bias, eps`) adds one. For f16 and bf16 inputs everything is
    computed in f32 and rounded once.
    """
    deftransform(layer_norm(x, weight, bias_or_eps \\ 1.0e-5, eps \\ nil))

    deftransform layer_norm(x, weight, eps, nil) when is_number(eps) or is_list(eps) do
      eps = eps!(eps)
      x = Nx.to_tensor(x)
      weight = Nx.to_tensor(weight)
      check_last_axis!(:layer_norm, x, weight, "weight")
      out = Nx.template(x.shape, Nx.Type.merge(x.type, weight.type))
      block(%LayerNorm{eps: eps, bias?: false}, [x, weight], out, &layer_norm_default/3)
    end

    deftransform layer_norm(x, weight, bias, eps) do
      eps = eps!(eps || 1.0e-5)
      x = Nx.to_tensor(x)
      weight = Nx.to_tensor(weight)
      bias = Nx.to_tensor(bias)
      check_last_axis!(:layer_norm, x, weight, "weight")
      check_last_axis!(:layer_norm, x, bias, "bias")
      type = x.type |> Nx.Type.merge(weight.type) |> Nx.Type.merge(bias.type)
      out = Nx.template(x.shape, type)
      block(%LayerNorm{eps: eps}, [x, weight, bias], out, &layer_norm_default/4)
    end

    # The whole affine map in the accumulation type, rounded once (as the
    # kernel does).
    @doc false
    def layer_norm_default(%LayerNorm{} = s, x, weight) do
      {normed, acc} = normalize(x, s.eps)
      normed |> Nx.multiply(Nx.as_type(weight, acc)) |> Nx.as_type(out_type(x, weight))
    end

    @doc false
    def layer_norm_default(%LayerNorm{} = s, x, weight, bias) do
      {normed, acc} = normalize(x, s.eps)

      normed
      |> Nx.multiply(Nx.as_type(weight, acc))
      |> Nx.add(Nx.as_type(bias, acc))
      |> Nx.as_type(x.type |> Nx.Type.merge(weight.type) |> Nx.Type.merge(bias.type))
    end

    defp out_type(x, weight), do: Nx.Type.merge(x.type, weight.type)

    defp normalize(x, eps) do
      acc = accumulation_type(x.type)
      x32 = Nx.as_type(x, acc)
      mean = Nx.mean(x32, axes: [-1], keep_axes: true)
      centered = Nx.subtract(x32, mean)
      var = centered |> Nx.multiply(centered) |> Nx.mean(axes: [-1], keep_axes: true)
      {Nx.multiply(centered, Nx.rsqrt(Nx.add(var, eps))), acc}
    end

    ## Rotary position embeddings

    @doc """
    Rotary position embedding with a scalar position `offset` (an integer:
    the length of the KV cache already filled).

    `a` is `{..., T, D}` (the sequence axis second-to-last). The first `dims`
    features (even, at most `D`) are rotated, the rest pass through. Pair `i`
    of row `t` turns by `(offset + t) * scale * base^(-2i/dims)`; pairs are
    `(i, i + dims/2)` (split-half, `traditional: false`, as Llama and Qwen)
    or `(2i, 2i + 1)` (`traditional: true`).
    """
    deftransform rope(a, dims, traditional, base, scale, offset) when is_integer(offset) do
      a = Nx.to_tensor(a)
      check_rope!(a, dims, 2)
      s = %RoPE{dims: dims, traditional: traditional, base: base, scale: scale, offset: offset}
      block(s, [a], Nx.template(a.shape, a.type), &rope_default/2)
    end

    @doc """
    Rotary position embedding for Bumblebee's `{B, T, H, D}` layout with
    per-token `position_ids` of shape `{B, T}`: row `(b, t)` of every head
    turns by angle `position_ids[b][t] * scale * base^(-2i/dims)`.
    """
    deftransform rope_with_positions(a, dims, traditional, base, scale, position_ids) do
      a = Nx.to_tensor(a)
      position_ids = Nx.to_tensor(position_ids)
      check_rope!(a, dims, 4)
      {b, t, _h, _d} = a.shape

      unless position_ids.shape == {b, t} do
        raise ArgumentError,
              "EMLX.Fast.rope_with_positions/6: position_ids must have shape #{inspect({b, t})} " <>
                "for input of shape #{inspect(a.shape)}, got #{inspect(position_ids.shape)}"
      end

      s = %RoPE{dims: dims, traditional: traditional, base: base, scale: scale, positions: true}
      block(s, [a, position_ids], Nx.template(a.shape, a.type), &rope_default/3)
    end

    @doc """
    Rotary position embedding with precomputed frequencies `freqs` (`{dims/2}`)
    and per-batch starting positions `offset` (`{B}`, or a scalar); `a` is
    `{B, T, ..., D}` (the sequence on axis 1, as `rope_with_positions/6`).
    As in MLX, `freqs` holds periods: pair `i` of token `t` in batch `b` turns
    by `(offset[b] + t) * scale / freqs[i]`, so `freqs[i] = base ** (2i / dims)`
    reproduces `rope_with_positions/6`.
    """
    deftransform rope_with_freqs(a, dims, traditional, scale, offset, freqs) do
      a = Nx.to_tensor(a)
      freqs = Nx.to_tensor(freqs)
      offset = Nx.to_tensor(offset)
      check_rope!(a, dims, 3)

      unless freqs.shape == {div(dims, 2)} do
        raise ArgumentError,
              "EMLX.Fast.rope_with_freqs/6: freqs must have shape #{inspect({div(dims, 2)})}, " <>
                "got #{inspect(freqs.shape)}"
      end

      unless offset.shape in [{}, {elem(a.shape, 0)}] do
        raise ArgumentError,
              "EMLX.Fast.rope_with_freqs/6: offset must be a scalar or have shape " <>
                "#{inspect({elem(a.shape, 0)})}, got #{inspect(offset.shape)}"
      end

      s = %RoPE{dims: dims, traditional: traditional, scale: scale, offset: :tensor, freqs: true}
      block(s, [a, offset, freqs], Nx.template(a.shape, a.type), &rope_default/4)
    end

    @doc false
    def rope_default(%RoPE{} = s, a) do
      rank = tuple_size(a.shape)
      t = elem(a.shape, rank - 2)
      positions = Nx.add(Nx.iota({t}, type: :f32), s.offset)
      # angles {T, dims/2}, broadcast over the leading axes
      angles = Nx.outer(Nx.multiply(positions, s.scale), inv_freqs(s))
      rotate(a, s, broadcast_angles(angles, rank))
    end

    def rope_default(%RoPE{positions: true} = s, a, position_ids) do
      # a {B, T, H, D}; angles {B, T, 1, dims/2}
      angles =
        position_ids
        |> Nx.as_type(:f32)
        |> Nx.multiply(s.scale)
        |> Nx.new_axis(-1)
        |> Nx.multiply(inv_freqs(s))
        |> Nx.new_axis(2)

      rotate(a, s, angles)
    end

    def rope_default(%RoPE{freqs: true} = s, a, offset, freqs) do
      rank = tuple_size(a.shape)
      b = elem(a.shape, 0)
      t = elem(a.shape, 1)
      # positions {B, T}
      positions =
        offset
        |> Nx.as_type(:f32)
        |> Nx.broadcast({b})
        |> Nx.new_axis(1)
        |> Nx.add(Nx.iota({1, t}, type: :f32))

      angles =
        positions
        |> Nx.multiply(s.scale)
        |> Nx.new_axis(-1)
        |> Nx.divide(Nx.as_type(freqs, :f32))

      # {B, T, 1.., dims/2}
      shape = List.to_tuple([b, t | List.duplicate(1, rank - 3)] ++ [div(s.dims, 2)])
      rotate(a, s, Nx.reshape(angles, shape))
    end

    defp inv_freqs(%RoPE{dims: dims, base: base}) do
      half = div(dims, 2)
      Nx.iota({half}, type: :f32) |> Nx.multiply(-:math.log(base) / half) |> Nx.exp()
    end

    defp broadcast_angles(angles, rank) do
      {t, half} = angles.shape
      Nx.reshape(angles, List.to_tuple(List.duplicate(1, rank - 2) ++ [t, half]))
    end

    # Rotates the first dims features of a's last axis by angles (broadcast
    # against a's leading axes, last axis dims/2), in f32, cast back.
    defp rotate(a, %RoPE{dims: dims, traditional: traditional}, angles) do
      rank = tuple_size(a.shape)
      d = elem(a.shape, rank - 1)
      half = div(dims, 2)
      acc = accumulation_type(a.type)
      cos = Nx.as_type(Nx.cos(angles), acc)
      sin = Nx.as_type(Nx.sin(angles), acc)
      x = Nx.as_type(a, acc)
      rot = Nx.slice_along_axis(x, 0, dims, axis: rank - 1)

      rotated =
        if traditional do
          pairs = Nx.reshape(rot, Tuple.insert_at(put_last(rot.shape, half), rank, 2))
          x1 = pairs |> Nx.slice_along_axis(0, 1, axis: rank) |> Nx.squeeze(axes: [rank])
          x2 = pairs |> Nx.slice_along_axis(1, 1, axis: rank) |> Nx.squeeze(axes: [rank])
          o1 = Nx.subtract(Nx.multiply(x1, cos), Nx.multiply(x2, sin))
          o2 = Nx.add(Nx.multiply(x1, sin), Nx.multiply(x2, cos))
          Nx.stack([o1, o2], axis: rank) |> Nx.reshape(rot.shape)
        else
          x1 = Nx.slice_along_axis(rot, 0, half, axis: rank - 1)
          x2 = Nx.slice_along_axis(rot, half, half, axis: rank - 1)
          o1 = Nx.subtract(Nx.multiply(x1, cos), Nx.multiply(x2, sin))
          o2 = Nx.add(Nx.multiply(x1, sin), Nx.multiply(x2, cos))
          Nx.concatenate([o1, o2], axis: rank - 1)
        end

      rotated = Nx.as_type(rotated, a.type)

      if dims == d do
        rotated
      else
        rest = Nx.slice_along_axis(a, dims, d - dims, axis: rank - 1)
        Nx.concatenate([rotated, rest], axis: rank - 1)
      end
    end

    defp put_last(shape, size), do: put_elem(shape, tuple_size(shape) - 1, size)

    ## Attention

    @doc """
    Scaled dot-product attention, `softmax(q·kᵀ · scale) · v`, without a mask
    (`/4`) or with `mask` (`/5`): a boolean mask (`false`/0 hides a key) or an
    additive float mask, broadcastable to `{B, N_q, T_q, T_kv}`.
    """
    deftransform scaled_dot_product_attention(q, k, v, scale, mask \\ nil) do
      {q, k, v} = check_attention!(q, k, v)

      case mask do
        nil ->
          block(%SDPA{scale: scale}, [q, k, v], template_of(q, v), &sdpa_default/4)

        mask ->
          mask = Nx.to_tensor(mask)
          {b, nq, tq, _} = q.shape
          tkv = elem(k.shape, 2)
          check_broadcast!(mask, {b, nq, tq, tkv}, "mask")
          s = %SDPA{scale: scale, mask: :mask}
          block(s, [q, k, v, mask], template_of(q, v), &sdpa_default/5)
      end
    end

    @doc """
    Causal scaled dot-product attention: query `i` sees keys
    `j <= i + T_kv - T_q` (bottom-right alignment, so a decode step with
    `T_q = 1` sees the whole cache).
    """
    deftransform scaled_dot_product_attention_causal(q, k, v, scale) do
      {q, k, v} = check_attention!(q, k, v)
      s = %SDPA{scale: scale, mask: :causal}
      block(s, [q, k, v], template_of(q, v), &sdpa_default/4)
    end

    @doc """
    Causal attention that also hides padded keys: `key_mask` is `{B, T_kv}`
    (non-zero = attend).
    """
    deftransform scaled_dot_product_attention_causal_key_masked(q, k, v, scale, key_mask) do
      {q, k, v} = check_attention!(q, k, v)
      key_mask = Nx.to_tensor(key_mask)
      {b, _, _, _} = q.shape

      unless key_mask.shape == {b, elem(k.shape, 2)} do
        raise ArgumentError,
              "EMLX.Fast: key_mask must have shape #{inspect({b, elem(k.shape, 2)})}, " <>
                "got #{inspect(key_mask.shape)}"
      end

      s = %SDPA{scale: scale, mask: :causal_key_mask}
      block(s, [q, k, v, key_mask], template_of(q, v), &sdpa_default/5)
    end

    @doc false
    def sdpa_default(%SDPA{} = s, q, k, v), do: attend(s, q, k, v, nil)

    @doc false
    def sdpa_default(%SDPA{} = s, q, k, v, mask), do: attend(s, q, k, v, mask)

    defp attend(%SDPA{scale: scale, mask: kind}, q, k, v, mask) do
      {b, nq, tq, d} = q.shape
      {_, nkv, tkv, dv} = v.shape
      rep = div(nq, nkv)
      acc = accumulation_type(q.type)

      # {B, N_kv, rep, T_q, D} · {B, N_kv, T_kv, D} -> {B, N_kv, rep, T_q, T_kv}
      q5 = q |> Nx.as_type(acc) |> Nx.reshape({b, nkv, rep, tq, d})
      k4 = Nx.as_type(k, acc)
      scores = q5 |> Nx.dot([4], [0, 1], k4, [3], [0, 1]) |> Nx.multiply(scale)

      visible = visibility(kind, mask, {b, nkv, rep, tq, tkv})

      scores =
        case {kind, mask} do
          {:mask, %{type: {:u, 8}}} ->
            scores

          {:mask, %{type: {t, _}}} when t in [:f, :bf, :c] ->
            Nx.add(scores, reshape_mask(mask, nkv, rep))

          _ ->
            scores
        end

      # Hidden keys score as the most negative finite value, as in MLX: a row
      # that sees no key at all averages every value row.
      lowest = Nx.Constants.min_finite(acc)

      scores =
        if visible,
          do: Nx.select(Nx.broadcast(visible, scores.shape), scores, lowest),
          else: scores

      max = Nx.reduce_max(scores, axes: [4], keep_axes: true)
      # a row that an additive mask sets to -inf everywhere gives 0, not NaN
      finite_max = Nx.select(Nx.is_infinity(max), 0.0, max)
      e = Nx.exp(Nx.subtract(scores, finite_max))
      sum = Nx.sum(e, axes: [4], keep_axes: true)
      p = Nx.divide(e, Nx.select(Nx.equal(sum, 0), 1.0, sum))

      p
      |> Nx.dot([4], [0, 1], Nx.as_type(v, acc), [2], [0, 1])
      |> Nx.reshape({b, nq, tq, dv})
      |> Nx.as_type(Nx.Type.merge(q.type, v.type))
    end

    # A {B, N_kv, rep, T_q, T_kv}-broadcastable u8 tensor of visible keys, or nil.
    defp visibility(:none, _, _), do: nil

    defp visibility(:causal, _, {_, _, _, tq, tkv}), do: causal(tq, tkv)

    defp visibility(:causal_key_mask, key_mask, {b, _, _, tq, tkv}) do
      keys = key_mask |> Nx.not_equal(0) |> Nx.reshape({b, 1, 1, 1, tkv})
      Nx.logical_and(causal(tq, tkv), keys)
    end

    defp visibility(:mask, %{type: {:u, 8}} = mask, {_, nkv, rep, _, _}) do
      mask |> Nx.not_equal(0) |> reshape_mask(nkv, rep)
    end

    defp visibility(:mask, %{type: {t, _}} = mask, {_, nkv, rep, _, _}) when t in [:s, :u] do
      mask |> Nx.not_equal(0) |> reshape_mask(nkv, rep)
    end

    defp visibility(:mask, _float_mask, _), do: nil

    defp causal(tq, tkv) do
      rows = Nx.iota({tq, 1}) |> Nx.add(tkv - tq)
      cols = Nx.iota({1, tkv})
      Nx.less_equal(cols, rows) |> Nx.reshape({1, 1, 1, tq, tkv})
    end

    # A mask broadcastable to {B, N_q, T_q, T_kv}, as {B', N_kv | 1, rep | 1, T_q', T_kv'}.
    defp reshape_mask(mask, nkv, rep) do
      shape = Tuple.duplicate(1, 4 - tuple_size(mask.shape)) |> then(&join(&1, mask.shape))
      mask = Nx.reshape(mask, shape)
      {mb, mn, mtq, mtkv} = mask.shape

      if mn == 1 do
        Nx.reshape(mask, {mb, 1, 1, mtq, mtkv})
      else
        Nx.reshape(mask, {mb, nkv, rep, mtq, mtkv})
      end
    end

    defp join(a, b), do: List.to_tuple(Tuple.to_list(a) ++ Tuple.to_list(b))

    ## SwiGLU

    @doc """
    SwiGLU: `silu(gate) * up` with `silu(x) = x * sigmoid(x)`; `gate` and `up`
    have one shape and the result has `gate`'s type.
    """
    deftransform swiglu(gate, up) do
      gate = Nx.to_tensor(gate)
      up = Nx.to_tensor(up)

      unless gate.shape == up.shape do
        raise ArgumentError,
              "EMLX.Fast.swiglu/2: gate and up must have one shape, got " <>
                "#{inspect(gate.shape)} and #{inspect(up.shape)}"
      end

      block(%SwiGLU{}, [gate, up], Nx.template(gate.shape, gate.type), &swiglu_default/3)
    end

    @doc false
    def swiglu_default(%SwiGLU{}, gate, up) do
      acc = accumulation_type(gate.type)
      g = Nx.as_type(gate, acc)

      g
      |> Nx.multiply(Nx.sigmoid(g))
      |> Nx.multiply(Nx.as_type(up, acc))
      |> Nx.as_type(gate.type)
    end

    ## Checks

    # Nx.block/4 with every argument in one world: inside defn a closed-over
    # tensor (a weight captured by a grad closure) becomes an expression too,
    # as Nx's own ops convert their operands.
    defp block(struct, args, out, fun) do
      args =
        if Enum.any?(args, &match?(%Nx.Tensor{data: %Nx.Defn.Expr{}}, &1)),
          do: Enum.map(args, &Nx.Defn.Expr.tensor/1),
          else: args

      Nx.block(struct, args, out, fun)
    end

    defp accumulation_type({:f, 64}), do: {:f, 64}
    defp accumulation_type(_), do: {:f, 32}

    defp eps!(eps) when is_number(eps), do: eps
    defp eps!(opts) when is_list(opts), do: Keyword.get(opts, :eps, 1.0e-5)

    defp eps!(other),
      do: raise(ArgumentError, "EMLX.Fast: eps must be a number, got #{inspect(other)}")

    defp check_last_axis!(fun, x, v, what) do
      last = if x.shape == {}, do: nil, else: elem(x.shape, tuple_size(x.shape) - 1)

      unless v.shape == {last} do
        raise ArgumentError,
              "EMLX.Fast.#{fun}: #{what} must have shape #{inspect({last})} (the size of " <>
                "the last axis of x, shape #{inspect(x.shape)}), got #{inspect(v.shape)}"
      end
    end

    defp check_rope!(a, dims, min_rank) do
      rank = tuple_size(a.shape)

      cond do
        min_rank == 4 and rank != 4 ->
          raise ArgumentError,
                "EMLX.Fast.rope_with_positions/6 expects a {B, T, H, D} tensor, got shape " <>
                  inspect(a.shape)

        rank < min_rank ->
          raise ArgumentError,
                "EMLX.Fast: rope expects a tensor of rank >= #{min_rank}, got shape " <>
                  inspect(a.shape)

        not is_integer(dims) or dims <= 0 or rem(dims, 2) != 0 or
            dims > elem(a.shape, rank - 1) ->
          raise ArgumentError,
                "EMLX.Fast: rope dims must be an even integer in 2..#{elem(a.shape, rank - 1)}, " <>
                  "got #{inspect(dims)}"

        true ->
          :ok
      end
    end

    defp check_attention!(q, k, v) do
      q = Nx.to_tensor(q)
      k = Nx.to_tensor(k)
      v = Nx.to_tensor(v)

      for {t, name} <- [{q, "q"}, {k, "k"}, {v, "v"}], tuple_size(t.shape) != 4 do
        raise ArgumentError,
              "EMLX.Fast: #{name} must have rank 4 ({B, N, T, D}), got shape #{inspect(t.shape)}"
      end

      {b, nq, _tq, d} = q.shape
      {kb, nkv, tkv, kd} = k.shape
      {vb, vn, vt, _dv} = v.shape

      cond do
        kb != b or vb != b ->
          raise ArgumentError, "EMLX.Fast: q, k and v must have one batch size"

        kd != d ->
          raise ArgumentError,
                "EMLX.Fast: q and k must have one head size, got #{d} and #{kd}"

        vn != nkv or vt != tkv ->
          raise ArgumentError,
                "EMLX.Fast: k and v must have the same heads and length, got " <>
                  "#{inspect(k.shape)} and #{inspect(v.shape)}"

        nkv == 0 or rem(nq, nkv) != 0 ->
          raise ArgumentError,
                "EMLX.Fast: the query heads (#{nq}) must be a multiple of the key/value heads (#{nkv})"

        true ->
          {q, k, v}
      end
    end

    defp check_broadcast!(mask, shape, name) do
      mrank = tuple_size(mask.shape)

      ok =
        mrank <= 4 and
          Enum.all?(0..(mrank - 1)//1, fn i ->
            m = elem(mask.shape, i)
            m == 1 or m == elem(shape, 4 - mrank + i)
          end)

      unless ok do
        raise ArgumentError,
              "EMLX.Fast: #{name} of shape #{inspect(mask.shape)} does not broadcast to " <>
                inspect(shape)
      end
    end

    defp template_of(q, v) do
      {b, nq, tq, _} = q.shape
      Nx.template({b, nq, tq, elem(v.shape, 3)}, Nx.Type.merge(q.type, v.type))
    end
  end
end
