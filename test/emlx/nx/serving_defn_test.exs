if Code.ensure_loaded?(Nx) do
  defmodule EMLX.Nx.ServingDefnTest do
    @moduledoc """
    `Nx.Serving` with `EMLX` as the compiler: partitions (one command queue
    each) on this node, and a distributed serving across this node and a
    second BEAM node started with `:peer` on the loopback interface.
    """
    use ExUnit.Case, async: false

    @moduletag :distributed
    @moduletag timeout: 120_000

    defp expected(batch) do
      batch
      |> Nx.backend_copy(Nx.BinaryBackend)
      |> Nx.exp()
      |> Nx.multiply(2)
      |> Nx.sum(axes: [1])
    end

    defp assert_close(a, b) do
      a = Nx.backend_copy(a, Nx.BinaryBackend)

      assert Nx.all_close(a, b, rtol: 1.0e-5) |> Nx.to_number() == 1,
             "#{inspect(a)} vs #{inspect(b)}"
    end

    test "partitions: true runs batches on one queue per partition" do
      name = :"emlx_serving_local_#{System.unique_integer([:positive])}"
      assert EMLX.ServingHelper.start(name) == :ok

      batches = for k <- 1..6, do: Nx.iota({2, 5}, type: {:f, 32}) |> Nx.divide(10 * k)

      results =
        batches
        |> Task.async_stream(
          fn batch ->
            rows = for i <- 0..1, do: batch[i]
            Nx.Serving.batched_run(name, Nx.Batch.stack(rows))
          end,
          max_concurrency: 6
        )
        |> Enum.map(fn {:ok, r} -> r end)

      for {batch, result} <- Enum.zip(batches, results), do: assert_close(result, expected(batch))
    end

    test "a distributed serving across this node and a :peer node" do
      case start_distribution() do
        {:ok, _} ->
          :ok

        {:error, reason} ->
          flunk("distribution could not start on 127.0.0.1: #{inspect(reason)}")
      end

      {:ok, peer, node} =
        :peer.start(%{
          name: :"emlx_peer_#{System.unique_integer([:positive])}",
          host: ~c"127.0.0.1",
          longnames: true,
          args: [~c"-setcookie", Atom.to_charlist(Node.get_cookie())]
        })

      try do
        true = :erpc.call(node, :code, :set_path, [:code.get_path()])
        {:ok, _} = :erpc.call(node, :application, :ensure_all_started, [:emlx])
        {:ok, _} = :erpc.call(node, :application, :ensure_all_started, [:nx])
        name = :"emlx_serving_dist_#{System.unique_integer([:positive])}"

        # Only the peer serves at first: a call from here must run there.
        assert :erpc.call(node, EMLX.ServingHelper, :start, [name]) == :ok
        wait_for_group(name)
        batch = Nx.tensor([[0.1, 0.2, 0.3], [1.0, -1.0, 0.5]], type: {:f, 32})
        stacked = Nx.Batch.stack([batch[0], batch[1]])
        result = Nx.Serving.batched_run({:distributed, name}, stacked)
        assert_close(result, expected(batch))
        remote = :erpc.call(node, EMLX.CompileCache, :stats, [])
        assert remote.misses > 0

        # Then both nodes serve; every call still gives the right values.
        assert EMLX.ServingHelper.start(name) == :ok

        for _ <- 1..6 do
          result = Nx.Serving.batched_run({:distributed, name}, stacked)
          assert_close(result, expected(batch))
        end
      after
        :peer.stop(peer)
      end
    end

    defp start_distribution do
      if Node.alive?() do
        {:ok, node()}
      else
        _ = System.cmd("epmd", ["-daemon"])
        Node.start(:"emlx_primary_#{System.unique_integer([:positive])}@127.0.0.1", :longnames)
      end
    end

    defp wait_for_group(name, tries \\ 100) do
      members = :pg.get_members(Nx.Serving.PG, name)

      cond do
        members != [] -> :ok
        tries == 0 -> flunk("the peer's serving never joined the process group")
        true -> Process.sleep(50) && wait_for_group(name, tries - 1)
      end
    end
  end
else
  IO.puts(
    "test/emlx/nx/serving_defn_test.exs: Nx is not available (set NX_PATH to an Nx " <>
      "source tree, or fetch deps/nx), so the Nx.Serving tests are left out"
  )
end
