# `mix test` runs every suite; the slow ones can be skipped with
# `mix test --exclude robustness --exclude concurrency --exclude debug_flags_on`.
ExUnit.start()
