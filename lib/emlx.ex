defmodule EMLX do
  @moduledoc """
  Low-level bindings to the EMLX array engine, a C11 engine with the
  semantics of Apple's MLX: lazy arrays that build a graph and compute only
  when evaluated, NumPy/MLX broadcasting and MLX's dtype promotion.

  A tensor here is a raw `{device, ref}` pair (`t:tensor_ref/0`). Functions
  that build the graph (`add/2`, `reshape/2`, ...) only create a node and
  return at once; the work happens when a result is asked for: `eval/1`,
  `item/1`, `to_blob/1`, `strides/1`, `tensor_data_ptr/1`, `tensor_to_shm/2`
  and `to_device/2` submit the tensor to an `EMLX.CommandQueue`, whose worker
  thread computes it while the calling process waits in `receive` — no BEAM
  scheduler is ever blocked by compute. `resolve_worker/1` picks the queue.

  Types are given as Nx-style tuples (`{:f, 32}`, `{:bf, 16}`, `{:s, 64}`,
  `{:u, 8}`, `{:c, 64}`, ...), as MLX names (`:float32`, `:bfloat16`, ...) or
  as Nx's short atoms (`:f32`, `:bf16`, ...); `:bool` is the boolean dtype.
  `scalar_type/1` answers with the tuple form (and `:bool`).

  Every argument is validated by the native library; a wrong one raises
  `EMLX.NIFError` naming the function and the problem.

      iex> a = EMLX.from_blob(<<1.0::float-32-native, 2.0::float-32-native>>, {2}, {:f, 32}, :cpu)
      iex> b = EMLX.full(10, {2}, {:f, 32}, :cpu)
      iex> EMLX.add(a, b) |> EMLX.sum(nil, false) |> EMLX.item()
      23.0

  ## Compile-time debug flags

  Several development-only checks are gated by `Application.compile_env/3`
  at compile time — when a flag is `false`, the check is erased entirely
  (no BEAM opcodes, zero runtime cost). After changing a flag, run
  `mix compile --force`; values are baked in at compile time, not read at
  runtime. See `config/dev.exs` for commented examples.

      config :emlx, enable_bounds_check: true
      config :emlx, detect_non_finites: true
      config :emlx, compiler_debug: true

  * `:enable_bounds_check` — raises on out-of-bounds indices in the indexing
    functions (gather, take, take_along_axis) as they are added.
  * `:detect_non_finites` — raises when dot, conv, or the fused kernels
    produce NaN or Inf. Forces extra evaluations and breaks lazy-graph
    fusion; never enable in production.
  * `:compiler_debug` — raises on internal `Nx.Defn` lowering invariant
    violations. Cheap; off by default.

  ## Devices

  `:cpu` always exists; `:gpu` only when the engine was built with a GPU
  backend and one is present. `default_device/0` says which one to use.
  """

  import EMLX.Macro
  require EMLX.Debug

  @typedoc "A raw tensor: the device it lives on and the native reference."
  @type tensor_ref() :: {atom(), reference()}
  @typedoc "`:cpu` or `:gpu`."
  @type device() :: :cpu | :gpu
  @typedoc "A shape: a tuple (or list) of non-negative sizes."
  @type shape() :: tuple() | [non_neg_integer()]
  @typedoc "A dtype: `{:f, 32}`-style tuple, MLX name (`:float32`), Nx short atom (`:f32`) or `:bool`."
  @type type() :: {atom(), pos_integer()} | atom()

  @doc """
  Guard-safe check that `{device, ref}` looks like a tensor reference.

      iex> t = EMLX.scalar_tensor(1, {:s, 32}, :cpu)
      iex> match?({d, r} when EMLX.is_tensor(d, r), t)
      true
  """
  defguard is_tensor(device, ref) when is_atom(device) and is_reference(ref)

  ## Creation

  defdevice from_blob(blob, shape, type, device),
    doc: """
    Creates a tensor of `shape` and `type` on `device` from a binary of
    native-endian, row-major elements (exactly `size * element size` bytes).
    Large binaries are copied on a dirty scheduler.
    """

  defdevice scalar_tensor(scalar, type, device),
    doc: """
    A 0-d tensor holding `scalar` converted to `type`: an integer (exact for
    every integer type), a float, `:nan`, `:infinity`, `:neg_infinity`, a
    boolean, or a complex number as `{re, im}` or a `Complex` struct.
    """

  defdevice full(value, shape, type, device),
    doc: "A tensor of `shape` and `type` filled with `value` (a scalar as in `scalar_tensor/3`)."

  defdevice ones(shape, type, device), doc: "A tensor of `shape` and `type` filled with ones."

  defdevice arange(start, stop, step, integer?, device),
    doc: """
    The values `start, start + step, ...` below `stop` (ceil((stop - start) /
    step) of them). `integer?` picks `{:s, 32}` (true) or `{:f, 32}` (false);
    a type may be given instead.
    """

  defdevice eye(m, n, type, device),
    doc: "An `m` x `n` tensor with ones on the main diagonal and zeros elsewhere."

  ## Elementwise

  deftensor add(tensor_a, tensor_b), doc: "Elementwise `a + b`, broadcasting and promoting types."

  deftensor subtract(tensor_a, tensor_b),
    doc: "Elementwise `a - b`, broadcasting and promoting types."

  deftensor multiply(tensor_a, tensor_b),
    doc: "Elementwise `a * b`, broadcasting and promoting types."

  deftensor divide(tensor_a, tensor_b),
    doc: "Elementwise true division `a / b`; integer inputs give `{:f, 32}`."

  deftensor negate(tensor), doc: "Elementwise `-a` (not defined for `:bool`)."

  deftensor exp(tensor), doc: "Elementwise `e^a`; integer inputs give `{:f, 32}`."

  deftensor astype(tensor, type),
    doc: """
    Converts to `type`. Floats to integers truncate toward zero and saturate;
    anything to `:bool` is `!= 0`; complex to real keeps the real part.
    """

  ## Math (elementwise functions, comparisons, logical and bitwise ops)

  deftensor abs(tensor),
    doc:
      "Elementwise `|a|`; signed integers wrap (`abs(-128)` is -128 in `{:s, 8}`); `{:c, 64}` gives the `{:f, 32}` magnitude."

  deftensor acos(tensor), doc: "Elementwise arc cosine; integer inputs give `{:f, 32}`."

  deftensor acosh(tensor),
    doc: "Elementwise inverse hyperbolic cosine; integer inputs give `{:f, 32}`."

  deftensor asin(tensor), doc: "Elementwise arc sine; integer inputs give `{:f, 32}`."

  deftensor asinh(tensor),
    doc: "Elementwise inverse hyperbolic sine; integer inputs give `{:f, 32}`."

  deftensor atan(tensor), doc: "Elementwise arc tangent; integer inputs give `{:f, 32}`."

  deftensor atanh(tensor),
    doc: "Elementwise inverse hyperbolic tangent; integer inputs give `{:f, 32}`."

  deftensor bitwise_not(tensor),
    doc: "Elementwise bitwise complement of integers (logical not of `:bool`)."

  deftensor ceil(tensor), doc: "Elementwise ceiling; integers are returned as they are."

  deftensor conjugate(tensor),
    doc: "Elementwise complex conjugate; real tensors are returned as they are."

  deftensor cos(tensor), doc: "Elementwise cosine; integer inputs give `{:f, 32}`."

  deftensor cosh(tensor), doc: "Elementwise hyperbolic cosine; integer inputs give `{:f, 32}`."

  deftensor erf(tensor), doc: "Elementwise error function; integer inputs give `{:f, 32}`."

  deftensor erf_inv(tensor),
    doc:
      "Elementwise inverse error function (`erf_inv(1)` is infinity, outside [-1, 1] NaN); integer inputs give `{:f, 32}`."

  deftensor erfc(tensor),
    doc:
      "Elementwise complementary error function `1 - erf(a)`, accurate where erf is near 1; integer inputs give `{:f, 32}`."

  deftensor expm1(tensor),
    doc: "Elementwise `e^a - 1`, accurate near 0; integer inputs give `{:f, 32}`."

  deftensor floor(tensor), doc: "Elementwise floor; integers are returned as they are."

  deftensor imag(tensor),
    doc: "Elementwise imaginary part (`{:f, 32}` of `{:c, 64}`; zeros for real tensors)."

  deftensor is_infinity(tensor),
    doc: "Elementwise `:bool`, true where the value is infinite (never for integers)."

  deftensor is_nan(tensor),
    doc: "Elementwise `:bool`, true where the value is NaN (never for integers)."

  deftensor log(tensor), doc: "Elementwise natural logarithm; integer inputs give `{:f, 32}`."

  deftensor log1p(tensor),
    doc: "Elementwise `log(1 + a)`, accurate near 0; integer inputs give `{:f, 32}`."

  deftensor logical_not(tensor), doc: "Elementwise `:bool`, true where `a == 0`."

  deftensor real(tensor),
    doc:
      "Elementwise real part (`{:f, 32}` of `{:c, 64}`; real tensors are returned as they are)."

  deftensor round(tensor),
    doc:
      "Elementwise rounding to the nearest integer, ties to even (`round(0.5)` is 0.0, as MLX)."

  deftensor round_half_away(tensor),
    doc:
      "Elementwise rounding to the nearest integer, ties away from zero (`round(0.5)` is 1.0, as Nx)."

  deftensor rsqrt(tensor), doc: "Elementwise `1 / sqrt(a)`; integer inputs give `{:f, 32}`."

  deftensor sigmoid(tensor), doc: "Elementwise `1 / (1 + e^-a)`; integer inputs give `{:f, 32}`."

  deftensor sign(tensor),
    doc:
      "Elementwise -1, 0 or 1 in the input's type (NaN stays NaN, -0.0 stays -0.0; `{:c, 64}`: `a / |a|`)."

  deftensor sin(tensor), doc: "Elementwise sine; integer inputs give `{:f, 32}`."

  deftensor sinh(tensor), doc: "Elementwise hyperbolic sine; integer inputs give `{:f, 32}`."

  deftensor sqrt(tensor), doc: "Elementwise square root; integer inputs give `{:f, 32}`."

  deftensor tan(tensor), doc: "Elementwise tangent; integer inputs give `{:f, 32}`."

  deftensor tanh(tensor), doc: "Elementwise hyperbolic tangent; integer inputs give `{:f, 32}`."

  deftensor quotient(tensor_a, tensor_b),
    doc:
      "Elementwise integer division rounded toward zero (Nx's `quotient`); `x / 0` is 0 and `INT_MIN / -1` wraps."

  deftensor floor_divide(tensor_a, tensor_b),
    doc:
      "Elementwise division rounded toward negative infinity (MLX's and Python's `//`); `x // 0` is 0 for integers."

  deftensor remainder(tensor_a, tensor_b),
    doc:
      "Elementwise remainder with the sign of the divisor (MLX's and Python's `%`); `x % 0` is 0 for integers."

  deftensor remainder_trunc(tensor_a, tensor_b),
    doc:
      "Elementwise remainder with the sign of the dividend (C's `fmod`, Nx's `remainder`); `x % 0` is 0 for integers."

  deftensor pow(tensor_a, tensor_b),
    doc:
      "Elementwise `a ** b`; integers by repeated squaring, wrapping; a negative integer exponent gives 0 (1 for base 1, +-1 for base -1)."

  deftensor atan2(tensor_a, tensor_b),
    doc:
      "Elementwise arc tangent of `a / b` using the signs of both; integer inputs give `{:f, 32}`."

  deftensor maximum(tensor_a, tensor_b),
    doc: "Elementwise maximum; NaN propagates and `-0.0 < 0.0`."

  deftensor minimum(tensor_a, tensor_b),
    doc: "Elementwise minimum; NaN propagates and `-0.0 < 0.0`."

  deftensor equal(tensor_a, tensor_b),
    doc: "Elementwise `a == b` as `:bool` (NaN is never equal)."

  deftensor not_equal(tensor_a, tensor_b),
    doc: "Elementwise `a != b` as `:bool` (NaN is unequal to everything)."

  deftensor greater(tensor_a, tensor_b),
    doc: "Elementwise `a > b` as `:bool` (complex compares lexicographically)."

  deftensor greater_equal(tensor_a, tensor_b),
    doc: "Elementwise `a >= b` as `:bool`."

  deftensor less(tensor_a, tensor_b),
    doc: "Elementwise `a < b` as `:bool`."

  deftensor less_equal(tensor_a, tensor_b),
    doc: "Elementwise `a <= b` as `:bool`."

  deftensor logical_and(tensor_a, tensor_b),
    doc: "Elementwise `a and b` as `:bool` (each nonzero is true)."

  deftensor logical_or(tensor_a, tensor_b),
    doc: "Elementwise `a or b` as `:bool` (each nonzero is true)."

  deftensor logical_xor(tensor_a, tensor_b),
    doc: "Elementwise `a xor b` as `:bool` (each nonzero is true)."

  deftensor bitwise_and(tensor_a, tensor_b),
    doc: "Elementwise bitwise and of integer (or `:bool`) tensors."

  deftensor bitwise_or(tensor_a, tensor_b),
    doc: "Elementwise bitwise or of integer (or `:bool`) tensors."

  deftensor bitwise_xor(tensor_a, tensor_b),
    doc: "Elementwise bitwise xor of integer (or `:bool`) tensors."

  deftensor left_shift(tensor_a, tensor_b),
    doc:
      "Elementwise `a << b` on integers; a count of at least the bit width (or negative) gives 0."

  deftensor right_shift(tensor_a, tensor_b),
    doc:
      "Elementwise `a >> b` on integers, arithmetic for signed types; a count of at least the width gives 0 or -1."

  deftensor where(tensor_cond, tensor_x, tensor_y),
    doc: """
    Elementwise `cond ? x : y`: `cond` is converted to `:bool`, `x` and `y`
    are promoted to a common type, and the three shapes broadcast together.
    """

  deftensor clip(tensor, tensor_min, tensor_max),
    doc: """
    `minimum(maximum(a, min), max)`; either bound may be `nil` (not both).
    NaN propagates; the result type promotes `a` with the bounds.
    """

  deftensor isclose(tensor_a, tensor_b, rtol, atol, equal_nan),
    doc: """
    `:bool` tensor, true where `|a - b| <= atol + rtol * |b|` (computed in
    double). Infinities are close only to the same infinity; NaN is close
    to NaN only when `equal_nan` is true.
    """

  deftensor allclose(tensor_a, tensor_b, rtol, atol, equal_nan),
    doc: "A 0-d `:bool` tensor: whether `isclose/5` holds everywhere (true when empty)."

  ## Shape

  deftensor broadcast_to(tensor, shape),
    doc: "Broadcasts to `shape` (NumPy rules); a view of the same data."

  deftensor reshape(tensor, shape),
    doc: "The same elements in `shape`; one dimension may be `-1` (inferred)."

  deftensor transpose(tensor, axes),
    doc: "Permutes the axes (`axes` is a permutation; `nil` reverses them); a view."

  deftensor slice(tensor, starts, stops, strides),
    doc: """
    The elements `starts[i], starts[i] + strides[i], ...` below `stops[i]` on
    each axis (one entry per axis; Python-style clamping, negative indices
    count from the end, negative strides walk backwards); a view.
    """

  deftensor squeeze(tensor, axes),
    doc: "Removes the listed size-1 axes (`nil`: every size-1 axis); a view."

  deftensor copy(tensor), doc: "A row-major copy with its own buffer."

  ## Reductions, scans, sorting

  deftensor sum(tensor, axes, keep_axes),
    doc: """
    Sums over `axes` (`nil` or `[]`: all of them), keeping them as size-1 axes
    when `keep_axes` is true. `:bool`, `{:s, 8..32}` give `{:s, 32}`,
    `{:u, 8..32}` give `{:u, 32}`; others keep their type.
    """

  deftensor product(tensor, axes, keep_axes),
    doc: "The product over `axes` (as in `sum/3`, with the same result types)."

  deftensor max(tensor, axes, keep_axes),
    doc: "The maximum over `axes` (as in `sum/3`); NaN propagates."

  deftensor min(tensor, axes, keep_axes),
    doc: "The minimum over `axes` (as in `sum/3`); NaN propagates."

  deftensor all(tensor, axes, keep_axes),
    doc: "Whether every element over `axes` is non-zero (as in `sum/3`); `:bool`."

  deftensor any(tensor, axes, keep_axes),
    doc: "Whether any element over `axes` is non-zero (as in `sum/3`); `:bool`."

  deftensor argmax(tensor, keep_axes),
    doc: "The flat index of the largest element (`{:u, 32}`); ties take the first."

  deftensor argmax(tensor, axis, keep_axes),
    doc: "The index of the largest element along `axis` (`{:u, 32}`); ties take the first."

  deftensor argmin(tensor, keep_axes),
    doc: "The flat index of the smallest element (`{:u, 32}`); ties take the first."

  deftensor argmin(tensor, axis, keep_axes),
    doc: "The index of the smallest element along `axis` (`{:u, 32}`); ties take the first."

  deftensor cumulative_sum(tensor, axis, reverse, inclusive),
    doc: """
    Running sum along `axis`; from the end when `reverse`; `inclusive: false`
    shifts by one (the first element is 0).
    """

  deftensor cumulative_product(tensor, axis, reverse, inclusive),
    doc: "Running product along `axis` (options as in `cumulative_sum/4`)."

  deftensor cumulative_max(tensor, axis, reverse, inclusive),
    doc: "Running maximum along `axis` (options as in `cumulative_sum/4`)."

  deftensor cumulative_min(tensor, axis, reverse, inclusive),
    doc: "Running minimum along `axis` (options as in `cumulative_sum/4`)."

  deftensor sort(tensor, axis),
    doc: "Sorts along `axis`, ascending and stable (NaNs last)."

  deftensor argsort(tensor, axis),
    doc: "The indices (`{:u, 32}`) that sort `tensor` along `axis` (stable)."

  ## Indexing and layout

  deftensor take(tensor, tensor_indices, axis),
    check: {:indices, tensor, tensor_indices, axis},
    doc: """
    The elements at `indices` along `axis`: the result's shape is the shape of
    `tensor` with `axis` replaced by the shape of `indices`.
    """

  deftensor take_along_axis(tensor, tensor_indices, axis),
    check: {:indices, tensor, tensor_indices, axis},
    doc: """
    `out[..., j, ...] = tensor[..., indices[..., j, ...], ...]` along `axis`;
    `indices` has the rank of `tensor` and broadcasts against it elsewhere.
    """

  deftensor gather(tensor, indices, axes, slice_sizes),
    check: {:indices, tensor, indices, axes},
    doc: """
    MLX's gather: the index tensors (broadcast together to a shape `I`) give,
    along `axes`, the start of a slice of shape `slice_sizes`; the result has
    shape `I ++ slice_sizes`.
    """

  deftensor scatter(tensor, indices, tensor_updates, axes),
    check: {:indices, tensor, indices, axes},
    doc: """
    A copy of `tensor` with the slices `updates[m...]` written at the starts
    the index tensors give along `axes` (the last write of a duplicate wins).
    """

  deftensor scatter_add(tensor, indices, tensor_updates, axes),
    check: {:indices, tensor, indices, axes},
    doc: "Like `scatter/4`, adding the updates instead (duplicates accumulate)."

  deftensor slice_update(tensor, tensor_updates, starts, stops),
    doc: """
    A copy of `tensor` with the slice `starts..stops` (one entry per axis)
    replaced by `updates` (cast, broadcast). In place when the old tensor's
    buffer can be reused.
    """

  deftensor pad(tensor, axes, low_pad_size, high_pad_size, tensor_pad_value),
    doc: """
    Pads each of `axes` with `low_pad_size[i]` elements before and
    `high_pad_size[i]` after (negative sizes remove elements), filled with the
    one-element `pad_value` tensor.
    """

  deftensor concatenate(tensors, axis),
    doc: "Joins tensors along an existing `axis` (types promoted)."

  deftensor stack(tensors, axis),
    doc: "Joins same-shaped tensors along a new `axis` (types promoted)."

  deftensor as_strided(tensor, shape, strides, offset),
    doc: """
    A view with `shape`, element `strides` and element `offset` over the
    tensor's row-major data; every element it reaches must lie inside the
    tensor.
    """

  deftensor view(tensor, type),
    doc: """
    The same bytes read as `type` (a bitcast); the last axis scales by the
    ratio of the element sizes.
    """

  ## Contractions

  deftensor tensordot(tensor_a, tensor_b, axes_a, axes_b),
    check: :finite,
    doc: """
    Contracts `axes_a[i]` of `a` with `axes_b[i]` of `b`; the result has
    `a`'s free axes, then `b`'s.
    """

  deftensor tensordot(tensor_a, tensor_b, axes_a, axes_b, batch_a, batch_b),
    check: :finite,
    doc: """
    Like `tensordot/4`, also pairing `batch_a[i]` with `batch_b[i]` (Nx's
    `dot/6`): the result's axes are the batch axes, then the free axes of `a`
    and of `b`.
    """

  deftensor einsum(tensors, spec),
    check: :finite,
    doc: "Einstein summation in MLX/NumPy notation, e.g. `\"ij,jk->ik\"`."

  ## Windows and convolution

  deftensor window_sum(tensor, window_dims, strides, padding_low, padding_high, window_dilations),
    doc: """
    Sums every window of `tensor` (one `window_dims` entry per axis) placed
    every `strides` elements over the tensor padded with `padding_low` /
    `padding_high` zeros, taps `window_dilations` apart (Nx's `window_sum/3`).
    The result has the input's type; integer sums wrap.
    """

  deftensor window_max(tensor, window_dims, strides, padding_low, padding_high, window_dilations),
    doc: """
    Like `window_sum/6` with max; padding holds `-inf` (integers: the type's
    minimum). NaN propagates.
    """

  deftensor window_min(tensor, window_dims, strides, padding_low, padding_high, window_dilations),
    doc: """
    Like `window_sum/6` with min; padding holds `+inf` (integers: the type's
    maximum). NaN propagates.
    """

  deftensor window_product(
              tensor,
              window_dims,
              strides,
              padding_low,
              padding_high,
              window_dilations
            ),
            doc: "Like `window_sum/6` with product; padding holds ones."

  deftensor window_scatter_max(
              tensor,
              tensor_source,
              tensor_init_value,
              window_dims,
              strides,
              padding_low,
              padding_high
            ),
            doc: """
            Nx's `window_scatter_max/5`: a tensor of `tensor`'s shape and type
            filled with the one-element `init_value`, where each window's
            `source` value is added at the position of the window's first
            maximum. `source` has the shape of the window reduction's result.
            """

  deftensor window_scatter_min(
              tensor,
              tensor_source,
              tensor_init_value,
              window_dims,
              strides,
              padding_low,
              padding_high
            ),
            doc: "Like `window_scatter_max/7`, at the window's first minimum."

  @doc """
  N-d convolution, channels-last (MLX's `conv_general`): `input` is
  `{n, spatial..., c_in}`, `kernel` is `{c_out, kspatial..., c_in / feature_group_count}`
  and the result `{n / batch_group_count, out_spatial..., c_out}`. The lists
  have one entry per spatial axis; the input is dilated by `input_dilation`
  and padded (negative padding crops) before the kernel, dilated by
  `kernel_dilation`, slides with `strides`. `batch_group_count` follows XLA
  (Nx's `:batch_group_size`); `flip` convolves instead of correlating.
  Nx's channels-first layout is transposed to this one by the backend.
  """
  @spec conv_general(
          EMLX.tensor_ref(),
          EMLX.tensor_ref(),
          [integer()],
          [integer()],
          [integer()],
          [integer()],
          [integer()],
          pos_integer()
        ) :: EMLX.tensor_ref()
  def conv_general(
        tensor_input,
        tensor_kernel,
        strides,
        padding_low,
        padding_high,
        kernel_dilation,
        input_dilation,
        feature_group_count
      ) do
    conv_general(
      tensor_input,
      tensor_kernel,
      strides,
      padding_low,
      padding_high,
      kernel_dilation,
      input_dilation,
      feature_group_count,
      1,
      false
    )
  end

  @doc "`conv_general/8` with `batch_group_count` and `flip`."
  @spec conv_general(
          EMLX.tensor_ref(),
          EMLX.tensor_ref(),
          [integer()],
          [integer()],
          [integer()],
          [integer()],
          [integer()],
          pos_integer(),
          pos_integer(),
          boolean()
        ) :: EMLX.tensor_ref()
  def conv_general(
        tensor_input,
        tensor_kernel,
        strides,
        padding_low,
        padding_high,
        kernel_dilation,
        input_dilation,
        feature_group_count,
        batch_group_count,
        flip
      ) do
    case EMLX.NIF.conv_general(
           tensor_input,
           tensor_kernel,
           strides,
           padding_low,
           padding_high,
           kernel_dilation,
           input_dilation,
           feature_group_count,
           batch_group_count,
           flip
         ) do
      {:ok, value} ->
        value
        |> EMLX.Compiler.Recorder.hook(:conv_general, [
          tensor_input,
          tensor_kernel,
          strides,
          padding_low,
          padding_high,
          kernel_dilation,
          input_dilation,
          feature_group_count,
          batch_group_count,
          flip
        ])
        |> EMLX.Debug.check_finite!(:conv_general)

      {:error, message} ->
        raise EMLX.NIFError, message
    end
  end

  ## Fourier transforms

  deftensor fft(tensor, n, axis),
    doc: """
    The discrete Fourier transform along `axis`, `sum_j x[j] exp(-2 pi i j k / n)`:
    the axis is truncated or zero-padded to length `n` (`0` keeps its length).
    The result is `{:c, 64}` (`{:c, 128}` for `{:c, 128}` and `{:f, 64}`
    inputs); real inputs are converted first.
    """

  deftensor ifft(tensor, n, axis),
    doc: """
    The inverse of `fft/3`, `(1/n) sum_j x[j] exp(+2 pi i j k / n)`, with the
    same rules for `n` and `axis`.
    """

  deftensor fft2(tensor, s, axes),
    doc: """
    The two-dimensional transform over `axes` (two axes, or `nil` for the last
    two), each truncated or zero-padded to the matching entry of `s` (two
    lengths, `0` keeping an axis's own; `[]` keeps both).
    """

  deftensor ifft2(tensor, s, axes), doc: "The inverse of `fft2/3`, scaled by `1 / (s0 * s1)`."

  ## Linear algebra
  #
  # Each works on the last two axes (matrices) and repeats over the leading
  # ones. Types: {:f, 32}, {:f, 64}, {:c, 64}, {:c, 128} (others raise: cast first;
  # solve and solve_triangular promote their operands). Numerical failures
  # (not positive definite, singular, no convergence) raise when the result
  # is evaluated, naming the batch index of the first failing matrix.

  @doc """
  Cholesky factor of a Hermitian positive-definite matrix: lower `L` with
  `L L^H = a` (reading `a`'s lower triangle), or upper `U` with `U^H U = a`
  when `upper` is true (reading the upper triangle). The other triangle of
  the result is zero.
  """
  @spec linalg_cholesky(tensor_ref(), boolean()) :: tensor_ref()
  def linalg_cholesky(tensor, upper \\ false),
    do: call!(:linalg_cholesky, [tensor, upper])

  @doc """
  Eigenvalues (ascending, real) and unit eigenvectors (column `i` of `v`
  belongs to eigenvalue `i`) of a Hermitian / real symmetric matrix, as
  `{w, v}`. `uplo` is `"L"` (the lower triangle is read) or `"U"`.
  """
  @spec linalg_eigh(tensor_ref(), String.t()) :: {tensor_ref(), tensor_ref()}
  def linalg_eigh(tensor, uplo \\ "L"), do: call!(:linalg_eigh, [tensor, uplo])

  @doc "Inverse of a square matrix."
  @spec linalg_inv(tensor_ref()) :: tensor_ref()
  def linalg_inv(tensor), do: call!(:linalg_inv, [tensor])

  @doc """
  Inverse of a triangular matrix (lower unless `upper`); only that
  triangle is read, the other triangle of the result is zero.
  """
  @spec tri_inv(tensor_ref(), boolean()) :: tensor_ref()
  def tri_inv(tensor, upper \\ false), do: call!(:tri_inv, [tensor, upper])

  @doc """
  LU factorisation with partial pivoting of an `{m, n}` matrix (`k = min(m,
  n)`), as MLX's `lu`: `{p, l, u}` with `p` `{:u, 32}` `{m}`, `l` `{m, k}`
  unit lower triangular and `u` `{k, n}` upper triangular, such that row `i`
  of `a` is row `p[i]` of `l @ u`. The permutation matrix with `a = P l u`
  (Nx's `p`) has `P[i][j] = 1` where `p[i] == j`.
  """
  @spec linalg_lu(tensor_ref()) :: {tensor_ref(), tensor_ref(), tensor_ref()}
  def linalg_lu(tensor), do: call!(:linalg_lu, [tensor])

  @doc """
  The compact LU factorisation (MLX's `lu_factor`): `{lu, pivots}`, `lu`
  holding `l` below the diagonal and `u` on and above it, `pivots` `{:u,
  32}` LAPACK's 0-based row interchanges.
  """
  @spec linalg_lu_factor(tensor_ref()) :: {tensor_ref(), tensor_ref()}
  def linalg_lu_factor(tensor), do: call!(:linalg_lu_factor, [tensor])

  @doc """
  Moore-Penrose pseudo-inverse (`{n, m}` for an `{m, n}` matrix) from the
  SVD. Singular values `s <= max(atol, rtol * max(s))` count as zero;
  `rtol <= 0` means MLX's default `10 * max(m, n) * eps`, `atol <= 0` none.
  """
  @spec linalg_pinv(tensor_ref(), number(), number()) :: tensor_ref()
  def linalg_pinv(tensor, rtol \\ 0, atol \\ 0)
  def linalg_pinv(tensor, 0, 0), do: call!(:linalg_pinv, [tensor])
  def linalg_pinv(tensor, rtol, atol), do: call!(:linalg_pinv, [tensor, rtol, atol])

  @doc """
  QR factorisation (Householder) as `{q, r}`: reduced (`q` `{m, k}`, `r`
  `{k, n}`, MLX's mode) or, with `complete`, `q` `{m, m}` and `r` `{m, n}`.
  """
  @spec linalg_qr(tensor_ref(), boolean()) :: {tensor_ref(), tensor_ref()}
  def linalg_qr(tensor, complete \\ false), do: call!(:linalg_qr, [tensor, complete])

  @doc """
  Solution `x` of `a @ x = b`: `b` is `{..., n, r}` or a vector `{n}`;
  batch axes broadcast. Raises on evaluation when `a` is singular.
  """
  @spec linalg_solve(tensor_ref(), tensor_ref()) :: tensor_ref()
  def linalg_solve(tensor_a, tensor_b), do: call!(:linalg_solve, [tensor_a, tensor_b])

  @doc """
  Solution of `op(a) @ x = b` (or `x @ op(a) = b` with `right_side`) for a
  triangular `a`, of which only the lower (or `upper`) triangle is read.
  `transpose` is `:none`, `:transpose` or `:adjoint` (`op(a)` = `a`, `a^T`,
  `a^H`); `unit_diagonal` takes `a`'s diagonal as ones.
  """
  @spec linalg_solve_triangular(
          tensor_ref(),
          tensor_ref(),
          boolean(),
          boolean(),
          :none | :transpose | :adjoint,
          boolean()
        ) :: tensor_ref()
  def linalg_solve_triangular(
        tensor_a,
        tensor_b,
        upper \\ false,
        right_side \\ false,
        transpose \\ :none,
        unit_diagonal \\ false
      ) do
    op = solve_triangular_op(transpose)

    call!(:linalg_solve_triangular, [tensor_a, tensor_b, upper, right_side, op, unit_diagonal])
  end

  defp solve_triangular_op(:none), do: 0
  defp solve_triangular_op(:transpose), do: 1
  defp solve_triangular_op(:adjoint), do: 2

  # anything else goes to the native side, which rejects it
  defp solve_triangular_op(other), do: other

  @doc """
  Singular value decomposition `a = u @ diag(s) @ vt`, as `{u, s, vt}`
  (`full_matrices`: `u` `{m, m}` and `vt` `{n, n}`, as MLX; otherwise `{m,
  k}` and `{k, n}`), or just `s` (descending, real) when `compute_uv` is
  false.
  """
  @spec linalg_svd(tensor_ref(), boolean(), boolean()) ::
          {tensor_ref(), tensor_ref(), tensor_ref()} | tensor_ref()
  def linalg_svd(tensor, compute_uv \\ true, full_matrices \\ true),
    do: call!(:linalg_svd, [tensor, compute_uv, full_matrices])

  ## Quantization (MLX's formats: include/emlx/quantize.h)

  @typedoc "A quantization mode: `\"affine\"`, `\"mxfp4\"`, `\"mxfp8\"` or `\"nvfp4\"` (or the atom)."
  @type quantization_mode() :: String.t() | atom()

  @doc """
  Quantizes a floating point tensor (rank >= 2; `{:f, 32}`, `{:f, 16}` or
  `{:bf, 16}`) along its last axis into MLX's packed format, bit for bit as
  `mx.quantize`.

  Returns `{quantized_weights, scales, biases}`:
    - `quantized_weights` — uint32, `K * bits / 32` words a row (for 3, 5
      and 6 bits the codes straddle words, as in MLX)
    - `scales` — per group, in `w`'s type (`"affine"`) or `{:u, 8}` (e8m0
      for `"mxfp4"`/`"mxfp8"`, e4m3 for `"nvfp4"`)
    - `biases` — per group (`"affine"`), or `nil` for the microscaled modes

  `group_size` and `bits` of `nil` take the mode's defaults (affine 64 and 4;
  mxfp4 32, 4; mxfp8 32, 8; nvfp4 16, 4). Affine takes bits 2, 3, 4, 5, 6, 8
  and groups 32, 64, 128. Called with an `Nx.Tensor` and a keyword list it
  is the `Nx` form (see `EMLX.Quantization`).
  """
  @spec quantize(tensor_ref(), pos_integer() | nil, pos_integer() | nil, quantization_mode()) ::
          {tensor_ref(), tensor_ref(), tensor_ref() | nil}
  def quantize(tensor, group_size \\ nil, bits \\ nil, mode \\ "affine")

  def quantize(%{__struct__: Nx.Tensor} = tensor, opts, nil, "affine") when is_list(opts),
    do: nx_quantization().quantize(tensor, opts)

  def quantize(tensor, group_size, bits, mode),
    do: unwrap!(EMLX.NIF.quantize(tensor, qparam(group_size), qparam(bits), qmode(mode)))

  @doc """
  Dequantizes packed weights back to floating point (`mx.dequantize`, bit
  for bit).

  `w` is the uint32 tensor of `quantize/4`, `scales` and `biases` its
  companions (`biases` is `nil` for the microscaled modes). The result has
  `w`'s shape with the last axis `w.shape[-1] * 32 / bits`, in the type of
  the scales (affine) or `{:bf, 16}` (MLX's default for the other modes).
  Called with one quantized `Nx.Tensor` it is the `Nx` form.
  """
  @spec dequantize(
          tensor_ref(),
          tensor_ref(),
          tensor_ref() | nil,
          pos_integer() | nil,
          pos_integer() | nil,
          quantization_mode()
        ) :: tensor_ref()
  def dequantize(w, scales, biases, group_size \\ nil, bits \\ nil, mode \\ "affine") do
    call!(:dequantize, [w, scales, biases, qparam(group_size), qparam(bits), qmode(mode)])
  end

  @doc """
  Dequantizes a quantized `Nx.Tensor` (made by `EMLX.quantize/2`) back to a
  dense float tensor; every mode `EMLX.quantize/2` accepts is supported.
  """
  def dequantize(%{__struct__: Nx.Tensor} = tensor), do: nx_quantization().dequantize(tensor)

  def dequantize(other),
    do: raise(EMLX.NIFError, "dequantize/1: not an Nx.Tensor: #{inspect(other)}")

  @doc """
  Quantized matrix multiplication (`mx.quantized_matmul`): `x @ W^T`
  (`transpose: true`, W stored as `{N, K}` and quantized along K) or `x @ W`
  (`transpose: false`, W `{K, N}` quantized along N), without forming the
  dense W. `x` is `{..., M, K}` (or `{K}`) in `{:f, 32}`, `{:f, 16}` or
  `{:bf, 16}`; batch axes of `x` and `w` broadcast. The result type is the
  promotion of `x` and the scales (affine) or `x`'s type. Called with two
  arguments (an activation and a quantized `Nx.Tensor`) it is the `Nx` form.
  """
  @spec quantized_matmul(
          tensor_ref(),
          tensor_ref(),
          tensor_ref(),
          tensor_ref() | nil,
          boolean(),
          pos_integer() | nil,
          pos_integer() | nil,
          quantization_mode()
        ) :: tensor_ref()
  def quantized_matmul(
        x,
        w,
        scales,
        biases,
        transpose \\ true,
        group_size \\ nil,
        bits \\ nil,
        mode \\ "affine"
      ) do
    # call!: recorded inside a defn compiled by EMLX (a quantized parameter
    # feeding Nx.dot lowers to this node).
    call!(:quantized_matmul, [
      x,
      w,
      scales,
      biases,
      transpose,
      qparam(group_size),
      qparam(bits),
      qmode(mode)
    ])
  end

  @doc """
  `activation @ dequantize(qw)` for a quantized `Nx.Tensor` `qw` made by
  `EMLX.quantize/2`, through `quantized_matmul/8`. Raises `ArgumentError`
  if both arguments are quantized.
  """
  def quantized_matmul(%{__struct__: Nx.Tensor} = activation, %{__struct__: Nx.Tensor} = qw),
    do: nx_quantization().quantized_matmul(activation, qw)

  def quantized_matmul(_, _),
    do: raise(EMLX.NIFError, "quantized_matmul/2: both arguments must be Nx tensors")

  @doc """
  Quantized matmul with per-row expert selection (`mx.gather_qmm`).

  Same contract as `quantized_matmul/8`, plus two index tensors. `w`
  carries every expert stacked on its leading axes; `rhs_indices` picks the
  expert for each output matrix and `lhs_indices` the matrix of `x` (`nil`:
  in order). The two broadcast to a shape `S`; the result is `S ++ {M, N}`.
  `sorted_indices` says `rhs_indices` is sorted (a hint; the result is the
  same). The gather happens inside the kernel: no expert's weights are
  copied. An index out of range raises `EMLX.NIFError` when evaluated.
  """
  @spec gather_qmm(
          tensor_ref(),
          tensor_ref(),
          tensor_ref(),
          tensor_ref() | nil,
          tensor_ref() | nil,
          tensor_ref() | nil,
          boolean(),
          pos_integer() | nil,
          pos_integer() | nil,
          quantization_mode(),
          boolean()
        ) :: tensor_ref()
  def gather_qmm(
        x,
        w,
        scales,
        biases,
        lhs_indices,
        rhs_indices,
        transpose \\ true,
        group_size \\ nil,
        bits \\ nil,
        mode \\ "affine",
        sorted_indices \\ false
      ) do
    call!(:gather_qmm, [
      x,
      w,
      scales,
      biases,
      lhs_indices,
      rhs_indices,
      transpose,
      qparam(group_size),
      qparam(bits),
      qmode(mode),
      sorted_indices
    ])
  end

  @doc """
  `gather_qmm/11` at the `Nx.Tensor` level: `qw` is a quantized tensor from
  `EMLX.quantize/2` whose leading axis stacks the experts; `rhs_indices`
  names the expert for each row. Options: `:lhs_indices` (default `nil`),
  `:sorted_indices` (default `false`).
  """
  def gather_quantized_matmul(x, qw, rhs_indices, opts \\ [])

  def gather_quantized_matmul(
        %{__struct__: Nx.Tensor} = x,
        %{__struct__: Nx.Tensor} = qw,
        %{__struct__: Nx.Tensor} = rhs_indices,
        opts
      )
      when is_list(opts),
      do: nx_quantization().gather_quantized_matmul(x, qw, rhs_indices, opts)

  def gather_quantized_matmul(_, _, _, _),
    do:
      raise(
        EMLX.NIFError,
        "gather_quantized_matmul/4: x, qw and rhs_indices must be Nx tensors, opts a list"
      )

  # nil: the mode's default; anything else goes to the NIF, which checks it.
  defp qparam(nil), do: 0
  defp qparam(n), do: n

  defp qmode(mode) when is_atom(mode) and mode not in [nil, true, false], do: Atom.to_string(mode)
  defp qmode(mode), do: mode

  # The Nx side lives in EMLX.Quantization, compiled only when Nx is present.
  defp nx_quantization do
    mod = EMLX.Quantization

    unless Code.ensure_loaded?(mod) do
      raise EMLX.NIFError, "quantized Nx tensors need Nx (EMLX.Quantization is not compiled)"
    end

    mod
  end

  ## MLX's everyday model ops
  #
  # Statistics and softmax run as one fused kernel each; the rest are
  # compositions that fuse or stay views (see include/emlx/reduce.h,
  # elementwise.h, indexing.h). Axes lists: `nil` or `[]` is every axis.

  deftensor mean(tensor, axes, keep_axes),
    doc: """
    The mean over `axes` (`nil` or `[]`: all), one pass with f64 accumulators;
    integers and `:bool` give `{:f, 32}`. An empty reduction is NaN.
    """

  deftensor var(tensor, axes, keep_axes, ddof),
    doc: """
    The variance over `axes`: squared deviations from the mean (two-pass, f64)
    over `max(n - ddof, 0)`, so `ddof >= n` gives infinity (NaN when every
    deviation is 0), as numpy.
    """

  deftensor std(tensor, axes, keep_axes, ddof), doc: "The square root of `var/4`."

  deftensor logsumexp(tensor, axes, keep_axes),
    doc: """
    `log(sum(exp(x)))` over `axes`, max-subtracted (no overflow); all `-inf`
    (or empty) gives `-inf`.
    """

  deftensor softmax(tensor, axes, precise),
    doc: """
    `exp(x - max) / sum(exp(x - max))` over `axes`, in one kernel; `{:f, 16}`
    and `{:bf, 16}` are always computed in f32 (`precise` is accepted for
    MLX's signature).
    """

  deftensor log_softmax(tensor, axes, precise), doc: "`x - logsumexp(x)` over `axes`."

  deftensor logaddexp(tensor_a, tensor_b),
    doc: "Elementwise `log(exp(a) + exp(b))` without overflow; integers give `{:f, 32}`."

  deftensor log2(tensor), doc: "Elementwise base-2 logarithm (computed in f64, rounded once)."
  deftensor log10(tensor), doc: "Elementwise base-10 logarithm (computed in f64, rounded once)."

  deftensor isfinite(tensor), doc: "Elementwise `:bool`: neither NaN nor infinite."
  deftensor isposinf(tensor), doc: "Elementwise `:bool`: `+inf`."
  deftensor isneginf(tensor), doc: "Elementwise `:bool`: `-inf`."

  deftensor nan_to_num(tensor, nan),
    doc: "NaN replaced by `nan`, infinities by the type's largest / lowest finite value."

  deftensor nan_to_num(tensor, nan, posinf, neginf),
    doc: "NaN, `+inf` and `-inf` replaced by the given numbers (cast to the tensor's type)."

  deftensor square(tensor), doc: "Elementwise `a * a`."
  deftensor reciprocal(tensor), doc: "Elementwise `1 / a`; integers give `{:f, 32}`."

  defdevice linspace(start, stop, num, type, device),
    doc: "`num` evenly spaced values from `start` to `stop`, both included."

  defdevice tri(n, m, k, type, device),
    doc: "An `n` x `m` tensor with ones where `column - row <= k`, zeros elsewhere."

  deftensor tril(tensor, k), doc: "Zeros above diagonal `k` of the last two axes."
  deftensor triu(tensor, k), doc: "Zeros below diagonal `k` of the last two axes."

  deftensor diagonal(tensor, offset, axis1, axis2),
    doc: "The diagonal `offset` of the matrices in `axis1`, `axis2`, as a new last axis (a view)."

  deftensor trace(tensor, offset, axis1, axis2), doc: "The sum of `diagonal/4`."

  deftensor flip(tensor, axes),
    doc: "The tensor reversed along `axes` (`nil` or `[]`: all); a view."

  deftensor roll(tensor, shifts, axes),
    doc: """
    Each of `axes` rolled by its entry of `shifts` (toward higher indices);
    `axes` `nil`: the flattened tensor rolled by the single shift.
    """

  deftensor tile(tensor, reps),
    doc: "numpy's `tile`: the tensor repeated `reps[i]` times along axis `i`."

  deftensor repeat(tensor, repeats),
    doc: "Each element of the flattened tensor repeated `repeats` times."

  deftensor repeat(tensor, repeats, axis),
    doc: "Each element repeated `repeats` times along `axis`."

  deftensor flatten(tensor, start_axis, end_axis),
    doc: "Axes `start_axis..end_axis` (inclusive) merged into one."

  deftensor moveaxis(tensor, source, destination), doc: "Axis `source` moved to `destination`."
  deftensor swapaxes(tensor, axis1, axis2), doc: "Axes `axis1` and `axis2` exchanged."

  @doc "`num_splits` equal parts of `tensor` along `axis` (a list of tensors)."
  @spec split(tensor_ref(), pos_integer(), integer()) :: [tensor_ref()]
  def split(tensor, num_splits, axis), do: call!(:split, [tensor, num_splits, axis])

  @doc "The parts of `tensor` along `axis` cut at `indices` (`length(indices) + 1` tensors)."
  @spec split_at(tensor_ref(), [integer()], integer()) :: [tensor_ref()]
  def split_at(tensor, indices, axis), do: call!(:split_at, [tensor, indices, axis])

  deftensor outer(tensor_a, tensor_b), doc: "The outer product of the flattened tensors."

  deftensor put_along_axis(tensor, tensor_indices, tensor_values),
    doc: "A copy of the flattened-indexed `tensor` with `values` written at `indices`."

  deftensor put_along_axis(tensor, tensor_indices, tensor_values, axis),
    doc: "A copy of `tensor` with `values` written at `indices` along `axis` (numpy's)."

  deftensor topk(tensor, k), doc: "The `k` largest elements of the flattened tensor, ascending."
  deftensor topk(tensor, k, axis), doc: "The `k` largest elements along `axis`, ascending."

  deftensor partition(tensor, kth, axis),
    doc: "The tensor arranged along `axis` with its `kth` element in sorted place."

  deftensor argpartition(tensor, kth, axis),
    doc: "The indices (`{:u, 32}`) that `partition/3` would arrange."

  deftensor addmm(tensor_c, tensor_a, tensor_b, alpha, beta),
    doc: "`alpha * (a @ b) + beta * c`."

  ## Fused transformer kernels (include/emlx/fast.h, c_src/nif_fast.c)
  #
  # One lazy node each, run by a single-pass kernel in f32 (f16 / bf16 / f32
  # tensors; others raise). With `config :emlx, detect_non_finites: true`
  # each result is checked for NaN / Inf.

  @doc """
  Fused RMS normalisation over the last axis (`mlx::fast::rms_norm`):
  `x * rsqrt(mean(x^2) + eps) * weight`.

  `weight` is `{hidden}` (the last axis of `x`) or `nil` (no scale). The
  result has `x`'s shape and the promotion of `x`'s and `weight`'s types
  (MLX's rule). Prefer `EMLX.Fast.rms_norm/3` inside `defn`.
  """
  @spec fast_rms_norm(tensor_ref(), tensor_ref() | nil, number()) :: tensor_ref()
  def fast_rms_norm(x, weight, eps),
    do: call_finite!(:fast_rms_norm, [x, weight, eps])

  @doc """
  Fused layer normalisation over the last axis (`mlx::fast::layer_norm`):
  `(x - mean) * rsqrt(var + eps) * weight + bias`, with the biased variance
  (divided by `n`, as MLX).

  - `x`      — input tensor; normalised over the last axis.
  - `weight` — `{hidden}` scale vector (gamma), or `nil`.
  - `bias`   — `{hidden}` bias vector (beta), or `nil`.
  - `eps`    — numerical stability constant (e.g. `1.0e-5`).

  Prefer `EMLX.Fast.layer_norm/4` inside `defn`.
  """
  @spec fast_layer_norm(tensor_ref(), tensor_ref() | nil, tensor_ref() | nil, number()) ::
          tensor_ref()
  def fast_layer_norm(x, weight, bias, eps),
    do: call_finite!(:fast_layer_norm, [x, weight, bias, eps])

  @doc """
  Fused layer normalisation without bias (`mlx::fast::layer_norm`,
  weight-only variant). Prefer `EMLX.Fast.layer_norm/3` inside `defn`.
  """
  @spec fast_layer_norm_no_bias(tensor_ref(), tensor_ref() | nil, number()) :: tensor_ref()
  def fast_layer_norm_no_bias(x, weight, eps) do
    call_finite!(:fast_layer_norm_no_bias, [x, weight, eps])
  end

  @doc """
  Fused rotary position embedding (`mlx::fast::rope`) with a scalar position
  `offset`.

  - `a`           — input `{B, ..., T, D}`; **`T` is the second-to-last
    axis** — e.g. `{B, T, D}` or, with a heads axis, `{B, H, T, D}`. For the
    heads-not-yet-transposed `{B, T, H, D}` layout use `fast_rope_ids/6` or
    `fast_rope_positions/6`, which take `T` from axis 1.
  - `dims`        — number of feature dims to rotate (even, at most the last
    axis; the rest pass through unchanged)
  - `traditional` — `false` for split-half (Llama, Qwen); `true` for interleaved
  - `base`        — angular frequency base (e.g. 10_000 or 1_000_000)
  - `scale`       — position scale (1.0 unless using NTK-aware scaling)
  - `offset`      — integer token position of row 0 (tokens already cached)

  Prefer `EMLX.Fast.rope/6` inside `defn`.
  """
  @spec fast_rope(tensor_ref(), pos_integer(), boolean(), number(), number(), integer()) ::
          tensor_ref()
  def fast_rope(a, dims, traditional, base, scale, offset) do
    call_finite!(:fast_rope, [a, dims, traditional, base, scale, offset])
  end

  @doc """
  Fused RoPE with a per-batch offset tensor: token `t` of batch `b` is at
  position `offset[b] + t`.

  `a` is `{B, T, ..., D}` (`T` on axis 1, e.g. Bumblebee's `{B, T, H, D}`):
  every head of a token turns by the same angle — never by `position + h`,
  which is what `mlx::fast::rope` does with this layout
  ([elixir-nx/emlx#121](https://github.com/elixir-nx/emlx/issues/121)).
  `offset` is an integer tensor `{B}` (or one element for every batch).

  Prefer `EMLX.Fast.rope_with_positions/6` inside `defn`.
  """
  @spec fast_rope_ids(tensor_ref(), pos_integer(), boolean(), number(), number(), tensor_ref()) ::
          tensor_ref()
  def fast_rope_ids(a, dims, traditional, base, scale, offset) do
    call_finite!(:fast_rope_ids, [a, dims, traditional, base, scale, offset])
  end

  @doc """
  Fused RoPE for arbitrary per-token `position_ids` (no sequential
  assumption).

  - `a`            — input tensor `{B, T, H, D}` (`T` on axis 1; any rank >= 3).
  - `dims`         — number of feature dims to rotate.
  - `traditional`  — `false` for split-half, `true` for interleaved (both supported).
  - `base`         — angular frequency base (e.g. `1_000_000`).
  - `scale`        — position scale.
  - `position_ids` — `{B, T}` integer tensor.
  """
  @spec fast_rope_positions(
          tensor_ref(),
          pos_integer(),
          boolean(),
          number(),
          number(),
          tensor_ref()
        ) :: tensor_ref()
  def fast_rope_positions(a, dims, traditional, base, scale, position_ids) do
    call_finite!(:fast_rope_positions, [a, dims, traditional, base, scale, position_ids])
  end

  @doc """
  Fused RoPE with precomputed frequencies (`mlx::fast::rope`, freqs overload).

  - `a`          — input tensor; shape `{B, T, ..., D}` (`T` on axis 1).
  - `dims`       — number of feature dims to rotate.
  - `traditional`— `false` for split-half (Qwen3/Bumblebee); `true` for interleaved.
  - `scale`      — position scale (typically `1.0` when using precomputed freqs).
  - `offset`     — `{B}` per-batch starting position tensor.
  - `freqs`      — `{dims/2}` tensor. As in MLX, pair `i` turns by
    `position * scale / freqs[i]`: `freqs` holds the reciprocals of the
    inverse frequencies (`base ** (2i / dims)` reproduces `fast_rope_ids/6`).

  Prefer `EMLX.Fast.rope_with_freqs/6` inside `defn`.
  """
  @spec fast_rope_with_freqs(
          tensor_ref(),
          pos_integer(),
          boolean(),
          number(),
          tensor_ref(),
          tensor_ref()
        ) :: tensor_ref()
  def fast_rope_with_freqs(a, dims, traditional, scale, offset, freqs) do
    call_finite!(:fast_rope_with_freqs, [a, dims, traditional, scale, offset, freqs])
  end

  @doc """
  Fused SwiGLU activation: `silu(gate) * up` where `silu(x) = x * sigmoid(x)`.

  - `gate` — gate tensor; silu is applied element-wise.
  - `up`   — up-projection tensor; same shape and type as `gate`.

  Output has the same shape and dtype as `gate`. Prefer `EMLX.Fast.swiglu/2`
  inside `defn`.
  """
  @spec fast_swiglu(tensor_ref(), tensor_ref()) :: tensor_ref()
  def fast_swiglu(gate, up),
    do: call_finite!(:fast_swiglu, [gate, up])

  ## Metadata

  defvalue shape(tensor), returns: tuple(), doc: "The shape, as a tuple."

  defvalue scalar_type(tensor),
    returns: {atom(), pos_integer()} | :bool,
    doc: "The type as an Nx-style tuple (`{:f, 32}`, `{:bf, 16}`, `{:c, 64}`, ...) or `:bool`."

  @doc """
  Drops the tensor's data now instead of at garbage collection. Returns `:ok`,
  or `:already_deallocated` when it was already dropped; any other use of the
  tensor afterwards raises `EMLX.NIFError`.
  """
  @spec deallocate(tensor_ref()) :: :ok | :already_deallocated
  def deallocate(tensor) do
    case EMLX.NIF.deallocate(tensor) do
      {:error, message} -> raise EMLX.NIFError, message
      result -> result
    end
  end

  ## Computing (worker-routed)

  defeval eval(tensor),
    returns: :ok,
    doc: """
    Evaluates a (possibly lazy) tensor by routing the work through an
    `EMLX.CommandQueue` and waits for it. The queue comes from
    `resolve_worker/1`: the one bound with `EMLX.CommandQueue.with_queue/2`,
    else the application default for the tensor's device (see
    `EMLX.Application`).
    """

  defeval item(tensor),
    returns: number() | atom() | tuple(),
    post: :item_value,
    doc: """
    Returns the value of a one-element tensor as a number (integers for
    integer and `:bool` types; `:nan`, `:infinity` and `:neg_infinity` for
    non-finite floats; a `Complex` struct, or `{re, im}` without the `complex`
    package, for `{:c, 64}`). Worker-routed like `eval/1`.
    """

  defeval to_blob(tensor),
    returns: binary(),
    doc: """
    The tensor's elements as a native-endian, row-major binary. Evaluates on
    the worker first; contiguous data is returned without a copy.
    """

  defeval to_blob(tensor, limit),
    returns: binary(),
    doc: "Like `to_blob/1`, but only the first `limit` elements."

  defeval strides(tensor),
    returns: tuple(),
    doc: """
    The strides, in elements, as a tuple. Evaluates the tensor first, so views
    report their real strides.
    """

  defeval tensor_data_ptr(tensor),
    returns: {non_neg_integer(), non_neg_integer()},
    doc: """
    Returns `{address, byte_size}` of the tensor's row-major data. Evaluates
    the tensor first (a strided view is replaced by a dense copy of the same
    values). The address stays valid while the tensor is alive.
    """

  defeval tensor_to_shm(tensor, permissions),
    returns: {String.t(), non_neg_integer()},
    doc: """
    Copies the tensor's data into a new POSIX shared-memory segment and returns
    `{shm_name, byte_size}`. `permissions` is a Unix mode (e.g. `0o400`). The
    segment persists until `array_from_shm/4` opens it or `shm_unlink/1`.
    """

  @doc """
  Moves a tensor to `device` (`:cpu` or `:gpu`) without deallocating the
  source. A no-op when it is already there.
  """
  @spec to_device(tensor_ref(), device()) :: tensor_ref()
  def to_device(tensor, device) do
    case {tensor, __device__(device)} do
      {{device, ref}, device} when is_tensor(device, ref) -> tensor
      {_, device} -> to_device_job(tensor, device)
    end
  end

  defp to_device_job(tensor, device) do
    EMLX.Compiler.Recorder.needs_data!(:to_device)
    queue = __queue_for__(tensor, :to_device)
    ref = make_ref()

    case EMLX.NIF.to_device(tensor, device, queue, ref) do
      :ok ->
        receive do
          {^ref, {:ok, value}} -> value
          {^ref, {:error, message}} -> raise EMLX.NIFError, message
        end

      {:error, message} ->
        raise EMLX.NIFError, message
    end
  end

  @doc """
  Opens the shared-memory segment `name` written by `tensor_to_shm/2`, copies
  its `byte_size` bytes into a new `:cpu` tensor of `shape` and `type`, and
  unlinks the segment.
  """
  @spec array_from_shm(String.t(), shape(), type(), non_neg_integer()) :: tensor_ref()
  def array_from_shm(name, shape, type, byte_size) do
    unwrap!(EMLX.NIF.array_from_shm(name, shape, type, byte_size))
  end

  @doc """
  A new tensor sharing the memory at `address` (`byte_size` bytes), which
  must be an address `tensor_data_ptr/1` gave out for a tensor that is still
  alive and unchanged (the engine only wraps memory it owns); the result has
  that tensor's type and shape and keeps the memory alive on its own.
  Raises `EMLX.NIFError` for any other address.
  """
  @spec tensor_from_local_ptr(non_neg_integer(), non_neg_integer()) :: tensor_ref()
  def tensor_from_local_ptr(address, byte_size) do
    unwrap!(EMLX.NIF.tensor_from_local_ptr(address, byte_size))
  end

  @doc """
  Unlinks a POSIX shared-memory segment by its name. Safe to call when it was
  already unlinked.
  """
  @spec shm_unlink(String.t()) :: :ok
  def shm_unlink(name), do: unwrap!(EMLX.NIF.shm_unlink(name))

  ## Memory

  @doc """
  Returns a map with current memory usage information.

  Keys:
    * `:active_memory` - bytes currently allocated and in use
    * `:peak_memory` - highest active memory since last reset
    * `:cache_memory` - bytes in the allocator cache (freed but not returned to OS)

  ## Examples

      iex> info = EMLX.memory_info()
      iex> is_integer(info.active_memory) and is_integer(info.peak_memory) and is_integer(info.cache_memory)
      true
  """
  @spec memory_info() :: %{
          active_memory: non_neg_integer(),
          peak_memory: non_neg_integer(),
          cache_memory: non_neg_integer()
        }
  def memory_info, do: unwrap!(EMLX.NIF.memory_info())

  @doc """
  Sets the cache limit in bytes. Returns the previous limit.

  Freed buffers are kept for reuse up to this many bytes; lowering it evicts
  at once. Set to 0 to disable caching entirely.
  """
  @spec set_cache_limit(non_neg_integer()) :: non_neg_integer()
  def set_cache_limit(limit), do: unwrap!(EMLX.NIF.set_cache_limit(limit))

  @doc """
  Sets the memory limit in bytes. Returns the previous limit.

  An evaluation that would take active memory (the buffers tensors hold) past
  this fails with `EMLX.NIFError` instead of exhausting memory, even when a
  cached buffer of the size it needs is free; one that fits evicts cached
  buffers first if active plus cached memory would pass it. Defaults to the
  machine's physical memory.
  """
  @spec set_memory_limit(non_neg_integer()) :: non_neg_integer()
  def set_memory_limit(limit), do: unwrap!(EMLX.NIF.set_memory_limit(limit))

  @doc """
  Clears the memory cache, returning freed buffers to the system. Does not
  affect tensors that are still referenced.
  """
  @spec clear_cache() :: :ok
  def clear_cache, do: unwrap!(EMLX.NIF.clear_cache())

  @doc "Resets the peak memory counter to the current active memory."
  @spec reset_peak_memory() :: :ok
  def reset_peak_memory, do: unwrap!(EMLX.NIF.reset_peak_memory())

  @doc """
  Returns the engine's scheduler counters, for tests and diagnostics.

  Keys:
    * `:nodes_computed` - graph nodes computed since the engine started (a
      fused group counts each node it covers). The count is process-wide:
      the difference across a computation is what it ran only when nothing
      else computes meanwhile. A lazy node shared by several evaluations, in
      one process or many, is computed once.
  """
  @spec eval_stats() :: %{nodes_computed: non_neg_integer()}
  def eval_stats, do: unwrap!(EMLX.NIF.eval_stats())

  ## Metal

  @doc """
  Starts a Metal GPU frame capture into `path`. This engine has no Metal
  backend, so it raises `EMLX.NIFError` saying so (after checking `path`).
  """
  @spec metal_start_capture(String.t()) :: :ok
  def metal_start_capture(path), do: unwrap!(EMLX.NIF.metal_start_capture(path))

  @doc "Stops a Metal GPU frame capture; raises `EMLX.NIFError` (no Metal backend here)."
  @spec metal_stop_capture() :: :ok
  def metal_stop_capture, do: unwrap!(EMLX.NIF.metal_stop_capture())

  ## Bit counting and Nx's f8 / sub-byte types

  deftensor count_leading_zeros(tensor),
    doc: """
    Elementwise number of zero bits above the highest set bit, in the
    tensor's own type (the bit width for 0). Integer types only; signed
    types count over their two's-complement bits, as `Nx.count_leading_zeros/1`:
    in `{:s, 32}`, -1 gives 0 and 0 gives 32. Floats, complex and `:bool`
    raise `EMLX.NIFError`.

        iex> t = EMLX.from_blob(<<0::32-native, 1::32-native, -1::32-signed-native>>, {3}, {:s, 32}, :cpu)
        iex> EMLX.count_leading_zeros(t) |> EMLX.to_blob()
        <<32::32-native, 31::32-native, 0::32-native>>
    """

  deftensor population_count(tensor),
    doc: """
    Elementwise number of set bits, in the tensor's own type. Integer types
    only; signed types count their two's-complement bits, as
    `Nx.population_count/1`: in `{:s, 8}`, -1 gives 8 and -128 gives 1.

        iex> t = EMLX.from_blob(<<-1::8-signed, -128::8-signed, 126>>, {3}, {:s, 8}, :cpu)
        iex> EMLX.population_count(t) |> EMLX.to_blob()
        <<8, 1, 6>>
    """

  ## Attention (c_src/nif_attention.c; engine: emlx/fast_attention.h)
  #
  # One contiguous block for the attention family.

  @doc """
  Flash-attention style SDPA without a mask (`mx.fast.scaled_dot_product_attention`).

  `q` is `{B, N_q, T_q, D}`, `k` and `v` are `{B, N_kv, T_kv, D}`: GQA is
  native (`N_q` a multiple of `N_kv`, query head `n` reads key/value head
  `div(n, N_q / N_kv)`; nothing is tiled). One float dtype for all three
  (`{:f, 32}`, `{:f, 16}` or `{:bf, 16}`; f32 accumulation). `sinks` is an
  optional `{N_q}` tensor of per-head logits that join every softmax
  denominator. The result is `{B, N_q, T_q, D}`.
  """
  @spec fast_sdpa(tensor_ref(), tensor_ref(), tensor_ref(), number(), tensor_ref() | nil) ::
          tensor_ref()
  def fast_sdpa(q, k, v, scale, sinks \\ nil),
    do: call_finite!(:fast_sdpa, [q, k, v, scale, sinks])

  @doc """
  `fast_sdpa/5` with the causal mask aligned bottom-right: query `i` sees keys
  `j <= i + T_kv - T_q`. A query that sees no key (when `T_q > T_kv`) gets
  MLX's answer, the mean of `v` (0 with sinks).
  """
  @spec fast_sdpa_causal(tensor_ref(), tensor_ref(), tensor_ref(), number(), tensor_ref() | nil) ::
          tensor_ref()
  def fast_sdpa_causal(q, k, v, scale, sinks \\ nil),
    do: call_finite!(:fast_sdpa_causal, [q, k, v, scale, sinks])

  @doc """
  `fast_sdpa/5` with a `mask` broadcastable to `{B, N_q, T_q, T_kv}`: boolean
  (`false` hides a key; a row with every key hidden gets the mean of `v`, as
  in MLX) or float (added to the scaled scores; a row that is `-inf`
  everywhere gives 0 rather than MLX's NaN).
  """
  @spec fast_sdpa_masked(
          tensor_ref(),
          tensor_ref(),
          tensor_ref(),
          number(),
          tensor_ref(),
          tensor_ref() | nil
        ) :: tensor_ref()
  def fast_sdpa_masked(q, k, v, scale, mask, sinks \\ nil),
    do: call_finite!(:fast_sdpa_masked, [q, k, v, scale, mask, sinks])

  @doc """
  Causal `fast_sdpa/5` that also hides the keys where the `{B, T_kv}`
  `key_mask` is 0 (padding); any bool, integer or float type, non-zero
  attends. Computed in one pass (no mask tensor is built).
  """
  @spec fast_sdpa_causal_key_masked(
          tensor_ref(),
          tensor_ref(),
          tensor_ref(),
          number(),
          tensor_ref(),
          tensor_ref() | nil
        ) :: tensor_ref()
  def fast_sdpa_causal_key_masked(q, k, v, scale, key_mask, sinks \\ nil),
    do: call_finite!(:fast_sdpa_causal_key_masked, [q, k, v, scale, key_mask, sinks])

  @doc """
  Fused KV-cache update and causal attention over the valid prefix, in the
  Bumblebee layout: `q` `{B, T_q, N_q, D}`, `new_k` / `new_v`
  `{B, T_new, N_kv, D}`, `k_cache` / `v_cache` `{B, T_max, N_kv, D}`. Rows
  `offset ... offset + T_new - 1` of the caches take the new keys and values
  and `q` attends the first `offset + T_new` rows (causal, bottom-right).
  Returns `{attention, updated_k_cache, updated_v_cache}`, the attention
  `{B, T_q, N_q, D}`. The inputs are left as they are: the caches are copied
  unless nothing else holds them (see `kv_cache_sdpa_update/7` for the
  in-place loop).
  """
  @spec kv_cache_attention(
          tensor_ref(),
          tensor_ref(),
          tensor_ref(),
          tensor_ref(),
          tensor_ref(),
          non_neg_integer(),
          number()
        ) :: {tensor_ref(), tensor_ref(), tensor_ref()}
  def kv_cache_attention(q, new_k, new_v, k_cache, v_cache, offset, scale),
    do: call!(:kv_cache_attention, [q, new_k, new_v, k_cache, v_cache, offset, scale])

  @doc """
  `kv_cache_attention/7` that also hides padding: `key_mask` is
  `{B, offset + T_new}`, 1 attends and 0 skips.
  """
  @spec kv_cache_attention_masked(
          tensor_ref(),
          tensor_ref(),
          tensor_ref(),
          tensor_ref(),
          tensor_ref(),
          non_neg_integer(),
          number(),
          tensor_ref()
        ) :: {tensor_ref(), tensor_ref(), tensor_ref()}
  def kv_cache_attention_masked(q, new_k, new_v, k_cache, v_cache, offset, scale, key_mask) do
    unwrap!(
      EMLX.NIF.kv_cache_attention_masked(
        q,
        new_k,
        new_v,
        k_cache,
        v_cache,
        offset,
        scale,
        key_mask
      )
    )
  end

  @doc """
  Fused KV-cache update and causal attention in the MLX layout: `q`
  `{B, N_q, T_q, D}`, `new_k` / `new_v` `{B, N_kv, T_new, D}`, caches
  `{B, N_kv, T_max, D}`. Returns `{attention, updated_k_cache,
  updated_v_cache}`.

  The caches are taken over: `k_cache` and `v_cache` are deallocated by the
  call (using them afterwards raises), so the updated caches reuse their
  buffers in place — a decode loop that threads the returned caches into the
  next step allocates no cache memory.
  """
  @spec kv_cache_sdpa_update(
          tensor_ref(),
          tensor_ref(),
          tensor_ref(),
          tensor_ref(),
          tensor_ref(),
          non_neg_integer(),
          number()
        ) :: {tensor_ref(), tensor_ref(), tensor_ref()}
  def kv_cache_sdpa_update(q, new_k, new_v, k_cache, v_cache, offset, scale),
    do: unwrap!(EMLX.NIF.kv_cache_sdpa_update(q, new_k, new_v, k_cache, v_cache, offset, scale))

  @doc """
  Causal self-attention with an owned KV cache, in the Bumblebee layout of
  `kv_cache_attention/7`. Options: `:scale` (required, usually
  `1 / sqrt(head_dim)`) and `:key_mask` (optional `{B, offset + T_new}`,
  1 attends, 0 is padding). Returns `{attention, updated_key_cache,
  updated_value_cache}` as `{device, ref}` pairs. Bad options raise
  `EMLX.NIFError`, as every argument error here does.
  """
  @spec causal_kv_attention(
          tensor_ref(),
          tensor_ref(),
          tensor_ref(),
          tensor_ref(),
          tensor_ref(),
          non_neg_integer(),
          keyword()
        ) :: {tensor_ref(), tensor_ref(), tensor_ref()}
  def causal_kv_attention(query, new_key, new_value, key_cache, value_cache, offset, opts) do
    {scale, key_mask} = causal_kv_opts(opts)

    causal_kv_attention(
      query,
      new_key,
      new_value,
      key_cache,
      value_cache,
      offset,
      scale,
      key_mask
    )
  end

  @doc """
  `causal_kv_attention/7` with the options as arguments: `scale` a number,
  `key_mask` a tensor or `nil`.
  """
  @spec causal_kv_attention(
          tensor_ref(),
          tensor_ref(),
          tensor_ref(),
          tensor_ref(),
          tensor_ref(),
          non_neg_integer(),
          number(),
          tensor_ref() | nil
        ) :: {tensor_ref(), tensor_ref(), tensor_ref()}
  def causal_kv_attention(
        query,
        new_key,
        new_value,
        key_cache,
        value_cache,
        offset,
        scale,
        key_mask
      ) do
    unwrap!(
      EMLX.NIF.causal_kv_attention(
        query,
        new_key,
        new_value,
        key_cache,
        value_cache,
        offset,
        scale,
        key_mask
      )
    )
  end

  defp causal_kv_opts(opts) do
    unless Keyword.keyword?(opts),
      do:
        raise(
          EMLX.NIFError,
          "causal_kv_attention: opts must be a keyword list, got #{inspect(opts)}"
        )

    case Keyword.keys(opts) -- [:scale, :key_mask] do
      [] -> :ok
      bad -> raise EMLX.NIFError, "causal_kv_attention: unknown options #{inspect(bad)}"
    end

    case Keyword.fetch(opts, :scale) do
      {:ok, s} when is_number(s) ->
        {s, Keyword.get(opts, :key_mask)}

      {:ok, s} ->
        raise EMLX.NIFError, "causal_kv_attention: :scale must be a number, got #{inspect(s)}"

      :error ->
        raise EMLX.NIFError, "causal_kv_attention: the :scale option is required"
    end
  end

  @typedoc """
  An Nx type the engine stores in a wider type: the f8 formats (`{:f, 8}` is
  E5M2, `{:f8_e4m3fn, 8}`) and the sub-byte integers. Short atoms (`:f8`,
  `:f8_e4m3fn`, `:s2`, `:s4`, `:u2`, `:u4`) are accepted too.
  """
  @type nx_packed_type() ::
          {:f, 8} | {:f8_e4m3fn, 8} | {:s, 2} | {:s, 4} | {:u, 2} | {:u, 4} | atom()

  @packed_types %{
    {:f, 8} => {"f8", 8, {:f, 32}},
    :f8 => {"f8", 8, {:f, 32}},
    {:f8_e4m3fn, 8} => {"f8_e4m3fn", 8, {:f, 32}},
    :f8_e4m3fn => {"f8_e4m3fn", 8, {:f, 32}},
    {:s, 2} => {"s2", 2, {:s, 8}},
    :s2 => {"s2", 2, {:s, 8}},
    {:s, 4} => {"s4", 4, {:s, 8}},
    :s4 => {"s4", 4, {:s, 8}},
    {:u, 2} => {"u2", 2, {:u, 8}},
    :u2 => {"u2", 2, {:u, 8}},
    {:u, 4} => {"u4", 4, {:u, 8}},
    :u4 => {"u4", 4, {:u, 8}}
  }

  @doc """
  Whether `type` is one of the Nx types that `from_nx_binary/5` and
  `to_nx_binary/3` convert (`t:nx_packed_type/0`).

      iex> EMLX.nx_packed_type?({:f8_e4m3fn, 8})
      true
      iex> EMLX.nx_packed_type?({:f, 16})
      false
  """
  @spec nx_packed_type?(term()) :: boolean()
  def nx_packed_type?(type), do: Map.has_key?(@packed_types, type)

  @doc """
  The engine type that `from_nx_binary/5` decodes `type` into by default:
  `{:f, 32}` for the f8 formats (every f8 value is exact in it, and encoding
  an f32 result rounds once, from the f32 value, as Nx rounds from its f64
  value), `{:s, 8}` for `{:s, 2}`/`{:s, 4}`, `{:u, 8}` for `{:u, 2}`/`{:u, 4}`.

      iex> EMLX.nx_storage_type({:s, 4})
      {:s, 8}
  """
  @spec nx_storage_type(nx_packed_type()) :: {atom(), pos_integer()}
  def nx_storage_type(type), do: type |> packed_info!(:nx_storage_type) |> elem(2)

  @doc """
  Decodes `bits`, an Nx binary of `shape` in the packed `type` (a bitstring
  of `size * bits` bits, as `Nx.to_binary/1` gives for sub-byte types), into
  a tensor on `device`.

  Options:
    * `:type` — the engine type to decode into (default `nx_storage_type/1`):
      `{:f, 16}`, `{:f, 32}` or `{:f, 64}` for f8; a signed integer type for
      `{:s, 2}`/`{:s, 4}`; any integer type for `{:u, 2}`/`{:u, 4}`.

  Values are exact. A NaN code of an f8 format is decoded as a signalling
  NaN that carries the code, so `to_nx_binary/3` writes the same code back
  while the tensor is only moved (reshaped, sliced, transposed, ...);
  arithmetic turns it into an ordinary NaN, which encodes as Nx's NaN.

      iex> t = EMLX.from_nx_binary(<<0x12, 0xF::4>>, {:s, 4}, {3}, :cpu)
      iex> {EMLX.scalar_type(t), EMLX.to_blob(t)}
      {{:s, 8}, <<1, 2, -1::8-signed>>}
  """
  @spec from_nx_binary(bitstring(), nx_packed_type(), shape(), device(), keyword()) ::
          tensor_ref()
  def from_nx_binary(bits, type, shape, device, opts \\ []) do
    {name, _bits, default} = packed_info!(type, :from_nx_binary)
    storage = option!(opts, :type, default, :from_nx_binary)
    from_nx_blob(pad_to_bytes(bits), shape, name, storage, device)
  end

  @doc """
  The low-level form of `from_nx_binary/5`: decodes `blob`, Nx's packed
  bytes (whole bytes: a sub-byte bitstring padded with zero bits) of `shape`
  in the packed type named `nx_type` (`"f8"`, `"f8_e4m3fn"`, `"s2"`, `"s4"`,
  `"u2"`, `"u4"`), into a tensor of `type` on `device`.

      iex> EMLX.from_nx_blob(<<0x3C>>, {1}, "f8", {:f, 32}, :cpu) |> EMLX.to_blob()
      <<1.0::float-32-native>>
  """
  @spec from_nx_blob(binary(), shape(), String.t(), type(), device()) :: tensor_ref()
  def from_nx_blob(blob, shape, nx_type, type, device) do
    call!(:from_nx_blob, [blob, shape, nx_type, type, __device__(device)])
  end

  @doc """
  The low-level encoder behind `to_nx_binary/3`: `blob` holds row-major
  elements of `type` (as `to_blob/1` returns them); the result is Nx's
  packed bytes for the type named `nx_type` (see `from_nx_blob/5`), whole
  bytes (a sub-byte result is padded with zero bits). `flags` is 0, or 1 to
  write E4M3FN -0.0 as 0x00.

      iex> EMLX.nx_encode(<<1.0::float-32-native, -2.0::float-32-native>>, {:f, 32}, "f8_e4m3fn", 0)
      <<0x38, 0xC0>>
  """
  @spec nx_encode(binary(), type(), String.t(), non_neg_integer()) :: binary()
  def nx_encode(blob, type, nx_type, flags) do
    unwrap!(EMLX.NIF.nx_encode(blob, type, nx_type, flags))
  end

  defp pad_to_bytes(bits) when is_bitstring(bits) do
    pad = rem(8 - rem(bit_size(bits), 8), 8)
    <<bits::bitstring, 0::size(pad)>>
  end

  defp pad_to_bytes(other), do: other

  @doc """
  Encodes the tensor's elements (row-major) as an Nx binary of the packed
  `type`, bit-exactly as `Nx.BinaryBackend` writes them: f8 from any float
  type (E5M2: the high byte of the f16 rounded to nearest even; E4M3FN:
  `Nx.Floating.dump_f8_e4m3fn/1`'s saturating, half-away rounding), the low
  2 or 4 bits of any integer type for the sub-byte types. Sub-byte results
  are bitstrings of `size * bits` bits. Evaluates the tensor on its queue.

  Options:
    * `:negative_zero` — `:signed` (default) writes -0.0 as E4M3FN 0x80, as
      Nx does on OTP 27 and later and as a round trip needs; `:positive`
      writes 0x00, as `Nx.Floating.dump_f8_e4m3fn(-0.0)` does on earlier OTP
      releases (where the pattern `+0.0` also matches `-0.0`).

      iex> t = EMLX.from_blob(<<1::8, -1::8-signed, 9::8>>, {3}, {:s, 8}, :cpu)
      iex> EMLX.to_nx_binary(t, {:s, 4})
      <<0x1F, 0x9::4>>
  """
  @spec to_nx_binary(tensor_ref(), nx_packed_type(), keyword()) :: bitstring()
  def to_nx_binary(tensor, type, opts \\ []) do
    {name, bits, _default} = packed_info!(type, :to_nx_binary)

    flags =
      case option!(opts, :negative_zero, :signed, :to_nx_binary) do
        :signed ->
          0

        :positive ->
          1

        other ->
          raise EMLX.NIFError,
                "to_nx_binary: expected :negative_zero to be :signed or :positive, got: " <>
                  inspect(other)
      end

    blob = to_blob(tensor)
    packed = nx_encode(blob, scalar_type(tensor), name, flags)
    used = (tensor |> shape() |> Tuple.to_list() |> Enum.product()) * bits
    <<out::bitstring-size(used), _::bitstring>> = packed
    out
  end

  defp packed_info!(type, fun) do
    case @packed_types do
      %{^type => info} ->
        info

      _ ->
        raise EMLX.NIFError,
              "#{fun}: expected an Nx f8 or sub-byte type ({:f, 8}, {:f8_e4m3fn, 8}, " <>
                "{:s, 2}, {:s, 4}, {:u, 2}, {:u, 4}), got: #{inspect(type)}"
    end
  end

  defp option!(opts, key, default, fun) do
    if Keyword.keyword?(opts),
      do: Keyword.get(opts, key, default),
      else:
        raise(EMLX.NIFError, "#{fun}: expected a keyword list of options, got: #{inspect(opts)}")
  end

  ## Devices and queues

  @doc """
  Returns the default device.

  Reads `:default_device` from the `:emlx` application environment. When it
  is not set, that is `:gpu` if a GPU backend is available and `:cpu`
  otherwise; when it is set to `:gpu` on a machine without one, this raises
  `EMLX.NIFError`. Override in tests or config via:

      Application.put_env(:emlx, :default_device, :cpu)
  """
  @spec default_device() :: device()
  def default_device do
    case Application.get_env(:emlx, :default_device) do
      nil -> if device_available?(:gpu), do: :gpu, else: :cpu
      {device, index} when is_integer(index) -> configured_device(device)
      device -> configured_device(device)
    end
  end

  defp configured_device(:cpu), do: :cpu

  defp configured_device(:gpu) do
    if device_available?(:gpu) do
      :gpu
    else
      raise EMLX.NIFError,
            "default_device: :gpu is configured (config :emlx, default_device: :gpu) " <>
              "but this EMLX build has no GPU backend available; use :cpu"
    end
  end

  defp configured_device(other) do
    raise ArgumentError,
          "config :emlx, :default_device must be :cpu or :gpu, got: #{inspect(other)}"
  end

  defp device_available?(device), do: unwrap!(EMLX.NIF.device_available(device))

  @doc false
  # Picks the command queue for work on `device` and the device the work runs
  # on, in this order:
  #
  #   1. the queue bound to this process by `EMLX.CommandQueue.with_queue/2`,
  #      when it is on `device`;
  #   2. otherwise the application's default queue for `device`.
  #
  # A bound queue on another device is used only with
  # `config :emlx, cross_device_promotion: true` (and `warn_cross_device: true`
  # logs it); by default the tensor's own device's default queue is used.
  @spec resolve_worker(device()) :: {reference() | nil, device()}
  def resolve_worker(device) do
    case Process.get(:emlx_command_queue) do
      nil -> {EMLX.Application.default_worker(device), device}
      {queue, ^device} -> {queue, device}
      {queue, bound} -> resolve_cross_device(device, queue, bound)
    end
  end

  defp resolve_cross_device(requested, queue, bound) do
    if Application.get_env(:emlx, :cross_device_promotion, false) do
      if Application.get_env(:emlx, :warn_cross_device, false) do
        require Logger

        Logger.warning(
          "[EMLX] cross-device promotion: #{requested} tensor routed to #{bound} queue"
        )
      end

      {queue, bound}
    else
      {EMLX.Application.default_worker(requested), requested}
    end
  end

  @doc false
  # The queue for work on `tensor`. Malformed tensors get the cpu queue, so
  # the native call reports what is wrong with them.
  def __queue_for__({device, _}, name) when device in [:cpu, :gpu] do
    case resolve_worker(device) do
      {nil, device} -> raise EMLX.NIFError, "#{name}: " <> no_queue(device)
      {queue, _device} -> queue
    end
  end

  def __queue_for__(_other, _name), do: EMLX.Application.default_worker(:cpu)

  defp no_queue(device) do
    if List.keymember?(Application.started_applications(), :emlx, 0) do
      "device #{device} has no command queue: it is not available in this build"
    else
      "no command queue for #{device}: the :emlx application is not started"
    end
  end

  @doc false
  def __device__({device, index}) when is_atom(device) and is_integer(index), do: device
  def __device__(device), do: device

  @doc false
  def __scalar__(%{re: re, im: im}), do: {re, im}
  def __scalar__(scalar), do: scalar

  defp item_value({:complex, re, im}) do
    if Code.ensure_loaded?(Complex), do: apply(Complex, :new, [re, im]), else: {re, im}
  end

  defp item_value(value), do: value

  # The hand-written tensor functions' door to the NIF, with the recording
  # hook of the Nx.Defn compiler (see EMLX.Compiler.Recorder).
  defp call!(name, args) do
    apply(EMLX.NIF, name, args) |> unwrap!() |> EMLX.Compiler.Recorder.hook(name, args)
  end

  # call!/2 for the fused kernels, whose results `detect_non_finites` checks.
  defp call_finite!(name, args), do: name |> call!(args) |> EMLX.Debug.check_finite!(name)

  defp unwrap!(:ok), do: :ok
  defp unwrap!({:ok, value}), do: value
  defp unwrap!({:error, message}), do: raise(EMLX.NIFError, message)

  ## Nx.Defn compiler
  #
  # `EMLX` is an `Nx.Defn.Compiler` (EMLX.Compiler has the implementation).

  if Code.ensure_loaded?(Nx.Defn.Compiler) do
    @behaviour Nx.Defn.Compiler

    @doc """
    `Nx.Defn.Compiler` callback: compiles (see `__compile__/4`) and runs once.
    `Nx.Defn.jit/2` calls it on every call; the call site is looked up in
    `EMLX.CompileCache` before anything is traced.
    """
    @impl Nx.Defn.Compiler
    def __jit__(key, vars, fun, args_list, opts),
      do: EMLX.Compiler.__jit__(key, vars, fun, args_list, opts)

    @doc """
    `Nx.Defn.Compiler` callback: traces the defn once, lowers it to an engine
    program (loops and branches included: a `while` runs in the engine, a
    `cond` computes only the branch taken) and returns a closure that only
    replays it. Options: `:device` (`:cpu` or `:gpu`), `:command_queue` (an
    `EMLX.CommandQueue` the program runs on), `:max_concurrency` (for
    `__partitions_options__/1`), `:hooks` (as `Nx.Defn.Evaluator`'s); others
    (such as Bumblebee's `:cache`) are ignored.

    A defn that needs data while it is traced (the backend reads a value),
    or that runs Elixir inside the program (`Nx.runtime_call/4`, a hook
    inside a `while` or a `cond`), runs with `Nx.Defn.Evaluator` on
    `EMLX.Backend` instead. Hooks at the top level run after the program,
    with their values, in the expression's order.
    """
    @impl Nx.Defn.Compiler
    def __compile__(key, vars, fun, opts), do: EMLX.Compiler.__compile__(key, vars, fun, opts)

    @doc """
    `Nx.Defn.Compiler` callback: one option list per partition
    (`:max_concurrency`, default 1), each with a command queue of its own, so
    `Nx.Serving` with `partitions: true` runs batches concurrently.
    """
    @impl Nx.Defn.Compiler
    def __partitions_options__(opts), do: EMLX.Compiler.__partitions_options__(opts)

    @doc "`Nx.Defn.Compiler` callback: `{EMLX.Backend, device: device}`."
    @impl Nx.Defn.Compiler
    def __to_backend__(opts), do: EMLX.Compiler.__to_backend__(opts)
  end
end
