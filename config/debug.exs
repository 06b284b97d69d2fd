import Config

# MIX_ENV=debug: every compile-time debug flag on. test/emlx/debug_flags_test.exs
# compiles this environment in a child `mix run` to check the flags' "on"
# behaviour, while the main test run checks that they are erased when off.
config :emlx,
  default_device: :cpu,
  enable_bounds_check: true,
  detect_non_finites: true,
  compiler_debug: true
