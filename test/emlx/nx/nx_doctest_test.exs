if Code.ensure_loaded?(Nx) do
  defmodule EMLX.Nx.DoctestTest do
    @moduledoc """
    Nx's own doctests (`doctest Nx`, `doctest Nx.LinAlg`) with `EMLX.Backend`
    as the default backend, as EXLA and Torchx run them. Each exclusion is
    listed with its reason.
    """
    use ExUnit.Case, async: false

    setup do
      previous = Nx.default_backend(EMLX.Backend)
      on_exit(fn -> Nx.default_backend(previous) end)
      :ok
    end

    @nx_exclusions []

    @linalg_exclusions []

    doctest Nx, except: [:moduledoc] ++ @nx_exclusions
    doctest Nx.LinAlg, except: @linalg_exclusions
  end
else
  IO.puts(
    "test/emlx/nx/nx_doctest_test.exs: Nx is not available (set NX_PATH to an Nx " <>
      "source tree, or fetch deps/nx), so the Nx conformance doctests are left out"
  )
end
