defmodule EMLX.CommandQueue do
  @moduledoc """
  A command queue: one engine worker thread with a FIFO of evaluation
  requests, for one device.

  Building graphs happens in the calling process; evaluation (`EMLX.eval/1`,
  `EMLX.item/1`, `EMLX.to_blob/1`, ...) is submitted to a queue and the caller
  waits for a message, so no BEAM scheduler blocks on compute. Each device
  has a default queue (see `EMLX.Application`); more can be created to run
  independent work side by side.

  ## Usage

      {:ok, q} = EMLX.CommandQueue.new(:cpu)

      EMLX.CommandQueue.with_queue(q, fn ->
        # every evaluation in this block runs on q's worker
        EMLX.eval(tensor)
      end)

  ## Process binding

  `with_queue/2` stores `{ref, device}` in the calling process's dictionary
  under `:emlx_command_queue` for the duration of the given function, then
  restores the previous value, so calls nest: the inner binding shadows the
  outer one until it returns. `EMLX.resolve_worker/1` reads this key.

  ## Cross-device promotion

  When a tensor's device does not match the bound queue's device, the
  tensor's own device's default queue is used, unless

      config :emlx,
        cross_device_promotion: true,  # route to the bound queue anyway
        warn_cross_device: true        # and log a warning when it happens

  A queue's worker thread stops (after finishing its pending work) when the
  queue is garbage collected.
  """

  @enforce_keys [:ref, :device]
  defstruct [:ref, :device]

  @type t :: %__MODULE__{ref: reference(), device: :cpu | :gpu}

  @doc """
  Allocates a new command queue (and its worker thread) for `device`.

  Returns `{:error, message}` if the device is unknown or unavailable.

      iex> {:ok, q} = EMLX.CommandQueue.new(:cpu)
      iex> q.device
      :cpu
  """
  @spec new(:cpu | :gpu) :: {:ok, t()} | {:error, String.t()}
  def new(device) do
    device = EMLX.__device__(device)

    case EMLX.NIF.command_queue_new(device) do
      {:ok, ref} -> {:ok, %__MODULE__{ref: ref, device: device}}
      {:error, _} = error -> error
    end
  end

  @doc """
  Like `new/1` but raises `EMLX.NIFError` on failure.
  """
  @spec new!(:cpu | :gpu) :: t()
  def new!(device) do
    case new(device) do
      {:ok, queue} -> queue
      {:error, message} -> raise EMLX.NIFError, message
    end
  end

  @doc """
  Waits until everything submitted to `queue` so far has finished.

  The wait is a message: a barrier is queued behind the pending work and the
  caller receives its reply, so no scheduler blocks.
  """
  @spec synchronize(t()) :: :ok
  def synchronize(%__MODULE__{ref: queue}) do
    ref = make_ref()

    case EMLX.NIF.command_queue_synchronize(queue, ref) do
      :ok ->
        receive do
          {^ref, {:ok, :ok}} -> :ok
          {^ref, {:error, message}} -> raise EMLX.NIFError, message
        end

      {:error, message} ->
        raise EMLX.NIFError, message
    end
  end

  @doc """
  Runs `fun` with `queue` bound to the calling process for the duration.

  Every evaluation `fun` makes for tensors on the queue's device runs on
  `queue`. The previous binding (if any) is restored afterwards, also when
  `fun` raises, so nested calls are safe.
  """
  @spec with_queue(t(), (() -> result)) :: result when result: term()
  def with_queue(%__MODULE__{ref: ref, device: device}, fun) when is_function(fun, 0) do
    previous = Process.get(:emlx_command_queue)
    Process.put(:emlx_command_queue, {ref, device})

    try do
      fun.()
    after
      if previous do
        Process.put(:emlx_command_queue, previous)
      else
        Process.delete(:emlx_command_queue)
      end
    end
  end
end
