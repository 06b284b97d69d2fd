defmodule EMLX.ValidationTest do
  # Every argument of every NIF row is validated: for each row and each
  # argument position, a bad value there (with valid values elsewhere) must
  # come back as {:error, "<name>: argument <n>: ..."} — never a crash, an
  # exception or a wrong-argument message. The rows and their signatures come
  # from c_src/nif_rows.h (EMLX.NIF.__rows__/0), so new rows are covered too.
  use ExUnit.Case, async: true

  import EMLX.TestHelpers

  setup_all do
    live = tensor([1.0, 2.0, 3.0, 4.0], {2, 2})
    freed = tensor([1.0], {1})
    EMLX.deallocate(freed)
    {_, live_ref} = live
    {:ok, queue} = EMLX.CommandQueue.new(:cpu)
    # program_run's program: one input of live's template
    spec = {[{{:f, 32}, {2, 2}}], [{:exp, [{:ref, 0}]}], [{:ref, 1}]}
    {:ok, program} = EMLX.NIF.program_compile(spec)

    %{
      live: live,
      freed: freed,
      live_ref: live_ref,
      queue: queue.ref,
      spec: spec,
      program: program
    }
  end

  defp valid(kind, ctx) do
    case kind do
      ?t -> ctx.live
      ?r -> ctx.live
      ?o -> nil
      ?T -> [ctx.live]
      ?s -> {2}
      ?R -> {2}
      ?n -> [0]
      ?a -> [0]
      ?A -> nil
      ?i -> 0
      ?u -> 1
      ?U -> 1
      ?f -> 1.0
      ?x -> 1
      ?b -> true
      ?y -> {:f, 32}
      ?Y -> true
      ?d -> :cpu
      ?B -> <<>>
      ?S -> "/emlx_validation_test"
      ?q -> ctx.queue
      ?k -> make_ref()
      ?P -> ctx.program
      ?z -> ctx.spec
      ?L -> [ctx.live]
    end
  end

  defp invalid(kind, ctx) do
    ref = ctx.live_ref

    case kind do
      k when k in [?t, ?T] ->
        tensorish = [
          1,
          {:cpu, 1},
          {:tpu, ref},
          {:cpu, make_ref()},
          {:cpu, ctx.queue},
          ctx.freed,
          {:gpu, ref},
          {:cpu, ref, :extra},
          "tensor"
        ]

        if k == ?T,
          do:
            [[], [ctx.live, 1], [ctx.freed], :not_a_list, [ctx.live | ctx.live]] ++
              Enum.map(tensorish, &[&1]),
          else: tensorish

      ?r ->
        [1, {:cpu, 1}, {:tpu, ref}, {:cpu, make_ref()}, "x"]

      ?o ->
        [1, {:cpu, 1}, ctx.freed, :none]

      k when k in [?s, ?R] ->
        [
          {-2},
          {:a},
          [1 | 2],
          List.duplicate(1, 65),
          {Bitwise.bsl(1, 64)},
          :foo,
          {1.5},
          "12",
          %{}
        ]

      ?n ->
        [{1}, [:a], [Bitwise.bsl(1, 70)], [1 | 2], List.duplicate(0, 65), 1.0]

      ?a ->
        [[100], [:x], {0}, [-65], :all, nil, [1 | 2]]

      ?A ->
        [[100], [:x], {0}, :all, [1.5]]

      ?i ->
        [1.5, Bitwise.bsl(1, 64), :a, "1", nil]

      ?u ->
        [-1, 1.5, Bitwise.bsl(1, 63), :a]

      ?U ->
        [-1, Bitwise.bsl(1, 64), 1.0, :a]

      ?f ->
        [:a, "1", nil, {1.0}, Bitwise.bsl(1, 70)]

      ?x ->
        [:foo, {1, :a}, "1", [1], {1, 2, 3}, nil, Bitwise.bsl(1, 70)]

      ?b ->
        [1, nil, "true", :yes]

      ?y ->
        [{:f, 8}, {:x, 32}, :float128, "f32", {:f, 32, 1}, {:u, :x}, true, nil]

      ?Y ->
        [1, {:f, 8}, nil, "x"]

      ?d ->
        [:tpu, "cpu", {:cpu, 0}, nil, 0]

      ?B ->
        [1, [1, 2], :bin, nil]

      ?S ->
        ["", 1, "a" <> <<0>> <> "b", String.duplicate("x", 300), :name, ~c"name"]

      ?q ->
        [make_ref(), ref, nil, 1, {:cpu, ctx.queue}]

      ?k ->
        [1, nil, "ref", {:ref}]

      ?P ->
        [make_ref(), ref, ctx.queue, ctx.live, nil, 1]

      # program_compile's spec
      ?z ->
        [
          :spec,
          {[], []},
          {[{{:f, 32}, {2}}], [], []},
          {[{{:f, 8}, {2}}], [], [{:ref, 0}]},
          {[{{:f, 32}, {2}}], [{:nope, []}], [{:ref, 0}]},
          {[{{:f, 32}, {2}}], [{:exp, [{:ref, 3}]}], [{:ref, 1}]},
          {[{{:f, 32}, {2}}], [], [{:ref, 1}]}
        ]

      ?L ->
        [:not_a_list, [1], [ctx.freed], [ctx.live | ctx.live], {ctx.live}]
    end
  end

  test "a bad value in any argument of any row is rejected, naming the row and argument", ctx do
    for {name, sig} <- EMLX.NIF.__rows__(),
        {kind, index} <- Enum.with_index(String.to_charlist(sig)),
        bad <- invalid(kind, ctx) do
      args =
        sig
        |> String.to_charlist()
        |> Enum.with_index()
        |> Enum.map(fn
          {_, ^index} -> bad
          {k, _} -> valid(k, ctx)
        end)

      result = apply(EMLX.NIF, name, args)
      prefix = "#{name}: argument #{index + 1}: "

      assert match?({:error, message} when is_binary(message), result) and
               String.starts_with?(elem(result, 1), prefix),
             "#{name}/#{byte_size(sig)} with #{inspect(bad)} as argument #{index + 1} " <>
               "returned #{inspect(result)}"
    end
  end

  test "the messages say what was wrong", ctx do
    assert {:error, "add: argument 2: the tensor was deallocated"} =
             EMLX.NIF.add(ctx.live, ctx.freed)

    assert {:error, "add: argument 1: the tensor is tagged :gpu but lives on cpu"} =
             EMLX.NIF.add({:gpu, ctx.live_ref}, ctx.live)

    assert {:error, "add: argument 1: unknown device tpu in the tensor tag" <> _} =
             EMLX.NIF.add({:tpu, ctx.live_ref}, ctx.live)

    assert {:error, "ones: argument 1: dimension 2 is negative (-1)"} =
             EMLX.NIF.ones({2, -1}, {:f, 32}, :cpu)

    assert {:error, "ones: argument 1: more than 64 entries"} =
             EMLX.NIF.ones(List.duplicate(1, 65), {:f, 32}, :cpu)

    assert {:error, "ones: argument 1: entry 1 is not an integer in the int64 range: " <> _} =
             EMLX.NIF.ones({Bitwise.bsl(1, 64)}, {:f, 32}, :cpu)

    assert {:error, "ones: argument 2: expected a dtype" <> _} = EMLX.NIF.ones({2}, {:f, 8}, :cpu)

    assert {:error, "ones: argument 3: expected a device (:cpu or :gpu), got: tpu"} =
             EMLX.NIF.ones({2}, {:f, 32}, :tpu)

    assert {:error, "ones: " <> message} = EMLX.NIF.ones({2}, {:f, 32}, :gpu)
    assert message =~ "gpu"

    # huge but well-formed sizes are the engine's to refuse
    assert {:error, "ones: " <> message} =
             EMLX.NIF.ones({Bitwise.bsl(1, 40), Bitwise.bsl(1, 40)}, {:f, 32}, :cpu)

    assert message =~ "2^60"
  end

  test "the Elixir functions raise EMLX.NIFError with the message", ctx do
    assert_raise EMLX.NIFError, "add: argument 2: the tensor was deallocated", fn ->
      EMLX.add(ctx.live, ctx.freed)
    end

    assert_raise EMLX.NIFError, ~r/^eval: argument 1: expected a tensor/, fn -> EMLX.eval(:x) end
    assert_raise EMLX.NIFError, ~r/^item: argument 1: expected a tensor/, fn -> EMLX.item(1) end

    assert_raise EMLX.NIFError, ~r/^to_blob: argument 2: expected a non-negative/, fn ->
      EMLX.to_blob(ctx.live, -1)
    end

    assert_raise EMLX.NIFError, ~r/^set_cache_limit: argument 1/, fn ->
      EMLX.set_cache_limit(-1)
    end

    assert_raise EMLX.NIFError, ~r/^shm_unlink: argument 1/, fn -> EMLX.shm_unlink("") end
  end

  test "every row has an Elixir function, or is internal" do
    internal = [
      :command_queue_new,
      :command_queue_default,
      :command_queue_synchronize,
      :device_available,
      :engine_default_device,
      :runtime_info,
      :nif_stats,
      # EMLX.CommandQueue.inline_limits/0 and put_inline_limits/1
      :inline_eval_limits,
      :set_inline_eval_limits,
      # programs: the Nx.Defn compiler's (test/emlx/program_test.exs)
      :program_compile,
      :program_run,
      :program_stats
    ]

    for {name, sig} <- EMLX.NIF.__rows__(), name not in internal do
      arity = byte_size(sig) - if(String.ends_with?(sig, "qk"), do: 2, else: 0)

      assert function_exported?(EMLX, name, arity),
             "EMLX.#{name}/#{arity} is missing for the NIF row #{name}/#{byte_size(sig)}"
    end
  end
end
