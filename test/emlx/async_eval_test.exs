defmodule EMLX.AsyncEvalTest do
  # Computing calls do not hold a scheduler: while the engine evaluates, the
  # calling process waits in `receive` (status :waiting), not inside a NIF
  # (which would show as :running for the whole computation).
  use ExUnit.Case, async: false

  import EMLX.TestHelpers

  test "the caller waits in receive while its evaluation runs on the worker" do
    parent = self()

    caller =
      spawn_link(fn ->
        # Long enough (about a second of fused work on two cores) that the
        # 1 ms polling below sees the wait even on a loaded machine: a 2048²
        # chain once finished between two polls in a full run.
        big = EMLX.full(0.5, {4096, 4096}, {:f, 32}, :cpu)

        heavy = Enum.reduce(1..40, big, fn _, acc -> acc |> EMLX.negate() |> EMLX.exp() end)

        send(parent, {:result, EMLX.sum(heavy, nil, false) |> EMLX.item()})
      end)

    assert wait_for_waiting(caller, 5_000), "the caller never waited while computing"

    assert_receive {:result, value}, 60_000
    assert is_float(value)
  end

  defp wait_for_waiting(_pid, 0), do: false

  defp wait_for_waiting(pid, tries) do
    with [status: :waiting, current_function: {EMLX, name, _}] <-
           Process.info(pid, [:status, :current_function]),
         true <- name in [:eval, :item],
         {:ok, %{jobs: jobs}} when jobs > 0 <- EMLX.NIF.nif_stats() do
      true
    else
      _ ->
        Process.sleep(1)
        wait_for_waiting(pid, tries - 1)
    end
  end

  test "many evaluations in flight at once from one process's point of view" do
    tensors = for i <- 1..64, do: EMLX.full(i * 1.0, {64, 64}, {:f, 32}, :cpu) |> EMLX.exp()

    sums =
      tensors
      |> Enum.map(&Task.async(fn -> EMLX.sum(&1, nil, false) |> EMLX.item() end))
      |> Task.await_many(30_000)

    for {sum, i} <- Enum.with_index(sums, 1), do: assert(close?(sum, 4096 * :math.exp(i), 1.0e-4))
  end
end
