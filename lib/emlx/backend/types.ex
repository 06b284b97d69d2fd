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
    #   * {:f, 8} (e5m2) and {:f8_e4m3fn, 8}: stored as {:f, 16}, which holds
    #     every value of both exactly. Values reach the f8 grid the way Nx
    #     writes them: e5m2 is the upper byte of the f16 (Nx.Floating.dump_f8
    #     truncates the f16), e4m3fn goes through two 65536/256-entry tables
    #     built at compile time from Nx.Floating's own dump/load functions,
    #     looked up on the engine with `take`. (A value computed in f32 is
    #     first rounded to f16: where that rounding and Nx's direct rounding
    #     from f64 differ, the result can differ by one f8 step.)
    #   * {:c, 128}: not in the engine yet; every use raises ArgumentError.

    import Bitwise

    @c128_message "the EMLX engine has no complex128 ({:c, 128}) dtype yet; " <>
                    "use {:c, 64}, or Nx.BinaryBackend for complex128"

    @doc false
    def storage({:s, n}) when n < 8, do: {:s, 8}
    def storage({:u, n}) when n < 8, do: {:u, 8}
    def storage({:f, 8}), do: {:f, 16}
    def storage({:f8_e4m3fn, 8}), do: {:f, 16}
    def storage({:c, 128}), do: raise(ArgumentError, @c128_message)
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

    def narrow(ref, {:f, 8} = type), do: ref |> f8_codes(type) |> f8_decode(type)
    def narrow(ref, {:f8_e4m3fn, 8} = type), do: ref |> f8_codes(type) |> f8_decode(type)
    def narrow(ref, _type), do: ref

    ## Binaries

    @doc false
    def from_binary(binary, shape, {:s, n} = type, device) when n < 8 do
      blob = for <<x::size(n)-signed <- binary>>, into: <<>>, do: <<x::8-signed>>
      EMLX.from_blob(blob, shape, storage(type), device)
    end

    def from_binary(binary, shape, {:u, n} = type, device) when n < 8 do
      blob = for <<x::size(n) <- binary>>, into: <<>>, do: <<x::8>>
      EMLX.from_blob(blob, shape, storage(type), device)
    end

    def from_binary(binary, shape, {kind, 8} = type, device) when kind in [:f, :f8_e4m3fn] do
      binary |> EMLX.from_blob(shape, {:u, 8}, device) |> f8_decode(type)
    end

    def from_binary(binary, shape, type, device) do
      EMLX.from_blob(binary, shape, storage(type), device)
    end

    @doc false
    # The first `limit` elements (nil: all) as Nx's binary for `type`.
    def to_binary(ref, {:s, n}, limit) when n < 8 do
      for <<x::8-signed <- blob(ref, limit)>>, into: <<>>, do: <<x::size(n)-signed>>
    end

    def to_binary(ref, {:u, n}, limit) when n < 8 do
      for <<x::8 <- blob(ref, limit)>>, into: <<>>, do: <<x::size(n)>>
    end

    def to_binary(ref, {kind, 8} = type, limit) when kind in [:f, :f8_e4m3fn] do
      ref |> f8_codes(type) |> blob(limit)
    end

    def to_binary(ref, _type, limit), do: blob(ref, limit)

    defp blob(ref, nil), do: EMLX.to_blob(ref)
    defp blob(ref, limit), do: EMLX.to_blob(ref, limit)

    ## f8

    # e4m3fn code (0..255) -> f16 value, as Nx.Floating.load_f8_e4m3fn reads it.
    @e4m3fn_decode (for code <- 0..255, into: <<>> do
                      case Nx.Floating.load_f8_e4m3fn(<<code>>) do
                        :nan -> <<0x7E00::16-native>>
                        x -> <<x::float-16-native>>
                      end
                    end)

    # f16 bit pattern (0..65535) -> e4m3fn code, as Nx.Floating.dump_f8_e4m3fn
    # writes the f16's value.
    @e4m3fn_encode (for bits <- 0..65535, into: <<>> do
                      value =
                        case <<bits::16>> do
                          # -0.0 stays -0.0 (before OTP 27 it matches dump's 0.0 clause)
                          <<1::1, 0::15>> -> :neg_zero
                          <<_::1, 31::5, m::10>> when m != 0 -> :nan
                          <<0::1, 31::5, 0::10>> -> :infinity
                          <<1::1, 31::5, 0::10>> -> :neg_infinity
                          <<x::float-16>> -> x
                        end

                      if value == :neg_zero, do: <<0x80>>, else: Nx.Floating.dump_f8_e4m3fn(value)
                    end)

    # f16 storage -> u8 codes.
    defp f8_codes({device, _} = ref, {:f, 8}) do
      bits = EMLX.view(ref, {:u, 16})
      code = bits |> EMLX.right_shift(EMLX.scalar_tensor(8, {:u, 16}, device))
      # A NaN whose payload is only in the low byte would truncate to infinity.
      nan = EMLX.scalar_tensor(0x7E, {:u, 16}, device)
      EMLX.where(EMLX.is_nan(ref), nan, code) |> EMLX.astype({:u, 8})
    end

    defp f8_codes({device, _} = ref, {:f8_e4m3fn, 8}) do
      table = table(:e4m3fn_encode, device)
      EMLX.take(table, EMLX.view(ref, {:u, 16}) |> EMLX.astype({:s, 32}), 0)
    end

    # u8 codes -> f16 storage.
    defp f8_decode({device, _} = codes, {:f, 8}) do
      codes
      |> EMLX.astype({:u, 16})
      |> EMLX.left_shift(EMLX.scalar_tensor(8, {:u, 16}, device))
      |> EMLX.view({:f, 16})
    end

    defp f8_decode({device, _} = codes, {:f8_e4m3fn, 8}) do
      EMLX.take(table(:e4m3fn_decode, device), EMLX.astype(codes, {:s, 32}), 0)
    end

    # The lookup tables as engine tensors, made once per device.
    defp table(name, device) do
      key = {__MODULE__, name, device}

      case :persistent_term.get(key, nil) do
        nil ->
          t =
            case name do
              :e4m3fn_encode -> EMLX.from_blob(@e4m3fn_encode, {65536}, {:u, 8}, device)
              :e4m3fn_decode -> EMLX.from_blob(@e4m3fn_decode, {256}, {:f, 16}, device)
            end

          EMLX.eval(t)
          :persistent_term.put(key, t)
          t

        t ->
          t
      end
    end
  end
end
