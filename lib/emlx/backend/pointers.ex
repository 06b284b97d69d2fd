if Code.ensure_loaded?(Nx) do
  defmodule EMLX.Backend.Pointers do
    @moduledoc false
    # `:local` pointers handed out by `Nx.to_pointer/2`.
    #
    # The engine can only wrap memory it owns, so `Nx.from_pointer/5` with a
    # `:local` pointer accepts the addresses EMLX gave out in this VM: each
    # one is recorded here with the tensor that owns it, which also keeps that
    # tensor (and so the address) alive for the life of the VM, as the
    # pointer's reader needs. Any other address raises ArgumentError instead
    # of reading memory the engine cannot vouch for.

    @table __MODULE__

    @doc false
    def keep(address, size, ref, type, shape) do
      :ets.insert(table(), {address, size, ref, type, shape})
      :ok
    end

    @doc false
    def fetch!(address, size, type, shape) do
      case :ets.lookup(table(), address) do
        [{^address, ^size, ref, _type, _shape}] ->
          if byte_size_of(type, shape) == size do
            ref |> EMLX.view(type) |> EMLX.reshape(shape)
          else
            raise ArgumentError,
                  "Nx.from_pointer/5: #{size} bytes at the address cannot hold a " <>
                    "#{Kernel.inspect(type)} tensor of shape #{Kernel.inspect(shape)}"
          end

        _ ->
          raise ArgumentError,
                "Nx.from_pointer/5: address #{address} (#{size} bytes) was not given out by " <>
                  "Nx.to_pointer/2 on EMLX.Backend in this VM; EMLX can only wrap memory it " <>
                  "owns (use mode: :ipc to share memory between processes)"
      end
    end

    defp byte_size_of({_, bits}, shape), do: div(Nx.size(shape) * bits, 8)

    # The table belongs to a small process that only holds it, so it outlives
    # whichever process asked first.
    defp table do
      case :ets.whereis(@table) do
        :undefined -> start_holder()
        _ -> @table
      end
    end

    defp start_holder do
      parent = self()

      spawn(fn ->
        owner? =
          try do
            :ets.new(@table, [:named_table, :public, :set, read_concurrency: true])
          rescue
            ArgumentError -> false
          end

        send(parent, {__MODULE__, :ready})
        if owner?, do: Process.sleep(:infinity)
      end)

      receive do
        {__MODULE__, :ready} -> @table
      end
    end
  end
end
