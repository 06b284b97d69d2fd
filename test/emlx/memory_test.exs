defmodule EMLX.MemoryTest do
  # The allocator's counters and limits. async: false: they are process-wide.
  use ExUnit.Case, async: false

  import EMLX.TestHelpers

  test "memory_info/0 returns the three counters" do
    info = EMLX.memory_info()
    assert Map.keys(info) |> Enum.sort() == [:active_memory, :cache_memory, :peak_memory]
    assert Enum.all?(Map.values(info), &(is_integer(&1) and &1 >= 0))
  end

  test "evaluating a tensor raises active memory; deallocating lowers it" do
    collect_garbage()
    before = EMLX.memory_info().active_memory
    t = EMLX.full(1.0, {1024, 1024}, {:f, 32}, :cpu)
    EMLX.eval(t)
    assert EMLX.memory_info().active_memory >= before + 1024 * 1024 * 4
    EMLX.deallocate(t)
    assert EMLX.memory_info().active_memory == before
  end

  test "clear_cache/0 empties the cache" do
    t = EMLX.full(1.0, {256, 256}, {:f, 32}, :cpu)
    EMLX.eval(t)
    EMLX.deallocate(t)
    assert EMLX.clear_cache() == :ok
    assert EMLX.memory_info().cache_memory == 0
  end

  test "reset_peak_memory/0 brings the peak down to what is active" do
    t = EMLX.full(1.0, {512, 512}, {:f, 32}, :cpu)
    EMLX.eval(t)
    EMLX.deallocate(t)
    assert EMLX.reset_peak_memory() == :ok
    info = EMLX.memory_info()
    assert info.peak_memory == info.active_memory
  end

  test "set_cache_limit/1 and set_memory_limit/1 return the previous limit" do
    prev = EMLX.set_cache_limit(500_000_000)
    assert is_integer(prev)
    assert EMLX.set_cache_limit(prev) == 500_000_000

    prev = EMLX.set_memory_limit(8_000_000_000)
    assert is_integer(prev)
    assert EMLX.set_memory_limit(prev) == 8_000_000_000
  end

  test "the memory limit turns an oversized evaluation into an error" do
    prev = EMLX.set_memory_limit(1_000_000)

    try do
      t = EMLX.full(1.0, {1024, 1024}, {:f, 64}, :cpu)
      assert_raise EMLX.NIFError, ~r/^to_blob: /, fn -> EMLX.to_blob(t) end
      # existing tensors are intact and small work still runs
      assert EMLX.item(EMLX.scalar_tensor(2, {:s, 32}, :cpu)) == 2
    after
      EMLX.set_memory_limit(prev)
    end
  end

  test "tensors and zero-copy binaries release their memory when collected" do
    collect_garbage()
    before = EMLX.memory_info().active_memory
    {:ok, %{tensors: tensors, blobs: blobs}} = EMLX.NIF.nif_stats()

    Task.async(fn ->
      bins =
        for _ <- 1..20 do
          EMLX.full(2.0, {100, 100}, {:f, 64}, :cpu) |> EMLX.to_blob()
        end

      assert Enum.all?(bins, &(byte_size(&1) == 80_000))
    end)
    |> Task.await()

    collect_garbage()
    assert EMLX.memory_info().active_memory == before
    assert {:ok, %{tensors: ^tensors, blobs: ^blobs}} = EMLX.NIF.nif_stats()
  end
end
