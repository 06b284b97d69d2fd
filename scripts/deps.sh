#!/usr/bin/env bash
# deps.sh — makes sure the Debian packages EMLX's build needs are installed.
#
#   scripts/deps.sh            the C build and tests (make demo / make test)
#   scripts/deps.sh --python   also Python 3 and numpy (make bench); the pip
#                              packages come from bench/requirements.txt when
#                              it exists, else numpy
#   scripts/deps.sh --elixir   also Erlang and Elixir (the Elixir package)
#
# Packages are checked with dpkg first, so a complete machine does no apt work.
# Missing ones are installed with apt-get when run as root; otherwise the exact
# command to run is printed and the script exits 1. Called by the Makefile.
set -euo pipefail

c_packages=(cmake make gcc libc6-dev pkg-config libsleef-dev libopenblas-dev liblapacke-dev python3)
python_packages=(python3 python3-pip python3-venv)
elixir_packages=(erlang-dev elixir)

root_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv_dir=${EMLX_VENV:-$root_dir/.venv}

want=("${c_packages[@]}")
with_python=0
for arg in "$@"; do
  case $arg in
    --python) with_python=1; want+=("${python_packages[@]}") ;;
    --elixir) want+=("${elixir_packages[@]}") ;;
    -h | --help) sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "deps.sh: unknown option '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

say() { echo "deps: $*"; }

# (dpkg-query -W is dpkg -s with a chosen format; no pipe, so no SIGPIPE
# from an early-exiting grep under pipefail.)
installed() {
  [[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" == "install ok installed"* ]]
}

install_debian_packages() {
  if ! command -v dpkg >/dev/null 2>&1; then
    say "not a Debian system; make sure these (or their equivalents) are installed: ${want[*]}"
    return 0
  fi
  local missing=() p
  for p in "${want[@]}"; do
    installed "$p" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    say "Debian packages present: ${want[*]}"
    return 0
  fi
  if [ "$(id -u)" -eq 0 ]; then
    say "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}"
  else
    echo "deps: missing Debian packages: ${missing[*]}" >&2
    echo "deps: install them with:" >&2
    echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends ${missing[*]}" >&2
    exit 1
  fi
}

# Python packages for bench/compare.py: into the python3 on PATH when its pip
# may install there, else into a virtual environment (Debian's own python3 is
# "externally managed"); the Makefile prefers $venv_dir when it exists.
install_python_packages() {
  local req=("numpy")
  if [ -f "$root_dir/bench/requirements.txt" ]; then
    req=(-r "$root_dir/bench/requirements.txt")
  elif python3 -c 'import numpy' 2>/dev/null ||
       { [ -x "$venv_dir/bin/python3" ] && "$venv_dir/bin/python3" -c 'import numpy' 2>/dev/null; }; then
    say "numpy present"
    return 0
  fi
  if [ -x "$venv_dir/bin/python3" ]; then
    "$venv_dir/bin/python3" -m pip install --quiet "${req[@]}"
  elif python3 -m pip install --quiet "${req[@]}" 2>/dev/null; then
    :
  else
    say "creating $venv_dir for the benchmark's Python packages"
    python3 -m venv "$venv_dir"
    "$venv_dir/bin/python3" -m pip install --quiet "${req[@]}"
  fi
  say "Python packages installed: ${req[*]}"
}

install_debian_packages
if [ $with_python -eq 1 ]; then
  install_python_packages
fi
