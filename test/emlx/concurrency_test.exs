defmodule EMLX.ConcurrencyTest do
  # 1,000 processes build and evaluate graphs at once: half on the default
  # queue, half each on a command queue of its own. Every result is checked
  # against the same computation done in Elixir.
  use ExUnit.Case, async: false

  import EMLX.TestHelpers

  @moduletag :concurrency
  @moduletag timeout: 300_000

  @processes 1_000
  @rounds 5

  test "1,000 processes on the default queue and on their own queues" do
    before = settled_counters()
    parent = self()

    pids =
      for i <- 1..@processes do
        spawn_link(fn ->
          # start together, so the graphs are built and evaluated concurrently
          receive do
            :go -> :ok
          end

          result =
            if rem(i, 2) == 0 do
              queue = EMLX.CommandQueue.new!(:cpu)
              EMLX.CommandQueue.with_queue(queue, fn -> work(i) end)
            else
              work(i)
            end

          send(parent, {:done, i, result})
        end)
      end

    Enum.each(pids, &send(&1, :go))

    results =
      for _ <- 1..@processes do
        receive do
          {:done, i, result} -> {i, result}
        after
          120_000 -> flunk("a process did not finish")
        end
      end

    failures = for {i, result} <- results, result != :ok, do: {i, result}
    assert failures == []

    # the processes may still be exiting: once settled, their tensors and
    # queues must be gone
    assert settled_counters() == before
  end

  test "a shared lazy node evaluated from many processes at once is computed once, correctly" do
    xs = Enum.map(1..10_000, &(&1 * 0.5))

    graph = fn ->
      tensor(xs, {100, 100}) |> EMLX.multiply(tensor([2.0], {1})) |> EMLX.sum([1], false)
    end

    expected = xs |> Enum.chunk_every(100) |> Enum.map(&(Enum.sum(&1) * 2))

    # What one evaluation of the graph computes (the counter is process-wide;
    # async: false and a settled engine keep other work out of the deltas).
    settled_counters()
    before = EMLX.eval_stats().nodes_computed
    assert close?(values(graph.()), expected)
    once = EMLX.eval_stats().nodes_computed - before
    assert once >= 1

    shared = graph.()
    before = EMLX.eval_stats().nodes_computed

    tasks =
      for i <- 1..200 do
        Task.async(fn ->
          if rem(i, 2) == 0 do
            EMLX.CommandQueue.with_queue(EMLX.CommandQueue.new!(:cpu), fn -> values(shared) end)
          else
            values(shared)
          end
        end)
      end

    for values <- Task.await_many(tasks, 60_000), do: assert(close?(values, expected))
    assert EMLX.eval_stats().nodes_computed - before == once
  end

  # Builds a few graphs from process-specific data and checks every result.
  defp work(i) do
    Enum.reduce_while(1..@rounds, :ok, fn round, :ok ->
      n = 16 + rem(i * 7 + round, 48)
      xs = for k <- 1..n, do: rem(k * i + round, 97) * 0.25
      ys = for k <- 1..n, do: rem(k + i * round, 13) - 6.0

      a = tensor(xs, {n})
      b = tensor(ys, {n})
      c = EMLX.add(EMLX.multiply(a, b), a) |> EMLX.negate()
      s = EMLX.sum(c, nil, false)
      m = EMLX.reshape(c, {n, 1}) |> EMLX.max([0], false)

      expected = Enum.zip_with(xs, ys, fn x, y -> -(x * y + x) end)

      ok =
        EMLX.eval(c) == :ok and
          values(c) == expected and
          close?(EMLX.item(s), Enum.sum(expected), 1.0e-4) and
          values(m) == [Enum.max(expected)] and
          EMLX.to_blob(EMLX.astype(a, {:s, 32}), 2) ==
            encode(Enum.map(Enum.take(xs, 2), &trunc/1), {:s, 32})

      if ok, do: {:cont, :ok}, else: {:halt, {:mismatch, round}}
    end)
  rescue
    e -> {:raised, Exception.message(e)}
  end
end
