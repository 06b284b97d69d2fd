defmodule EMLX.Application do
  @moduledoc """
  OTP application for EMLX.

  At start it looks up the engine's default command queue of every available
  device (`:cpu` always, `:gpu` when the engine has a GPU backend) and keeps
  the references in `:persistent_term`. These are the queues `EMLX.eval/1`
  and friends use for any process that has not bound its own queue with
  `EMLX.CommandQueue.with_queue/2` (see `EMLX.resolve_worker/1`).

  It supervises `EMLX.CompileCache`, and applies `config :emlx, inline_eval: [...]`, the bounds under which
  small evaluations run inline (see `EMLX.CommandQueue`).

  `:persistent_term` is written once per device over the VM's lifetime (a
  write triggers a global GC scan); a second start finds the entries and
  skips them.
  """

  use Application

  @devices [:cpu, :gpu]

  @impl true
  def start(_type, _args) do
    Enum.each(@devices, &ensure_default_worker/1)
    apply_inline_limits()
    Supervisor.start_link([EMLX.CompileCache], strategy: :one_for_one, name: __MODULE__)
  end

  @doc """
  Returns the default command queue reference for `device`, or `nil` when the
  device has none (it is unavailable, or the application is not started).
  """
  @spec default_worker(atom()) :: reference() | nil
  def default_worker(device) do
    :persistent_term.get({EMLX, :default_worker, device}, nil)
  end

  # `config :emlx, inline_eval: [max_nodes: ..., max_work: ...]` (see
  # EMLX.CommandQueue, "Small work runs inline"); unset keys keep the NIF's
  # defaults.
  defp apply_inline_limits do
    case Application.get_env(:emlx, :inline_eval, []) do
      [] -> :ok
      limits -> EMLX.CommandQueue.put_inline_limits(limits)
    end

    :ok
  end

  defp ensure_default_worker(device) do
    key = {EMLX, :default_worker, device}

    with nil <- :persistent_term.get(key, nil),
         {:ok, true} <- EMLX.NIF.device_available(device) do
      case EMLX.NIF.command_queue_default(device) do
        {:ok, ref} ->
          :persistent_term.put(key, ref)

        {:error, message} ->
          raise EMLX.NIFError, "EMLX.Application could not get the #{device} queue: " <> message
      end
    end

    :ok
  end
end
