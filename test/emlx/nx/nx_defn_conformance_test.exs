defmodule EMLX.Nx.DefnConformanceTest do
  @moduledoc """
  Nx's own defn test files with `EMLX` as the compiler and `EMLX.Backend` as
  the default backend, through scripts/nx_defn_conformance.exs in a child
  `mix run` (a fresh VM: the files define modules and set global defaults).

  Here only the files that pass whole are run, and must stay whole; the full
  run (every defn file, with the counts per file and each failure's reason)
  is `mix run scripts/nx_defn_conformance.exs` with NX_PATH set.
  """
  use ExUnit.Case, async: false

  @moduletag timeout: 600_000

  case System.get_env("NX_PATH") do
    nil ->
      IO.puts(
        "test/emlx/nx/nx_defn_conformance_test.exs: NX_PATH is not set (an Nx source " <>
          "tree with its tests), so Nx's defn tests are not run"
      )

    nx_path ->
      @nx_path nx_path
      @files ~w(nx/defn/kernel_test.exs nx/defn/token_test.exs nx/defn/compiler_test.exs
                nx/defn/graph_test.exs nx/defn/runtime_call_evaluator_test.exs
                nx/defn/template_diff_test.exs nx/vectorize_test.exs)
      test "Nx's defn test files that pass whole with EMLX as the compiler" do
        script = Path.expand("../../../scripts/nx_defn_conformance.exs", __DIR__)

        {output, status} =
          System.cmd("mix", ["run", script | @files],
            env: [{"NX_PATH", @nx_path}, {"MIX_ENV", "test"}],
            stderr_to_stdout: true
          )

        assert status == 0, output

        [_, run, passed, failed] =
          Regex.run(~r/conformance: run=(\d+) passed=(\d+) failed=(\d+)/, output)

        assert String.to_integer(run) > 60, output
        assert failed == "0", output
        assert passed == run
      end
  end
end
