if Code.ensure_loaded?(Nx) do
  defmodule EMLX.Backend.Types do
    @moduledoc false
    # How each Nx type lives in the engine, and the conversions at the edges.
    #
    # Most Nx types are engine dtypes. The others are stored wider and kept on
    # their own grid after every operation (`fit/2`), so they compute with
    # Nx's results and round-trip bit-exactly through from_binary/to_binary:
    #
    #   * {:s, 2}, {:s, 4}: stored as {:s, 8}, sign-extended from their width
    #     (a shift left then an arithmetic shift right), so arithmetic wraps
    #     at the width as Nx's packed bitstrings do.
    #   * {:u, 2}, {:u, 4}: stored as {:u, 8}, masked to their width.
    #   * {:f, 8} (e5m2) and {:f8_e4m3fn, 8}: stored as {:f, 32}, which holds
    #     every value of both exactly. After every operation the f32 result is
    #     encoded and decoded with the engine's Nx codecs (EMLX.to_nx_binary /
    #     EMLX.from_nx_binary, emlx/nx_types.h): one rounding, from the f32
    #     value, the way Nx.Floating writes Nx's f64 value. This evaluates the
    #     result (the codecs work on buffers).

    import Bitwise

    @doc false
    def storage({:s, n}) when n < 8, do: {:s, 8}
    def storage({:u, n}) when n < 8, do: {:u, 8}
    def storage({:f, 8}), do: {:f, 32}
    def storage({:f8_e4m3fn, 8}), do: {:f, 32}
    def storage(type), do: type

    @doc false
    def special?({:s, n}) when n < 8, do: true
    def special?({:u, n}) when n < 8, do: true
    def special?({:f, 8}), do: true
    def special?({:f8_e4m3fn, 8}), do: true
    def special?(_), do: false

    @doc false
    # `ref` converted to `type`'s storage dtype and brought onto its grid.
    def fit(ref, type) do
      storage = storage(type)

      ref =
        case EMLX.scalar_type(ref) do
          ^storage -> ref
          _ -> EMLX.astype(ref, storage)
        end

      if special?(type), do: narrow(ref, type), else: ref
    end

    @doc false
    # `ref` (already in storage dtype) brought onto `type`'s grid.
    def narrow({device, _} = ref, {:s, n}) do
      shift = EMLX.scalar_tensor(8 - n, {:s, 8}, device)
      ref |> EMLX.left_shift(shift) |> EMLX.right_shift(shift)
    end

    def narrow({device, _} = ref, {:u, n}) do
      EMLX.bitwise_and(ref, EMLX.scalar_tensor((1 <<< n) - 1, {:u, 8}, device))
    end

    def narrow({device, _} = ref, {kind, 8} = type) when kind in [:f, :f8_e4m3fn] do
      ref |> EMLX.to_nx_binary(type) |> EMLX.from_nx_binary(type, EMLX.shape(ref), device)
    end

    def narrow(ref, _type), do: ref

    ## Binaries

    @doc false
    def from_binary(binary, shape, type, device) do
      if special?(type),
        do: EMLX.from_nx_binary(binary, type, shape, device),
        else: EMLX.from_blob(binary, shape, storage(type), device)
    end

    @doc false
    # The first `limit` elements (nil: all) as Nx's binary for `type`.
    def to_binary(ref, type, limit) do
      if special?(type),
        do: ref |> first(limit) |> EMLX.to_nx_binary(type),
        else: blob(ref, limit)
    end

    defp first(ref, nil), do: ref

    defp first(ref, limit) do
      size = ref |> EMLX.shape() |> Tuple.product()

      if limit >= size,
        do: ref,
        else: ref |> EMLX.reshape({size}) |> EMLX.slice([0], [limit], [1])
    end

    defp blob(ref, nil), do: EMLX.to_blob(ref)
    defp blob(ref, limit), do: EMLX.to_blob(ref, limit)
  end
end
