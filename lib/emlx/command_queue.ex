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

  ## Small work runs inline

  Sending an evaluation to a worker thread and waiting for its message costs
  tens of microseconds, far more than computing a 16-element `add`. So before
  submitting, the native call sizes the pending graph (a bounded walk that
  stops early) and, when it is small, evaluates it right there, on the
  calling scheduler, and returns the result directly. Small means at most
  `:max_nodes` lazy nodes and at most `:max_work` element-operations (per
  node: the elements it reads and writes, more for matmul, convolutions,
  linear algebra, FFT and sorting), which keeps the call well under a
  millisecond, as a regular NIF must be. The defaults:

      config :emlx, inline_eval: [max_nodes: 64, max_work: 32_768]

  (an `add` of two 10,000-element tensors is 30,000 element-operations; the
  dearest work these limits admit, such as `erf_inv` of 16,384 f64 values,
  takes a few hundred microseconds: `bench/nif_overhead.exs`, `edge_*`)

  read when the application starts; `put_inline_limits/1` changes them at
  run time and `max_nodes: 0` turns inline evaluation off. The results are
  the same either way, and so are the errors (`EMLX.NIFError` with the
  engine's message, the memory limit included).

  Ordering is kept: work on a device's default queue may run inline at any
  time (the queue is shared by every process, and each waits for its own
  results), but on a queue made with `new/1` it runs inline only when that
  queue is idle, so it never overtakes work submitted to the queue earlier.
  `eval/1`, `item/1`, `to_blob/1,2`, `strides/1` and `tensor_data_ptr/1`
  take this path; `tensor_to_shm/2`, `to_device/2` and `synchronize/1`
  always go through the queue.
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

  @typedoc "The bounds under which evaluation runs inline (see the module doc)."
  @type inline_limits :: %{max_nodes: non_neg_integer(), max_work: non_neg_integer()}

  @doc """
  The current bounds under which small evaluations run inline on the calling
  scheduler instead of a queue's worker (see "Small work runs inline").

      iex> %{max_nodes: nodes, max_work: work} = EMLX.CommandQueue.inline_limits()
      iex> is_integer(nodes) and is_integer(work)
      true
  """
  @spec inline_limits() :: inline_limits()
  def inline_limits do
    case EMLX.NIF.inline_eval_limits() do
      {:ok, {nodes, work}} -> %{max_nodes: nodes, max_work: work}
      {:error, message} -> raise EMLX.NIFError, message
    end
  end

  @doc """
  Sets the bounds under which evaluations run inline, process-wide, and
  returns the previous ones. `limits` is a keyword list or map with
  `:max_nodes` and/or `:max_work` (non-negative integers; a key left out
  keeps its value). `max_nodes: 0` sends every evaluation of a lazy tensor
  through its queue.

  Raises `ArgumentError` for an unknown key or a value that is not a
  non-negative integer.
  """
  @spec put_inline_limits(keyword() | map()) :: inline_limits()
  def put_inline_limits(limits) when is_list(limits) or is_map(limits) do
    current = inline_limits()

    new =
      Enum.reduce(limits, current, fn
        {key, value}, acc
        when key in [:max_nodes, :max_work] and is_integer(value) and value >= 0 ->
          Map.put(acc, key, value)

        {key, value}, _acc when key in [:max_nodes, :max_work] ->
          raise ArgumentError,
                "inline limit #{inspect(key)} must be a non-negative integer, got: " <>
                  inspect(value)

        other, _acc ->
          raise ArgumentError,
                "unknown inline limit #{inspect(other)}; expected :max_nodes or :max_work"
      end)

    case EMLX.NIF.set_inline_eval_limits(new.max_nodes, new.max_work) do
      {:ok, {nodes, work}} -> %{max_nodes: nodes, max_work: work}
      {:error, message} -> raise EMLX.NIFError, message
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
