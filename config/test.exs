import Config

config :emlx, default_device: :cpu
