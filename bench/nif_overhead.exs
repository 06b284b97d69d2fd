# bench/nif_overhead.exs — the cost of crossing into the NIF.
#
#   mix run bench/nif_overhead.exs [--reps K] [--calls N]
#
# Cases (each the median over K repetitions of N calls):
#
#   build_add        EMLX.add/2 on two small tensors: one graph-building NIF
#                    call, including the Elixir wrapper and the new tensor
#                    resource (goal < 2 us)
#   build_add_nif    the same through EMLX.NIF.add/2 directly
#   eval_ready       EMLX.eval/1 of an evaluated tensor: submit to the default
#                    queue, the worker's callback, the message back (goal < 20 us)
#   eval_add         build a 0-d add and EMLX.eval/1 it
#   item_add         build a 0-d add and EMLX.item/1 it (eval + read the value)
#
# Peers measured in the same run: `noop_nif` (EMLX.NIF.nif_stats/0, the
# cheapest call into this library), `make_ref` (a BIF), and `ping_pong` (a
# message round trip to another Erlang process, the floor under any
# asynchronous reply). Output lines are key=value fields (see bench/README.md);
# `ratio` lines compare each case with its goal and peer.

{opts, _, _} = OptionParser.parse(System.argv(), strict: [reps: :integer, calls: :integer])
reps = Keyword.get(opts, :reps, 15)
calls = Keyword.get(opts, :calls, 20_000)

defmodule NifOverheadBench do
  def time_per_call(reps, calls, fun) do
    fun.(div(calls, 10) + 1)

    samples =
      for _ <- 1..reps do
        {us, _} = :timer.tc(fn -> fun.(calls) end)
        us * 1000 / calls
      end

    samples = Enum.sort(samples)
    %{median: Enum.at(samples, div(reps, 2)), min: hd(samples)}
  end

  def loop(0, _fun), do: :ok

  def loop(n, fun) do
    fun.()
    loop(n - 1, fun)
  end
end

f32 = fn value -> EMLX.scalar_tensor(value, {:f, 32}, :cpu) end
a = EMLX.full(1.0, {4}, {:f, 32}, :cpu)
b = EMLX.full(2.0, {4}, {:f, 32}, :cpu)
s = f32.(1.5)
:ok = EMLX.eval(a)
:ok = EMLX.eval(b)
:ok = EMLX.eval(s)

echo =
  spawn(fn ->
    receive_loop = fn receive_loop ->
      receive do
        {from, ref} ->
          send(from, ref)
          receive_loop.(receive_loop)
      end
    end

    receive_loop.(receive_loop)
  end)

ping = fn ->
  ref = make_ref()
  send(echo, {self(), ref})

  receive do
    ^ref -> :ok
  end
end

cases = [
  {"noop_nif", :peer, fn -> EMLX.NIF.nif_stats() end},
  {"make_ref", :peer, fn -> make_ref() end},
  {"ping_pong", :peer, ping},
  {"build_add", 2_000, fn -> EMLX.add(a, b) end},
  {"build_add_nif", 2_000, fn -> EMLX.NIF.add(a, b) end},
  {"eval_ready", 20_000, fn -> EMLX.eval(s) end},
  {"eval_add", 20_000, fn -> EMLX.eval(EMLX.add(s, s)) end},
  {"item_add", 20_000, fn -> EMLX.item(EMLX.add(s, s)) end}
]

info = EMLX.NIF.runtime_info() |> elem(1)

IO.puts(
  "# emlx version=#{info.version} simd=#{info.simd} threads=#{info.threads} " <>
    "schedulers=#{System.schedulers_online()} otp=#{System.otp_release()} " <>
    "elixir=#{System.version()} reps=#{reps} calls=#{calls}"
)

results =
  for {name, goal, fun} <- cases do
    n = if goal in [:peer, 2_000], do: calls, else: div(calls, 4)

    %{median: median, min: min} =
      NifOverheadBench.time_per_call(reps, n, &NifOverheadBench.loop(&1, fun))

    goal_field = if goal == :peer, do: "", else: " goal_ns=#{goal}"

    IO.puts(
      "case=#{name} impl=emlx reps=#{reps} calls=#{n} median_ns=#{Float.round(median, 1)} " <>
        "min_ns=#{Float.round(min, 1)}#{goal_field}"
    )

    {name, goal, median}
  end

peer = fn name -> results |> Enum.find(&(elem(&1, 0) == name)) |> elem(2) end

for {name, goal, median} <- results, goal != :peer do
  peer_name = if goal == 2_000, do: "noop_nif", else: "ping_pong"

  IO.puts(
    "ratio case=#{name} median_ns=#{Float.round(median, 1)} goal_ns=#{goal} " <>
      "goal_ratio=#{Float.round(median / goal, 3)} peer=#{peer_name} " <>
      "peer_ratio=#{Float.round(median / peer.(peer_name), 2)} " <>
      "check=#{if median < goal, do: "ok", else: "over_goal"}"
  )
end
