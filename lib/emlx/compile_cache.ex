defmodule EMLX.CompileCache do
  @moduledoc """
  The bounded cache of compiled `Nx.Defn` programs of `EMLX` (the
  `Nx.Defn.Compiler`).

  `Nx.Defn.jit/2` traces its function through Nx on every call; `EMLX`
  looks the call site up here first, keyed by function identity, input
  templates (type, shape, names, vectorized axes), the quantization of
  quantized inputs (`EMLX.quantize/2`: group size, bits, mode, transpose,
  dense type, the packed tensors' templates) and device, and on a hit
  replays the program without tracing or lowering. On a miss the defn is
  traced and lowered, and the program is looked up again by its structure:
  the lowered program's ops, arguments, shapes and types, with constants by
  value (those of more than 4096 elements by identity) — never by object
  identity — so structurally identical call sites (many copies of one layer)
  share one compiled program.

  `Nx.Defn.compile/3` goes through the same cache once, at compile time; the
  closure it returns holds its program and never looks anything up.

  ## Bounds

  Least recently used entries are evicted when either bound is exceeded:

    * `:max_entries` — entries (call sites and structures), default 512;
    * `:max_bytes` — bytes of constants held by the programs (counted for
      each entry that holds a program, so a program shared by several
      entries counts several times), default 512 MiB.

  Configure them with

      config :emlx, compile_cache: [max_entries: 512, max_bytes: 536_870_912]

  (read whenever an entry is added). An entry bigger than `:max_bytes` is
  used but not kept.

  ## Reporting

  `stats/0` returns the counters. With `:telemetry` loaded,
  `[:emlx, :compile_cache, :hit]`, `[:emlx, :compile_cache, :miss]` and
  `[:emlx, :compile_cache, :evict]` are emitted with measurements
  `%{count: 1}` (`:evict` also `:bytes`) and metadata `%{kind: :site |
  :structure}`.
  """

  use GenServer

  @table __MODULE__
  @default_entries 512
  @default_bytes 512 * 1024 * 1024

  @doc false
  def start_link(opts \\ []), do: GenServer.start_link(__MODULE__, opts, name: __MODULE__)

  @doc """
  The value cached under `key`, or `build.()` on a miss: `build` returns
  `{value, bytes}`, and the value is stored unless it is bigger than the
  bounds. Without a running cache (the application is not started) `build`
  is simply called.
  """
  @spec fetch(term(), (() -> {term(), non_neg_integer()})) :: term()
  def fetch(key, build) when is_function(build, 0) do
    case :ets.whereis(@table) do
      :undefined ->
        {value, _bytes} = build.()
        value

      _tid ->
        case :ets.lookup(@table, {:entry, key}) do
          [{entry, value, _bytes, _used}] ->
            :ets.update_element(@table, entry, {4, tick()})
            :ets.update_counter(@table, :stats, {2, 1})
            emit(:hit, %{count: 1}, key)
            value

          [] ->
            :ets.update_counter(@table, :stats, {3, 1})
            emit(:miss, %{count: 1}, key)
            {value, bytes} = build.()
            GenServer.call(__MODULE__, {:put, key, value, bytes})
            value
        end
    end
  end

  @doc """
  `%{hits:, misses:, evictions:, entries:, bytes:, max_entries:,
  max_bytes:}`.
  """
  @spec stats() :: map()
  def stats do
    {max_entries, max_bytes} = bounds()

    case :ets.whereis(@table) do
      :undefined ->
        %{hits: 0, misses: 0, evictions: 0, entries: 0, bytes: 0}

      _ ->
        [{:stats, hits, misses, evictions, bytes}] = :ets.lookup(@table, :stats)
        entries = :ets.info(@table, :size) - 1
        %{hits: hits, misses: misses, evictions: evictions, entries: entries, bytes: bytes}
    end
    |> Map.merge(%{max_entries: max_entries, max_bytes: max_bytes})
  end

  @doc "Drops every entry (the counters are kept)."
  @spec clear() :: :ok
  def clear do
    case :ets.whereis(@table) do
      :undefined -> :ok
      _ -> GenServer.call(__MODULE__, :clear)
    end
  end

  ## Server

  @impl true
  def init(_opts) do
    :ets.new(@table, [:named_table, :public, :set, read_concurrency: true])
    :ets.insert(@table, {:stats, 0, 0, 0, 0})
    {:ok, nil}
  end

  @impl true
  def handle_call({:put, key, value, bytes}, _from, state) do
    {max_entries, max_bytes} = bounds()
    entry = {:entry, key}

    if bytes <= max_bytes and max_entries > 0 do
      case :ets.lookup(@table, entry) do
        [{^entry, _value, old, _used}] -> :ets.update_counter(@table, :stats, {5, -old})
        [] -> :ok
      end

      :ets.insert(@table, {entry, value, bytes, tick()})
      :ets.update_counter(@table, :stats, {5, bytes})
      evict(max_entries, max_bytes)
    end

    {:reply, :ok, state}
  end

  def handle_call(:clear, _from, state) do
    :ets.match_delete(@table, {{:entry, :_}, :_, :_, :_})
    :ets.update_element(@table, :stats, {5, 0})
    {:reply, :ok, state}
  end

  defp evict(max_entries, max_bytes) do
    [{:stats, _, _, _, bytes}] = :ets.lookup(@table, :stats)
    entries = :ets.info(@table, :size) - 1

    if entries > max_entries or bytes > max_bytes do
      # The least recently used entry (a scan: the table is small by bound).
      {entry, size, _} =
        :ets.foldl(
          fn
            {{:entry, _} = e, _v, b, used}, {_, _, best} = acc ->
              if best == nil or used < best, do: {e, b, used}, else: acc

            _, acc ->
              acc
          end,
          {nil, 0, nil},
          @table
        )

      :ets.delete(@table, entry)
      :ets.update_counter(@table, :stats, [{4, 1}, {5, -size}])
      emit(:evict, %{count: 1, bytes: size}, elem(entry, 1))
      evict(max_entries, max_bytes)
    else
      :ok
    end
  end

  defp bounds do
    config = Application.get_env(:emlx, :compile_cache, [])

    {Keyword.get(config, :max_entries, @default_entries),
     Keyword.get(config, :max_bytes, @default_bytes)}
  end

  defp tick, do: :erlang.unique_integer([:monotonic])

  defp kind(key) when is_tuple(key) and tuple_size(key) > 0, do: elem(key, 0)
  defp kind(_key), do: :other

  if Code.ensure_loaded?(:telemetry) do
    defp emit(event, measurements, key) do
      :telemetry.execute([:emlx, :compile_cache, event], measurements, %{kind: kind(key)})
    end
  else
    defp emit(_event, _measurements, key) do
      _ = kind(key)
      :ok
    end
  end
end
