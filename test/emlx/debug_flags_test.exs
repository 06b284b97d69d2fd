defmodule EMLX.DebugFlagsTest do
  # The compile-time debug flags, both ways:
  #
  #   * off (this test environment): the checks are erased — no call to
  #     EMLX.Debug is left in EMLX's BEAM code, the macros expand to their
  #     plain value, and NaN-producing dots or out-of-bounds takes do not raise;
  #   * on: a child `mix run` in MIX_ENV=debug (config/debug.exs turns every
  #     flag on, so EMLX is compiled with the checks) runs the script below,
  #     where the same calls raise.
  use ExUnit.Case, async: true

  import EMLX.TestHelpers

  @root Path.expand("../..", __DIR__)

  test "every flag defaults to false" do
    assert EMLX.Debug.flags() ==
             [enable_bounds_check: false, detect_non_finites: false, compiler_debug: false]
  end

  test "with the flags off, EMLX's code holds no trace of the checks" do
    {:beam_file, EMLX, _exports, _attrs, _info, functions} = :beam_disasm.file(:code.which(EMLX))

    calls =
      for {:function, _name, _arity, _label, code} <- functions,
          instruction <- code,
          {:extfunc, EMLX.Debug, fun, arity} <- extfuncs(instruction),
          do: {fun, arity}

    assert calls == []

    # the functions that carry checks when the flags are on do exist
    for {fun, arity} <- [tensordot: 4, tensordot: 6, einsum: 2, take: 3, gather: 4, scatter: 4] do
      assert Enum.any?(functions, &match?({:function, ^fun, ^arity, _, _}, &1))
    end
  end

  defp extfuncs(instruction) when is_tuple(instruction),
    do: instruction |> Tuple.to_list() |> Enum.flat_map(&extfuncs/1)

  defp extfuncs(list) when is_list(list), do: Enum.flat_map(list, &extfuncs/1)
  defp extfuncs({:extfunc, _, _, _} = f), do: [f]
  defp extfuncs(_), do: []

  test "with the flags off, the macros expand to the plain value" do
    require EMLX.Debug
    x = Macro.var(:x, nil)
    assert Macro.expand_once(quote(do: EMLX.Debug.check_finite!(unquote(x), :op)), __ENV__) == x

    assert Macro.expand_once(quote(do: EMLX.Debug.check_indices!(t, i, 0, :op)), __ENV__) == :ok
    assert Macro.expand_once(quote(do: EMLX.Debug.compiler_assert!(false, "m")), __ENV__) == :ok
  end

  test "with the flags off, non-finite dots and out-of-bounds indices pass" do
    a = tensor([:nan, 1.0], {2})
    b = tensor([1.0, 1.0], {2})
    assert EMLX.tensordot(a, b, [0], [0]) |> EMLX.item() == :nan

    t = tensor([1.0, 2.0, 3.0], {3})
    assert {:cpu, _} = EMLX.take(t, tensor([5], {1}, {:s, 32}), 0)
  end

  @script ~S"""
  f32 = fn values ->
    for v <- values, into: <<>> do
      case v do
        :nan -> <<0x7FC00000::32-native>>
        :infinity -> <<0x7F800000::32-native>>
        v -> <<v::float-32-native>>
      end
    end
  end

  s32 = fn values -> for v <- values, into: <<>>, do: <<v::signed-32-native>> end
  vec = fn values -> EMLX.from_blob(f32.(values), {length(values)}, {:f, 32}, :cpu) end
  idx = fn values -> EMLX.from_blob(s32.(values), {length(values)}, {:s, 32}, :cpu) end

  check = fn name, ok? ->
    if ok?, do: IO.puts("ok: #{name}"), else: (IO.puts("FAILED: #{name}"); System.halt(1))
  end

  raises = fn fun, pattern ->
    try do
      fun.()
      false
    rescue
      e in [ArgumentError, RuntimeError] -> Exception.message(e) =~ pattern
    end
  end

  check.("all flags on", Enum.all?(Keyword.values(EMLX.Debug.flags())))

  ones = vec.([1.0, 1.0])
  check.("NaN-producing dot raises",
    raises.(fn -> EMLX.tensordot(vec.([:nan, 1.0]), ones, [0], [0]) end, "tensordot produced NaN or Inf"))
  check.("Inf-producing dot raises",
    raises.(fn -> EMLX.tensordot(vec.([:infinity, 1.0]), ones, [0], [0]) end, "produced NaN or Inf"))
  check.("NaN-producing einsum raises",
    raises.(fn -> EMLX.einsum([vec.([:nan, 1.0]), ones], "i,i->") end, "einsum produced NaN or Inf"))
  check.("a finite dot passes",
    EMLX.tensordot(vec.([2.0, 3.0]), ones, [0], [0]) |> EMLX.item() == 5.0)

  t = vec.([1.0, 2.0, 3.0])
  check.("out-of-bounds take raises",
    raises.(fn -> EMLX.take(t, idx.([0, 5]), 0) end, "take: index out of bounds on axis 0"))
  check.("negative take index raises",
    raises.(fn -> EMLX.take(t, idx.([-1]), 0) end, "index out of bounds"))
  check.("out-of-bounds take_along_axis raises",
    raises.(fn -> EMLX.take_along_axis(t, idx.([3]), 0) end, "take_along_axis: index out of bounds"))
  check.("out-of-bounds gather raises",
    raises.(fn -> EMLX.gather(t, [idx.([3])], [0], [1]) end, "gather: index out of bounds"))
  check.("out-of-bounds scatter raises",
    raises.(fn -> EMLX.scatter(t, [idx.([7])], EMLX.reshape(vec.([9.0]), {1, 1}), [0]) end,
      "scatter: index out of bounds"))
  check.("in-bounds take passes",
    EMLX.take(t, idx.([2, 0]), 0) |> EMLX.to_blob() == f32.([3.0, 1.0]))

  require EMLX.Debug
  check.("compiler_assert! raises on a false invariant",
    raises.(fn -> EMLX.Debug.compiler_assert!(1 + 1 == 3, "arithmetic") end, "invariant violated: arithmetic"))
  check.("compiler_assert! passes a true one", EMLX.Debug.compiler_assert!(true, "x") == :ok)

  IO.puts("DEBUG FLAGS OK")
  """

  # A MIX_BUILD_PATH given to this run names one build directory for every
  # MIX_ENV: the debug build gets its own, or it would recompile this run's
  # modules under the running tests.
  defp debug_build_path do
    case System.get_env("MIX_BUILD_PATH") do
      nil -> []
      path -> [{"MIX_BUILD_PATH", Path.expand(path <> "_debug", @root)}]
    end
  end

  @tag :debug_flags_on
  @tag timeout: 600_000
  test "with the flags on (MIX_ENV=debug), the checks raise" do
    script =
      Path.join(System.tmp_dir!(), "emlx_debug_flags_#{System.unique_integer([:positive])}.exs")

    File.write!(script, @script)

    try do
      {output, status} =
        System.cmd("mix", ["run", script],
          cd: @root,
          env: [{"MIX_ENV", "debug"} | debug_build_path()],
          stderr_to_stdout: true
        )

      assert status == 0 and output =~ "DEBUG FLAGS OK", output
    after
      File.rm(script)
    end
  end
end
