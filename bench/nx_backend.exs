# bench/nx_backend.exs — eager Nx calls on EMLX.Backend against
# Nx.BinaryBackend and Torchx.Backend, side by side in one run.
#
#   NX_PATH=/path/to/nx mix run bench/nx_backend.exs [--reps K] [--calls N]
#       [--binary-dot] [--only CASE]...
#
# Torchx is not a dependency of EMLX: point TORCHX_EBINS at the ebin
# folders of a Torchx build (colon-separated, e.g. its
# _build/dev/lib/torchx/ebin); without it, or when it does not load, the
# Torchx column is skipped with the reason. Set OMP_WAIT_POLICY=PASSIVE so
# torch's idle OpenMP threads do not spin against the other backends.
# EMLX.Backend must be compiled in (it is skipped with the reason otherwise).
#
# Cases (each backend's inputs are made on that backend beforehand; every
# timed call but add16_call ends when its result is computed: EMLX's lazy
# result is evaluated with EMLX.eval/1, Torchx and Nx.BinaryBackend compute
# eagerly):
#
#   add16      Nx.add of two 16-element f32 tensors: per-call overhead, the
#              median over K samples of N calls each (goal: EMLX <= 1.5x Torchx)
#   add16_read the same followed by Nx.to_binary/1 (the round trip to Elixir)
#   add16_call the call alone: for EMLX.Backend only the lazy node is built
#              (not comparable as compute; shows the graph-building share)
#   dot1024    Nx.dot of two 1024x1024 f32 matrices
#   sum16M     Nx.sum of 16M (2^24) f32
#   mlp64      a 3-layer MLP forward at batch 64: 784 -> 256 -> 256 -> 10,
#              relu (Nx.max with 0) between layers, biases added
#
# Samples are interleaved: each repetition runs every backend once, in an
# order that rotates, so drift in machine load hits all columns alike.
# Nx.BinaryBackend is pure Elixir: a case whose warm-up call takes over a
# second gets at most 3 samples there, and dot1024 (minutes) runs only with
# --binary-dot.
#
# Output: one line per case and backend,
#   case=add16 backend=emlx median_us=.. p25_us=.. p75_us=.. min_us=.. max_us=.. samples=..
# then `ratio` lines: case=.. emlx_over_torchx=.. emlx_over_binary=.. of the
# medians, and min_emlx_over_* of the fastest samples (steadier on a loaded
# machine); time ratios: below 1 means EMLX is faster. --backend NAME (emlx,
# binary, torchx; repeatable) runs only those backends.

{opts, _, _} =
  OptionParser.parse(System.argv(),
    strict: [
      reps: :integer,
      calls: :integer,
      binary_dot: :boolean,
      only: :keep,
      backend: :keep
    ]
  )

reps = Keyword.get(opts, :reps, 15)
calls = Keyword.get(opts, :calls, 2000)
only = Keyword.get_values(opts, :only)
only_backends = Keyword.get_values(opts, :backend)

defmodule NxBackendBench do
  def load_torchx do
    case System.get_env("TORCHX_EBINS") do
      nil ->
        {:skip, "TORCHX_EBINS is not set (see the head of this file)"}

      paths ->
        Enum.each(String.split(paths, ":", trim: true), &Code.append_path/1)

        with {:module, _} <- Code.ensure_loaded(Torchx.Backend),
             :ok <- Application.ensure_loaded(:torchx),
             {:ok, _} <- probe(Torchx.Backend) do
          :ok
        else
          {:error, reason} -> {:skip, "Torchx does not load: #{inspect(reason)}"}
          other -> {:skip, "Torchx does not load: #{inspect(other)}"}
        end
    end
  end

  def load_emlx do
    if Code.ensure_loaded?(EMLX.Backend) do
      case probe(EMLX.Backend) do
        {:ok, _} -> :ok
        {:error, reason} -> {:skip, "EMLX.Backend fails: #{inspect(reason)}"}
      end
    else
      {:skip, "EMLX.Backend is not compiled in this checkout"}
    end
  end

  defp probe(backend) do
    try do
      {:ok, Nx.tensor([1.0, 2.0], backend: backend) |> Nx.add(1) |> Nx.to_flat_list()}
    rescue
      e -> {:error, Exception.message(e)}
    end
  end

  # Waits for the result: EMLX.Backend's is lazy.
  def sync(%Nx.Tensor{data: %{__struct__: mod, ref: ref}}) when mod == EMLX.Backend,
    do: apply(EMLX, :eval, [ref])

  def sync(%Nx.Tensor{}), do: :ok

  # f32 data without a per-element loop: a 1024-element ramp, repeated.
  def f32(shape, backend) do
    n = Tuple.product(shape)
    ramp = for i <- 0..1023, into: <<>>, do: <<(i - 512) / 1024::float-32-native>>
    reps = div(n + 1023, 1024)
    bin = binary_part(:binary.copy(ramp, reps), 0, n * 4)
    t = Nx.from_binary(bin, :f32, backend: backend) |> Nx.reshape(shape)
    sync(t)
    t
  end

  def time_us(fun, calls) do
    {us, _} = :timer.tc(fn -> loop(calls, fun) end)
    us / calls
  end

  defp loop(0, _fun), do: :ok

  defp loop(n, fun) do
    fun.()
    loop(n - 1, fun)
  end

  def stats(samples) do
    s = Enum.sort(samples)
    k = length(s)
    at = fn q -> Enum.at(s, min(k - 1, round(q * (k - 1)))) end
    %{median: at.(0.5), p25: at.(0.25), p75: at.(0.75), min: hd(s), max: List.last(s), n: k}
  end

  def fmt(x) when x >= 100, do: :erlang.float_to_binary(x * 1.0, decimals: 0)
  def fmt(x), do: :erlang.float_to_binary(x * 1.0, decimals: 2)

  # three significant digits
  def fmt_ratio(x) when x >= 0.01, do: :erlang.float_to_binary(x * 1.0, decimals: 2)
  def fmt_ratio(x), do: :erlang.float_to_binary(x * 1.0, [{:scientific, 2}])
end

emlx = NxBackendBench.load_emlx()
torchx = NxBackendBench.load_torchx()

backends =
  [
    {:emlx, EMLX.Backend, emlx},
    {:binary, Nx.BinaryBackend, :ok},
    {:torchx, Torchx.Backend, torchx}
  ]
  |> Enum.filter(fn {name, _, _} ->
    only_backends == [] or Atom.to_string(name) in only_backends
  end)
  |> Enum.flat_map(fn
    {name, mod, :ok} ->
      [{name, mod}]

    {name, _mod, {:skip, why}} ->
      IO.puts("skip backend=#{name} reason=#{inspect(why)}")
      []
  end)

IO.puts(
  "# nx_backend reps=#{reps} calls=#{calls} schedulers=#{System.schedulers_online()} " <>
    "omp_wait_policy=#{System.get_env("OMP_WAIT_POLICY", "unset")}"
)

mlp_params = fn b ->
  f = &NxBackendBench.f32(&1, b)
  scale = fn t, s -> t |> Nx.multiply(s) |> tap(&NxBackendBench.sync/1) end

  %{
    x: f.({64, 784}),
    w1: scale.(f.({784, 256}), 0.05),
    b1: f.({256}),
    w2: scale.(f.({256, 256}), 0.05),
    b2: f.({256}),
    w3: scale.(f.({256, 10}), 0.05),
    b3: f.({10})
  }
end

mlp = fn p ->
  p.x
  |> Nx.dot(p.w1)
  |> Nx.add(p.b1)
  |> Nx.max(0)
  |> Nx.dot(p.w2)
  |> Nx.add(p.b2)
  |> Nx.max(0)
  |> Nx.dot(p.w3)
  |> Nx.add(p.b3)
end

sync = &NxBackendBench.sync/1

# {name, calls per sample, setup(backend) -> state, run(state)}
cases = [
  {"add16", calls, fn b -> {NxBackendBench.f32({16}, b), NxBackendBench.f32({16}, b)} end,
   fn {a, c} -> sync.(Nx.add(a, c)) end},
  {"add16_call", calls, fn b -> {NxBackendBench.f32({16}, b), NxBackendBench.f32({16}, b)} end,
   fn {a, c} -> Nx.add(a, c) end},
  {"add16_read", calls, fn b -> {NxBackendBench.f32({16}, b), NxBackendBench.f32({16}, b)} end,
   fn {a, c} -> Nx.to_binary(Nx.add(a, c)) end},
  {"dot1024", 1,
   fn b -> {NxBackendBench.f32({1024, 1024}, b), NxBackendBench.f32({1024, 1024}, b)} end,
   fn {a, c} -> sync.(Nx.dot(a, c)) end},
  {"sum16M", 1, fn b -> NxBackendBench.f32({16_777_216}, b) end, fn a -> sync.(Nx.sum(a)) end},
  {"mlp64", 1, mlp_params, fn p -> sync.(mlp.(p)) end}
]

results =
  for {name, n, setup, run} <- cases, only == [] or name in only do
    active =
      Enum.flat_map(backends, fn {bname, mod} ->
        if name == "dot1024" and bname == :binary and !opts[:binary_dot] do
          IO.puts(
            "skip case=dot1024 backend=binary reason=\"minutes in pure Elixir; pass --binary-dot\""
          )

          []
        else
          state = setup.(mod)
          # warm-up: one call (plans, caches, first-touch pages)
          warm = NxBackendBench.time_us(fn -> run.(state) end, 1)
          cap = if bname == :binary and warm > 1_000_000, do: min(reps, 3), else: reps
          [{bname, state, cap}]
        end
      end)

    samples =
      Enum.reduce(0..(reps - 1), %{}, fn r, acc ->
        k = length(active)

        order =
          if k > 0, do: Enum.drop(active, rem(r, k)) ++ Enum.take(active, rem(r, k)), else: []

        Enum.reduce(order, acc, fn {bname, state, cap}, acc ->
          if r < cap do
            per = if bname == :binary and n > 1, do: max(div(n, 20), 1), else: n
            t = NxBackendBench.time_us(fn -> run.(state) end, per)
            Map.update(acc, bname, [t], &[t | &1])
          else
            acc
          end
        end)
      end)

    stats =
      for {bname, _, _} <- active, into: %{} do
        s = NxBackendBench.stats(samples[bname])

        IO.puts(
          "case=#{name} backend=#{bname} median_us=#{NxBackendBench.fmt(s.median)} " <>
            "p25_us=#{NxBackendBench.fmt(s.p25)} p75_us=#{NxBackendBench.fmt(s.p75)} " <>
            "min_us=#{NxBackendBench.fmt(s.min)} max_us=#{NxBackendBench.fmt(s.max)} samples=#{s.n}"
        )

        {bname, s}
      end

    {name, stats}
  end

for {name, st} <- results, e = st[:emlx], e != nil do
  ratio = fn peer, key ->
    if st[peer],
      do: NxBackendBench.fmt_ratio(Map.fetch!(e, key) / Map.fetch!(st[peer], key)),
      else: "n/a"
  end

  goal = if name == "add16", do: " goal_over_torchx=1.5", else: ""

  IO.puts(
    "ratio case=#{name} emlx_over_torchx=#{ratio.(:torchx, :median)} " <>
      "emlx_over_binary=#{ratio.(:binary, :median)} " <>
      "min_emlx_over_torchx=#{ratio.(:torchx, :min)} min_emlx_over_binary=#{ratio.(:binary, :min)}" <>
      goal
  )
end
