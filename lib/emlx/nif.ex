defmodule EMLX.NIF do
  @moduledoc false
  # The Erlang stubs of the native library (priv/libemlx_nif.so).
  #
  # The list of functions is read at compile time from c_src/nif_rows.h, the
  # table the C side is generated from, so a row added there becomes a stub
  # here without a second list to keep in step. Each row's signature string
  # (one letter per argument, see nif_rows.h) gives the arity; `__rows__/0`
  # returns them for tests that exercise every function.

  @rows_file Path.expand("../../c_src/nif_rows.h", __DIR__)
  @external_resource @rows_file

  @rows (for [_, name, sig] <-
               Regex.scan(
                 ~r/X\(\w+,\s*"(\w+)",\s*"(\w*)"/,
                 String.replace(File.read!(@rows_file), ~r{/\*.*?\*/}s, "")
               ) do
           {String.to_atom(name), sig}
         end)

  if @rows == [] do
    raise CompileError, description: "no rows found in #{@rows_file}"
  end

  @on_load :__on_load__

  @doc false
  def __on_load__ do
    path = :filename.join(:code.priv_dir(:emlx), ~c"libemlx_nif")

    case :erlang.load_nif(path, 0) do
      :ok ->
        :ok

      {:error, {reason, text}} ->
        IO.warn("EMLX could not load its NIF #{path}.so: #{inspect(reason)} #{text}", [])
        :error
    end
  end

  @doc false
  def __rows__, do: @rows

  for {name, sig} <- @rows do
    args = for i <- 1..byte_size(sig)//1, do: Macro.var(:"_arg#{i}", __MODULE__)
    def unquote(name)(unquote_splicing(args)), do: :erlang.nif_error(:nif_not_loaded)
  end
end
