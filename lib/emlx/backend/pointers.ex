if Code.ensure_loaded?(Nx) do
  defmodule EMLX.Backend.Pointers do
    @moduledoc false
    # `:local` pointers taken back by `Nx.from_pointer/5`.
    #
    # The engine can only wrap memory it owns, so a `:local` pointer must be
    # an address that `Nx.to_pointer/2` gave out for an EMLX tensor that is
    # still alive: the NIF records each address with its tensor without
    # keeping it alive (c_src/nif_pointers.c), and forgets it when the tensor
    # is garbage-collected or deallocated. Any other address raises
    # ArgumentError instead of reading memory the engine cannot vouch for.

    @doc false
    def fetch!(address, size, type, shape) do
      if byte_size_of(type, shape) != size do
        raise ArgumentError,
              "Nx.from_pointer/5: #{size} bytes at the address cannot hold a " <>
                "#{Kernel.inspect(type)} tensor of shape #{Kernel.inspect(shape)}"
      end

      try do
        EMLX.tensor_from_local_ptr(address, size)
      rescue
        e in EMLX.NIFError ->
          reraise ArgumentError, "Nx.from_pointer/5: #{Exception.message(e)}", __STACKTRACE__
      else
        ref -> ref |> EMLX.view(type) |> EMLX.reshape(shape)
      end
    end

    defp byte_size_of({_, bits}, shape), do: div(Nx.size(shape) * bits, 8)
  end
end
