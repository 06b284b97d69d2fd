defmodule EMLX.RobustnessTest do
  # Calls every NIF with random arguments — some well-formed, most garbage —
  # seeded and reproducible. The VM must stay up, every call must return a
  # result of the documented form (never crash or raise), and once everything
  # is garbage collected no tensor, job, binary holder or byte of memory may be
  # left behind.
  #
  #   EMLX_FUZZ_SEED           the seed (default 20251130)
  #   EMLX_FUZZ_CALLS_PER_NIF  calls of each NIF (default 100_000; each NIF
  #                            name/arity counts, about 0.6 s per 100_000)
  #
  # async: false: it moves the process-wide memory and cache limits.
  use ExUnit.Case, async: false

  import Bitwise
  import EMLX.TestHelpers

  @moduletag :robustness
  @moduletag timeout: 900_000

  @types [
    :bool,
    {:u, 8},
    {:u, 16},
    {:u, 32},
    {:u, 64},
    {:s, 8},
    {:s, 16},
    {:s, 32},
    {:s, 64},
    {:f, 16},
    {:f, 32},
    {:f, 64},
    {:bf, 16},
    {:c, 64}
  ]

  # Rows whose valid calls make OS-level objects (threads): made rarely valid.
  @costly [:command_queue_new]

  test "every NIF survives random arguments without leaking" do
    seed = String.to_integer(System.get_env("EMLX_FUZZ_SEED", "20251130"))
    per_row = String.to_integer(System.get_env("EMLX_FUZZ_CALLS_PER_NIF", "100000"))
    rows = EMLX.NIF.__rows__()

    collect_garbage()
    EMLX.clear_cache()
    baseline_memory = EMLX.memory_info().active_memory
    {:ok, baseline} = EMLX.NIF.nif_stats()
    cache_limit = EMLX.set_cache_limit(64 * 1024 * 1024)
    memory_limit = EMLX.set_memory_limit(512 * 1024 * 1024)

    counts =
      try do
        Task.async(fn -> fuzz(seed, rows, per_row) end) |> Task.await(:infinity)
      after
        EMLX.set_memory_limit(memory_limit)
        EMLX.set_cache_limit(cache_limit)
      end

    assert Enum.sum(Map.values(counts)) >= per_row * length(rows)
    assert map_size(counts) == length(rows)

    IO.puts(
      "\n  robustness: #{Enum.sum(Map.values(counts))} calls over #{length(rows)} NIFs (seed #{seed})"
    )

    # The fuzzing process may still be exiting (and the queues it made still
    # stopping): wait for everything to be collected, then compare.
    settled? = fn ->
      collect_garbage()
      {:ok, stats} = EMLX.NIF.nif_stats()
      stats == %{baseline | jobs: 0} and EMLX.memory_info().active_memory == baseline_memory
    end

    try do
      wait_until(settled?)
    rescue
      RuntimeError -> :not_settled
    end

    {:ok, stats} = EMLX.NIF.nif_stats()
    assert stats == %{baseline | jobs: 0}, "leaked: #{inspect(stats)} vs #{inspect(baseline)}"
    assert EMLX.memory_info().active_memory == baseline_memory
    EMLX.clear_cache()
  end

  test "the EMLX functions raise only EMLX.NIFError on random arguments" do
    :rand.seed(:exsss, {7, 11, 13})
    pool = make_pool()
    skip = [:default_device, :resolve_worker, :set_memory_limit, :set_cache_limit, :__info__]

    functions =
      for {name, arity} <- EMLX.__info__(:functions),
          name not in skip,
          not String.starts_with?(Atom.to_string(name), "__"),
          do: {name, arity}

    for _ <- 1..20, {name, arity} <- functions, _ <- 1..50 do
      args =
        for _ <- 1..arity//1,
            do: if(:rand.uniform() < 0.7, do: valid_any(pool), else: garbage(pool))

      try do
        with {"/emlx_" <> _ = segment, size} when is_integer(size) <- apply(EMLX, name, args) do
          EMLX.shm_unlink(segment)
        end
      rescue
        EMLX.NIFError -> :ok
      end

      drain(pool)
    end

    for {_, t} <- pool.tensors, do: EMLX.deallocate(t)
  end

  defp valid_any(pool) do
    valid(pick(~c"ttttsnaAiufxbyYdBSq"), pool)
  end

  defp fuzz(seed, rows, per_row) do
    :rand.seed(:exsss, {seed, seed * 7 + 1, seed * 13 + 2})
    pool = make_pool()

    counts =
      rows
      |> Enum.shuffle()
      |> Enum.reduce(%{}, fn {name, sig}, counts ->
        kinds = String.to_charlist(sig)

        for i <- 1..per_row do
          args = Enum.map(kinds, &arg(&1, name, pool))
          check_result!(name, args, apply(EMLX.NIF, name, args))
          if rem(i, 500) == 0, do: drain(pool)
        end

        drain(pool)
        # rows that move the limits must not starve the rows after them
        EMLX.set_memory_limit(512 * 1024 * 1024)
        EMLX.set_cache_limit(64 * 1024 * 1024)
        Map.put(counts, {name, length(kinds)}, per_row)
      end)

    drain(pool)
    wait_until(fn -> match?({:ok, %{jobs: 0}}, EMLX.NIF.nif_stats()) end)
    drain(pool)
    for {_, t} <- pool.tensors, do: EMLX.NIF.deallocate(t)
    counts
  end

  # Every reply is one of these shapes; anything else (or an exception) fails.
  defp check_result!(name, args, result) do
    ok =
      case result do
        :ok -> true
        :already_deallocated -> name == :deallocate
        {:ok, _} -> true
        {:error, message} when is_binary(message) -> String.starts_with?(message, "#{name}: ")
        _ -> false
      end

    unless ok do
      flunk("#{name}(#{inspect(args, limit: 8)}) returned #{inspect(result, limit: 8)}")
    end
  end

  # Job replies: check their form, and unlink any shared-memory segment made.
  defp drain(pool) do
    receive do
      {ref, reply} when is_reference(ref) ->
        case reply do
          {:ok, {"/emlx_" <> _ = name, size}} when is_integer(size) -> EMLX.NIF.shm_unlink(name)
          {:ok, _} -> :ok
          {:error, message} when is_binary(message) -> :ok
          other -> flunk("unexpected job reply #{inspect(other, limit: 8)}")
        end

        drain(pool)
    after
      0 -> :ok
    end
  end

  ## the pool of well-formed values

  defp make_pool do
    base =
      for type <- @types, shape <- [{}, {3}, {2, 3}, {0, 2}] do
        size = shape |> Tuple.to_list() |> Enum.product()
        {type, EMLX.from_blob(encode(sample(type, size), type), shape, type, :cpu)}
      end

    f = tensor(Enum.map(0..11, &(&1 * 0.5)), {3, 4})

    views = [
      {{:f, 32}, EMLX.transpose(f, [1, 0])},
      {{:f, 32}, EMLX.slice(f, [0, 0], [3, 4], [2, 3])},
      {{:f, 32}, EMLX.broadcast_to(tensor([1.0], {1}), {2, 2})},
      {{:f, 32}, EMLX.exp(f)}
    ]

    tensors = base ++ views
    Enum.each(tensors, fn {_, t} -> EMLX.eval(t) end)
    freed = tensor([1.0], {1})
    EMLX.deallocate(freed)
    {_, some_ref} = elem(hd(tensors), 1)
    queue = EMLX.CommandQueue.new!(:cpu)

    %{
      tensors: tensors,
      freed: freed,
      mistagged: {:gpu, some_ref},
      queues: [EMLX.Application.default_worker(:cpu), queue.ref],
      queue_struct: queue
    }
  end

  defp sample(:bool, n), do: Enum.map(1..n//1, &rem(&1, 2))
  defp sample({:u, _}, n), do: Enum.to_list(1..n//1)
  defp sample({:s, _}, n), do: Enum.map(1..n//1, &(&1 - 2))
  defp sample({:c, _}, n), do: Enum.map(1..n//1, &{&1 * 1.0, -1.0})
  defp sample(_, n), do: Enum.map(1..n//1, &(&1 * 0.25))

  ## argument generators

  defp arg(kind, name, pool) do
    cond do
      :rand.uniform() >= valid_probability(name) -> garbage(pool)
      # deallocate gets tensors of its own, so the pool stays usable
      name == :deallocate -> fresh_tensor(pool)
      true -> valid(kind, pool)
    end
  end

  defp fresh_tensor(pool) do
    case tensor_arg(pool) |> EMLX.NIF.copy() do
      {:ok, t} -> t
      {:error, _} -> pool.freed
    end
  end

  defp valid_probability(name) when name in @costly, do: 0.02
  defp valid_probability(_), do: 0.8

  defp valid(kind, pool) do
    case kind do
      k when k in [?t, ?r] -> tensor_arg(pool)
      ?o -> pick([nil, tensor_arg(pool)])
      ?T -> for _ <- 1..:rand.uniform(3), do: tensor_arg(pool)
      ?s -> List.to_tuple(small_ints(0..4))
      ?R -> List.to_tuple(small_ints(-1..6))
      ?n -> small_ints(-4..4)
      ?a -> small_ints(-3..3)
      ?A -> pick([nil, small_ints(-3..3)])
      ?i -> pick([0, 1, -1, 2, :rand.uniform(10) - 5])
      ?u -> pick([0, 1, 2, 3, :rand.uniform(100)])
      ?U -> pick([0, 1024, 64 * 1024 * 1024, :rand.uniform(1 <<< 30)])
      ?f -> pick([0, 1, -1.5, 2.5, :rand.uniform() * 10])
      ?x -> pick([0, 1, -2, 0.5, :nan, :infinity, {1.0, 2.0}, true, 1 <<< 63])
      ?b -> pick([true, false])
      ?y -> pick(@types ++ [:float32, :f16, :bfloat16, :bool])
      ?Y -> pick([true, false | @types])
      ?d -> pick([:cpu, :cpu, :cpu, :gpu])
      ?B -> :rand.bytes(pick([0, 1, 4, 8, 12, 24]))
      ?S -> pick(["/emlx_fuzz_#{:rand.uniform(1000)}", "x", "/"])
      ?q -> pick(pool.queues)
      ?k -> make_ref()
    end
  end

  defp tensor_arg(pool) do
    case :rand.uniform(20) do
      1 -> pool.freed
      2 -> pool.mistagged
      _ -> elem(pick(pool.tensors), 1)
    end
  end

  defp small_ints(range) do
    for _ <- 1..:rand.uniform(4)//1, do: Enum.random(range)
  end

  defp pick(list), do: Enum.at(list, :rand.uniform(length(list)) - 1)

  defp garbage(pool) do
    case :rand.uniform(16) do
      1 ->
        :rand.uniform(1 <<< 70) - (1 <<< 69)

      2 ->
        pick([-1, 0, 1, 1 <<< 63, 1 <<< 64, -(1 <<< 63), 65])

      3 ->
        (:rand.uniform() - 0.5) * 1.0e300

      4 ->
        pick([:nan, :infinity, nil, true, false, :cpu, :gpu, :tpu, :f32, :ok, :error])

      5 ->
        :rand.bytes(:rand.uniform(64))

      6 ->
        for _ <- 1..:rand.uniform(70), do: garbage_leaf()

      7 ->
        List.to_tuple(for _ <- 1..:rand.uniform(5), do: garbage_leaf())

      8 ->
        [garbage_leaf() | garbage_leaf()]

      9 ->
        %{a: garbage_leaf(), re: 1, im: 2}

      10 ->
        {pick([:cpu, :gpu, :tpu, 1]),
         pick([make_ref(), pool.queue_struct.ref, elem(pool.mistagged, 1)])}

      11 ->
        {:cpu, elem(tensor_arg(pool), 1), :extra}

      12 ->
        self()

      13 ->
        fn -> :ok end

      14 ->
        pool.queue_struct

      15 ->
        pick([{:f, 8}, {:u, 7}, {:bf, 32}, {:c, 128}, {:s, -1}, {:x, 1}])

      16 ->
        List.duplicate(1, 65)
    end
  end

  defp garbage_leaf do
    pick([0, -1, 7, 1 <<< 40, 1 <<< 64, 1.5, :a, nil, "s", [], {}, make_ref()])
  end
end
