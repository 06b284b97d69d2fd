# bench/program_replay.exs — the cost of replaying a compiled program from Elixir.
#
#   mix run bench/program_replay.exs [--reps K] [--calls N]
#
# Cases (each the median over K repetitions of N calls):
#
#   replay_tiny        EMLX.NIF.program_run of a tiny program (x * 2 + 1 on a
#                      {4} f32) on the default queue: decode the program and
#                      inputs, run it inline (its work is within the inline
#                      limits), wrap the output tensor (goal < 20 us, issue 13)
#   replay_tiny_queued the same with the inline path off (inline limits
#                      max_nodes: 0): a lazy call node submitted to the queue's
#                      worker, the reply as a message
#   replay_mlp         a 2-layer MLP forward ({8, 64} x {64, 64} x {64, 16},
#                      softmax), inline
#   replay_while64     a 64-iteration while loop on a {64} f32 state (x * 0.5 +
#                      1): a loop always runs on the queue's worker
#
# Peers measured in the same run: `eager_tiny` (the same x * 2 + 1 built op by
# op through EMLX.NIF.multiply/add and evaluated with EMLX.NIF.eval: what an
# interpreter over EMLX.Backend pays), `noop_nif` (EMLX.NIF.nif_stats/0, the
# cheapest call into the library). Output lines are key=value fields
# (bench/README.md); `ratio` lines compare a case with its goal and peer.

{opts, _, _} = OptionParser.parse(System.argv(), strict: [reps: :integer, calls: :integer])
reps = Keyword.get(opts, :reps, 15)
calls = Keyword.get(opts, :calls, 20_000)

defmodule ProgramReplayBench do
  alias EMLX.NIF

  def time_per_call(reps, calls, fun) do
    fun.(div(calls, 10) + 1)

    samples =
      for _ <- 1..reps do
        {us, _} = :timer.tc(fn -> fun.(calls) end)
        us * 1000 / calls
      end
      |> Enum.sort()

    %{median: Enum.at(samples, div(reps, 2)), min: hd(samples)}
  end

  def f32(values, shape) do
    bin = for v <- values, into: <<>>, do: <<v::float-32-native>>
    {:ok, t} = NIF.from_blob(bin, shape, {:f, 32}, :cpu)
    t
  end

  def scalar(v), do: f32([v], {})

  def compile!(spec) do
    {:ok, p} = NIF.program_compile(spec)
    p
  end

  # one program_run, waiting for the reply when it is queued
  def run(p, inputs, q) do
    ref = make_ref()

    case NIF.program_run(p, inputs, q, ref) do
      {:ok, outs} ->
        outs

      :ok ->
        receive do
          {^ref, {:ok, outs}} -> outs
        end
    end
  end

  def loop(0, _fun), do: :ok

  def loop(n, fun) do
    fun.()
    loop(n - 1, fun)
  end
end

alias ProgramReplayBench, as: B
alias EMLX.NIF

f32 = {:f, 32}
q = EMLX.Application.default_worker(:cpu)

tiny =
  B.compile!(
    {[{f32, {4}}],
     [
       {:constant, [B.scalar(2.0)]},
       {:multiply, [{:ref, 0}, {:ref, 1}]},
       {:constant, [B.scalar(1.0)]},
       {:add, [{:ref, 2}, {:ref, 3}]}
     ], [{:ref, 4}]}
  )

x4 = B.f32([1.0, 2.0, 3.0, 4.0], {4})
[y] = B.run(tiny, [x4], q)

{:ok, <<3.0::float-32-native, 5.0::float-32-native, 7.0::float-32-native, 9.0::float-32-native>>} =
  NIF.to_blob(y, q, make_ref())

two = B.scalar(2.0)
one = B.scalar(1.0)

mlp =
  B.compile!(
    {[{f32, {8, 64}}],
     [
       {:constant, [B.f32(for(k <- 1..4096, do: :math.sin(k * 0.1) * 0.1), {64, 64})]},
       {:tensordot, [{:ref, 0}, {:ref, 1}, [1], [0]]},
       {:constant, [B.scalar(0.0)]},
       {:maximum, [{:ref, 2}, {:ref, 3}]},
       {:constant, [B.f32(for(k <- 1..1024, do: :math.cos(k * 0.1) * 0.1), {64, 16})]},
       {:tensordot, [{:ref, 4}, {:ref, 5}, [1], [0]]},
       {:softmax, [{:ref, 6}, [1], false]}
     ], [{:ref, 7}]}
  )

x_mlp = B.f32(for(k <- 1..512, do: :math.sin(k * 0.3)), {8, 64})

s64 = {:s, 64}
{:ok, one_i} = NIF.scalar_tensor(1, s64, :cpu)
{:ok, steps} = NIF.scalar_tensor(64, s64, :cpu)

while64 =
  B.compile!(
    {[{f32, {64}}],
     [
       {:constant, [B.f32([0.0], {})]},
       {:astype, [{:ref, 1}, s64]},
       {:while,
        [
          {[], [{:constant, [steps]}, {:less, [{:ref, 0}, {:ref, 2}]}], [{:ref, 3}]},
          {[],
           [
             {:constant, [one_i]},
             {:add, [{:ref, 0}, {:ref, 2}]},
             {:constant, [B.scalar(0.5)]},
             {:multiply, [{:ref, 1}, {:ref, 4}]},
             {:constant, [B.scalar(1.0)]},
             {:add, [{:ref, 5}, {:ref, 6}]}
           ], [{:ref, 3}, {:ref, 7}]},
          [{:ref, 2}, {:ref, 0}]
        ]}
     ], [{:ref, 4}]}
  )

x64 = B.f32(for(k <- 1..64, do: k * 1.0), {64})

eager_tiny = fn ->
  {:ok, m} = NIF.multiply(x4, two)
  {:ok, a} = NIF.add(m, one)
  ref = make_ref()

  case NIF.eval(a, q, ref) do
    {:ok, _} ->
      :ok

    :ok ->
      receive do
        {^ref, _} -> :ok
      end
  end
end

limits = EMLX.CommandQueue.inline_limits()

results =
  for {name, fun, setup} <- [
        {"noop_nif", fn -> NIF.nif_stats() end, nil},
        {"eager_tiny", eager_tiny, nil},
        {"replay_tiny", fn -> B.run(tiny, [x4], q) end, nil},
        {"replay_tiny_queued", fn -> B.run(tiny, [x4], q) end, %{max_nodes: 0}},
        {"replay_mlp", fn -> B.run(mlp, [x_mlp], q) end, nil},
        {"replay_while64", fn -> B.run(while64, [x64], q) end, nil}
      ] do
    if setup, do: EMLX.CommandQueue.put_inline_limits(setup)
    n = if name in ["replay_mlp", "replay_while64"], do: div(calls, 10), else: calls

    %{median: median, min: min} =
      try do
        B.time_per_call(reps, n, fn k -> B.loop(k, fun) end)
      after
        EMLX.CommandQueue.put_inline_limits(limits)
      end

    IO.puts(
      "case=#{name} impl=emlx reps=#{reps} calls=#{n} median_ns=#{Float.round(median, 1)} " <>
        "min_ns=#{Float.round(min, 1)}"
    )

    {name, median}
  end
  |> Map.new()

for {name, goal, peer} <- [
      {"replay_tiny", 20_000, "eager_tiny"},
      {"replay_tiny_queued", 20_000, "eager_tiny"},
      {"replay_mlp", nil, "eager_tiny"},
      {"replay_while64", nil, "replay_tiny_queued"}
    ] do
  median = results[name]

  goal_part =
    if goal, do: "goal_ns=#{goal} goal_ratio=#{Float.round(median / goal, 3)} ", else: ""

  IO.puts(
    "ratio case=#{name} median_ns=#{Float.round(median, 1)} " <>
      goal_part <> "peer=#{peer} peer_ratio=#{Float.round(median / results[peer], 2)}"
  )
end
