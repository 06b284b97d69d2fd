if Code.ensure_loaded?(Nx) do
  defmodule EMLX.ServingHelper do
    @moduledoc false
    # An Nx.Serving with EMLX as its compiler, compiled to disk (test/support)
    # so a peer node of test/emlx/nx/serving_defn_test.exs can load it too.
    import Nx.Defn

    defn(predict(x), do: Nx.sum(Nx.exp(x) * 2, axes: [1]))

    def serving do
      Nx.Serving.new(fn opts -> Nx.Defn.jit(&predict/1, opts) end,
        compiler: EMLX,
        max_concurrency: String.to_integer(System.get_env("EMLX_SERVING_PARTS", "2"))
      )
      |> Nx.Serving.distributed_postprocessing(&Nx.backend_transfer(&1, Nx.BinaryBackend))
    end

    # Starts the serving under `name`, owned by a process of its own (not
    # linked to the caller: on a peer the caller is an :erpc worker).
    def start(name) do
      parent = self()

      spawn(fn ->
        {:ok, _} =
          Nx.Serving.start_link(
            serving: serving(),
            name: name,
            batch_size: 4,
            batch_timeout: 20,
            partitions: true
          )

        send(parent, {:started, name})
        Process.sleep(:infinity)
      end)

      receive do
        {:started, ^name} -> :ok
      after
        30_000 -> {:error, :timeout}
      end
    end
  end
end
