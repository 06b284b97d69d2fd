# Makefile — the README's two commands and the other builds of EMLX.
#
#   make demo        build (Release, build/) and run the decode demo: a
#                    Llama-shaped model's prefill and decode (examples/decode.c)
#   make demo-short  build and run the short C API example (examples/demo.c)
#   make test        build (Release, build/) and run every test: the C suite
#                    through CTest, then the Elixir suite (mix test)
#   make test-asan   the C suite under ASan + UBSan (build-asan/)
#   make test-tsan   the tests labelled "threads" under TSan (build-tsan/)
#   make bench       build (Release) and run bench/compare.py
#   make deps        install missing Debian packages (or print the command)
#   make format      clang-format the C sources (and the NIF) in place
#   make clean       remove build/, build-asan/ and build-tsan/
#
# Every target that builds first runs scripts/deps.sh, which does no apt work
# on a machine that already has everything.

JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE ?= cmake
CTEST ?= ctest
# Extra -D options for every configure, e.g. make test CMAKE_ARGS=-DEMLX_WERROR=OFF
CMAKE_ARGS ?=
# Extra ctest options, e.g. make test-asan CTEST_ARGS="-R test_dtype"
CTEST_ARGS ?=

BUILD_DIR ?= build
ASAN_DIR ?= build-asan
TSAN_DIR ?= build-tsan

# Sanitizer builds keep debug info and assertions (no -DNDEBUG).
SAN_BUILD := -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g" \
             -DEMLX_BUILD_BENCH=OFF
CTEST_RUN := $(CTEST) --output-on-failure -j $(JOBS) $(CTEST_ARGS)

.PHONY: all build demo demo-short demo-decode test test-c test-elixir test-asan test-tsan bench deps deps-python \
        format clean help

all: build

help:
	@sed -n '3,14p' Makefile | sed 's/^# \{0,1\}//'

deps:
	@bash scripts/deps.sh

deps-python:
	@bash scripts/deps.sh --python

build: deps
	$(CMAKE) -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release $(CMAKE_ARGS)
	$(CMAKE) --build $(BUILD_DIR) -j $(JOBS)

demo-short: deps
	$(CMAKE) -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release $(CMAKE_ARGS)
	$(CMAKE) --build $(BUILD_DIR) -j $(JOBS) --target emlx_demo
	./$(BUILD_DIR)/emlx_demo

# DECODE_ARGS, e.g. make demo DECODE_ARGS="--prompt 256 --gen 64"
DECODE_ARGS ?=
demo-decode: demo
demo: deps
	$(CMAKE) -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release $(CMAKE_ARGS)
	$(CMAKE) --build $(BUILD_DIR) -j $(JOBS) --target emlx_decode
	./$(BUILD_DIR)/emlx_decode $(DECODE_ARGS)

test: test-c test-elixir

test-c: build
	cd $(BUILD_DIR) && $(CTEST_RUN) --no-tests=error

# ---- Elixir hook ---------------------------------------------------------------
# When the Elixir package is there (mix.exs at the root), `make test` runs its
# ExUnit suite after the C suite. Its Debian packages are deps.sh's --elixir
# list. mix's compiler (Mix.Tasks.Compile.EmlxNif in mix.exs) builds the NIF
# against the engine in EMLX_CMAKE_BUILD_DIR: pointing it at $(BUILD_DIR)
# reuses the Release build test-c just made instead of building a third one.
#
# Nx conformance (test/emlx/nx/: EMLX.Backend's tests and Nx's own doctests
# with EMLX.Backend as the default backend) runs when an Nx tree is there:
# NX_PATH (mix.exs then depends on it; put an Elixir new enough for that Nx
# first on PATH) or deps/nx. Its build goes to NX_MIX_BUILD_PATH so it does
# not clash with the build without Nx. Without one, it is left out and says so.
NX_MIX_BUILD_PATH ?= _build/nx
test-elixir: test-c
ifneq ($(wildcard mix.exs),)
	@bash scripts/deps.sh --elixir
	@if [ -n "$(NX_PATH)" ] || [ -d deps/nx ]; then \
	  echo "make test: Nx tree found ($${NX_PATH:-deps/nx}): running the suite with the Nx conformance tests"; \
	  echo "EMLX_CMAKE_BUILD_DIR=$(abspath $(BUILD_DIR)) MIX_BUILD_PATH=$(NX_MIX_BUILD_PATH) mix test"; \
	  EMLX_CMAKE_BUILD_DIR=$(abspath $(BUILD_DIR)) MIX_BUILD_PATH=$(NX_MIX_BUILD_PATH) mix test; \
	else \
	  echo "make test: no Nx tree (NX_PATH unset, no deps/nx): the Nx conformance tests (test/emlx/nx) are left out"; \
	  echo "EMLX_CMAKE_BUILD_DIR=$(abspath $(BUILD_DIR)) mix test"; \
	  EMLX_CMAKE_BUILD_DIR=$(abspath $(BUILD_DIR)) mix test; \
	fi
else
	@echo "make test: no mix.exs, so no Elixir tests to run"
endif

test-asan: deps
	$(CMAKE) -S . -B $(ASAN_DIR) -DEMLX_SANITIZE=ON $(SAN_BUILD) $(CMAKE_ARGS)
	$(CMAKE) --build $(ASAN_DIR) -j $(JOBS)
	cd $(ASAN_DIR) && ASAN_OPTIONS=detect_leaks=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 $(CTEST_RUN) --no-tests=error

test-tsan: deps
	$(CMAKE) -S . -B $(TSAN_DIR) -DEMLX_TSAN=ON $(SAN_BUILD) $(CMAKE_ARGS)
	$(CMAKE) --build $(TSAN_DIR) -j $(JOBS)
	cd $(TSAN_DIR) && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
	  $(CTEST_RUN) -L threads

# bench/compare.py runs the emlx_bench_* programs beside numpy (see
# bench/README.md); under .venv/bin/python3 when deps.sh had to make that
# virtual environment. Options go through BENCH_ARGS, e.g.
# make bench BENCH_ARGS="--case add_f32_16M --threads 1".
BENCH_ARGS ?=
bench: deps-python build
	@py=python3; if [ -x .venv/bin/python3 ]; then py=.venv/bin/python3; fi; \
	  echo "$$py bench/compare.py --build-dir $(BUILD_DIR) $(BENCH_ARGS)"; \
	  $$py bench/compare.py --build-dir $(BUILD_DIR) $(BENCH_ARGS)

format:
	find include src tests bench examples c_src -name '*.[ch]' -print0 | xargs -0 -r clang-format -i

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR) $(TSAN_DIR)
