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
# Inline against queued (EMLX.CommandQueue, "Small work runs inline"), the
# two paths interleaved repetition by repetition (the order alternating) so
# that a busy machine slows both alike:
#
#   add_to_blob16    EMLX.add/2 of two 16-element f32 tensors, then
#                    EMLX.to_blob/1: the round trip of an eager Nx.add
#                    (path=inline: the default limits; path=queued:
#                    max_nodes: 0, the behaviour before the inline path)
#   item_add16       the same with a sum to a scalar and EMLX.item/1
#
# and the dearest work the default limits still take inline, which must stay
# well under a millisecond (a regular NIF's budget; goal_ns=1000000):
#
#   edge_erf_inv_f64 erf_inv of 16384 f64 elements (32768 element-ops), the
#                    dearest kernel per element found (f32/f16/bf16 erf_inv
#                    and c64 transcendentals are alike)
#   edge_pow_c64     pow of two 10922-element c64 tensors (32766)
#   edge_chain64     64 chained adds on 128 f32 elements (64 nodes, 24576)
#
# Peers measured in the same run: `noop_nif` (EMLX.NIF.nif_stats/0, the
# cheapest call into this library), `make_ref` (a BIF), and `ping_pong` (a
# message round trip to another Erlang process, the floor under any
# asynchronous reply). Output lines are key=value fields (see bench/README.md);
# `ratio` lines compare each case with its goal and peer.

{opts, _, _} =
  OptionParser.parse(System.argv(),
    strict: [reps: :integer, calls: :integer, only_paths: :boolean]
  )

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
  for {name, goal, fun} <- cases, !Keyword.get(opts, :only_paths, false) do
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

# ---- inline against queued, interleaved ----------------------------------------------

defmodule NifOverheadBench.Paths do
  def stats(samples) do
    sorted = Enum.sort(samples)
    n = length(sorted)
    at = fn q -> Enum.at(sorted, min(n - 1, round(q * (n - 1)))) end
    %{median: at.(0.5), min: hd(sorted), max: List.last(sorted), p25: at.(0.25), p75: at.(0.75)}
  end

  def fmt(x), do: Float.round(x * 1.0, 1)
end

default_limits = EMLX.CommandQueue.inline_limits()
queued_limits = %{default_limits | max_nodes: 0}

x16 =
  EMLX.from_blob(
    for(i <- 1..16, into: <<>>, do: <<i * 0.5::float-32-native>>),
    {16},
    {:f, 32},
    :cpu
  )

y16 =
  EMLX.from_blob(
    for(i <- 1..16, into: <<>>, do: <<i * 1.5::float-32-native>>),
    {16},
    {:f, 32},
    :cpu
  )

expected16 = for(i <- 1..16, into: <<>>, do: <<i * 2.0::float-32-native>>)
^expected16 = EMLX.to_blob(EMLX.add(x16, y16))

path_cases = [
  {"add_to_blob16", fn -> EMLX.to_blob(EMLX.add(x16, y16)) end},
  {"item_add16", fn -> EMLX.item(EMLX.sum(EMLX.add(x16, y16), nil, false)) end}
]

path_calls = div(calls, 4)

for {name, fun} <- path_cases do
  samples =
    Enum.reduce(1..reps, %{inline: [], queued: []}, fn rep, acc ->
      order = if rem(rep, 2) == 0, do: [:inline, :queued], else: [:queued, :inline]

      Enum.reduce(order, acc, fn path, acc ->
        EMLX.CommandQueue.put_inline_limits(
          if path == :inline, do: default_limits, else: queued_limits
        )

        %{median: per_call} =
          NifOverheadBench.time_per_call(1, path_calls, &NifOverheadBench.loop(&1, fun))

        Map.update!(acc, path, &[per_call | &1])
      end)
    end)

  EMLX.CommandQueue.put_inline_limits(default_limits)
  s_in = NifOverheadBench.Paths.stats(samples.inline)
  s_q = NifOverheadBench.Paths.stats(samples.queued)

  for {path, st} <- [inline: s_in, queued: s_q] do
    IO.puts(
      "case=#{name} impl=emlx path=#{path} reps=#{reps} calls=#{path_calls} " <>
        "median_ns=#{NifOverheadBench.Paths.fmt(st.median)} min_ns=#{NifOverheadBench.Paths.fmt(st.min)} " <>
        "p25_ns=#{NifOverheadBench.Paths.fmt(st.p25)} p75_ns=#{NifOverheadBench.Paths.fmt(st.p75)} " <>
        "max_ns=#{NifOverheadBench.Paths.fmt(st.max)}"
    )
  end

  IO.puts(
    "ratio case=#{name} queued_over_inline=#{Float.round(s_q.median / s_in.median, 2)} " <>
      "inline_median_ns=#{NifOverheadBench.Paths.fmt(s_in.median)} " <>
      "queued_median_ns=#{NifOverheadBench.Paths.fmt(s_q.median)}"
  )
end

# ---- the dearest inline work under the default limits ---------------------------------

leaf = fn n, v, type ->
  t = EMLX.full(v, {n}, type, :cpu)
  :ok = EMLX.eval(t)
  t
end

e = leaf.(16_384, 0.5, {:f, 64})
p1 = leaf.(10_922, 1.5, {:c, 64})
p2 = leaf.(10_922, 2.5, {:c, 64})
c0 = EMLX.full(1.0, {128}, {:f, 32}, :cpu)
:ok = EMLX.eval(c0)

edge_cases = [
  {"edge_erf_inv_f64", fn -> EMLX.erf_inv(e) end},
  {"edge_pow_c64", fn -> EMLX.pow(p1, p2) end},
  {"edge_chain64", fn -> Enum.reduce(1..64, c0, fn _, acc -> EMLX.add(acc, c0) end) end}
]

ref_probe = fn t ->
  ref = make_ref()
  EMLX.NIF.eval(t, EMLX.Application.default_worker(:cpu), ref)
end

for {name, build} <- edge_cases do
  {:ok, :ok} = ref_probe.(build.())

  samples =
    for _ <- 1..max(reps, 5) do
      t = build.()
      t0 = System.monotonic_time(:nanosecond)
      {:ok, :ok} = ref_probe.(t)
      (System.monotonic_time(:nanosecond) - t0) * 1.0
    end

  st = NifOverheadBench.Paths.stats(samples)

  IO.puts(
    "case=#{name} impl=emlx path=inline reps=#{length(samples)} calls=1 " <>
      "median_ns=#{NifOverheadBench.Paths.fmt(st.median)} min_ns=#{NifOverheadBench.Paths.fmt(st.min)} " <>
      "max_ns=#{NifOverheadBench.Paths.fmt(st.max)} goal_ns=1000000 " <>
      "check=#{if st.median < 1_000_000, do: "ok", else: "over_goal"}"
  )
end
