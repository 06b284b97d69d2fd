defmodule EMLX.TestHelpers do
  @moduledoc false
  # Builds tensors from Elixir lists and reads them back, with the binary
  # encodings written out here so tests compare against values computed
  # independently of the engine.

  import Bitwise

  @doc "A tensor of `type` and `shape` holding the (flat, row-major) `values`."
  def tensor(values, shape, type \\ {:f, 32}, device \\ :cpu) do
    EMLX.from_blob(encode(values, type), shape, type, device)
  end

  @doc "The elements of a tensor as a flat list (non-finite floats as atoms)."
  def values(tensor), do: tensor |> EMLX.to_blob() |> decode(EMLX.scalar_type(tensor))

  @doc "Shape and flat values."
  def read(tensor), do: {EMLX.shape(tensor), values(tensor)}

  def encode(values, type), do: for(v <- values, into: <<>>, do: encode1(v, type))

  defp encode1(v, :bool), do: <<if(v in [0, false], do: 0, else: 1)::8>>
  defp encode1(v, {:u, bits}), do: <<v::unsigned-size(bits)-native>>
  defp encode1(v, {:s, bits}), do: <<v::signed-size(bits)-native>>
  defp encode1(v, {:f, bits}) when is_number(v), do: <<v::float-size(bits)-native>>
  defp encode1(v, {:f, 32}), do: <<special_bits32(v)::32-native>>
  defp encode1(v, {:f, 64}), do: <<special_bits64(v)::64-native>>
  defp encode1(v, {:f, 16}), do: <<special_bits16(v)::16-native>>
  defp encode1(v, {:bf, 16}), do: <<bf16_bits(v)::16-native>>

  defp encode1({re, im}, {:c, 64}),
    do: <<re::float-32-native, im::float-32-native>>

  defp encode1(v, {:c, 64}), do: encode1({v, 0.0}, {:c, 64})

  defp encode1({re, im}, {:c, 128}),
    do: <<re::float-64-native, im::float-64-native>>

  defp encode1(v, {:c, 128}), do: encode1({v, 0.0}, {:c, 128})

  defp special_bits32(:nan), do: 0x7FC00000
  defp special_bits32(:infinity), do: 0x7F800000
  defp special_bits32(:neg_infinity), do: 0xFF800000
  defp special_bits64(:nan), do: 0x7FF8000000000000
  defp special_bits64(:infinity), do: 0x7FF0000000000000
  defp special_bits64(:neg_infinity), do: 0xFFF0000000000000
  defp special_bits16(:nan), do: 0x7E00
  defp special_bits16(:infinity), do: 0x7C00
  defp special_bits16(:neg_infinity), do: 0xFC00

  # bf16 of a float: the top half of its f32 bits, rounded to nearest even.
  defp bf16_bits(v) when is_number(v) do
    <<bits::32>> = <<v::float-32>>
    bits = bits + 0x7FFF + (bits >>> 16 &&& 1)
    bits >>> 16 &&& 0xFFFF
  end

  defp bf16_bits(v), do: special_bits32(v) >>> 16

  def decode(bin, :bool), do: for(<<b::8 <- bin>>, do: b)
  def decode(bin, {:u, bits}), do: for(<<v::unsigned-size(bits)-native <- bin>>, do: v)
  def decode(bin, {:s, bits}), do: for(<<v::signed-size(bits)-native <- bin>>, do: v)

  def decode(bin, {:f, bits}),
    do: for(<<raw::bitstring-size(bits) <- bin>>, do: float(raw, bits))

  def decode(bin, {:bf, 16}),
    do: for(<<v::16-native <- bin>>, do: float(<<v::16, 0::16>>, 32, :big))

  def decode(bin, {:c, 64}) do
    for <<re::bitstring-32, im::bitstring-32 <- bin>>, do: {float(re, 32), float(im, 32)}
  end

  def decode(bin, {:c, 128}) do
    for <<re::bitstring-64, im::bitstring-64 <- bin>>, do: {float(re, 64), float(im, 64)}
  end

  defp float(raw, bits, endian \\ :native) do
    case {endian, raw} do
      {:native, <<f::float-size(bits)-native>>} -> f
      {:big, <<f::float-size(bits)>>} -> f
      _ -> special(raw, bits, endian)
    end
  end

  defp special(raw, bits, endian) do
    <<u::size(bits)>> = if endian == :native, do: swap(raw, bits), else: raw
    exp_bits = %{16 => 5, 32 => 8, 64 => 11}[bits]
    mantissa = u &&& (1 <<< (bits - 1 - exp_bits)) - 1

    cond do
      mantissa != 0 -> :nan
      u >>> (bits - 1) == 1 -> :neg_infinity
      true -> :infinity
    end
  end

  defp swap(raw, bits) do
    <<u::size(bits)-native>> = raw
    <<u::size(bits)-big>>
  end

  @doc "Asserts two lists of floats agree within `tol` (atoms must be equal)."
  def close?(a, b, tol \\ 1.0e-5)

  def close?(a, b, tol) when is_list(a) and is_list(b),
    do: length(a) == length(b) and Enum.all?(Enum.zip(a, b), fn {x, y} -> close?(x, y, tol) end)

  def close?({r1, i1}, {r2, i2}, tol), do: close?(r1, r2, tol) and close?(i1, i2, tol)

  def close?(x, y, tol) when is_number(x) and is_number(y),
    do: abs(x - y) <= tol * max(1.0, abs(y))

  def close?(x, y, _tol), do: x == y

  @doc "Row-major strides of a shape."
  def row_major_strides(shape) do
    shape
    |> Tuple.to_list()
    |> Enum.reverse()
    |> Enum.map_reduce(1, fn d, acc -> {acc, acc * d} end)
    |> elem(0)
    |> Enum.reverse()
    |> List.to_tuple()
  end

  @doc """
  Waits for the processes of finished tests to exit, garbage-collects every
  process, then waits for in-flight jobs to finish.
  """
  def collect_garbage do
    await_finished_tests()
    for pid <- Process.list(), do: :erlang.garbage_collect(pid)
    wait_until(fn -> match?({:ok, %{jobs: 0}}, EMLX.NIF.nif_stats()) end)
    for pid <- Process.list(), do: :erlang.garbage_collect(pid)
    :ok
  end

  # ExUnit starts the next test once the last one has sent its result, not
  # once its process has exited (ExUnit.Runner.receive_test_reply/4), so the
  # tensors that process still holds are freed a moment into the next test,
  # or later on a busy machine. Such a process is the one whose stack holds
  # nothing but the runner's test fun: it has sent its result and is about to
  # exit(:shutdown). A running test (an async one) has the test's frames
  # above it and is left alone.
  defp await_finished_tests do
    for pid <- Process.list(), pid != self(), finished_test?(pid) do
      ref = Process.monitor(pid)

      receive do
        {:DOWN, ^ref, _, _, _} -> :ok
      after
        5_000 -> Process.demonitor(ref, [:flush])
      end
    end

    :ok
  end

  defp finished_test?(pid) do
    case Process.info(pid, :current_stacktrace) do
      {:current_stacktrace, [{ExUnit.Runner, fun, _, _}]} ->
        String.starts_with?(Atom.to_string(fun), "-spawn_test_monitor/")

      _ ->
        false
    end
  end

  @doc """
  Waits until the engine is quiet and returns its counters: the NIF's live
  objects (`EMLX.NIF.nif_stats/0`: tensors, queues, jobs, blobs) and the
  allocator's `:active_memory`, read after `collect_garbage/0` and unchanged
  over `samples` consecutive readings 10 ms apart.

  One reading is not enough to compare against. A job drops its reference to
  its array only after it has sent its reply (`job_reply` then `job_free` in
  c_src/nif_async.c), so right after `EMLX.eval/1` returns, the array's buffer
  may still be held by the worker. A process that has replied (a `Task`
  whose result was awaited) may not have exited yet, and its tensors stay
  alive until it has. Tests that compare the counters before and after their
  own work take both readings with this, and run in `async: false` modules,
  so no other test allocates meanwhile.
  """
  def settled_counters(samples \\ 3), do: settle(read_counters(), 1, samples, 500)

  defp settle(last, same, samples, _tries) when same >= samples, do: last
  defp settle(_last, _same, _samples, 0), do: raise("the engine's counters never settled")

  defp settle(last, same, samples, tries) do
    Process.sleep(10)

    case read_counters() do
      ^last -> settle(last, same + 1, samples, tries - 1)
      now -> settle(now, 1, samples, tries - 1)
    end
  end

  defp read_counters do
    collect_garbage()
    {:ok, stats} = EMLX.NIF.nif_stats()
    Map.put(stats, :active_memory, EMLX.memory_info().active_memory)
  end

  @doc """
  Runs `fun` in a new process and returns its result once that process has
  exited, so that nothing it made is still held by it.
  """
  def run_and_exit(fun) do
    {pid, ref} =
      spawn_monitor(fn ->
        result =
          try do
            {:ok, fun.()}
          rescue
            e -> {:raised, e, __STACKTRACE__}
          end

        exit({:result, result})
      end)

    receive do
      {:DOWN, ^ref, :process, ^pid, {:result, {:ok, result}}} -> result
      {:DOWN, ^ref, :process, ^pid, {:result, {:raised, e, stack}}} -> reraise e, stack
      {:DOWN, ^ref, :process, ^pid, reason} -> raise "the process failed: #{inspect(reason)}"
    end
  end

  def wait_until(fun, tries \\ 500) do
    cond do
      fun.() -> :ok
      tries == 0 -> raise "condition not reached"
      true -> Process.sleep(10) && wait_until(fun, tries - 1)
    end
  end
end
