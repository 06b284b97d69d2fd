if Code.ensure_loaded?(Nx) and Version.match?(System.version(), ">= 1.15.0") do
  defmodule EMLX.Nx.BackendDocumentationTest do
    @moduledoc """
    The `iex>` examples of EMLX's backend documentation guides
    (guides/backend_documentation/, as EXLA and Torchx ship theirs) and of
    Nx's own backend documentation convention guide, with `EMLX.Backend` as
    the default backend.
    """
    use ExUnit.Case, async: false

    setup do
      previous = Nx.default_backend(EMLX.Backend)
      on_exit(fn -> Nx.default_backend(previous) end)
      :ok
    end

    doctest_file("guides/backend_documentation/index.md")
    doctest_file("guides/backend_documentation/nx.md")
    doctest_file("guides/backend_documentation/nx_lin_alg.md")

    # The Nx source tree as mix.exs finds it (NX_PATH, else deps/nx); the
    # guides are not in the compiled app.
    nx_guide =
      [System.get_env("NX_PATH"), Path.expand("../../../deps/nx", __DIR__)]
      |> Enum.reject(&is_nil/1)
      |> Enum.map(&Path.join(&1, "guides/backend_documentation/convention.md"))
      |> Enum.find(&File.exists?/1)

    if nx_guide && File.exists?(nx_guide) do
      doctest_file(nx_guide)
    else
      IO.puts(
        "test/emlx/nx/backend_documentation_test.exs: the Nx tree has no " <>
          "guides/backend_documentation/convention.md, so its doctest is left out"
      )
    end
  end
else
  IO.puts(
    "test/emlx/nx/backend_documentation_test.exs: needs Nx and Elixir >= 1.15 " <>
      "(ExUnit.DocTest.doctest_file/2), so the guide doctests are left out"
  )
end
