defmodule EMLX.ProgramTest do
  # Programs through the NIF (c_src/nif_program.c): a spec
  # {templates, nodes, outputs} is compiled once by program_compile and
  # replayed by program_run. References are computed here, in plain Elixir
  # arithmetic on lists (an MLP forward, closed forms of loops), never with
  # the engine. That a cond runs only its chosen branch is shown by a branch
  # whose run fails (it sorts 2^34 elements: 64 GiB, past any memory limit
  # of this machine): the program succeeds whenever the other branch is
  # chosen. The spec's format is documented in c_src/nif_program.c.
  use ExUnit.Case, async: true

  import EMLX.TestHelpers

  alias EMLX.NIF

  defp queue, do: EMLX.Application.default_worker(:cpu)

  # program_run on the default queue or on a fresh user queue, inline or not
  defp run(program, inputs, q \\ nil) do
    ref = make_ref()

    case NIF.program_run(program, inputs, q || queue(), ref) do
      :ok ->
        receive do
          {^ref, reply} -> reply
        after
          60_000 -> flunk("no reply from program_run")
        end

      reply ->
        reply
    end
  end

  defp run!(program, inputs, q \\ nil) do
    {:ok, outs} = run(program, inputs, q)
    outs
  end

  defp compile!(spec) do
    case NIF.program_compile(spec) do
      {:ok, p} -> p
      {:error, message} -> flunk("program_compile failed: #{message}")
    end
  end

  defp scalar(v, type), do: tensor([v], {}, type)
  defp const(v, type), do: {:constant, [scalar(v, type)]}

  defp near?(a, b, tol), do: abs(a - b) <= tol * max(1.0, abs(b))

  defp assert_close(got, want, tol) do
    assert length(got) == length(want)

    for {g, w} <- Enum.zip(got, want),
        do: assert(near?(g, w, tol), "got #{inspect(got)}, want #{inspect(want)}")
  end

  ## an MLP forward: softmax(relu(x @ w1 + b1) @ w2)

  defp matmul(a, b) do
    bt = Enum.zip_with(b, & &1)
    for row <- a, do: for(col <- bt, do: Enum.zip_with(row, col, &(&1 * &2)) |> Enum.sum())
  end

  defp softmax_rows(m) do
    for row <- m do
      mx = Enum.max(row)
      e = Enum.map(row, &:math.exp(&1 - mx))
      s = Enum.sum(e)
      Enum.map(e, &(&1 / s))
    end
  end

  defp rows(flat, n), do: Enum.chunk_every(flat, n)

  test "an MLP-like spec matches an Elixir reference and replays on new inputs" do
    {b, i, h, o} = {4, 8, 16, 3}
    w1 = for k <- 1..(i * h), do: :math.sin(k * 0.37) * 0.5
    b1 = for k <- 1..h, do: :math.cos(k * 0.11) * 0.1
    w2 = for k <- 1..(h * o), do: :math.sin(k * 0.53 + 1.0) * 0.5
    f32 = {:f, 32}

    spec =
      {[{f32, {b, i}}, {f32, {i, h}}, {f32, {h}}, {f32, {h, o}}],
       [
         # 4: x @ w1
         {:tensordot, [{:ref, 0}, {:ref, 1}, [1], [0]]},
         # 5: + b1
         {:add, [{:ref, 4}, {:ref, 2}]},
         # 6: 0.0
         const(0.0, f32),
         # 7: relu
         {:maximum, [{:ref, 5}, {:ref, 6}]},
         # 8: @ w2
         {:tensordot, [{:ref, 7}, {:ref, 3}, [1], [0]]},
         # 9: softmax over the last axis
         {:softmax, [{:ref, 8}, [1], false]}
       ], [{:ref, 9}, {:ref, 7}]}

    p = compile!(spec)
    {:ok, stats} = NIF.program_stats(p)
    assert stats.ninputs == 4 and stats.noutputs == 2
    assert stats.inputs == [{f32, {b, i}}, {f32, {i, h}}, {f32, {h}}, {f32, {h, o}}]
    assert stats.outputs == [{f32, {b, o}}, {f32, {b, h}}]
    assert stats.steps >= 3

    ws = [tensor(w1, {i, h}), tensor(b1, {h}), tensor(w2, {h, o})]

    for seed <- 1..3 do
      xv = for k <- 1..(b * i), do: :math.sin(k * 0.7 + seed) * 2
      [probs, hidden] = run!(p, [tensor(xv, {b, i}) | ws])

      ref_h =
        matmul(rows(xv, i), rows(w1, h))
        |> Enum.map(fn r -> Enum.zip_with(r, b1, &max(&1 + &2, 0.0)) end)

      ref_p = softmax_rows(matmul(ref_h, rows(w2, o)))
      assert EMLX.shape(probs) == {b, o}
      assert_close(values(hidden), List.flatten(ref_h), 1.0e-5)
      assert_close(values(probs), List.flatten(ref_p), 1.0e-5)
    end
  end

  test "a program runs inline when small, through a queue otherwise, on lazy views" do
    f32 = {:f, 32}
    p = compile!({[{f32, {3, 2}}], [{:exp, [{:ref, 0}]}], [{:ref, 1}]})
    x = EMLX.transpose(tensor([0.0, 0.5, 1.0, 1.5, 2.0, 2.5], {2, 3}), [1, 0])
    want = for v <- [0.0, 1.5, 0.5, 2.0, 1.0, 2.5], do: :math.exp(v)
    # small work on the default queue: the reply is the call's own return
    assert {:ok, [y]} = NIF.program_run(p, [x], queue(), make_ref())
    assert_close(values(y), want, 1.0e-6)
    {:ok, uq} = EMLX.CommandQueue.new(:cpu)
    [y] = run!(p, [x], uq.ref)
    assert_close(values(y), want, 1.0e-6)
    # past the inline limits (work > max_work): through the queue's worker
    %{max_work: max_work} = EMLX.CommandQueue.inline_limits()
    n = max_work + 1
    big = compile!({[{f32, {n}}], [{:negate, [{:ref, 0}]}], [{:ref, 1}]})
    xs = for k <- 1..n, do: k * 1.0
    ref = make_ref()
    assert :ok = NIF.program_run(big, [tensor(xs, {n})], queue(), ref)
    assert_receive {^ref, {:ok, [z]}}, 60_000
    assert values(z) == Enum.map(xs, &(-&1))
  end

  test "a small matmul program runs inline: its work is eval's estimate, not the weights times k" do
    f32 = {:f, 32}
    {m, k, n} = {4, 64, 64}

    spec =
      {[{f32, {m, k}}, {f32, {k, n}}], [{:tensordot, [{:ref, 0}, {:ref, 1}, [1], [0]]}],
       [{:ref, 2}]}

    p = compile!(spec)
    # reads m*k + k*n, writes m*n, m*n*k inner products (eval_estimate.c's measure)
    assert {:ok, %{work: work, steps: 1}} = NIF.program_stats(p)
    assert work == m * k + k * n + m * n + m * n * k
    %{max_work: max_work, max_nodes: max_nodes} = EMLX.CommandQueue.inline_limits()
    assert work <= max_work and max_nodes >= 1

    a = for i <- 0..(m * k - 1), do: rem(i * 7, 13) / 13 - 0.5
    b = for i <- 0..(k * n - 1), do: rem(i * 5, 11) / 11 - 0.5
    # within the limits on the default queue: the reply is the call's own return
    assert {:ok, [y]} =
             NIF.program_run(p, [tensor(a, {m, k}), tensor(b, {k, n})], queue(), make_ref())

    rows = Enum.chunk_every(a, k)
    cols = b |> Enum.chunk_every(n) |> Enum.zip_with(& &1)
    want = for r <- rows, c <- cols, do: Enum.zip_with(r, c, &(&1 * &2)) |> Enum.sum()
    assert_close(values(y), want, 1.0e-5)
  end

  ## while: sum of i^2 for i < n, and a vector state

  defp squares_spec do
    s64 = {:s, 64}
    # state (i, acc, n)
    cond = {[], [{:less, [{:ref, 0}, {:ref, 2}]}], [{:ref, 3}]}

    body =
      {[],
       [
         const(1, s64),
         {:add, [{:ref, 0}, {:ref, 3}]},
         {:multiply, [{:ref, 0}, {:ref, 0}]},
         {:add, [{:ref, 1}, {:ref, 5}]}
       ], [{:ref, 4}, {:ref, 6}, {:ref, 2}]}

    {[{s64, {}}], [const(0, s64), {:while, [cond, body, [{:ref, 1}, {:ref, 1}, {:ref, 0}]]}],
     [{:ref, 3}, {:ref, 2}]}
  end

  test "a while loop computes the sum of squares (closed form) and replays" do
    p = compile!(squares_spec())
    assert {:ok, %{work: :infinity}} = NIF.program_stats(p)

    for n <- [0, 1, 2, 7, 100, 1000, -5] do
      [acc, i] = run!(p, [scalar(n, {:s, 64})])
      want = if n <= 0, do: 0, else: div((n - 1) * n * (2 * n - 1), 6)
      assert values(acc) == [want]
      assert values(i) == [max(n, 0)]
    end
  end

  test "a while loop over a vector state (x <- x * 0.5 + 1, k times)" do
    {f32, s64} = {{:f, 32}, {:s, 64}}
    cond = {[{s64, {}}, {s64, {}}, {f32, {5}}], [{:less, [{:ref, 0}, {:ref, 1}]}], [{:ref, 3}]}

    body =
      {[],
       [
         const(1, s64),
         {:add, [{:ref, 0}, {:ref, 3}]},
         const(0.5, f32),
         {:multiply, [{:ref, 2}, {:ref, 5}]},
         const(1.0, f32),
         {:add, [{:ref, 6}, {:ref, 7}]}
       ], [{:ref, 4}, {:ref, 1}, {:ref, 8}]}

    p =
      compile!(
        {[{s64, {}}, {f32, {5}}],
         [const(0, s64), {:while, [cond, body, [{:ref, 2}, {:ref, 0}, {:ref, 1}]]}], [{:ref, 5}]}
      )

    x0 = [-3.0, 0.0, 1.0, 2.0, 10.0]

    for k <- [0, 1, 5, 30] do
      [x] = run!(p, [scalar(k, s64), tensor(x0, {5})])
      want = for v <- x0, do: Enum.reduce(1..k//1, v, fn _, acc -> acc * 0.5 + 1.0 end)
      assert_close(values(x), want, 1.0e-6)
    end
  end

  ## cond: only the chosen branch runs

  test "a cond runs only the chosen branch" do
    f32 = {:f, 32}
    side = Bitwise.bsl(1, 17)
    # cheap: x * 2
    cheap = {[], [const(2.0, f32), {:multiply, [{:ref, 0}, {:ref, 1}]}], [{:ref, 2}]}
    # dear: sorts 2^34 copies of x[0] (64 GiB, rows of 2^17) and keeps the first 4
    dear =
      {[],
       [
         {:slice, [{:ref, 0}, [0], [1], [1]]},
         {:broadcast_to, [{:ref, 1}, {side, side}]},
         {:sort, [{:ref, 2}, 1]},
         {:slice, [{:ref, 3}, [0, 0], [1, 4], [1, 1]]},
         {:reshape, [{:ref, 4}, {4}]}
       ], [{:ref, 5}]}

    spec = fn branches ->
      {[{f32, {4}}, {{:s, 32}, {}}],
       [
         const(0, {:s, 32}),
         {:greater, [{:ref, 1}, {:ref, 2}]},
         {:cond, [[{:ref, 3}], branches, [{:ref, 0}]]}
       ], [{:ref, 4}]}
    end

    x = tensor([1.0, -2.0, 3.5, 0.25], {4})

    # dear, then cheap: pred true picks dear
    p = compile!(spec.([dear, cheap]))
    [y] = run!(p, [x, scalar(0, {:s, 32})])
    assert values(y) == [2.0, -4.0, 7.0, 0.5]
    assert {:error, "program_run: " <> message} = run(p, [x, scalar(1, {:s, 32})])
    assert message =~ "memory"

    # the other way round
    q = compile!(spec.([cheap, dear]))
    [y] = run!(q, [x, scalar(5, {:s, 32})])
    assert values(y) == [2.0, -4.0, 7.0, 0.5]
    assert {:error, _} = run(q, [x, scalar(-1, {:s, 32})])

    # and the engine is fine afterwards
    [y] = run!(q, [x, scalar(1, {:s, 32})])
    assert values(y) == [2.0, -4.0, 7.0, 0.5]
  end

  test "nesting: a while whose body holds a cond whose branch holds a while" do
    s64 = {:s, 64}
    # inner loop (odd branch): sum of j for j < i; state (j, s, i)
    inner_cond = {[], [{:less, [{:ref, 0}, {:ref, 2}]}], [{:ref, 3}]}

    inner_body =
      {[], [const(1, s64), {:add, [{:ref, 0}, {:ref, 3}]}, {:add, [{:ref, 1}, {:ref, 0}]}],
       [{:ref, 4}, {:ref, 5}, {:ref, 2}]}

    odd =
      {[], [const(0, s64), {:while, [inner_cond, inner_body, [{:ref, 1}, {:ref, 1}, {:ref, 0}]]}],
       [{:ref, 3}]}

    even = {[], [{:negate, [{:ref, 0}]}], [{:ref, 1}]}
    # outer: state (i, acc, n); i += 1; acc += odd(i) ? sum_{j<i} j : -i
    outer_cond = {[], [{:less, [{:ref, 0}, {:ref, 2}]}], [{:ref, 3}]}

    outer_body =
      {[],
       [
         const(1, s64),
         {:add, [{:ref, 0}, {:ref, 3}]},
         const(2, s64),
         {:remainder, [{:ref, 4}, {:ref, 5}]},
         {:equal, [{:ref, 6}, {:ref, 3}]},
         {:cond, [[{:ref, 7}], [odd, even], [{:ref, 4}]]},
         {:add, [{:ref, 1}, {:ref, 8}]}
       ], [{:ref, 4}, {:ref, 9}, {:ref, 2}]}

    p =
      compile!(
        {[{s64, {}}],
         [const(0, s64), {:while, [outer_cond, outer_body, [{:ref, 1}, {:ref, 1}, {:ref, 0}]]}],
         [{:ref, 3}]}
      )

    for n <- [0, 1, 4, 9, 20] do
      want =
        Enum.reduce(1..n//1, 0, fn i, acc ->
          if rem(i, 2) == 1, do: acc + Enum.sum(0..(i - 1)), else: acc - i
        end)

      assert values(hd(run!(p, [scalar(n, s64)]))) == [want]
    end
  end

  test "multi-result rows append every result; constants; no inputs" do
    f32 = {:f, 32}
    # split a {6} into 3 pieces; outputs piece 2 and piece 0
    p = compile!({[{f32, {6}}], [{:split, [{:ref, 0}, 3, 0]}], [{:ref, 3}, {:ref, 1}]})
    [c, a] = run!(p, [tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], {6})])
    assert values(c) == [5.0, 6.0]
    assert values(a) == [1.0, 2.0]
    # no inputs at all: a constant program
    k = compile!({[], [const(4.0, f32), {:sqrt, [{:ref, 0}]}], [{:ref, 1}]})
    assert values(hd(run!(k, []))) == [2.0]
  end

  ## errors

  test "bad specs are refused with the node and the reason, and never crash" do
    f32 = {:f, 32}
    t1 = [{f32, {2}}]
    freed = tensor([1.0], {1})
    EMLX.deallocate(freed)

    cases = [
      {:junk, "the spec: expected a spec"},
      {{t1, [], []}, "no outputs"},
      {{[{{:f, 8}, {2}}], [], [{:ref, 0}]}, "template 0: expected a dtype"},
      {{[{f32, {-1}}], [], [{:ref, 0}]}, "template 0: dimension 1 is negative"},
      {{t1, [{:nope, [{:ref, 0}]}], [{:ref, 1}]}, "node 0 (nope): unknown op"},
      {{t1, [{:add, [{:ref, 0}]}], [{:ref, 1}]}, "node 0 (add): no row add takes 1 arguments"},
      {{t1, [{:eval, [{:ref, 0}, 1, 2]}], [{:ref, 1}]}, "node 0 (eval): eval computes"},
      {{t1, [{:shape, [{:ref, 0}]}], [{:ref, 1}]}, "node 0 (shape): the op returns no tensors"},
      {{t1, [{:exp, [{:ref, 1}]}], [{:ref, 1}]}, "node 0 (exp): {:ref, 1} is not a value yet"},
      {{t1, [{:exp, [{:ref, -1}]}], [{:ref, 1}]}, "is not a value yet"},
      {{t1, [{:exp, [7]}], [{:ref, 1}]}, "node 0 (exp): expected {:ref, index}"},
      {{t1, [:exp], [{:ref, 0}]}, "node 0: expected {op_atom, [args]}"},
      {{t1, [], [{:ref, 3}]}, "output 0: {:ref, 3} is not a value yet"},
      {{t1, [{:sum, [{:ref, 0}, [5], false]}], [{:ref, 1}]}, "node 0 (sum): sum: "},
      {{t1, [{:constant, [freed]}], [{:ref, 1}]},
       "node 0 (constant): the tensor was deallocated"},
      {{t1, [{:constant, [1, 2]}], [{:ref, 1}]}, "node 0 (constant): takes 1 arguments"},
      {{t1, [{:while, [1, 2]}], [{:ref, 1}]}, "node 0 (while): takes 3 arguments"}
    ]

    for {spec, expect} <- cases do
      assert {:error, "program_compile: argument 1: " <> message} = NIF.program_compile(spec)
      assert message =~ expect, "#{inspect(spec)}: #{message}"
    end
  end

  test "control-flow errors: templates, predicates, nesting" do
    {f32, s64} = {{:f, 32}, {:s, 64}}
    t = [{s64, {}}, {f32, {3}}]
    ok_cond = {[], [const(3, s64), {:less, [{:ref, 0}, {:ref, 2}]}], [{:ref, 3}]}
    vec_cond = {[], [const(0.0, f32), {:greater, [{:ref, 1}, {:ref, 2}]}], [{:ref, 3}]}
    ok_body = {[], [], [{:ref, 0}, {:ref, 1}]}
    # the body changes the state's dtype
    bad_body = {[], [{:astype, [{:ref, 1}, {:f, 64}]}], [{:ref, 0}, {:ref, 2}]}
    loop = fn c, b -> {t, [{:while, [c, b, [{:ref, 0}, {:ref, 1}]]}], [{:ref, 2}]} end

    assert {:error, msg} = NIF.program_compile(loop.(ok_cond, bad_body))

    assert msg =~
             "node 0 (while): while: body output 1 is float64[3] but state value 1 is float32[3]"

    assert {:error, msg} = NIF.program_compile(loop.(vec_cond, ok_body))
    assert msg =~ "node 0 (while): while: cond returns bool[3]"
    assert {:error, msg} = NIF.program_compile(loop.(:junk, ok_body))
    assert msg =~ "node 0 (while) cond: expected a spec"

    assert {:error, msg} =
             NIF.program_compile(loop.(ok_cond, {[], [{:bogus, []}], [{:ref, 0}, {:ref, 1}]}))

    assert msg =~ "node 0 (while) body: node 0 (bogus): unknown op"
    # a nested spec whose templates do not match its operands
    assert {:error, msg} =
             NIF.program_compile(loop.(ok_cond, {[{f32, {}}, {f32, {3}}], [], [{:ref, 0}]}))

    assert msg =~ "template 0 does not match its operand"

    # cond: a vector predicate; branch count; branch outputs that differ
    branch = fn n -> {[], [], Enum.map(0..(n - 1), &{:ref, &1})} end

    assert {:error, msg} =
             NIF.program_compile(
               {t, [{:cond, [[{:ref, 1}], [branch.(1), branch.(1)], [{:ref, 1}]]}], [{:ref, 2}]}
             )

    assert msg =~ "predicate 0 is float32[3]"

    assert {:error, msg} =
             NIF.program_compile(
               {t, [{:cond, [[{:ref, 0}], [branch.(1)], [{:ref, 1}]]}], [{:ref, 2}]}
             )

    assert msg =~ "expects a list of 2 branch specs"

    assert {:error, msg} =
             NIF.program_compile(
               {t, [{:cond, [[{:ref, 0}], [branch.(1), branch.(2)], [{:ref, 1}, {:ref, 0}]]}],
                [{:ref, 2}]}
             )

    assert msg =~ "branch 1 returns 2 values"

    # nesting deeper than the limit: conds inside conds
    deep =
      Enum.reduce(1..40, {[], [], [{:ref, 0}]}, fn _, inner ->
        {[], [const(1, s64), {:cond, [[{:ref, 1}], [inner, inner], [{:ref, 0}]]}], [{:ref, 2}]}
      end)

    assert {:error, msg} = NIF.program_compile(put_elem(deep, 0, [{s64, {}}]))
    assert msg =~ "nest deeper than 32 levels"
  end

  test "run errors: counts, templates, dead tensors, bad programs" do
    f32 = {:f, 32}
    p = compile!({[{f32, {2}}], [{:exp, [{:ref, 0}]}], [{:ref, 1}]})
    x = tensor([1.0, 2.0], {2})
    freed = tensor([1.0, 2.0], {2})
    EMLX.deallocate(freed)

    assert {:error, "program_run: argument 2: the program takes 1 inputs, given 2"} =
             run(p, [x, x])

    assert {:error, "program_run: argument 2: the program takes 1 inputs, given 0"} = run(p, [])
    assert {:error, "program_run: " <> m} = run(p, [tensor([1.0, 2.0, 3.0], {3})])
    assert m =~ "input 0"
    assert {:error, "program_run: " <> m} = run(p, [tensor([1, 2], {2}, {:s, 32})])
    assert m =~ "input 0"
    assert {:error, "program_run: argument 2: the tensor was deallocated"} = run(p, [freed])

    assert {:error, "program_run: argument 1: expected a compiled program" <> _} =
             NIF.program_run(x, [x], queue(), make_ref())

    assert {:error, "program_stats: argument 1: " <> _} = NIF.program_stats(make_ref())
    # and it still works
    assert_close(values(hd(run!(p, [x]))), [:math.exp(1.0), :math.exp(2.0)], 1.0e-6)
  end
end
