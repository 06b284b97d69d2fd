# Nx's own defn test files, run with EMLX as the Nx.Defn compiler and
# EMLX.Backend as the default backend.
#
#   NX_PATH=/path/to/nx MIX_ENV=test mix run scripts/nx_defn_conformance.exs [file ...]
#
# Files are relative to $NX_PATH/test (default: the list below). Each file is
# loaded from a copy in which the compiler the tests pick for execution,
# `compiler: Evaluator` / `compiler: Nx.Defn.Evaluator`, reads
# `compiler: EMLX`; `Nx.Defn.global_default_options(compiler: EMLX)` covers
# the tests that pick none. Tests on `Nx.Defn.Debug` (a compiler that
# returns the expression instead of running it) are left as they are.
# Nothing of Nx's is written into this repository.
#
# Nx's tests compare results with `assert left == right`, which compares
# tensors as structs: with EMLX.Backend as the default backend two equal
# tensors differ by their engine references. In the copies `assert/1` is
# EMLX.Conformance.Assert's, which copies every tensor on both sides of an
# `==` to Nx.BinaryBackend first (values, types, shapes and names are then
# compared exactly as Nx's own run compares them). A match whose pattern
# binds one variable twice (`assert {x, x} = f(t)`) is the same comparison:
# it is matched against the Nx.BinaryBackend copy of its right side, and
# `assert_received` with a pinned variable (`{^t, ...}`) receives the
# message with the pin as a fresh variable and then compares the two copies
# with `==`. Every other assertion is ExUnit's.
#
# Prints one line per file (`run`, `passed`, `failed`, `skipped`) and each
# failure with the first line of its error; the last line is
# `conformance: run=N passed=P failed=F`. With CONFORMANCE_JSON=path the
# per-test results are also written there (one `file<TAB>test<TAB>state`
# line each) for test/emlx/nx/nx_defn_conformance_test.exs.

defmodule EMLX.Conformance.Assert do
  @moduledoc false

  defmacro assert({:==, meta, [left, right]}) do
    quote do
      ExUnit.Assertions.assert(
        unquote(
          {:==, meta,
           [
             quote(do: EMLX.Conformance.Assert.binary(unquote(left))),
             quote(do: EMLX.Conformance.Assert.binary(unquote(right)))
           ]}
        )
      )
    end
  end

  defmacro assert({:=, meta, [pattern, right]} = expr) do
    if repeated_var?(pattern) do
      quote do
        ExUnit.Assertions.assert(
          unquote(
            {:=, meta, [pattern, quote(do: EMLX.Conformance.Assert.binary(unquote(right)))]}
          )
        )
      end
    else
      quote(do: ExUnit.Assertions.assert(unquote(expr)))
    end
  end

  defmacro assert(expr) do
    quote(do: ExUnit.Assertions.assert(unquote(expr)))
  end

  defmacro assert_received(pattern) do
    {pattern, pins} =
      Macro.prewalk(pattern, [], fn
        {:^, _, [{name, _, context} = var]}, pins when is_atom(name) and is_atom(context) ->
          fresh = Macro.unique_var(name, __MODULE__)
          {fresh, [{fresh, var} | pins]}

        other, pins ->
          {other, pins}
      end)

    checks =
      for {fresh, var} <- Enum.reverse(pins) do
        quote do
          ExUnit.Assertions.assert(
            EMLX.Conformance.Assert.binary(unquote(fresh)) ==
              EMLX.Conformance.Assert.binary(unquote(var))
          )
        end
      end

    quote do
      ExUnit.Assertions.assert_received(unquote(pattern))
      unquote_splicing(checks)
      true
    end
  end

  # Whether a pattern binds some variable (not `_`-prefixed, not pinned) twice.
  defp repeated_var?(pattern) do
    {_, vars} =
      Macro.prewalk(pattern, [], fn
        {:^, _, _}, acc ->
          {:pinned, acc}

        {name, _, context} = var, acc when is_atom(name) and is_atom(context) ->
          if String.starts_with?(Atom.to_string(name), "_"),
            do: {var, acc},
            else: {var, [name | acc]}

        other, acc ->
          {other, acc}
      end)

    length(vars) != length(Enum.uniq(vars))
  end

  def binary(%Nx.Tensor{data: %Nx.Defn.Expr{}} = t), do: t
  def binary(%Nx.Tensor{} = t), do: Nx.backend_copy(t, Nx.BinaryBackend)

  def binary(tuple) when is_tuple(tuple),
    do: tuple |> Tuple.to_list() |> Enum.map(&binary/1) |> List.to_tuple()

  def binary(list) when is_list(list), do: Enum.map(list, &binary/1)
  def binary(%Complex{} = c), do: c
  def binary(%_{} = struct), do: Map.merge(struct, binary(Map.from_struct(struct)))
  def binary(map) when is_map(map), do: Map.new(map, fn {k, v} -> {k, binary(v)} end)
  def binary(other), do: other
end

defmodule EMLX.Conformance.Formatter do
  use GenServer

  def init(_opts), do: {:ok, %{tests: []}}

  def handle_cast({:test_finished, %ExUnit.Test{} = test}, state) do
    {:noreply, %{state | tests: [test | state.tests]}}
  end

  def handle_cast({:suite_finished, _}, state) do
    report(Enum.reverse(state.tests))
    {:noreply, state}
  end

  def handle_cast({:test_started, %ExUnit.Test{} = test}, state) do
    if System.get_env("CONFORMANCE_TRACE"),
      do: IO.puts("START #{inspect(test.module)} #{test.name}")

    {:noreply, state}
  end

  def handle_cast(_event, state), do: {:noreply, state}

  defp report(tests) do
    nx = System.fetch_env!("NX_PATH")
    by_file = Enum.group_by(tests, &Path.relative_to(&1.tags.file, Path.join(nx, "test")))

    rows =
      for {file, tests} <- Enum.sort(by_file) do
        file = String.replace(file, ~r{^.*/emlx_conformance_\d+/test/}, "")
        run = Enum.reject(tests, &match?({s, _} when s in [:skipped, :excluded], &1.state))
        failed = Enum.filter(run, &match?({:failed, _}, &1.state))
        invalid = Enum.filter(run, &match?({:invalid, _}, &1.state))
        skipped = length(tests) - length(run)
        passed = length(run) - length(failed) - length(invalid)

        IO.puts(
          "#{String.pad_trailing(file, 44)} run=#{length(run)} passed=#{passed} " <>
            "failed=#{length(failed) + length(invalid)} skipped=#{skipped}"
        )

        for t <- failed ++ invalid do
          IO.puts("  FAIL #{inspect(t.module)} #{t.name}: #{reason(t.state)}")
        end

        {file, run, passed, tests}
      end

    total_run = rows |> Enum.map(fn {_, run, _, _} -> length(run) end) |> Enum.sum()
    total_passed = rows |> Enum.map(fn {_, _, passed, _} -> passed end) |> Enum.sum()

    if path = System.get_env("CONFORMANCE_JSON") do
      lines =
        for {file, _, _, tests} <- rows, t <- tests do
          state =
            case t.state do
              nil -> "passed"
              {s, _} -> Atom.to_string(s)
            end

          "#{file}\t#{t.name}\t#{state}\n"
        end

      File.write!(path, lines)
    end

    IO.puts(
      "conformance: run=#{total_run} passed=#{total_passed} failed=#{total_run - total_passed}"
    )
  end

  defp reason({:invalid, module}), do: "setup_all of #{inspect(module)} failed"

  defp reason({:failed, [{:error, %ExUnit.AssertionError{left: l, right: r} = e, _} | _]})
       when l != :ex_unit_no_meaningful_value do
    short = fn v ->
      v |> inspect(limit: 12) |> String.replace(~r/\s+/, " ") |> String.slice(0, 160)
    end

    "#{String.slice(e.message || "", 0, 60)} | left: #{short.(l)} | right: #{short.(r)}"
  end

  defp reason({:failed, [{kind, error, _stack} | _]}) do
    kind
    |> Exception.format_banner(error, [])
    |> String.split("\n")
    |> Enum.reject(&(String.trim(&1) == ""))
    |> Enum.take(2)
    |> Enum.map_join(" | ", &String.trim/1)
    |> String.slice(0, 300)
  end
end

nx = System.get_env("NX_PATH") || raise "NX_PATH is not set: give the Nx source tree"
test_dir = Path.join(nx, "test")

files =
  case System.argv() do
    [] ->
      ~w(nx/defn_test.exs nx/defn/grad_test.exs nx/defn/kernel_test.exs
         nx/defn/evaluator_test.exs nx/defn/expr_test.exs nx/defn/composite_test.exs
         nx/defn/compiler_test.exs nx/defn/graph_test.exs nx/defn/token_test.exs
         nx/defn/tree_test.exs nx/defn/template_diff_test.exs
         nx/defn/runtime_call_evaluator_test.exs nx/optional_test.exs nx/vectorize_test.exs)

    files ->
      files
  end

ExUnit.start(
  autorun: false,
  formatters: [EMLX.Conformance.Formatter],
  exclude: [:distributed],
  assert_receive_timeout: 1000,
  max_cases: 1
)

# Nx's test support implements Nx's protocols: use them unconsolidated, as
# Nx's own test run does.
consolidated = Mix.Project.consolidation_path()

for beam <- Path.wildcard(Path.join(consolidated, "*.beam")) do
  protocol = beam |> Path.basename(".beam") |> String.to_atom()
  :code.purge(protocol)
  :code.delete(protocol)
end

Code.delete_path(consolidated)

tmp = Path.join(System.tmp_dir!(), "emlx_conformance_#{System.pid()}")

# The copies keep Nx's layout and line numbers, and everything runs from
# their root as Nx's own run does from Nx's: tests that expect a message
# naming `test/nx/...:line` (CompileError, the `location/1` of defn_test)
# see the same file and line.
File.mkdir_p!(tmp)
File.cd!(tmp)

# Nx's assert_all_close/3 (test/support/helpers.ex) compares Nx.all_close's
# result with `==` too: the copy compares it on Nx.BinaryBackend.
for support <- Path.wildcard(Path.join(test_dir, "support/*.ex")) do
  source =
    Regex.replace(
      ~r/unless (Nx\.all_close\(.*?\)) ==\s*Nx\.tensor\(1, type: \{:u, 8\}\) do/s,
      File.read!(support),
      "unless EMLX.Conformance.Assert.binary(\\1) == Nx.tensor(1, type: {:u, 8}, backend: Nx.BinaryBackend) do"
    )

  copy = Path.join(["test", "support", Path.basename(support)])
  File.mkdir_p!(Path.dirname(copy))
  File.write!(copy, source)
  Code.require_file(copy)
end

for file <- files do
  source = File.read!(Path.join(test_dir, file))
  rewritten = Regex.replace(~r/compiler: (Nx\.Defn\.)?Evaluator\b/, source, "compiler: EMLX")

  # On the `use` line itself, so that no line moves.
  rewritten =
    Regex.replace(
      ~r/^(\s*use (ExUnit\.Case|Nx\.Case)\b.*)$/m,
      rewritten,
      "\\1; import ExUnit.Assertions, except: [assert: 1, assert_received: 1]; import EMLX.Conformance.Assert"
    )

  copy = Path.join("test", file)
  File.mkdir_p!(Path.dirname(copy))
  File.write!(copy, rewritten)
  Code.require_file(copy)
end

# After loading: the files build tensors into module attributes at compile
# time, which must be Nx.BinaryBackend's (they are escaped into the code).
Nx.global_default_backend(EMLX.Backend)
Nx.Defn.global_default_options(compiler: EMLX)
ExUnit.run()
File.cd!(System.tmp_dir!())
File.rm_rf!(tmp)
