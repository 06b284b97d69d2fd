import Config

# Development-only checks, read at compile time with Application.compile_env/3
# and erased from the code entirely when false. After changing one, run
# `mix compile --force`.
#
# Raise on out-of-bounds indices in the indexing functions:
# config :emlx, enable_bounds_check: true
#
# Raise when dot, conv or the fused kernels produce NaN or Inf (forces extra
# evaluations; never in production):
# config :emlx, detect_non_finites: true
#
# Raise on internal Nx.Defn lowering invariant violations:
# config :emlx, compiler_debug: true
