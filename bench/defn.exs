# EMLX as the Nx.Defn compiler against Nx.Defn.Evaluator, in one run.
#
#   NX_PATH=/path/to/nx MIX_ENV=test mix run bench/defn.exs
#
# Cases (all f32, on the cpu):
#   * tiny      — replay of an Nx.Defn.compile closure of `x * 2 + 1` on {4}
#                 (the per-call cost of the compiled path; goal < 20 us);
#   * mlp       — a 2-layer MLP forward, {32, 256} x {256, 512} x {512, 128};
#   * decode64  — a 64-step while loop shaped like a decode: q = x . Wq, scores
#                 against a {64, 128} cache, softmax, write the step's row into
#                 the cache with put_slice;
#   * cond_loop — 64 steps choosing between two heavy branches (a {256, 256}
#                 matmul chain each) on the parity of the step.
# Each is timed as EMLX (compiled closure), Nx.Defn.Evaluator on
# EMLX.Backend and Nx.Defn.Evaluator on Nx.BinaryBackend (skipped where it
# would take minutes: marked "-"), median of repeated calls, and reported
# with the ratios evaluator / EMLX. cond_loop is also timed against the same
# loop with a single branch (one_branch_loop) and with both branches
# computed and selected (both_branches), to show that one branch's time is
# paid per step.

defmodule Bench.Defn do
  import Nx.Defn

  defn(tiny(x), do: x * 2 + 1)

  defn mlp(x, w1, b1, w2, b2) do
    h = Nx.max(Nx.dot(x, w1) + b1, 0)
    Nx.dot(h, w2) + b2
  end

  defn decode64(x, wq, cache) do
    {_i, _x, _wq, cache, acc} =
      while {i = 0, x, wq, cache, acc = Nx.broadcast(0.0, {128})}, i < 64 do
        q = Nx.dot(x, wq)
        scores = Nx.dot(cache, q) / 11.3
        p = Nx.exp(scores - Nx.reduce_max(scores))
        p = p / Nx.sum(p)
        ctx = Nx.dot(p, cache)
        cache = Nx.put_slice(cache, [i, 0], Nx.reshape(ctx + q, {1, 128}))
        {i + 1, x, wq, cache, acc + ctx}
      end

    {cache, acc}
  end

  defn cond_loop(x, a, b) do
    {_i, x, _a, _b} =
      while {i = 0, x, a, b}, i < 64 do
        y =
          if Nx.remainder(i, 2) == 0 do
            heavy(x, a)
          else
            heavy(x, b)
          end

        {i + 1, y, a, b}
      end

    x
  end

  defn one_branch_loop(x, a, b) do
    {_i, x, _a, _b} =
      while {i = 0, x, a, b}, i < 64 do
        {i + 1, heavy(x, a), a, b}
      end

    x
  end

  # Both branches computed and one selected (what a compiler without real
  # branches pays).
  defn both_branches_loop(x, a, b) do
    {_i, x, _a, _b} =
      while {i = 0, x, a, b}, i < 64 do
        y = Nx.select(Nx.remainder(i, 2) == 0, heavy(x, a), heavy(x, b))
        {i + 1, y, a, b}
      end

    x
  end

  # Stays O(1) (tanh of well-scaled products): no denormals.
  defnp heavy(x, a) do
    y = Nx.tanh(Nx.dot(x, a))
    y = Nx.tanh(Nx.dot(y, a))
    Nx.tanh(Nx.dot(y, a))
  end
end

defmodule Bench.Run do
  def median_us(fun, min_runs, budget_us) do
    _ = fun.()
    _ = fun.()
    deadline = System.monotonic_time(:microsecond) + budget_us
    times = loop(fun, min_runs, deadline, [])
    sorted = Enum.sort(times)
    Enum.at(sorted, div(length(sorted), 2))
  end

  defp loop(fun, min_runs, deadline, acc) do
    {t, _} = :timer.tc(fun)
    acc = [t | acc]

    if length(acc) >= min_runs and System.monotonic_time(:microsecond) > deadline do
      acc
    else
      if length(acc) >= 20_000, do: acc, else: loop(fun, min_runs, deadline, acc)
    end
  end

  def force(result) do
    [result] |> Nx.Defn.Composite.flatten_list() |> Enum.each(&Nx.to_binary/1)
  end
end

Nx.default_backend(EMLX.Backend)

key = Nx.Random.key(42)
rand = fn shape, key -> Nx.Random.uniform(key, -0.1, 0.1, shape: shape, type: {:f, 32}) end
{x4, key} = rand.({4}, key)
{x, key} = rand.({32, 256}, key)
{w1, key} = rand.({256, 512}, key)
{b1, key} = rand.({512}, key)
{w2, key} = rand.({512, 128}, key)
{b2, key} = rand.({128}, key)
{xd, key} = rand.({128}, key)
{wq, key} = rand.({128, 128}, key)
{cache, key} = rand.({64, 128}, key)
{xc, key} = rand.({8, 256}, key)
{a, key} = rand.({256, 256}, key)
{b, _key} = rand.({256, 256}, key)
# Products of O(1) size for the branch loops.
a = Nx.multiply(a, 2)
b = Nx.multiply(b, 2)

cases = [
  {"tiny", &Bench.Defn.tiny/1, [x4], true},
  {"mlp", &Bench.Defn.mlp/5, [x, w1, b1, w2, b2], true},
  {"decode64", &Bench.Defn.decode64/3, [xd, wq, cache], true},
  {"cond_loop", &Bench.Defn.cond_loop/3, [xc, a, b], false},
  {"one_branch_loop", &Bench.Defn.one_branch_loop/3, [xc, a, b], false},
  {"both_branches", &Bench.Defn.both_branches_loop/3, [xc, a, b], false}
]

IO.puts(
  String.pad_trailing("case", 16) <>
    String.pad_leading("EMLX us", 12) <>
    String.pad_leading("Eval/EMLX.B us", 16) <>
    String.pad_leading("Eval/Binary us", 16) <>
    String.pad_leading("ratio EB", 10) <> String.pad_leading("ratio Bin", 10)
)

for {name, fun, args, binary?} <- cases do
  templates = Enum.map(args, &Nx.to_template/1)
  compiled = Nx.Defn.compile(fun, templates, compiler: EMLX)
  emlx_us = Bench.Run.median_us(fn -> Bench.Run.force(apply(compiled, args)) end, 20, 1_000_000)

  # Replay alone (results stay lazy in the engine's buffers; tiny only).
  replay =
    if name == "tiny",
      do: Bench.Run.median_us(fn -> apply(compiled, args) end, 1000, 1_000_000)

  eval_b =
    Bench.Run.median_us(
      fn -> Bench.Run.force(Nx.Defn.jit_apply(fun, args, compiler: Nx.Defn.Evaluator)) end,
      5,
      1_000_000
    )

  eval_bin =
    if binary? do
      bargs = Enum.map(args, &Nx.backend_copy(&1, Nx.BinaryBackend))
      Nx.default_backend(Nx.BinaryBackend)

      t =
        Bench.Run.median_us(
          fn -> Bench.Run.force(Nx.Defn.jit_apply(fun, bargs, compiler: Nx.Defn.Evaluator)) end,
          3,
          1_000_000
        )

      Nx.default_backend(EMLX.Backend)
      t
    end

  ratio = fn
    nil -> "-"
    t -> :erlang.float_to_binary(t / emlx_us, decimals: 1)
  end

  show = fn
    nil -> "-"
    t -> Integer.to_string(t)
  end

  IO.puts(
    String.pad_trailing(name, 16) <>
      String.pad_leading(show.(emlx_us), 12) <>
      String.pad_leading(show.(eval_b), 16) <>
      String.pad_leading(show.(eval_bin), 16) <>
      String.pad_leading(ratio.(eval_b), 10) <> String.pad_leading(ratio.(eval_bin), 10)
  )

  if replay, do: IO.puts("  tiny: replay of the compiled closure alone #{replay} us per call")
end
