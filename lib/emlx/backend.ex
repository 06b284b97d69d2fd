if Code.ensure_loaded?(Nx) do
  defmodule EMLX.Backend do
    @moduledoc """
    An `Nx.Backend` on the EMLX engine.

        Nx.default_backend(EMLX.Backend)
        Nx.default_backend({EMLX.Backend, device: :cpu})

    Every callback builds engine graph nodes; data leaves the engine only
    where a result must (`Nx.to_binary/1`, `inspect/2`, `Nx.to_pointer/2`).

    ## Options

      * `:device` — `:cpu`, or `:gpu` when the engine was built with a GPU
        backend and one is present (otherwise `:gpu` raises
        `ArgumentError`). Defaults to `EMLX.default_device/0`.

    ## Types

    Every Nx type has Nx's semantics. `{:f, 64}` is a real f64. The sub-byte
    integers (`{:s, 2}`, `{:s, 4}`, `{:u, 2}`, `{:u, 4}`) are stored as 8-bit
    integers and the f8 types (`{:f, 8}` e5m2, `{:f8_e4m3fn, 8}`) as f32;
    after every operation their values are brought back onto their own grid
    (wrapping at the bit width; f8 rounded once from the f32 result by the
    engine's codecs, as `Nx.Floating` writes Nx's value, which evaluates the
    result), and they round-trip bit-exactly through `Nx.from_binary/3` and
    `Nx.to_binary/1`. `{:c, 128}` is a real complex128 (a pair of f64).
    `Nx.indexed_add/4` on the floats narrower than f64 (and c64) sums in f64
    (c128) and rounds once, as `Nx.BinaryBackend` does, so duplicate indices
    give Nx's values to the last bit; it holds a wide copy of the target
    while it runs.

    ## Out-of-bounds indices

    `Nx.gather/3`, `Nx.take/3`, `Nx.take_along_axis/3`, `Nx.indexed_add/4`
    and `Nx.indexed_put/4` clamp every index into `[0, size - 1]` of its axis
    before the engine sees it, as EXLA does: an out-of-bounds index reads (or
    writes) the nearest edge element, and nothing is ever read or written
    outside a buffer. With `config :emlx, enable_bounds_check: true` (see
    `EMLX`) they raise `ArgumentError` instead.

    ## Pointers

    `Nx.to_pointer(t, mode: :local)` gives the address of `t`'s evaluated,
    contiguous buffer, valid while `t` is alive; `Nx.from_pointer/5` takes back
    such an address (a new tensor sharing the memory, which then keeps it
    alive on its own) and refuses any other — EMLX wraps only memory it owns.
    Once `t` is garbage-collected or deallocated its address is forgotten;
    handing out a pointer keeps nothing alive. `mode: :ipc` copies the data
    into a POSIX shared-memory segment that another OS process can open.

    ## Telemetry

    With `:telemetry` present (it comes with Nx), two spans are emitted:

      * `[:emlx, :eval, :start | :stop | :exception]` — evaluating a tensor's
        graph, in `Nx.to_binary/1`, `inspect/2` and `Nx.to_pointer/2`.
        Metadata: `%{device: atom, shape: tuple, type: Nx.Type.t()}`.
      * `[:emlx, :to_binary, :start | :stop | :exception]` — `Nx.to_binary/1`
        as a whole (evaluation and copy out). Metadata as above plus
        `:limit` (elements asked for, `nil` for all).

    Measurements are `:telemetry.span/3`'s: `:system_time` and
    `:monotonic_time` at start, `:duration` (native time units) at stop.

    ## Function-based reductions

    `Nx.reduce/4` and `Nx.window_reduce/5` trace their function with
    `Nx.Defn.Expr`. When it is built from element-wise operations only, it is
    run on the engine as a tree reduction (pairwise over the reduced
    elements, earlier elements on the right, in `log2(n)` vectorized steps;
    Nx requires the function to be associative). Otherwise the reduction
    falls back to a scalar loop (`Nx.BinaryBackend`'s) on a copy of the data.
    """

    @behaviour Nx.Backend

    @enforce_keys [:ref]
    # quantization: an EMLX.Quantization.Config when ref holds packed
    # weights (EMLX.quantize/2), else nil.
    defstruct [:ref, quantization: nil]

    alias Nx.Tensor, as: T
    alias EMLX.Backend, as: B
    alias EMLX.Backend.Types

    require EMLX.Debug
    import Bitwise, only: [<<<: 2]

    ## Conversion

    @doc """
    The engine tensor (`{device, ref}`) of an Nx tensor; a tensor on another
    backend is copied to `EMLX.Backend` first. Sub-byte and f8 tensors give
    their wider storage (see "Types").
    """
    def from_nx(%T{data: %B{quantization: %EMLX.Quantization.Config{}}}) do
      raise ArgumentError,
            "a quantized tensor (EMLX.quantize/2) can only be the right operand of Nx.dot; " <>
              "call EMLX.dequantize/1 first"
    end

    def from_nx(%T{data: %B{ref: ref}}), do: ref
    def from_nx(%T{} = tensor), do: tensor |> Nx.backend_copy(B) |> from_nx()

    @doc """
    An `Nx.Tensor` on `EMLX.Backend` for an engine tensor, with its shape and
    type (`:bool` becomes `{:u, 8}`).
    """
    def to_nx({device, ref} = tensor) when is_atom(device) and is_reference(ref) do
      type =
        case EMLX.scalar_type(tensor) do
          :bool -> {:u, 8}
          type -> type
        end

      shape = EMLX.shape(tensor)
      names = List.duplicate(nil, tuple_size(shape))
      to_nx(tensor, %T{type: type, shape: shape, names: names, data: nil})
    end

    @doc false
    # `ref` as the data of `template` (converted to its type's storage).
    def to_nx(ref, %T{type: type} = template) do
      %{template | data: %B{ref: Types.fit(ref, type)}}
    end

    # The tensor's engine ref in `type`'s storage.
    defp ref_as(%T{type: type} = t, type), do: from_nx(t)

    defp ref_as(%T{} = t, type) do
      storage = Types.storage(type)

      case Types.storage(t.type) do
        ^storage -> from_nx(t)
        _ -> EMLX.astype(from_nx(t), storage)
      end
    end

    defp device_of(%T{data: %B{ref: {device, _}}}), do: device
    defp device_of(_), do: EMLX.default_device()

    ## Backend options

    @impl true
    def init(opts) do
      opts = Keyword.validate!(opts, [:device])

      case Keyword.fetch(opts, :device) do
        {:ok, device} -> check_device!(device)
        :error -> :ok
      end

      opts
    end

    defp check_device!(:cpu), do: :cpu

    defp check_device!(:gpu) do
      if gpu_available?() do
        :gpu
      else
        raise ArgumentError,
              "EMLX.Backend: device: :gpu was requested, but this EMLX build has no " <>
                "GPU backend available; use device: :cpu"
      end
    end

    defp check_device!({device, index}) when is_integer(index), do: check_device!(device)

    defp check_device!(other) do
      raise ArgumentError,
            "EMLX.Backend: :device must be :cpu or :gpu, got: #{Kernel.inspect(other)}"
    end

    defp gpu_available? do
      case EMLX.NIF.device_available(:gpu) do
        {:ok, available} -> available
        available when is_boolean(available) -> available
        _ -> false
      end
    end

    defp device_option(opts) do
      case opts[:device] do
        nil -> EMLX.default_device()
        device -> device |> check_device!() |> EMLX.__device__()
      end
    end

    ## Creation

    @impl true
    def constant(%T{shape: shape, type: type} = out, scalar, opts) do
      scalar
      |> scalar_arg()
      |> EMLX.full(shape, Types.storage(type), device_option(opts))
      |> to_nx(out)
    end

    defp scalar_arg(%Complex{re: re, im: im}), do: {re, im}
    defp scalar_arg(scalar), do: scalar

    @impl true
    def from_binary(%T{shape: shape, type: type} = out, binary, opts) do
      binary |> Types.from_binary(shape, type, device_option(opts)) |> to_nx(out)
    end

    @impl true
    def eye(%T{shape: shape, type: type} = out, opts) do
      rank = tuple_size(shape)
      m = elem(shape, rank - 2)
      n = elem(shape, rank - 1)

      EMLX.eye(m, n, Types.storage(type), device_option(opts))
      |> EMLX.broadcast_to(shape)
      |> to_nx(out)
    end

    @impl true
    def iota(%T{shape: shape, type: type} = out, axis, opts) do
      device = device_option(opts)
      storage = Types.storage(type)

      case axis do
        nil ->
          size = Nx.size(shape)

          EMLX.arange(0, size, 1, {:s, 64}, device)
          |> EMLX.astype(storage)
          |> EMLX.reshape(shape)

        axis ->
          dim = elem(shape, axis)

          line =
            for {_, i} <- Enum.with_index(Tuple.to_list(shape)),
                do: if(i == axis, do: dim, else: 1)

          EMLX.arange(0, dim, 1, {:s, 64}, device)
          |> EMLX.astype(storage)
          |> EMLX.reshape(List.to_tuple(line))
          |> EMLX.broadcast_to(shape)
      end
      |> to_nx(out)
    end

    ## Leaving the backend

    @impl true
    def to_batched(%T{shape: out_shape} = out, %T{shape: shape} = t, opts) do
      leftover = opts[:leftover]
      batch = elem(out_shape, 0)
      total = elem(shape, 0)
      full_batches = div(total, batch)
      remainder = rem(total, batch)
      ref = from_nx(t)

      ref =
        if remainder != 0 and leftover == :repeat do
          EMLX.concatenate([ref, slice_axis0(ref, shape, 0, batch - remainder)], 0)
        else
          ref
        end

      count = if remainder != 0 and leftover == :repeat, do: full_batches + 1, else: full_batches

      for i <- 0..(count - 1)//1 do
        ref |> slice_axis0(shape, i * batch, batch) |> to_nx(out)
      end
    end

    defp slice_axis0(ref, shape, start, length) do
      rank = tuple_size(shape)
      starts = [start | List.duplicate(0, rank - 1)]
      stops = [start + length | tl(Tuple.to_list(shape))]
      EMLX.slice(ref, starts, stops, List.duplicate(1, rank))
    end

    @impl true
    def to_binary(%T{type: type, shape: shape} = t, limit) do
      ref = from_nx(t)
      # The data's own size: a vectorized tensor's shape leaves out its
      # vectorized axes.
      limit = if limit >= Tuple.product(EMLX.shape(ref)), do: nil, else: limit
      meta = %{device: elem(ref, 0), shape: shape, type: type, limit: limit}

      span([:emlx, :to_binary], meta, fn ->
        evaluate(ref, t)
        Types.to_binary(ref, type, limit)
      end)
    end

    defp evaluate({device, _} = ref, %T{shape: shape, type: type}) do
      span([:emlx, :eval], %{device: device, shape: shape, type: type}, fn -> EMLX.eval(ref) end)
    end

    if Code.ensure_loaded?(:telemetry) do
      defp span(event, meta, fun) do
        :telemetry.span(event, meta, fn -> {fun.(), meta} end)
      end
    else
      defp span(_event, _meta, fun), do: fun.()
    end

    @impl true
    def inspect(%T{shape: shape} = t, inspect_opts) do
      size = Nx.size(shape)

      limit =
        case inspect_opts.limit do
          :infinity -> size
          limit -> min(size, limit + 1)
        end

      binary = to_binary(t, limit)
      doc = Nx.Backend.inspect(t, binary, inspect_opts)

      case device_of(t) do
        :cpu -> doc
        device -> Inspect.Algebra.concat([doc, Inspect.Algebra.line(), "EMLX.Backend<#{device}>"])
      end
    end

    @impl true
    def backend_deallocate(%T{} = t) do
      EMLX.deallocate(from_nx(t))
    rescue
      EMLX.NIFError -> :already_deallocated
    end

    @impl true
    def backend_transfer(%T{} = t, B, opts) do
      device = device_option(opts)

      case from_nx(t) do
        {^device, _} -> t
        ref -> to_nx(EMLX.to_device(ref, device), t)
      end
    end

    def backend_transfer(%T{} = t, backend, opts) do
      backend_copy(t, backend, opts)
    after
      backend_deallocate(t)
    end

    @impl true
    def backend_copy(%T{} = t, B, opts) do
      device = device_option(opts)

      case from_nx(t) do
        {^device, _} = ref -> to_nx(EMLX.copy(ref), t)
        ref -> to_nx(EMLX.to_device(ref, device), t)
      end
    end

    def backend_copy(%T{} = t, backend, opts) do
      backend.from_binary(t, to_binary(t, Nx.size(t.shape)), opts)
    end

    ## Pointers

    @impl true
    def to_pointer(%T{type: type} = t, opts) do
      opts = Keyword.validate!(opts, mode: :local, permissions: 0o600)

      if Types.special?(type) do
        raise ArgumentError,
              "Nx.to_pointer/2: EMLX stores #{Nx.Type.to_string(type)} wider than Nx's " <>
                "packed layout, so its memory cannot be shared as #{Nx.Type.to_string(type)}; " <>
                "convert with Nx.as_type/2 first"
      end

      ref = from_nx(t)
      evaluate(ref, t)

      case opts[:mode] do
        :local ->
          {address, size} = EMLX.tensor_data_ptr(ref)
          %Nx.Pointer{kind: :local, address: address, data_size: size}

        :ipc ->
          {name, size} = EMLX.tensor_to_shm(ref, opts[:permissions])
          %Nx.Pointer{kind: :ipc, handle: name, data_size: size}

        other ->
          raise ArgumentError,
                "Nx.to_pointer/2: :mode must be :local or :ipc, got: #{Kernel.inspect(other)}"
      end
    end

    @impl true
    def from_pointer(pointer, type, shape, backend_opts, opts) do
      backend_opts = init(backend_opts)
      storage = Types.storage(type)
      names = opts[:names] || List.duplicate(nil, tuple_size(shape))
      template = %T{type: type, shape: shape, names: names, data: nil}

      if Types.special?(type) do
        raise ArgumentError,
              "Nx.from_pointer/5: EMLX cannot read #{Nx.Type.to_string(type)} memory in Nx's packed layout"
      end

      ref =
        case pointer do
          %Nx.Pointer{kind: :ipc, handle: name, data_size: size} when is_binary(name) ->
            EMLX.array_from_shm(name, shape, storage, size)

          %Nx.Pointer{kind: :local, address: address, data_size: size} when is_integer(address) ->
            EMLX.Backend.Pointers.fetch!(address, size, storage, shape)

          other ->
            raise ArgumentError,
                  "Nx.from_pointer/5: expected an %Nx.Pointer{} of kind :local or :ipc, got: " <>
                    Kernel.inspect(other)
        end

      ref
      |> EMLX.to_device(device_option(backend_opts))
      |> to_nx(template)
    end

    ## Shape

    @impl true
    def as_type(%T{type: type} = out, %T{} = t) do
      ref = from_nx(t)

      case {t.type, type} do
        {{:c, _}, {kind, _}} when kind != :c -> EMLX.real(ref)
        _ -> ref
      end
      |> to_nx(out)
    end

    @impl true
    def bitcast(%T{type: type} = out, %T{} = t) do
      ref = from_nx(t)

      cond do
        Types.special?(type) or Types.special?(t.type) ->
          # Through Nx's own bit layout: the values' codes, read as `type`.
          ref
          |> Types.to_binary(t.type, nil)
          |> Types.from_binary(out.shape, type, elem(ref, 0))

        true ->
          EMLX.view(ref, type)
      end
      |> to_nx(out)
    end

    @impl true
    def reshape(%T{shape: shape} = out, %T{} = t),
      do: t |> from_nx() |> EMLX.reshape(shape) |> to_nx(out)

    @impl true
    def squeeze(%T{shape: shape} = out, %T{} = t, _axes),
      do: t |> from_nx() |> EMLX.reshape(shape) |> to_nx(out)

    @impl true
    def broadcast(%T{shape: shape} = out, %T{} = t, shape, axes) do
      placed = Enum.zip(axes, Tuple.to_list(t.shape)) |> Map.new()
      inter = for i <- 0..(tuple_size(shape) - 1)//1, do: Map.get(placed, i, 1)

      t
      |> ref_as(out.type)
      |> EMLX.reshape(List.to_tuple(inter))
      |> EMLX.broadcast_to(shape)
      |> to_nx(out)
    end

    @impl true
    def transpose(out, %T{} = t, axes), do: t |> from_nx() |> EMLX.transpose(axes) |> to_nx(out)

    @impl true
    def pad(out, %T{} = t, %T{} = pad_value, config) do
      ref = ref_as(t, out.type)
      value = ref_as(pad_value, out.type)

      ref =
        config
        |> Enum.with_index()
        |> Enum.reduce(ref, fn
          {{_lo, _hi, 0}, _axis}, ref -> ref
          {{_lo, _hi, interior}, axis}, ref -> interior_pad(ref, axis, interior, value)
        end)

      {axes, lo, hi} =
        config
        |> Enum.with_index()
        |> Enum.reject(fn {{lo, hi, _}, _} -> lo == 0 and hi == 0 end)
        |> Enum.map(fn {{lo, hi, _}, axis} -> {axis, lo, hi} end)
        |> unzip3()

      case axes do
        [] -> ref
        _ -> EMLX.pad(ref, axes, lo, hi, value)
      end
      |> to_nx(out)
    end

    defp unzip3(triples) do
      {Enum.map(triples, &elem(&1, 0)), Enum.map(triples, &elem(&1, 1)),
       Enum.map(triples, &elem(&1, 2))}
    end

    # `interior` copies of `value` between neighbours along `axis`: each
    # element gets a new axis of 1 + interior entries (itself, then fill);
    # folding it back and dropping the trailing fill leaves n + (n-1) * interior.
    defp interior_pad(ref, axis, interior, value) do
      shape = EMLX.shape(ref)
      n = elem(shape, axis)

      if n <= 1 do
        ref
      else
        list = Tuple.to_list(shape)
        {before, [^n | rest]} = Enum.split(list, axis)
        one = List.to_tuple(before ++ [n, 1] ++ rest)
        fill_shape = List.to_tuple(before ++ [n, interior] ++ rest)

        fill =
          EMLX.broadcast_to(EMLX.reshape(value, List.duplicate(1, length(list) + 1)), fill_shape)

        joined = EMLX.concatenate([EMLX.reshape(ref, one), fill], axis + 1)
        flat = EMLX.reshape(joined, List.to_tuple(before ++ [n * (1 + interior)] ++ rest))
        keep = n + (n - 1) * interior
        rank = length(list)
        starts = List.duplicate(0, rank)
        stops = List.to_tuple(before ++ [keep] ++ rest) |> Tuple.to_list()
        EMLX.slice(flat, starts, stops, List.duplicate(1, rank))
      end
    end

    @impl true
    def reverse(out, %T{} = t, axes),
      do: t |> from_nx() |> reverse_axes(t.shape, axes) |> to_nx(out)

    defp reverse_axes(ref, _shape, []), do: ref

    defp reverse_axes(ref, shape, axes) do
      rank = tuple_size(shape)
      dims = Tuple.to_list(shape)

      {starts, stops, strides} =
        dims
        |> Enum.with_index()
        |> Enum.map(fn {dim, i} ->
          if i in axes, do: {dim - 1, -dim - 1, -1}, else: {0, dim, 1}
        end)
        |> unzip3()

      _ = rank
      EMLX.slice(ref, starts, stops, strides)
    end

    ## Element-wise binary

    arith = [:add, :subtract, :multiply, :pow, :quotient]
    arith = arith ++ [:bitwise_and, :bitwise_or, :bitwise_xor, :left_shift, :right_shift]

    for op <- arith do
      @impl true
      def unquote(op)(out, l, r) do
        EMLX.unquote(op)(ref_as(l, out.type), ref_as(r, out.type)) |> to_nx(out)
      end
    end

    # In f64 for narrower floats, so the result is correctly rounded.
    @impl true
    def atan2(%T{type: {:f, bits}} = out, l, r) when bits < 64 do
      EMLX.atan2(ref_as(l, {:f, 64}), ref_as(r, {:f, 64})) |> to_nx(out)
    end

    def atan2(out, l, r), do: EMLX.atan2(ref_as(l, out.type), ref_as(r, out.type)) |> to_nx(out)

    @impl true
    def divide(out, l, r), do: EMLX.divide(ref_as(l, out.type), ref_as(r, out.type)) |> to_nx(out)

    @impl true
    def remainder(out, l, r),
      do: EMLX.remainder_trunc(ref_as(l, out.type), ref_as(r, out.type)) |> to_nx(out)

    @impl true
    def min(out, l, r), do: EMLX.minimum(ref_as(l, out.type), ref_as(r, out.type)) |> to_nx(out)

    @impl true
    def max(out, l, r), do: EMLX.maximum(ref_as(l, out.type), ref_as(r, out.type)) |> to_nx(out)

    for op <- [:equal, :not_equal, :greater, :less, :greater_equal, :less_equal] do
      @impl true
      def unquote(op)(out, l, r) do
        type = Nx.Type.merge(l.type, r.type)
        EMLX.unquote(op)(ref_as(l, type), ref_as(r, type)) |> to_nx(out)
      end
    end

    for op <- [:logical_and, :logical_or, :logical_xor] do
      @impl true
      def unquote(op)(out, l, r), do: EMLX.unquote(op)(from_nx(l), from_nx(r)) |> to_nx(out)
    end

    ## Element-wise unary

    direct =
      [:exp, :log, :cos, :sin, :tan, :cosh, :sinh, :tanh] ++
        [:acos, :asin, :atan, :acosh, :asinh, :atanh, :sqrt, :rsqrt, :erf] ++
        [:bitwise_not, :ceil, :floor, :negate, :sign, :conjugate]

    for op <- direct do
      @impl true
      def unquote(op)(out, t), do: t |> ref_as(out.type) |> EMLX.unquote(op)() |> to_nx(out)
    end

    @impl true
    def round(out, t), do: t |> ref_as(out.type) |> EMLX.round_half_away() |> to_nx(out)

    # Complex in, real out: the engine gives the real type itself.
    for op <- [:abs, :real, :imag] do
      @impl true
      def unquote(op)(out, %T{type: {:c, _}} = t),
        do: t |> from_nx() |> EMLX.unquote(op)() |> to_nx(out)

      def unquote(op)(out, t), do: t |> ref_as(out.type) |> EMLX.unquote(op)() |> to_nx(out)
    end

    for op <- [:is_nan, :is_infinity] do
      @impl true
      def unquote(op)(out, t), do: t |> from_nx() |> EMLX.unquote(op)() |> to_nx(out)
    end

    # cbrt and erfc of narrower floats are computed in f64 and rounded once,
    # so they are correctly rounded where 1 - erf(x) in f32 would cancel.
    @impl true
    def cbrt(out, t) do
      in_wide(t, out, fn {device, _} = x ->
        third = EMLX.scalar_tensor(1 / 3, {:f, 64}, device)
        EMLX.multiply(EMLX.sign(x), EMLX.pow(EMLX.abs(x), third))
      end)
    end

    # Nx.BinaryBackend defines log1p as log(x + 1) and expm1 as exp(x) - 1,
    # in f64. Where those formulas are as accurate as the dedicated
    # functions (x >= 1 or x <= -0.5 for log1p: 1 + x rounds by at most
    # 2^-53 relative, or is exact; |x| >= 1 for expm1: exp(x) - 1 loses at
    # most one bit), f64 uses them and gives Nx's bits; near 0, where they
    # would cancel, it keeps the engine's log1p/expm1 (libm's). Other types
    # use the engine's function directly.
    @impl true
    def log1p(%T{type: {:f, 64}} = out, t) do
      {device, _} = x = ref_as(t, {:f, 64})
      one = EMLX.scalar_tensor(1.0, {:f, 64}, device)
      minus_half = EMLX.scalar_tensor(-0.5, {:f, 64}, device)
      nx_form = EMLX.logical_or(EMLX.greater_equal(x, one), EMLX.less_equal(x, minus_half))
      EMLX.where(nx_form, EMLX.log(EMLX.add(x, one)), EMLX.log1p(x)) |> to_nx(out)
    end

    def log1p(out, t), do: t |> ref_as(out.type) |> EMLX.log1p() |> to_nx(out)

    @impl true
    def expm1(%T{type: {:f, 64}} = out, t) do
      {device, _} = x = ref_as(t, {:f, 64})
      one = EMLX.scalar_tensor(1.0, {:f, 64}, device)
      nx_form = EMLX.greater_equal(EMLX.abs(x), one)
      EMLX.where(nx_form, EMLX.subtract(EMLX.exp(x), one), EMLX.expm1(x)) |> to_nx(out)
    end

    # The engine follows MLX, whose expm1 and sigmoid refuse complex input;
    # Nx defines them for complex as exp(z) - 1 and 1 / (1 + exp(-z)).
    def expm1(%T{type: {:c, _}} = out, t) do
      {device, _} = z = ref_as(t, out.type)
      one = EMLX.scalar_tensor(1.0, out.type, device)
      z |> EMLX.exp() |> EMLX.subtract(one) |> to_nx(out)
    end

    def expm1(out, t), do: t |> ref_as(out.type) |> EMLX.expm1() |> to_nx(out)

    @impl true
    def sigmoid(%T{type: {:c, _}} = out, t) do
      {device, _} = z = ref_as(t, out.type)
      one = EMLX.scalar_tensor(1.0, out.type, device)
      EMLX.divide(one, EMLX.add(one, EMLX.exp(EMLX.negate(z)))) |> to_nx(out)
    end

    def sigmoid(out, t), do: t |> ref_as(out.type) |> EMLX.sigmoid() |> to_nx(out)

    # erfc is the engine's (libm's in f64), in f64 and rounded once, as
    # Nx.BinaryBackend rounds :math.erfc.
    @impl true
    def erfc(out, t), do: in_wide(t, out, &EMLX.erfc/1)

    # Nx's erf_inv (Complex.erf_inv) is Giles' single-precision polynomial
    # evaluated in f64 (relative error ~1e-8, so erf_inv(0.1) is
    # 0.08885598780483887, not the f64 value 0.0888559904942577); Nx's
    # result is that algorithm, step by step, in f64, rounded once.
    @central [2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087] ++
               [-0.00125372503, -0.00417768164, 0.246640727, 1.50140941]
    @tail [-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773] ++
            [-0.0076224613, 0.00943887047, 1.00167406, 2.83297682]

    @impl true
    def erf_inv(out, t) do
      in_wide(t, out, fn {device, _} = z ->
        c = &EMLX.scalar_tensor(&1, {:f, 64}, device)
        one = c.(1.0)
        # w = -log((1 - z) * (1 + z))
        w = EMLX.negate(EMLX.log(EMLX.multiply(EMLX.subtract(one, z), EMLX.add(one, z))))
        central = horner(@central, EMLX.subtract(w, c.(2.5)))
        tail = horner(@tail, EMLX.subtract(EMLX.sqrt(w), c.(3.0)))
        p = EMLX.where(EMLX.less(w, c.(5.0)), central, tail)
        result = EMLX.multiply(p, z)
        # z = +-1 give +-infinity, z = 0 gives 0 (also -0.0 -> 0.0, as Nx's
        # integer 0), NaN and |z| > 1 give NaN (log of a negative number).
        inf = c.(:infinity)
        result = EMLX.where(EMLX.equal(z, one), inf, result)
        result = EMLX.where(EMLX.equal(z, c.(-1.0)), EMLX.negate(inf), result)
        EMLX.where(EMLX.equal(z, c.(0.0)), c.(0.0), result)
      end)
    end

    # Complex.erf_inv's muladd chain: acc * w + k, coefficient by coefficient.
    defp horner([first | rest], {device, _} = w) do
      Enum.reduce(rest, EMLX.scalar_tensor(first, {:f, 64}, device), fn k, acc ->
        EMLX.add(EMLX.multiply(acc, w), EMLX.scalar_tensor(k, {:f, 64}, device))
      end)
    end

    defp in_wide(t, %T{type: type} = out, fun) do
      case type do
        {:c, _} -> t |> ref_as(type) |> fun.()
        _ -> t |> ref_as({:f, 64}) |> fun.()
      end
      |> to_nx(out)
    end

    @impl true
    def count_leading_zeros(out, %T{type: {_, n}} = t) do
      ref = narrow_bits(t)
      result = apply(EMLX, :count_leading_zeros, [ref])

      case Types.storage(t.type) do
        {_, ^n} ->
          result

        {_, wide} ->
          EMLX.subtract(
            result,
            EMLX.scalar_tensor(wide - n, t.type |> Types.storage(), elem(ref, 0))
          )
      end
      |> to_nx(out)
    end

    @impl true
    def population_count(out, t) do
      t |> narrow_bits() |> then(&apply(EMLX, :population_count, [&1])) |> to_nx(out)
    end

    # Sub-byte signed values are stored sign-extended; their bits are the low n.
    defp narrow_bits(%T{type: {:s, n}} = t) when n < 8 do
      {device, _} = ref = from_nx(t)
      mask = EMLX.scalar_tensor((1 <<< n) - 1, {:s, 8}, device)
      EMLX.bitwise_and(ref, mask)
    end

    defp narrow_bits(t), do: from_nx(t)

    ## Selection and clipping

    @impl true
    def select(out, pred, on_true, on_false) do
      EMLX.where(from_nx(pred), ref_as(on_true, out.type), ref_as(on_false, out.type))
      |> EMLX.broadcast_to(out.shape)
      |> to_nx(out)
    end

    @impl true
    def clip(out, t, min, max) do
      EMLX.clip(ref_as(t, out.type), ref_as(min, out.type), ref_as(max, out.type)) |> to_nx(out)
    end

    ## Slicing and joining

    @impl true
    def slice(out, %T{shape: shape} = t, starts, lengths, strides) do
      ref = from_nx(t)
      dims = Tuple.to_list(shape)
      specs = Enum.zip([starts, lengths, strides, dims])

      static =
        Enum.map(specs, fn
          {start, len, stride, dim} when is_integer(start) ->
            start = start |> Kernel.max(0) |> Kernel.min(dim - len)
            {start, start + len, stride}

          {_tensor, _len, _stride, dim} ->
            {0, dim, 1}
        end)

      {s, e, st} = unzip3(static)
      ref = EMLX.slice(ref, s, e, st)

      specs
      |> Enum.with_index()
      |> Enum.reduce(ref, fn
        {{start, _, _, _}, _axis}, ref when is_integer(start) ->
          ref

        {{start, len, stride, dim}, axis}, ref ->
          {device, _} = ref
          first = start |> from_nx() |> EMLX.astype({:s, 64}) |> clamp_index(0, dim - len)
          offsets = EMLX.arange(0, len, stride, {:s, 64}, device)
          EMLX.take(ref, EMLX.add(offsets, first), axis)
      end)
      |> to_nx(out)
    end

    defp clamp_index({device, _} = index, low, high) do
      type = EMLX.scalar_type(index)

      EMLX.clip(
        index,
        EMLX.scalar_tensor(low, type, device),
        EMLX.scalar_tensor(high, type, device)
      )
    end

    @impl true
    def put_slice(out, %T{shape: shape} = t, starts, slice) do
      ref = ref_as(t, out.type)
      update = ref_as(slice, out.type)
      slice_dims = Tuple.to_list(slice.shape)
      dims = Tuple.to_list(shape)

      if Enum.all?(starts, &is_integer/1) do
        starts =
          for {start, dim, len} <- Enum.zip([starts, dims, slice_dims]),
              do: start |> Kernel.max(0) |> Kernel.min(dim - len)

        stops = for {start, len} <- Enum.zip(starts, slice_dims), do: start + len
        EMLX.slice_update(ref, update, starts, stops)
      else
        {device, _} = ref

        indices =
          for {start, dim, len} <- Enum.zip([starts, dims, slice_dims]) do
            start =
              case start do
                s when is_integer(s) -> EMLX.scalar_tensor(s, {:s, 64}, device)
                s -> s |> from_nx() |> EMLX.astype({:s, 64})
              end

            start |> clamp_index(0, dim - len) |> EMLX.reshape({1})
          end

        update = EMLX.reshape(update, List.to_tuple([1 | slice_dims]))
        EMLX.scatter(ref, indices, update, Enum.to_list(0..(length(dims) - 1)//1))
      end
      |> to_nx(out)
    end

    @impl true
    def concatenate(out, tensors, axis) do
      tensors |> Enum.map(&ref_as(&1, out.type)) |> EMLX.concatenate(axis) |> to_nx(out)
    end

    @impl true
    def stack(out, tensors, axis) do
      tensors |> Enum.map(&ref_as(&1, out.type)) |> EMLX.stack(axis) |> to_nx(out)
    end

    ## Indexing

    @impl true
    def gather(out, %T{shape: shape} = t, %T{} = indices, opts) do
      axes = opts[:axes]
      ref = from_nx(t)
      index_list = split_indices(indices, ref, axes, :gather)

      slice_sizes =
        for {dim, i} <- Enum.with_index(Tuple.to_list(shape)), do: if(i in axes, do: 1, else: dim)

      ref
      |> EMLX.gather(index_list, axes, slice_sizes)
      |> EMLX.reshape(out.shape)
      |> to_nx(out)
    end

    # The last axis of `indices` split into one index tensor per axis, each
    # clamped into its axis (after the bounds check, when it is compiled in).
    defp split_indices(%T{shape: ishape} = indices, ref, axes, op) do
      iref = from_nx(indices)
      rank = tuple_size(ishape)
      batch = ishape |> Tuple.delete_at(rank - 1)
      dims = EMLX.shape(ref)

      list =
        for {_axis, k} <- Enum.with_index(axes) do
          starts = List.duplicate(0, rank - 1) ++ [k]
          stops = Tuple.to_list(batch) ++ [k + 1]
          iref |> EMLX.slice(starts, stops, List.duplicate(1, rank)) |> EMLX.reshape(batch)
        end

      # `op` names the caller in the bounds check's message (when compiled in).
      _ = op
      EMLX.Debug.check_indices!(ref, list, axes, op)
      for {index, axis} <- Enum.zip(list, axes), do: clamp_index(index, 0, elem(dims, axis) - 1)
    end

    @impl true
    def indexed_add(out, t, indices, updates, opts),
      do: indexed(out, t, indices, updates, opts, :add)

    @impl true
    def indexed_put(out, t, indices, updates, opts),
      do: indexed(out, t, indices, updates, opts, :put)

    defp indexed(out, %T{shape: shape} = t, indices, updates, opts, kind) do
      axes = opts[:axes]
      ref = ref_as(t, out.type)

      index_list =
        split_indices(indices, ref, axes, if(kind == :add, do: :indexed_add, else: :indexed_put))

      batch = indices.shape |> Tuple.delete_at(tuple_size(indices.shape) - 1) |> Tuple.to_list()

      slice =
        for {dim, i} <- Enum.with_index(Tuple.to_list(shape)), do: if(i in axes, do: 1, else: dim)

      upd_shape = List.to_tuple(batch ++ slice)

      case {kind, add_accumulator(out.type)} do
        {:add, nil} ->
          EMLX.scatter_add(
            ref,
            index_list,
            EMLX.reshape(ref_as(updates, out.type), upd_shape),
            axes
          )

        {:add, wide} ->
          # Summed in the wide type and rounded once, as Nx.BinaryBackend does
          # (it adds in Erlang's doubles): duplicate indices then give Nx's
          # values to the last bit, whatever their number and order.
          t
          |> ref_as(wide)
          |> EMLX.scatter_add(index_list, EMLX.reshape(ref_as(updates, wide), upd_shape), axes)
          |> EMLX.astype(Types.storage(out.type))

        {:put, _} ->
          EMLX.scatter(ref, index_list, EMLX.reshape(ref_as(updates, out.type), upd_shape), axes)
      end
      |> to_nx(out)
    end

    # The type indexed_add accumulates in: f64 (c128) for the narrower floats,
    # nil (the output's own type) for f64, c128 and the integers, which add
    # exactly or as Nx.BinaryBackend does.
    defp add_accumulator({:f, 64}), do: nil
    defp add_accumulator({:f, _}), do: {:f, 64}
    defp add_accumulator({:bf, _}), do: {:f, 64}
    defp add_accumulator({:c, 64}), do: {:c, 128}
    defp add_accumulator(_), do: nil

    @doc false
    def take_native(out, t, indices, axis) do
      ref = from_nx(t)
      iref = from_nx(indices)
      EMLX.Debug.check_indices!(ref, iref, axis, :take)
      iref = clamp_index(iref, 0, elem(t.shape, axis) - 1)
      ref |> EMLX.take(iref, axis) |> to_nx(out)
    end

    @doc false
    def take_along_axis_native(out, t, indices, axis) do
      ref = from_nx(t)
      iref = from_nx(indices)
      EMLX.Debug.check_indices!(ref, iref, axis, :take_along_axis)
      iref = clamp_index(iref, 0, elem(t.shape, axis) - 1)
      ref |> EMLX.take_along_axis(iref, axis) |> to_nx(out)
    end

    ## Contractions

    @impl true
    def dot(
          out,
          l,
          contract_l,
          batch_l,
          %T{data: %B{quantization: %{}}} = r,
          contract_r,
          batch_r
        ),
        do: EMLX.Quantization.dot(out, l, contract_l, batch_l, r, contract_r, batch_r)

    def dot(out, l, contract_l, batch_l, r, contract_r, batch_r) do
      EMLX.tensordot(
        ref_as(l, out.type),
        ref_as(r, out.type),
        contract_l,
        contract_r,
        batch_l,
        batch_r
      )
      |> to_nx(out)
    end

    @impl true
    def conv(out, t, k, opts) do
      rank = tuple_size(t.shape)
      spatial = Enum.to_list(2..(rank - 1)//1)
      last_first = [0, rank - 1] ++ Enum.to_list(1..(rank - 2)//1)
      {lo, hi} = Enum.unzip(opts[:padding])

      input =
        t
        |> ref_as(out.type)
        |> permute(opts[:input_permutation])
        |> EMLX.transpose([0 | spatial] ++ [1])

      kernel =
        k
        |> ref_as(out.type)
        |> permute(opts[:kernel_permutation])
        |> EMLX.transpose([0 | spatial] ++ [1])

      conv = fn i, k ->
        EMLX.conv_general(
          i,
          k,
          opts[:strides],
          lo,
          hi,
          opts[:kernel_dilation],
          opts[:input_dilation],
          opts[:feature_group_size],
          opts[:batch_group_size],
          false
        )
      end

      case out.type do
        {:c, _} = type ->
          # (a + bi) * (c + di) = (ac - bd) + (ad + bc)i, four real convolutions.
          {a, b} = {EMLX.real(input), EMLX.imag(input)}
          {c, d} = {EMLX.real(kernel), EMLX.imag(kernel)}
          re = EMLX.subtract(conv.(a, c), conv.(b, d))
          im = EMLX.add(conv.(a, d), conv.(b, c))
          i = EMLX.scalar_tensor({0.0, 1.0}, type, elem(input, 0))
          EMLX.add(EMLX.astype(re, type), EMLX.multiply(EMLX.astype(im, type), i))

        _ ->
          conv.(input, kernel)
      end
      |> EMLX.transpose(last_first)
      |> permute(inverse(opts[:output_permutation]))
      |> to_nx(out)
    end

    defp permute(ref, nil), do: ref

    defp permute(ref, perm) do
      if perm == Enum.to_list(0..(length(perm) - 1)), do: ref, else: EMLX.transpose(ref, perm)
    end

    defp inverse(nil), do: nil
    defp inverse(perm), do: perm |> Enum.with_index() |> Enum.sort() |> Enum.map(&elem(&1, 1))

    ## Reductions

    for {op, fun} <- [sum: :sum, product: :product, reduce_max: :max, reduce_min: :min] do
      @impl true
      def unquote(op)(out, t, opts) do
        t
        |> ref_as(out.type)
        |> EMLX.unquote(fun)(opts[:axes], opts[:keep_axes] || false)
        |> to_nx(out)
      end
    end

    for op <- [:all, :any] do
      @impl true
      def unquote(op)(out, t, opts) do
        t |> from_nx() |> EMLX.unquote(op)(opts[:axes], opts[:keep_axes] || false) |> to_nx(out)
      end
    end

    @impl true
    def argmax(out, t, opts), do: arg_extreme(out, t, opts, :argmax)

    @impl true
    def argmin(out, t, opts), do: arg_extreme(out, t, opts, :argmin)

    defp arg_extreme(out, t, opts, fun) do
      ref = from_nx(t)
      keep = opts[:keep_axis] || false

      {ref, axis, keep} =
        case opts[:axis] do
          nil -> {EMLX.reshape(ref, {Nx.size(t.shape)}), 0, false}
          axis -> {ref, axis, keep}
        end

      case opts[:tie_break] || :low do
        :low ->
          apply(EMLX, fun, [ref, axis, keep])

        :high ->
          shape = EMLX.shape(ref)
          n = elem(shape, axis)
          index = apply(EMLX, fun, [reverse_axes(ref, shape, [axis]), axis, keep])
          last = EMLX.scalar_tensor(n - 1, {:s, 64}, elem(ref, 0))
          EMLX.subtract(last, EMLX.astype(index, {:s, 64}))
      end
      |> EMLX.reshape(out.shape)
      |> to_nx(out)
    end

    @impl true
    def reduce(out, t, acc, opts, fun), do: EMLX.Backend.Reduce.reduce(out, t, acc, opts, fun)

    @impl true
    def window_reduce(out, t, acc, window_dims, opts, fun),
      do: EMLX.Backend.Reduce.window_reduce(out, t, acc, window_dims, opts, fun)

    ## Windows

    for op <- [:window_sum, :window_product, :window_max, :window_min] do
      @impl true
      def unquote(op)(out, t, window_dims, opts) do
        {lo, hi} = Enum.unzip(opts[:padding])

        t
        |> ref_as(out.type)
        |> EMLX.unquote(op)(
          Tuple.to_list(window_dims),
          opts[:strides],
          lo,
          hi,
          opts[:window_dilations]
        )
        |> to_nx(out)
      end
    end

    # Nx's selection: the window's *last* extreme wins ties (>= and <=), and
    # the padding holds `init_value`, as Nx.BinaryBackend does. Each window
    # offset is one strided slice; the running choice and its offset are
    # kept per window, then the source is added at the chosen positions.
    @impl true
    def window_scatter_max(out, t, source, init, window_dims, opts),
      do: window_scatter(out, t, source, init, window_dims, opts, :greater_equal)

    @impl true
    def window_scatter_min(out, t, source, init, window_dims, opts),
      do: window_scatter(out, t, source, init, window_dims, opts, :less_equal)

    defp window_scatter(out, t, source, init, window_dims, opts, cmp) do
      type = out.type
      {device, _} = x = ref_as(t, type)
      src = ref_as(source, type)
      init_ref = ref_as(init, type)
      rank = tuple_size(t.shape)
      axes = Enum.to_list(0..(rank - 1)//1)
      {lo, hi} = Enum.unzip(opts[:padding])
      strides = opts[:strides]
      dims = Tuple.to_list(window_dims)
      src_dims = Tuple.to_list(source.shape)
      padded = EMLX.pad(x, axes, lo, hi, init_ref)

      {best_k, _} =
        if Enum.any?(src_dims, &(&1 == 0)) do
          {nil, nil}
        else
          window_offsets(dims)
          |> Enum.with_index()
          |> Enum.reduce({nil, nil}, fn {offset, k}, {best_k, best} ->
            stops =
              for {o, n, s} <- Enum.zip([offset, src_dims, strides]), do: o + (n - 1) * s + 1

            w = EMLX.slice(padded, offset, stops, strides)
            k_ref = EMLX.scalar_tensor(k, {:s, 32}, device)

            case best do
              nil ->
                {EMLX.broadcast_to(k_ref, source.shape), w}

              best ->
                take = apply(EMLX, cmp, [w, best])
                {EMLX.where(take, k_ref, best_k), EMLX.where(take, w, best)}
            end
          end)
        end

      base = EMLX.broadcast_to(init_ref, t.shape)

      case best_k do
        nil ->
          base

        best_k ->
          scatter_chosen(base, src, best_k, dims, strides, lo, t.shape, source.shape, device)
      end
      |> to_nx(out)
    end

    defp scatter_chosen(base, src, best_k, dims, strides, lo, shape, src_shape, device) do
      rank = length(dims)

      inner =
        dims
        |> Enum.reverse()
        |> Enum.scan(&(&1 * &2))
        |> Enum.reverse()
        |> tl()
        |> Kernel.++([1])

      s32 = fn v -> EMLX.scalar_tensor(v, {:s, 32}, device) end

      positions =
        for {axis, dim, inner_size, stride, low} <-
              Enum.zip([Enum.to_list(0..(rank - 1)), dims, inner, strides, lo]) do
          offset = best_k |> EMLX.quotient(s32.(inner_size)) |> EMLX.remainder(s32.(dim))
          line = for i <- 0..(rank - 1), do: if(i == axis, do: elem(src_shape, axis), else: 1)

          anchor =
            EMLX.arange(0, elem(src_shape, axis), 1, {:s, 32}, device)
            |> EMLX.multiply(s32.(stride))
            |> EMLX.reshape(List.to_tuple(line))

          anchor |> EMLX.add(offset) |> EMLX.subtract(s32.(low))
        end

      # A choice in the padding lands outside the tensor and is dropped.
      valid =
        positions
        |> Enum.with_index()
        |> Enum.map(fn {p, axis} ->
          EMLX.logical_and(EMLX.greater_equal(p, s32.(0)), EMLX.less(p, s32.(elem(shape, axis))))
        end)
        |> Enum.reduce(&EMLX.logical_and/2)

      zero = EMLX.scalar_tensor(0, EMLX.scalar_type(src), device)
      updates = EMLX.where(valid, src, zero)

      clamped =
        for {p, axis} <- Enum.with_index(positions),
            do: clamp_index(EMLX.broadcast_to(p, src_shape), 0, elem(shape, axis) - 1)

      updates =
        EMLX.reshape(updates, List.to_tuple(Tuple.to_list(src_shape) ++ List.duplicate(1, rank)))

      EMLX.scatter_add(base, clamped, updates, Enum.to_list(0..(rank - 1)))
    end

    defp window_offsets([]), do: [[]]

    defp window_offsets([dim | dims]),
      do: for(i <- 0..(dim - 1)//1, rest <- window_offsets(dims), do: [i | rest])

    ## Sorting

    @impl true
    def sort(out, t, opts) do
      axis = opts[:axis]
      ref = from_nx(t)
      sorted = EMLX.sort(ref, axis)

      case opts[:direction] do
        :desc -> reverse_axes(sorted, t.shape, [axis])
        _ -> sorted
      end
      |> to_nx(out)
    end

    @impl true
    def argsort(out, t, opts) do
      axis = opts[:axis]
      ref = from_nx(t)

      case opts[:direction] do
        :desc ->
          # Stable descending: sort the reversed tensor ascending (ties then
          # come last-first), reverse that, and map the indices back.
          n = elem(t.shape, axis)
          idx = ref |> reverse_axes(t.shape, [axis]) |> EMLX.argsort(axis)
          idx = idx |> reverse_axes(t.shape, [axis]) |> EMLX.astype({:s, 64})
          EMLX.subtract(EMLX.scalar_tensor(n - 1, {:s, 64}, elem(ref, 0)), idx)

        _ ->
          EMLX.argsort(ref, axis)
      end
      |> to_nx(out)
    end

    ## Linear algebra and FFT

    @impl true
    def triangular_solve(out, a, b, opts) do
      # Nx.BinaryBackend substitutes in f64 and rounds once to the output
      # type; real types do the same here (complex stays c64).
      work = if elem(out.type, 0) == :c, do: out.type, else: {:f, 64}
      a_ref = ref_as(a, work)
      b_ref = ref_as(b, work)
      left? = Keyword.get(opts, :left_side, true)
      lower? = Keyword.get(opts, :lower, true)
      transform = if opts[:transform_a] == :transpose, do: :transpose, else: :none
      vector? = tuple_size(b.shape) == tuple_size(a.shape) - 1
      check_nonsingular!(a_ref)

      b_ref =
        case {vector?, left?} do
          {true, true} ->
            EMLX.reshape(b_ref, Tuple.insert_at(b.shape, tuple_size(b.shape), 1))

          {true, false} ->
            EMLX.reshape(b_ref, Tuple.insert_at(b.shape, tuple_size(b.shape) - 1, 1))

          _ ->
            b_ref
        end

      a_ref
      |> EMLX.linalg_solve_triangular(b_ref, not lower?, not left?, transform, false)
      |> EMLX.reshape(out.shape)
      |> to_nx(out)
    end

    # Nx raises for a zero on the diagonal (this reads one boolean back).
    defp check_nonsingular!({device, _} = a) do
      shape = EMLX.shape(a)
      rank = tuple_size(shape)
      n = elem(shape, rank - 1)
      eye = EMLX.eye(n, n, EMLX.scalar_type(a), device)
      diagonal = a |> EMLX.multiply(eye) |> EMLX.sum([rank - 1], false)
      zero = EMLX.scalar_tensor(0, EMLX.scalar_type(a), device)

      if EMLX.item(EMLX.any(EMLX.equal(diagonal, zero), nil, false)) != 0 do
        raise ArgumentError, "can't solve for singular matrix"
      end
    end

    @impl true
    def fft(out, t, opts), do: fft_op(out, t, opts, :fft)

    @impl true
    def ifft(out, t, opts), do: fft_op(out, t, opts, :ifft)

    defp fft_op(out, t, opts, fun) do
      axis = opts[:axis] || tuple_size(t.shape) - 1
      ref = ref_as(t, out.type)

      apply(EMLX, fun, [ref, opts[:length], axis])
      |> EMLX.Backend.Block.zero_small(opts[:eps])
      |> to_nx(out)
    end

    ## Blocks

    @impl true
    def block(struct, output, args, fun), do: EMLX.Backend.Block.block(struct, output, args, fun)
  end
end
