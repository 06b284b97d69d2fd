import Config

# Compile-time debug flags (see EMLX's moduledoc); all off by default.
# config :emlx, enable_bounds_check: false
# config :emlx, detect_non_finites: false
# config :emlx, compiler_debug: false

env_config = Path.join(__DIR__, "#{config_env()}.exs")

if File.exists?(env_config) do
  import_config "#{config_env()}.exs"
end
