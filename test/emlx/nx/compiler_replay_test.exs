if Code.ensure_loaded?(Nx) do
  defmodule EMLX.Nx.CompilerReplayTest.Defns do
    import Nx.Defn

    # One decode step: the new row x . w written into the cache at a tensor
    # offset, attention weights of the row over the cache.
    defn step(x, w, cache, offset) do
      q = Nx.dot(x, w)
      cache = Nx.put_slice(cache, [offset, 0], q)
      scores = Nx.dot(cache, Nx.reshape(q, {Nx.axis_size(q, 1)}))
      e = Nx.exp(scores - Nx.reduce_max(scores))
      {cache, e / Nx.sum(e)}
    end

    # Row i of the cache becomes row + i, for every row.
    defn fill(cache, row) do
      {_i, cache, _row} =
        while {i = 0, cache, row}, i < Nx.axis_size(cache, 0) do
          {i + 1, Nx.put_slice(cache, [i, 0], row + i), row}
        end

      cache
    end
  end

  defmodule EMLX.Nx.CompilerReplayTest do
    @moduledoc """
    What a replayed `EMLX` program costs in a decode loop: a `jit` step whose
    cache position is a tensor is traced once and then only replayed (the
    trace function is not called again, `EMLX.CompileCache` only hits), and
    a `while` that writes a cache keeps it in one buffer (the engine's peak
    memory counter). Values against `Nx.Defn.Evaluator` on
    `Nx.BinaryBackend` and closed forms.
    """
    # Not async: the memory counters are process-wide.
    use ExUnit.Case, async: false

    alias EMLX.Nx.CompilerReplayTest.Defns

    setup do
      previous = Nx.default_backend(EMLX.Backend)
      on_exit(fn -> Nx.default_backend(previous) end)
      :ok
    end

    defp values(t), do: t |> Nx.backend_copy(Nx.BinaryBackend) |> Nx.to_flat_list()

    defp assert_close(got, want, tol) do
      for {g, w} <- Enum.zip(values(got), values(want)) do
        assert abs(g - w) <= tol * max(1.0, abs(w)), "got #{g}, want #{w}"
      end
    end

    defp wave(shape, seed) do
      n = Tuple.product(shape)

      Nx.iota({n}, type: :f32, backend: Nx.BinaryBackend)
      |> Nx.multiply(0.37)
      |> Nx.add(seed)
      |> Nx.sin()
      |> Nx.reshape(shape)
    end

    test "a jit decode step with a tensor offset is traced once, then replayed" do
      me = self()

      traced = fn x, w, cache, offset ->
        send(me, :traced)
        Defns.step(x, w, cache, offset)
      end

      jitted = Nx.Defn.jit(traced, compiler: EMLX)
      x = wave({1, 16}, 1.0)
      w = wave({16, 8}, 2.0)
      cache = Nx.broadcast(Nx.tensor(0.0, backend: Nx.BinaryBackend), {12, 8})

      ref_step = fn cache, off ->
        offset = Nx.tensor(off, backend: Nx.BinaryBackend)
        Nx.Defn.jit_apply(&Defns.step/4, [x, w, cache, offset], compiler: Nx.Defn.Evaluator)
      end

      {emlx_x, emlx_w} = {Nx.backend_copy(x, EMLX.Backend), Nx.backend_copy(w, EMLX.Backend)}
      emlx_cache = Nx.backend_copy(cache, EMLX.Backend)

      # the first call traces and lowers
      {c1, p1} = jitted.(emlx_x, emlx_w, emlx_cache, Nx.tensor(0, backend: EMLX.Backend))
      {r1, rp1} = ref_step.(cache, 0)
      assert_close(c1, r1, 1.0e-5)
      assert_close(p1, rp1, 1.0e-5)
      assert_received :traced

      before = EMLX.CompileCache.stats()

      {_c, _rc} =
        Enum.reduce(1..11, {c1, r1}, fn off, {c, rc} ->
          {c, p} = jitted.(emlx_x, emlx_w, c, Nx.tensor(off, backend: EMLX.Backend))
          {rc, rp} = ref_step.(rc, off)
          assert_close(c, rc, 1.0e-5)
          assert_close(p, rp, 1.0e-5)
          {c, rc}
        end)

      refute_received :traced, "a replay called the trace function again"
      stats = EMLX.CompileCache.stats()
      assert stats.misses == before.misses
      assert stats.hits - before.hits == 11
    end

    test "a while writing a cache row per step keeps the cache in one buffer" do
      {rows, cols} = {2048, 256}
      cache = Nx.broadcast(Nx.tensor(0.0, backend: EMLX.Backend), {rows, cols}) |> Nx.add(0)
      row = Nx.iota({1, cols}, type: :f32, backend: EMLX.Backend)
      EMLX.eval(EMLX.Backend.from_nx(cache))
      fill = Nx.Defn.compile(&Defns.fill/2, [cache, row], compiler: EMLX)
      bytes = rows * cols * 4

      # warm (plans made, buffers cached), then measure one run
      _ = fill.(cache, row) |> Nx.to_binary()
      base = EMLX.memory_info().active_memory
      :ok = EMLX.reset_peak_memory()
      out = fill.(cache, row)
      EMLX.eval(EMLX.Backend.from_nx(out))
      peak = EMLX.memory_info().peak_memory - base

      # The input cache is the caller's: the loop copies it once, then each
      # step writes its row into that copy. A copy per step would hold two
      # caches at once.
      assert peak < 1.5 * bytes,
             "peak #{Float.round(peak / bytes, 2)} caches above the start, want about 1"

      got = out |> Nx.to_flat_list() |> Enum.chunk_every(cols)

      for {r, i} <- Enum.with_index(got), i in [0, 1, 7, rows - 1] do
        assert r == Enum.map(0..(cols - 1), &(&1 + i * 1.0))
      end

      assert length(got) == rows
    end
  end
else
  IO.puts(
    "test/emlx/nx/compiler_replay_test.exs: Nx is not available (set NX_PATH to an Nx " <>
      "source tree, or fetch deps/nx), so the replay tests are left out"
  )
end
