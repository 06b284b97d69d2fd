defmodule EMLX.MemoryTest do
  # The allocator's counters and limits. async: false: they are process-wide,
  # so no other test may allocate while one of these compares them; every
  # comparison reads settled counters (see settled_counters/0).
  use ExUnit.Case, async: false

  import EMLX.TestHelpers

  test "memory_info/0 returns the three counters" do
    info = EMLX.memory_info()
    assert Map.keys(info) |> Enum.sort() == [:active_memory, :cache_memory, :peak_memory]
    assert Enum.all?(Map.values(info), &(is_integer(&1) and &1 >= 0))
  end

  test "evaluating a tensor raises active memory; deallocating lowers it" do
    before = settled_counters().active_memory
    t = EMLX.full(1.0, {1024, 1024}, {:f, 32}, :cpu)
    EMLX.eval(t)
    assert settled_counters().active_memory >= before + 1024 * 1024 * 4
    EMLX.deallocate(t)
    # the eval's job may still hold the array for a moment after its reply
    assert settled_counters().active_memory == before
  end

  test "clear_cache/0 empties the cache" do
    t = EMLX.full(1.0, {256, 256}, {:f, 32}, :cpu)
    EMLX.eval(t)
    EMLX.deallocate(t)
    # let the eval's job drop its reference first, or the buffer reaches the
    # cache after it has been cleared
    settled_counters()
    assert EMLX.memory_info().cache_memory >= 256 * 256 * 4
    assert EMLX.clear_cache() == :ok
    assert EMLX.memory_info().cache_memory == 0
  end

  test "reset_peak_memory/0 brings the peak down to what is active" do
    t = EMLX.full(1.0, {512, 512}, {:f, 32}, :cpu)
    EMLX.eval(t)
    EMLX.deallocate(t)
    active = settled_counters().active_memory
    assert EMLX.memory_info().peak_memory >= active + 512 * 512 * 4
    assert EMLX.reset_peak_memory() == :ok
    info = EMLX.memory_info()
    assert info.peak_memory == active
    assert info.active_memory == active
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
    before = settled_counters()

    sizes =
      run_and_exit(fn ->
        for _ <- 1..20 do
          EMLX.full(2.0, {100, 100}, {:f, 64}, :cpu) |> EMLX.to_blob() |> byte_size()
        end
      end)

    assert sizes == List.duplicate(80_000, 20)
    assert settled_counters() == before
  end
end
