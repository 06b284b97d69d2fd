if Code.ensure_loaded?(Nx) do
  defmodule EMLX.Backend.Block do
    @moduledoc false
    # Native implementations of Nx.block/4 for the blocks the engine does in
    # one kernel (or a few), instead of Nx's default composition of smaller
    # ops. Any other block, or a known block called with arguments of another
    # form, runs its default function.

    alias Nx.Tensor, as: T
    alias EMLX.Backend, as: B

    defguardp fast?(a, b)
              when a.type == b.type and a.type in [{:f, 32}, {:f, 16}, {:bf, 16}]

    @doc false
    def block(struct, output, args, fun) do
      case native(struct, output, args) do
        :default -> apply(fun, [struct | args])
        result -> result
      end
    end

    defp native(%Nx.Block.LogicalNot{}, out, [t]),
      do: t |> ref() |> EMLX.logical_not() |> B.to_nx(out)

    defp native(%Nx.Block.Phase{}, out, [t]) do
      z = ref(t)

      case t.type do
        {:c, _} -> EMLX.atan2(EMLX.imag(z), EMLX.real(z))
        _ -> z |> EMLX.astype(out.type) |> then(&EMLX.atan2(EMLX.imag(&1), &1))
      end
      |> B.to_nx(out)
    end

    defp native(%Nx.Block.AllClose{} = s, out, [a, b]) do
      EMLX.allclose(ref(a), ref(b), s.rtol, s.atol, s.equal_nan || false) |> B.to_nx(out)
    end

    defp native(%Nx.Block.CumulativeSum{} = s, out, [t]),
      do: cumulative(:cumulative_sum, s, out, t)

    defp native(%Nx.Block.CumulativeProduct{} = s, out, [t]),
      do: cumulative(:cumulative_product, s, out, t)

    defp native(%Nx.Block.CumulativeMin{} = s, out, [t]),
      do: cumulative(:cumulative_min, s, out, t)

    defp native(%Nx.Block.CumulativeMax{} = s, out, [t]),
      do: cumulative(:cumulative_max, s, out, t)

    defp native(%Nx.Block.Take{axis: axis}, out, [t, indices]),
      do: B.take_native(out, t, indices, axis)

    defp native(%Nx.Block.TakeAlongAxis{axis: axis}, out, [t, indices]),
      do: B.take_along_axis_native(out, t, indices, axis)

    defp native(%Nx.Block.TopK{k: k}, {out_values, out_indices}, [t]) do
      rank = tuple_size(t.shape)
      last = rank - 1
      values = Nx.sort(t, axis: last, direction: :desc)
      indices = Nx.argsort(t, axis: last, direction: :desc, type: out_indices.type)

      {values |> Nx.slice_along_axis(0, k, axis: last) |> retemplate(out_values),
       indices |> Nx.slice_along_axis(0, k, axis: last) |> retemplate(out_indices)}
    end

    defp native(%Nx.Block.FFT2{lengths: lengths, axes: axes, eps: eps}, out, [t]) do
      t |> ref_as(out.type) |> EMLX.fft2(lengths, axes) |> zero_small(eps) |> B.to_nx(out)
    end

    defp native(%Nx.Block.IFFT2{lengths: lengths, axes: axes, eps: eps}, out, [t]) do
      t |> ref_as(out.type) |> EMLX.ifft2(lengths, axes) |> zero_small(eps) |> B.to_nx(out)
    end

    defp native(%Nx.Block.RFFT{length: n, axis: axis, eps: eps}, out, [t]) do
      complex = Nx.Type.to_complex(t.type)
      spectrum = t |> ref_as(complex) |> EMLX.fft(n, axis)
      shape = EMLX.shape(spectrum)
      spectrum |> slice_axis(shape, axis, 0, div(n, 2) + 1) |> zero_small(eps) |> B.to_nx(out)
    end

    defp native(%Nx.Block.IRFFT{length: n, axis: axis, eps: eps}, out, [t]) do
      # The full Hermitian spectrum X[0..n-1] from its first m = n/2 + 1
      # entries (truncated or zero-padded to m): X[n - k] = conj(X[k]).
      m = div(n, 2) + 1
      x = t |> ref_as(Nx.Type.to_complex(out.type)) |> fit_axis(axis, m)
      shape = EMLX.shape(x)
      tail_len = n - m

      full =
        if tail_len > 0 do
          tail =
            x |> slice_axis(shape, axis, 1, tail_len) |> reverse_axis(axis) |> EMLX.conjugate()

          EMLX.concatenate([x, tail], axis)
        else
          slice_axis(x, shape, axis, 0, n)
        end

      full |> EMLX.ifft(n, axis) |> EMLX.real() |> zero_small(eps) |> B.to_nx(out)
    end

    defp native(%Nx.Block.LinAlg.Cholesky{}, out, [t]) do
      t |> ref_as(out.type) |> EMLX.linalg_cholesky(false) |> B.to_nx(out)
    end

    # Nx.Block.LinAlg.Solve runs its default function: Nx's LU (the engine's
    # LU computes Nx.LinAlg.LU's arithmetic), a permutation dot and two
    # triangular solves, all engine kernels. Those give Nx's bits; LAPACK's
    # gesv (getrf's reciprocal and fused updates) differs in the last bit.

    # Complex QR runs Nx's Householder QR (the default function, on engine
    # kernels): it reflects each column x onto -exp(i phase(x_i)) |x| e_i, so
    # R's diagonal carries phases. LAPACK's R has a real diagonal; the
    # unitary diagonal D with Q_nx = Q D depends on the phases of Nx's own
    # intermediate columns, so finding it means replaying its reflections.
    # Wide complex matrices keep LAPACK's factors: there Nx's reflector of a
    # zero subcolumn divides 0 by 0 and its Q and R are NaN.
    defp native(%Nx.Block.LinAlg.QR{}, {%{type: {:c, _}}, _}, [%{shape: shape}])
         when elem(shape, tuple_size(shape) - 2) >= elem(shape, tuple_size(shape) - 1),
         do: :default

    defp native(%Nx.Block.LinAlg.QR{mode: mode, eps: eps}, {q_out, r_out}, [t])
         when mode in [:reduced, :complete] do
      {q, r} = t |> ref_as(q_out.type) |> EMLX.linalg_qr(mode == :complete)
      {q, r} = nx_qr_signs(q, r, t.shape)
      {q |> zero_small(eps) |> B.to_nx(q_out), r |> zero_small(eps) |> B.to_nx(r_out)}
    end

    defp native(%Nx.Block.LinAlg.Eigh{eps: eps}, {w_out, v_out}, [t]) do
      {w, v} = t |> ref_as(v_out.type) |> EMLX.linalg_eigh("L")
      # Nx orders the eigenpairs by decreasing |eigenvalue| (stable).
      w_shape = EMLX.shape(w)
      last = tuple_size(w_shape) - 1
      order = w |> EMLX.abs() |> stable_descending(last)
      w = EMLX.take_along_axis(w, order, last)
      columns = EMLX.reshape(order, Tuple.insert_at(w_shape, last, 1))
      v = EMLX.take_along_axis(v, columns, last + 1)
      v = EMLX.multiply(v, largest_positive(v, last))
      {w |> zero_small(eps) |> B.to_nx(w_out), v |> zero_small(eps) |> B.to_nx(v_out)}
    end

    defp native(%Nx.Block.LinAlg.SVD{full_matrices?: full?}, {u_out, s_out, vt_out}, [t]) do
      {u, s, vt} = t |> ref_as(u_out.type) |> EMLX.linalg_svd(true, full?)
      {u, vt} = svd_signs(u, vt, t.shape)

      {u |> plus_zero() |> B.to_nx(u_out), s |> plus_zero() |> B.to_nx(s_out),
       vt |> plus_zero() |> B.to_nx(vt_out)}
    end

    defp native(%Nx.Block.LinAlg.LU{}, {p_out, l_out, u_out}, [t]) do
      {perm, l, u} = t |> ref_as(l_out.type) |> EMLX.linalg_lu()
      {device, _} = perm
      m = elem(p_out.shape, tuple_size(p_out.shape) - 1)
      columns = EMLX.arange(0, m, 1, {:u, 32}, device)

      rows =
        EMLX.reshape(perm, Tuple.insert_at(EMLX.shape(perm), tuple_size(EMLX.shape(perm)), 1))

      p = EMLX.equal(rows, columns)
      {B.to_nx(p, p_out), B.to_nx(l, l_out), B.to_nx(u, u_out)}
    end

    # EMLX.Fast: the engine's fused kernels take f32, f16 and bf16 operands of
    # one type; anything else runs the block's default formula.
    defp native(%EMLX.Fast.RMSNorm{eps: eps}, out, [x, w]) when fast?(x, w),
      do: EMLX.fast_rms_norm(ref(x), ref(w), eps) |> B.to_nx(out)

    defp native(%EMLX.Fast.LayerNorm{eps: eps, bias?: false}, out, [x, w]) when fast?(x, w),
      do: EMLX.fast_layer_norm_no_bias(ref(x), ref(w), eps) |> B.to_nx(out)

    defp native(%EMLX.Fast.LayerNorm{eps: eps}, out, [x, w, b])
         when fast?(x, w) and x.type == b.type,
         do: EMLX.fast_layer_norm(ref(x), ref(w), ref(b), eps) |> B.to_nx(out)

    defp native(%EMLX.Fast.RoPE{positions: false, freqs: false} = s, out, [a]) when fast?(a, a),
      do: EMLX.fast_rope(ref(a), s.dims, s.traditional, s.base, s.scale, s.offset) |> B.to_nx(out)

    defp native(%EMLX.Fast.RoPE{positions: true} = s, out, [a, ids])
         when fast?(a, a) and elem(ids.type, 0) in [:s, :u] do
      EMLX.fast_rope_positions(ref(a), s.dims, s.traditional, s.base, s.scale, ref(ids))
      |> B.to_nx(out)
    end

    defp native(%EMLX.Fast.RoPE{freqs: true} = s, out, [a, offset, freqs])
         when fast?(a, a) and elem(offset.type, 0) in [:s, :u] do
      freqs = ref_as(freqs, {:f, 32})

      EMLX.fast_rope_with_freqs(ref(a), s.dims, s.traditional, s.scale, ref(offset), freqs)
      |> B.to_nx(out)
    end

    defp native(%EMLX.Fast.SwiGLU{}, out, [gate, up]) when fast?(gate, up),
      do: EMLX.fast_swiglu(ref(gate), ref(up)) |> B.to_nx(out)

    defp native(%EMLX.Fast.SDPA{mask: kind, scale: scale}, out, [q, k, v | rest])
         when fast?(q, k) and fast?(q, v) do
      {q, k, v} = {ref(q), ref(k), ref(v)}

      case {kind, rest} do
        {:none, []} ->
          EMLX.fast_sdpa(q, k, v, scale)

        {:causal, []} ->
          EMLX.fast_sdpa_causal(q, k, v, scale)

        {:mask, [%T{type: {t, _}} = mask]} when t in [:s, :u] ->
          EMLX.fast_sdpa_masked(q, k, v, scale, EMLX.astype(ref(mask), :bool))

        {:mask, [%T{type: {t, _}} = mask]} when t in [:f, :bf] ->
          EMLX.fast_sdpa_masked(q, k, v, scale, ref(mask))

        {:causal_key_mask, [%T{type: {t, _}} = key_mask]} when t in [:s, :u, :f, :bf] ->
          EMLX.fast_sdpa_causal_key_masked(q, k, v, scale, ref(key_mask))

        _ ->
          :default
      end
      |> case do
        :default -> :default
        result -> B.to_nx(result, out)
      end
    end

    defp native(_struct, _output, _args), do: :default

    # Nx's Householder QR (Nx.LinAlg.QR) reflects each column x onto
    # +|x| e_i, so R's diagonal is positive for every reflected column:
    # columns 0..n-1 when m > n, columns 0..k-2 (k = min(m, n)) otherwise,
    # where the last column is not reflected and Q = H_0 ... H_(k-2) fixes its
    # sign; a column whose subcolumn is already zero is not reflected.
    # LAPACK reflects onto -sign(x_i) |x| e_i. QR is unique up to
    # Q -> Q D, R -> D R (D = diag(+-1)); D is chosen to give Nx's signs:
    # sign(R_ii) for the reflected columns and, for the unreflected last
    # one, the product of the others (so det(Q D) is Nx's). The complex
    # factors that reach here (wide ones) keep LAPACK's phases.
    defp nx_qr_signs({device, _} = q, r, shape) do
      type = EMLX.scalar_type(r)
      rank = tuple_size(shape)
      m = elem(shape, rank - 2)
      n = elem(shape, rank - 1)
      k = min(m, n)

      case type do
        {:c, _} ->
          {q, r}

        _ when k == 0 ->
          {q, r}

        _ ->
          r_shape = EMLX.shape(r)
          q_shape = EMLX.shape(q)
          batch = r_shape |> Tuple.to_list() |> Enum.take(rank - 2)
          top = slice_last2(r, r_shape, k, k)

          diagonal =
            top |> EMLX.multiply(EMLX.eye(k, k, type, device)) |> EMLX.sum([rank - 1], false)

          one = EMLX.scalar_tensor(1, type, device)
          minus_one = EMLX.scalar_tensor(-1, type, device)
          zero = EMLX.scalar_tensor(0, type, device)
          signs = EMLX.where(EMLX.less(diagonal, zero), minus_one, one)
          # A column that neither algorithm reflected keeps its sign. LAPACK
          # left columns 0..i alone exactly when Q's columns 0..i are e_0..e_i
          # (H_i e_i = e_i - tau v, v_i = 1, differs from e_i when tau != 0),
          # and there Nx's subcolumn is zero too.
          unit =
            q
            |> slice_last2(q_shape, m, k)
            |> EMLX.equal(EMLX.eye(m, k, type, device))
            |> EMLX.all([rank - 2], false)

          signs = EMLX.where(unit, one, signs)

          signs =
            cond do
              m > n ->
                signs

              k == 1 ->
                EMLX.full(1, List.to_tuple(batch ++ [1]), type, device)

              true ->
                reflected = slice_axis(signs, EMLX.shape(signs), rank - 2, 0, k - 1)
                last = EMLX.product(reflected, [rank - 2], true)
                EMLX.concatenate([reflected, last], rank - 2)
            end

          r_rows = elem(r_shape, rank - 2)
          q_cols = elem(q_shape, rank - 1)
          row_signs = signs |> pad_ones(rank - 2, r_rows - k, one)
          col_signs = signs |> pad_ones(rank - 2, q_cols - k, one)
          row_signs = EMLX.reshape(row_signs, List.to_tuple(batch ++ [r_rows, 1]))
          col_signs = EMLX.reshape(col_signs, List.to_tuple(batch ++ [1, q_cols]))
          {EMLX.multiply(q, col_signs), EMLX.multiply(r, row_signs)}
      end
    end

    # Eigenvectors and singular vectors are unique up to sign (real types).
    # Nx's eigh (Jacobi rotations from the identity) gives each eigenvector
    # with its largest component positive where that component is the
    # rotated diagonal one: every 2x2, and 84% of the eigenvectors of random
    # symmetric matrices of 2x2 to 7x7 (LAPACK's signs: 56%). The engine
    # gives every eigenvector that sign. Nx's SVD takes V from eigh(A^H A) (U from
    # the transpose's when m < n), and Nx's SVD gradient is that computation
    # differentiated, whatever the backend computes the SVD with: the engine's
    # SVD gets the same signs, so its values and Nx's gradient of them agree.
    # Complex vectors keep LAPACK's phases.
    defp largest_positive(ref, axis) do
      case EMLX.scalar_type(ref) do
        {:c, _} = type ->
          EMLX.full(1, put_elem(EMLX.shape(ref), axis, 1), type, elem(ref, 0))

        _ ->
          sign_of_largest(ref, axis)
      end
    end

    # -1 or 1 per slice along `axis` (kept, of size 1): the sign of the
    # slice's element of largest magnitude (the first of equal ones).
    defp sign_of_largest({device, _} = ref, axis) do
      type = EMLX.scalar_type(ref)
      index = ref |> EMLX.abs() |> EMLX.argmax(axis, true)
      value = EMLX.take_along_axis(ref, index, axis)
      negative = EMLX.less(value, EMLX.scalar_tensor(0, type, device))

      EMLX.where(
        negative,
        EMLX.scalar_tensor(-1, type, device),
        EMLX.scalar_tensor(1, type, device)
      )
    end

    defp svd_signs(u, vt, shape) do
      rank = tuple_size(shape)
      m = elem(shape, rank - 2)
      n = elem(shape, rank - 1)
      k = min(m, n)

      case EMLX.scalar_type(u) do
        {:c, _} ->
          {u, vt}

        _ when k == 0 ->
          {u, vt}

        type ->
          {device, _} = u
          one = EMLX.scalar_tensor(1, type, device)
          u_shape = EMLX.shape(u)
          vt_shape = EMLX.shape(vt)
          batch = u_shape |> Tuple.to_list() |> Enum.take(rank - 2)

          # One sign per singular triple: from V's columns (vt's rows) when
          # m >= n, from U's columns otherwise.
          signs =
            if m >= n do
              vt |> slice_last2(vt_shape, k, n) |> sign_of_largest(rank - 1)
            else
              u |> slice_last2(u_shape, m, k) |> sign_of_largest(rank - 2)
            end

          signs = EMLX.reshape(signs, List.to_tuple(batch ++ [k]))
          u_cols = elem(u_shape, rank - 1)
          vt_rows = elem(vt_shape, rank - 2)
          col = signs |> pad_ones(rank - 2, u_cols - k, one)
          row = signs |> pad_ones(rank - 2, vt_rows - k, one)
          col = EMLX.reshape(col, List.to_tuple(batch ++ [1, u_cols]))
          row = EMLX.reshape(row, List.to_tuple(batch ++ [vt_rows, 1]))
          {EMLX.multiply(u, col), EMLX.multiply(vt, row)}
      end
    end

    defp slice_last2(ref, shape, rows, cols) do
      rank = tuple_size(shape)
      starts = List.duplicate(0, rank)

      stops =
        for i <- 0..(rank - 1) do
          cond do
            i == rank - 2 -> rows
            i == rank - 1 -> cols
            true -> elem(shape, i)
          end
        end

      EMLX.slice(ref, starts, stops, List.duplicate(1, rank))
    end

    defp pad_ones(ref, _axis, 0, _one), do: ref
    defp pad_ones(ref, axis, extra, one), do: EMLX.pad(ref, [axis], [0], [extra], one)

    # Indices that sort `ref` along `axis` descending, ties in order.
    defp stable_descending(ref, axis) do
      shape = EMLX.shape(ref)
      n = elem(shape, axis)
      idx = ref |> reverse_axis(axis) |> EMLX.argsort(axis) |> reverse_axis(axis)
      EMLX.subtract(EMLX.scalar_tensor(n - 1, {:s, 32}, elem(ref, 0)), EMLX.astype(idx, {:s, 32}))
    end

    # -0.0 + 0.0 is +0.0: signed zeros from the factorisation print as Nx's.
    defp plus_zero({device, _} = ref) do
      EMLX.add(ref, EMLX.scalar_tensor(0, EMLX.scalar_type(ref), device))
    end

    ## Helpers

    defp ref(%T{} = t), do: B.from_nx(t)

    defp ref_as(%T{type: type} = t, type), do: B.from_nx(t)

    defp ref_as(%T{} = t, type) do
      storage = EMLX.Backend.Types.storage(type)
      ref = B.from_nx(t)
      if EMLX.scalar_type(ref) == storage, do: ref, else: EMLX.astype(ref, storage)
    end

    defp retemplate(%T{data: data}, template), do: B.to_nx(data.ref, template)

    defp cumulative(fun, %{axis: axis, reverse: reverse}, out, t) do
      t |> ref_as(out.type) |> then(&apply(EMLX, fun, [&1, axis, reverse, true])) |> B.to_nx(out)
    end

    defp slice_axis(ref, shape, axis, start, length) do
      rank = tuple_size(shape)
      starts = for i <- 0..(rank - 1), do: if(i == axis, do: start, else: 0)
      stops = for i <- 0..(rank - 1), do: if(i == axis, do: start + length, else: elem(shape, i))
      EMLX.slice(ref, starts, stops, List.duplicate(1, rank))
    end

    defp reverse_axis(ref, axis) do
      shape = EMLX.shape(ref)
      rank = tuple_size(shape)
      dim = elem(shape, axis)
      starts = for i <- 0..(rank - 1), do: if(i == axis, do: dim - 1, else: 0)
      stops = for i <- 0..(rank - 1), do: if(i == axis, do: -dim - 1, else: elem(shape, i))
      strides = for i <- 0..(rank - 1), do: if(i == axis, do: -1, else: 1)
      EMLX.slice(ref, starts, stops, strides)
    end

    # Truncates or zero-pads `axis` to `length`.
    defp fit_axis({device, _} = ref, axis, length) do
      shape = EMLX.shape(ref)
      dim = elem(shape, axis)

      cond do
        dim == length ->
          ref

        dim > length ->
          slice_axis(ref, shape, axis, 0, length)

        true ->
          zero = EMLX.scalar_tensor(0, EMLX.scalar_type(ref), device)
          EMLX.pad(ref, [axis], [0], [length - dim], zero)
      end
    end

    @doc false
    # Nx.BinaryBackend's FFT rounding: real and imaginary parts with
    # `|x| <= eps` become zero.
    def zero_small(ref, nil), do: ref

    def zero_small({device, _} = ref, eps) do
      case EMLX.scalar_type(ref) do
        {:c, bits} = type ->
          real_type = {:f, div(bits, 2)}
          re = ref |> EMLX.real() |> clean(eps, real_type, device)
          im = ref |> EMLX.imag() |> clean(eps, real_type, device)
          i = EMLX.scalar_tensor({0.0, 1.0}, type, device)
          EMLX.add(EMLX.astype(re, type), EMLX.multiply(EMLX.astype(im, type), i))

        type ->
          clean(ref, eps, type, device)
      end
    end

    defp clean({_, _} = x, eps, type, device) do
      small = EMLX.less_equal(EMLX.abs(x), EMLX.scalar_tensor(eps, type, device))
      EMLX.where(small, EMLX.scalar_tensor(0, type, device), x)
    end
  end
end
