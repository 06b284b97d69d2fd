defmodule Mix.Tasks.Compile.EmlxNif do
  @moduledoc """
  Builds the EMLX engine and the NIF: `priv/libemlx_nif.so`.

  1. CMake builds the static engine library (`libemlx.a`, position
     independent) in `_build/cmake` (`EMLX_CMAKE_BUILD_DIR` overrides it);
     its tests, benchmarks and demo are switched off.
  2. `c_src/*.c` are compiled (warnings are errors) and linked with it into
     `priv/libemlx_nif.so`.

  The libraries the engine needs are read from CMake's link line for the
  shared library, plus SLEEF, pthreads and libm; `LDFLAGS` adds more.
  Nothing runs when the `.so` is newer than every engine and NIF source.
  `EMLX_JOBS` sets the parallelism (default 2), `CC` the C compiler.
  """
  use Mix.Task.Compiler

  @root __DIR__

  @impl true
  def run(_args) do
    so = Path.join(@root, "priv/libemlx_nif.so")

    if Mix.Utils.stale?(inputs(), [so]) do
      build_engine()
      build_nif(so)
      Mix.Project.build_structure()
      {:ok, []}
    else
      {:noop, []}
    end
  end

  @impl true
  def clean do
    File.rm_rf!(build_dir())
    File.rm(Path.join(@root, "priv/libemlx_nif.so"))
    :ok
  end

  defp inputs do
    Path.wildcard(Path.join(@root, "{src,include,c_src}/**/*.{c,h}")) ++
      Path.wildcard(Path.join(@root, "cmake/*")) ++
      [Path.join(@root, "CMakeLists.txt"), Path.join(@root, "mix.exs")]
  end

  defp build_dir do
    System.get_env("EMLX_CMAKE_BUILD_DIR") || Path.join(@root, "_build/cmake")
  end

  defp jobs, do: System.get_env("EMLX_JOBS", "2")

  defp build_engine do
    dir = build_dir()

    unless File.exists?(Path.join(dir, "CMakeCache.txt")) do
      Mix.shell().info("==> emlx: configuring the engine (cmake, #{dir})")

      cmd!("cmake", [
        "-S",
        @root,
        "-B",
        dir,
        "-DCMAKE_BUILD_TYPE=Release",
        "-DEMLX_BUILD_TESTS=OFF",
        "-DEMLX_BUILD_BENCH=OFF",
        "-DEMLX_BUILD_EXAMPLES=OFF"
      ])
    end

    Mix.shell().info("==> emlx: building the engine (libemlx.a)")
    cmd!("cmake", ["--build", dir, "--target", "emlx_static", "-j", jobs()])
  end

  defp build_nif(so) do
    cc = System.get_env("CC", "cc")
    obj_dir = Path.join(build_dir(), "nif")
    File.mkdir_p!(obj_dir)
    File.mkdir_p!(Path.dirname(so))

    erts_include =
      Path.join([to_string(:code.root_dir()), "erts-#{:erlang.system_info(:version)}", "include"])

    cflags =
      ~w(-std=c11 -D_GNU_SOURCE -fPIC -O2 -g -fvisibility=hidden -Wall -Wextra -Wpedantic
         -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wdouble-promotion -Werror) ++
        ["-I", Path.join(@root, "include"), "-I", Path.join(@root, "c_src"), "-I", erts_include]

    Mix.shell().info("==> emlx: building the NIF (#{Path.relative_to_cwd(so)})")

    objects =
      Path.join(@root, "c_src/*.c")
      |> Path.wildcard()
      |> Task.async_stream(
        fn src ->
          obj = Path.join(obj_dir, Path.basename(src, ".c") <> ".o")
          cmd!(cc, cflags ++ ["-c", src, "-o", obj])
          obj
        end,
        max_concurrency: String.to_integer(jobs()),
        timeout: :infinity
      )
      |> Enum.map(fn {:ok, obj} -> obj end)

    engine = Path.join(build_dir(), "libemlx.a")
    ldflags = String.split(System.get_env("LDFLAGS", ""))

    cmd!(
      cc,
      ["-shared", "-o", so] ++
        objects ++ [engine, "-Wl,--exclude-libs,ALL"] ++ engine_link_deps() ++ ldflags
    )
  end

  # The libraries the engine links with, as CMake resolved them for the shared
  # library (its link line is generated at configure time), so a dependency
  # added to CMakeLists.txt reaches the NIF without an edit here.
  defp engine_link_deps do
    link_txt = Path.join(build_dir(), "CMakeFiles/emlx.dir/link.txt")

    from_cmake =
      if File.exists?(link_txt) do
        link_txt |> File.read!() |> String.split() |> Enum.filter(&link_dep?/1)
      else
        []
      end

    Enum.uniq(from_cmake ++ ["-lsleef", "-lpthread", "-lm"])
  end

  defp link_dep?("-l" <> _), do: true
  defp link_dep?("-pthread"), do: true
  defp link_dep?("-Wl,-rpath," <> _), do: true

  defp link_dep?(token) do
    Path.type(token) == :absolute and Regex.match?(~r/\.(a|so(\.[0-9]+)*)$/, token)
  end

  defp cmd!(cmd, args) do
    case System.cmd(cmd, args, stderr_to_stdout: true) do
      {_output, 0} ->
        :ok

      {output, status} ->
        Mix.shell().error(output)
        Mix.raise("emlx: `#{cmd} #{Enum.join(args, " ")}` failed with status #{status}")
    end
  end
end

defmodule EMLX.MixProject do
  use Mix.Project

  @version "0.1.0"

  def project do
    [
      app: :emlx,
      version: @version,
      elixir: "~> 1.14",
      compilers: [:emlx_nif] ++ Mix.compilers(),
      elixirc_paths: elixirc_paths(Mix.env()),
      elixirc_options: [warnings_as_errors: true],
      start_permanent: Mix.env() == :prod,
      deps: deps(),
      description: "An Nx backend on the EMLX array engine (C11, Apple MLX semantics)",
      docs: [main: "EMLX"]
    ]
  end

  def application do
    [mod: {EMLX.Application, []}, extra_applications: [:logger]]
  end

  defp elixirc_paths(:test), do: ["lib", "test/support"]
  defp elixirc_paths(_), do: ["lib"]

  # Nx: the path in NX_PATH when given; else the current Nx for real users,
  # declared only when it has been fetched (here, or beside this package in
  # the parent project's deps/), so an offline checkout without Nx (Debian's
  # Elixir, no hex.pm) compiles and tests without it. Modules that need Nx
  # are guarded with Code.ensure_loaded?(Nx).
  defp deps do
    cond do
      path = System.get_env("NX_PATH") ->
        [{:nx, path: path}]

      File.dir?(Path.join(__DIR__, "deps/nx")) or nx_beside_us?() ->
        [{:nx, "~> 0.13"}]

      true ->
        []
    end
  end

  defp nx_beside_us? do
    Path.basename(Path.dirname(__DIR__)) == "deps" and File.dir?(Path.join(__DIR__, "../nx"))
  end
end
