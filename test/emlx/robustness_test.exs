defmodule EMLX.RobustnessTest do
  # Calls every NIF with random arguments — some well-formed, some garbage —
  # seeded and reproducible. The VM must stay up, every call must return a
  # result of the documented form (never crash or raise), and once everything
  # is garbage collected no tensor, job, binary holder or byte of memory may be
  # left behind.
  #
  # The fuzzer knows which calls it built to be invalid: each argument is
  # either drawn from its signature letter's domain (valid/2) or built to lie
  # outside it (invalid/2, checked against a model of the letters in
  # c_src/nif_rows.h). A call with an invalid argument must be refused with
  # an error naming the first one; a valid call of a row with an oracle
  # (oracle/4: from_blob, ones, copy, shape, scalar_type, transpose) must
  # give exactly the result the oracle expects.
  #
  #   EMLX_FUZZ_SEED           the seed (default 20251130)
  #   EMLX_FUZZ_CALLS_PER_NIF  calls of each NIF (default 100_000; each NIF
  #                            name/arity counts, about 0.6 s per 100_000)
  #
  # async: false: it moves the process-wide memory and cache limits, and its
  # leak check compares process-wide counters.
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

  # Rows whose valid calls are checked against an exact expectation (oracle/4).
  @oracle_rows [:from_blob, :ones, :copy, :shape, :scalar_type, :transpose]

  test "every NIF survives random arguments without leaking" do
    seed = String.to_integer(System.get_env("EMLX_FUZZ_SEED", "20251130"))
    per_row = String.to_integer(System.get_env("EMLX_FUZZ_CALLS_PER_NIF", "100000"))
    rows = EMLX.NIF.__rows__()

    EMLX.clear_cache()
    # Settled: a process of an earlier test may still be releasing tensors;
    # read too early, the baseline counts them and the end reads a decrease.
    baseline = settled_counters()
    cache_limit = EMLX.set_cache_limit(64 * 1024 * 1024)
    memory_limit = EMLX.set_memory_limit(512 * 1024 * 1024)

    {counts, checked} =
      try do
        run_and_exit(fn -> fuzz(seed, rows, per_row) end)
      after
        EMLX.set_memory_limit(memory_limit)
        EMLX.set_cache_limit(cache_limit)
      end

    assert Enum.sum(Map.values(counts)) >= per_row * length(rows)
    assert map_size(counts) == length(rows)

    # every oracle and the refusal check ran, on enough calls to mean something
    for kind <- [:refused, :from_blob_short, :from_blob_long] ++ @oracle_rows,
        do: assert(Map.get(checked, kind, 0) >= 10, "only #{inspect(checked)}")

    IO.puts(
      "\n  robustness: #{Enum.sum(Map.values(counts))} calls over #{length(rows)} NIFs " <>
        "(seed #{seed}); checked: #{inspect(checked)}"
    )

    # The fuzzing process has exited; what it made must all be gone.
    final = settled_counters()
    assert final == baseline, "leaked: #{inspect(final)} vs #{inspect(baseline)}"
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

    Process.put(:checked, %{})
    inline_limits = EMLX.CommandQueue.inline_limits()

    counts =
      rows
      |> Enum.shuffle()
      |> Enum.reduce(%{}, fn {name, sig}, counts ->
        kinds = String.to_charlist(sig)

        for i <- 1..per_row do
          {args, first_invalid} = build_call(name, kinds, pool)
          check_result!(name, args, first_invalid, apply(EMLX.NIF, name, args), pool)
          if rem(i, 500) == 0, do: drain(pool)
        end

        drain(pool)
        # rows that move the limits must not starve the rows after them
        EMLX.set_memory_limit(512 * 1024 * 1024)
        EMLX.set_cache_limit(64 * 1024 * 1024)
        EMLX.CommandQueue.put_inline_limits(inline_limits)
        Map.put(counts, {name, length(kinds)}, per_row)
      end)

    drain(pool)
    wait_until(fn -> match?({:ok, %{jobs: 0}}, EMLX.NIF.nif_stats()) end)
    drain(pool)
    for {_, t} <- pool.tensors, do: EMLX.NIF.deallocate(t)
    {counts, Process.get(:checked)}
  end

  defp count(kind),
    do: Process.put(:checked, Map.update(Process.get(:checked), kind, 1, &(&1 + 1)))

  # The arguments of one call, and the (1-based) position of the first one
  # built to be invalid, or nil when every one is valid.
  defp build_call(name, kinds, pool) do
    {args, invalid} =
      kinds
      |> Enum.with_index(1)
      |> Enum.map(fn {kind, i} ->
        if :rand.uniform() >= valid_probability(name),
          do: {invalid(kind, pool), i},
          else: {valid_arg(kind, name, pool), nil}
      end)
      |> Enum.unzip()

    {resize_blob(name, args, invalid), Enum.find(invalid, & &1)}
  end

  # A valid from_blob call gets a binary of about the size its shape and type
  # need: exactly, one byte or one element short or long, or twice as long.
  defp resize_blob(:from_blob, [_bin, shape, type, device], [nil, nil, nil, nil]) do
    need = blob_bytes(shape, type)
    size = need + pick([0, 0, 0, -1, 1, -itemsize(type), itemsize(type), need])
    [:rand.bytes(max(size, 0)), shape, type, device]
  end

  defp resize_blob(_name, args, _invalid), do: args

  defp blob_bytes(shape, type),
    do: itemsize(type) * (shape |> Tuple.to_list() |> Enum.product())

  defp itemsize(type) do
    case nx_type(type) do
      :bool -> 1
      {_, bits} -> div(bits, 8)
    end
  end

  defp nx_type(:float32), do: {:f, 32}
  defp nx_type(:f16), do: {:f, 16}
  defp nx_type(:bfloat16), do: {:bf, 16}
  defp nx_type(type), do: type

  # A call built with an invalid argument is refused, and the error names the
  # first such argument (the arguments are decoded in order). Any other call
  # returns one of the documented shapes, and the oracle's result where the
  # row has one; anything else (or an exception) fails.
  defp check_result!(name, args, first_invalid, result, _pool) when is_integer(first_invalid) do
    prefix = "#{name}: argument #{first_invalid}: "

    case result do
      {:error, <<^prefix::binary-size(byte_size(prefix)), _::binary>>} ->
        count(:refused)

      _ ->
        flunk(
          "#{name}(#{inspect(args, limit: 8)}) has an invalid argument #{first_invalid} " <>
            "but returned #{inspect(result, limit: 8)}"
        )
    end
  end

  defp check_result!(name, args, nil, result, pool) do
    ok =
      case result do
        :ok -> true
        :already_deallocated -> name == :deallocate
        {:ok, _} -> true
        {:error, message} when is_binary(message) -> String.starts_with?(message, "#{name}: ")
        _ -> false
      end

    unless ok and oracle(name, args, result, pool) do
      flunk("#{name}(#{inspect(args, limit: 8)}) returned #{inspect(result, limit: 8)}")
    end
  end

  # Whether a valid call's result is the expected one (true for rows without
  # an oracle). Successful results are read back with shape/scalar_type.
  defp oracle(:from_blob, [bin, shape, type, device], result, _pool) do
    cond do
      byte_size(bin) < blob_bytes(shape, type) ->
        count(:from_blob_short)
        size_refused?(result, bin)

      byte_size(bin) > blob_bytes(shape, type) ->
        count(:from_blob_long)
        size_refused?(result, bin)

      device == :gpu and not gpu?() ->
        match?({:error, "from_blob: " <> _}, result)

      true ->
        count(:from_blob)
        made?(result, device, shape, nx_type(type))
    end
  end

  defp oracle(:ones, [shape, type, device], result, _pool) do
    if device == :gpu and not gpu?() do
      match?({:error, "ones: " <> _}, result)
    else
      count(:ones)
      made?(result, device, shape, nx_type(type))
    end
  end

  defp oracle(:copy, [t], result, pool) do
    count(:copy)
    {type, shape} = pool.info[t]
    made?(result, :cpu, shape, type)
  end

  defp oracle(:shape, [t], result, pool) do
    count(:shape)
    result == {:ok, elem(pool.info[t], 1)}
  end

  defp oracle(:scalar_type, [t], result, pool) do
    count(:scalar_type)
    result == {:ok, elem(pool.info[t], 0)}
  end

  defp oracle(:transpose, [t, nil], result, pool) do
    count(:transpose)
    {type, shape} = pool.info[t]
    made?(result, :cpu, shape |> Tuple.to_list() |> Enum.reverse() |> List.to_tuple(), type)
  end

  defp oracle(_name, _args, _result, _pool), do: true

  defp size_refused?({:error, "from_blob: the binary has " <> rest}, bin),
    do: String.starts_with?(rest, "#{byte_size(bin)} bytes, but shape ")

  defp size_refused?(_result, _bin), do: false

  defp made?({:ok, {device, _} = t}, device, shape, type),
    do: EMLX.NIF.shape(t) == {:ok, shape} and EMLX.NIF.scalar_type(t) == {:ok, type}

  defp made?(_result, _device, _shape, _type), do: false

  defp gpu?, do: EMLX.NIF.device_available(:gpu) == {:ok, true}

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

  # Live tensors with the type and shape they were made with (info), one
  # deallocated tensor, and one tagged with the wrong device.
  defp make_pool do
    base =
      for type <- @types, shape <- [{}, {3}, {2, 3}, {0, 2}] do
        size = shape |> Tuple.to_list() |> Enum.product()
        {{type, shape}, EMLX.from_blob(encode(sample(type, size), type), shape, type, :cpu)}
      end

    f = tensor(Enum.map(0..11, &(&1 * 0.5)), {3, 4})

    views = [
      {{{:f, 32}, {4, 3}}, EMLX.transpose(f, [1, 0])},
      {{{:f, 32}, {2, 2}}, EMLX.slice(f, [0, 0], [3, 4], [2, 3])},
      {{{:f, 32}, {2, 2}}, EMLX.broadcast_to(tensor([1.0], {1}), {2, 2})},
      {{{:f, 32}, {3, 4}}, EMLX.exp(f)}
    ]

    tensors = base ++ views
    Enum.each(tensors, fn {_, t} -> EMLX.eval(t) end)
    freed = tensor([1.0], {1})
    EMLX.deallocate(freed)
    {_, some_ref} = elem(hd(tensors), 1)
    queue = EMLX.CommandQueue.new!(:cpu)
    # program_run's program (a pool template) and the loop of program_compile's specs
    {:ok, program} =
      EMLX.NIF.program_compile({[{{:f, 32}, {2, 3}}], [{:exp, [{:ref, 0}]}], [{:ref, 1}]})

    {:ok, one} = EMLX.NIF.scalar_tensor(1, {:s, 64}, :cpu)
    {:ok, limit} = EMLX.NIF.scalar_tensor(5, {:s, 64}, :cpu)
    program_input = tensor(Enum.map(1..6, &(&1 * 0.25)), {2, 3})

    %{
      program: program,
      program_input: program_input,
      loop_limit: limit,
      loop_cond: {[], [{:constant, [limit]}, {:less, [{:ref, 0}, {:ref, 1}]}], [{:ref, 2}]},
      loop_body: {[], [{:constant, [one]}, {:add, [{:ref, 0}, {:ref, 1}]}], [{:ref, 2}]},
      tensors: tensors,
      info: Map.new(tensors, fn {info, t} -> {t, info} end),
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

  # deallocate gets tensors of its own, so the pool stays usable
  defp valid_arg(?r, :deallocate, pool), do: fresh_tensor(pool)
  defp valid_arg(kind, _name, pool), do: valid(kind, pool)

  defp fresh_tensor(pool) do
    case tensor_arg(pool) |> EMLX.NIF.copy() do
      {:ok, t} -> t
      {:error, message} -> flunk("copy failed: #{message}")
    end
  end

  defp valid_probability(name) when name in @costly, do: 0.02
  defp valid_probability(_), do: 0.8

  # A value in the domain of the signature letter kind (nif_rows.h): the
  # decoder accepts it, whatever the handler then makes of it.
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
      ?P -> pool.program
      ?L -> pick([[pool.program_input], [pool.program_input], [], [tensor_arg(pool)]])
      ?z -> spec_arg(pool)
    end
  end

  # program_compile's specs: well-formed, though the engine may refuse some
  # (an op on a dtype it does not take); a loop; captured pool tensors.
  defp spec_arg(pool) do
    op = pick([:exp, :negate, :abs, :sin, :logical_not, :copy, :eval, :shape, :nope])

    case :rand.uniform(4) do
      1 ->
        {[{{:f, 32}, {2, 3}}], [{op, [{:ref, 0}]}, {:sum, [{:ref, 1}, nil, false]}], [{:ref, 2}]}

      2 ->
        {[], [{:constant, [tensor_arg(pool)]}, {op, [{:ref, 0}]}], [{:ref, 1}]}

      3 ->
        {[{{:s, 64}, {}}], [{:while, [pool.loop_cond, pool.loop_body, [{:ref, 0}]]}], [{:ref, 1}]}

      4 ->
        {[{{:f, 32}, {2, 3}}],
         [
           {:constant, [pool.loop_limit]},
           {:greater, [{:ref, 1}, {:ref, 1}]},
           {:cond,
            [
              [{:ref, 2}],
              [{[], [{op, [{:ref, 0}]}], [{:ref, 1}]}, {[], [], [{:ref, 0}]}],
              [{:ref, 0}]
            ]}
         ], [{:ref, 3}]}
    end
  end

  defp tensor_arg(pool), do: elem(pick(pool.tensors), 1)

  # A value outside the domain of kind, which the decoder must refuse: an
  # edge case of the letter, or random garbage that the model accepts?/2
  # says no decoding of kind accepts.
  defp invalid(kind, pool) do
    if :rand.uniform(3) == 1,
      do: pick(edge_invalid(kind, pool)),
      else: refused_garbage(kind, pool, 20)
  end

  defp refused_garbage(kind, pool, 0), do: pick(edge_invalid(kind, pool))

  defp refused_garbage(kind, pool, tries) do
    term = garbage(pool)
    if accepts?(kind, term), do: refused_garbage(kind, pool, tries - 1), else: term
  end

  @big 1 <<< 63

  defp edge_invalid(kind, pool) do
    live = tensor_arg(pool)
    {_, live_ref} = live
    not_tensors = [{:tpu, live_ref}, {:cpu, make_ref()}, {:cpu, pool.queue_struct.ref}, live_ref]

    case kind do
      k when k in [?t, ?o] -> [pool.freed, pool.mistagged, {:cpu, live_ref, :x} | not_tensors]
      ?r -> [{:cpu}, {:cpu, live_ref, :x} | not_tensors]
      ?T -> [[], live, [pool.freed], [live, pool.mistagged], [live | live], [live, nil]]
      ?s -> [{-1}, [2, -1], {1.0}, List.duplicate(1, 65), {@big}, [1 | 2], :a, nil]
      ?R -> [{-2}, [3, -5], {0.5}, List.duplicate(1, 65), [@big], [1 | 2]]
      ?n -> [{1, 2}, [1.5], [@big], List.duplicate(0, 65), [0 | 1], nil]
      ?a -> [[64], [-65], {0}, nil, [0.0], List.duplicate(0, 65)]
      ?A -> [[64], [-65], {0}, [:a], [0 | 1]]
      ?i -> [@big, -@big - 1, 1.0, nil, "1"]
      ?u -> [-1, @big, 2.0, nil]
      ?U -> [-1, 1 <<< 64, 1.0, nil]
      ?f -> [:nan, :infinity, 1 <<< 64, "1", {1.0, 2.0}, nil]
      ?x -> [1 <<< 64, -@big - 1, "1", {1.0}, {1.0, 2.0, 3.0}, {:a, 1.0}, nil, [1]]
      ?b -> [0, 1, nil, "true"]
      ?y -> [{:f, 8}, {:u, 7}, {:bf, 32}, {:c, 32}, {:s, -1}, :f128, true, {:f, 32.0}, {:f}]
      ?Y -> [{:f, 8}, {:u, 7}, :f128, nil, 1, {:f, 32.0}]
      ?d -> [:tpu, {:cpu, 0}, "cpu", nil]
      ?B -> [:a, [1, 2], 1, <<1::3>>]
      ?S -> ["", String.duplicate("a", 256), "a\0b", :a]
      ?q -> [make_ref(), live_ref, :cpu, pool.queue_struct]
      ?k -> [:a, 1, self()]
      ?P -> [make_ref(), live_ref, live, :a, pool.queue_struct]
      ?L -> [live, [pool.freed], [live, pool.mistagged], [live | live], [live, nil], :a]
      ?z -> [:a, 1, nil, {[], []}, {[], [], []}, {[{{:f, 8}, {}}], [], [{:ref, 0}]}]
    end
  end

  # A model of what the decoder (c_src/nif_decode.c) accepts for each letter,
  # erring towards "accepts": a term it says is refused must be refused.
  # Tensor-like terms {atom, reference} count as accepted (the model does not
  # know which references are live tensors); the edge cases cover those.
  defp accepts?(kind, term) do
    case kind do
      k when k in [?t, ?r] -> match?({d, r} when is_atom(d) and is_reference(r), term)
      ?o -> term == nil or accepts?(?t, term)
      ?T -> is_list(term) and term != []
      ?s -> ints?(term, true, &(&1 >= 0))
      ?R -> ints?(term, true, &(&1 >= -1))
      ?n -> ints?(term, false, fn _ -> true end)
      ?a -> ints?(term, false, &(&1 in -64..63))
      ?A -> term == nil or ints?(term, false, &(&1 in -64..63))
      ?i -> int64?(term)
      ?u -> int64?(term) and term >= 0
      ?U -> is_integer(term) and term in 0..((1 <<< 64) - 1)
      ?f -> number?(term)
      ?x -> scalar?(term)
      ?b -> is_boolean(term)
      ?y -> dtype?(term)
      ?Y -> is_boolean(term) or dtype?(term)
      ?d -> term in [:cpu, :gpu]
      ?B -> is_binary(term)
      ?S -> is_binary(term) and byte_size(term) in 1..255 and not String.contains?(term, <<0>>)
      k when k in [?q, ?k, ?P] -> is_reference(term)
      ?L -> is_list(term)
      # any 3-tuple might be a spec (the handler refuses the rest, naming argument 1)
      ?z -> is_tuple(term) and tuple_size(term) == 3
    end
  end

  # At most 64 int64 entries, each passing ok?; a proper list (or a tuple
  # where tuples? allows one).
  defp ints?(term, tuples?, ok?) do
    entries =
      cond do
        is_tuple(term) and tuples? -> Tuple.to_list(term)
        is_list(term) and proper_list?(term) -> term
        true -> nil
      end

    is_list(entries) and length(entries) <= 64 and
      Enum.all?(entries, &(int64?(&1) and ok?.(&1)))
  end

  defp proper_list?([]), do: true
  defp proper_list?([_ | tail]), do: proper_list?(tail)
  defp proper_list?(_), do: false

  defp int64?(v), do: is_integer(v) and v >= -@big and v < @big
  defp number?(v), do: is_float(v) or (is_integer(v) and v >= -@big and v < 1 <<< 64)
  defp extended_number?(v), do: number?(v) or v in [:nan, :infinity, :neg_infinity]

  defp scalar?({re, im}), do: extended_number?(re) and extended_number?(im)
  defp scalar?(v), do: is_boolean(v) or extended_number?(v)

  @dtype_names ~w(bool uint8 uint16 uint32 uint64 int8 int16 int32 int64 float16 float32
                  float64 bfloat16 complex64 u8 u16 u32 u64 s8 s16 s32 s64 f16 f32 f64 bf16 c64)a

  defp dtype?(term) when is_atom(term), do: term in @dtype_names

  defp dtype?({kind, bits}) do
    case kind do
      k when k in [:u, :s] -> bits in [8, 16, 32, 64]
      :f -> bits in [16, 32, 64]
      :bf -> bits === 16
      :c -> bits === 64
      _ -> false
    end
  end

  defp dtype?(_term), do: false

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
        pick([{:f, 8}, {:u, 7}, {:bf, 32}, {:c, 32}, {:s, -1}, {:x, 1}])

      16 ->
        List.duplicate(1, 65)
    end
  end

  defp garbage_leaf do
    pick([0, -1, 7, 1 <<< 40, 1 <<< 64, 1.5, :a, nil, "s", [], {}, make_ref()])
  end
end
