defmodule EMLX.Macro do
  @moduledoc false
  # The definition macros behind `EMLX`'s table of functions. Each public
  # function is one line naming the native row it calls:
  #
  #     deftensor add(tensor_a, tensor_b), doc: "..."
  #
  # and the macro writes the wrapper, its `@doc` and `@spec`. The native side
  # validates every argument (c_src/nif_decode.c), so wrappers do not guard:
  # a bad argument comes back as `{:error, message}` and is raised as
  # `EMLX.NIFError`. Four kinds:
  #
  #   * `deftensor` — builds a graph node, returns a tensor; runs on the
  #     calling scheduler (the native call only creates the node).
  #   * `defdevice` — like `deftensor` for creation functions; its `device`
  #     argument may also be `{device, index}` and its `scalar`/`value`
  #     argument a `Complex` struct.
  #   * `defvalue` — reads metadata without computing.
  #   * `defeval`  — computes: the native call submits a job to the command
  #     queue `EMLX.resolve_worker/1` picks and returns at once; the result
  #     arrives as a message this process waits for. Small work (within
  #     `EMLX.CommandQueue.inline_limits/0`) is done by the call itself, which
  #     then returns `{:ok, value}`.
  #
  # Options: `:doc` (required), `:returns` (the result's typespec), `:check`
  # (`:finite` passes the result through `EMLX.Debug.check_finite!/2`;
  # `{:indices, tensor, indices, axes}` runs `EMLX.Debug.check_indices!/4`
  # once the native call has accepted the arguments) and, for `defeval`,
  # `:post` (a function applied to the value).

  @doc false
  defmacro deftensor(call, opts) do
    define(:tensor, call, opts)
  end

  @doc false
  defmacro defdevice(call, opts) do
    define(:device, call, opts)
  end

  @doc false
  defmacro defvalue(call, opts) do
    define(:value, call, opts)
  end

  @doc false
  defmacro defeval(call, opts) do
    define(:eval, call, opts)
  end

  defp define(kind, call, opts) do
    {name, args} = Macro.decompose_call(call)
    doc = Keyword.fetch!(opts, :doc)
    returns = Keyword.get(opts, :returns, quote(do: EMLX.tensor_ref()))
    specs = Enum.map(args, &arg_spec/1)
    nif_args = if kind == :eval, do: args ++ [quote(do: queue), quote(do: ref)], else: args

    body =
      case kind do
        :eval -> eval_body(name, args, nif_args, opts)
        :value -> sync_body(name, nif_args, opts, false)
        _ -> sync_body(name, nif_args, opts, true)
      end

    quote do
      @doc unquote(doc)
      @spec unquote(name)(unquote_splicing(specs)) :: unquote(returns)
      def unquote(name)(unquote_splicing(args)) do
        unquote_splicing(normalize(kind, args))
        unquote(body)
      end
    end
  end

  defp sync_body(name, args, opts, record?) do
    value = quote(do: value)

    result =
      case Keyword.get(opts, :check) do
        nil ->
          value

        :finite ->
          quote(do: EMLX.Debug.check_finite!(unquote(value), unquote(name)))

        {:{}, _, [:indices, tensor, indices, axes]} ->
          quote do
            EMLX.Debug.check_indices!(
              unquote(tensor),
              unquote(indices),
              unquote(axes),
              unquote(name)
            )

            unquote(value)
          end
      end

    # The recording hook of EMLX's Nx.Defn compiler (EMLX.Compiler.Recorder):
    # one process-dictionary read per call when nothing records.
    result =
      if record? do
        quote do
          unquote(value) =
            case Process.get(:emlx_recorder) do
              nil -> unquote(value)
              _ -> EMLX.Compiler.Recorder.hook(unquote(value), unquote(name), unquote(args))
            end

          unquote(result)
        end
      else
        result
      end

    quote do
      case EMLX.NIF.unquote(name)(unquote_splicing(args)) do
        {:ok, unquote(value)} -> unquote(result)
        {:error, message} -> raise EMLX.NIFError, message
      end
    end
  end

  # make_ref/0 and the receive stay in the one function so the compiler's
  # receive optimisation skips messages older than the reference.
  defp eval_body(name, [tensor | _], nif_args, opts) do
    value =
      case Keyword.get(opts, :post) do
        nil -> quote(do: value)
        post -> quote(do: unquote(post)(value))
      end

    quote do
      if Process.get(:emlx_recorder), do: EMLX.Compiler.Recorder.needs_data!(unquote(name))
      queue = EMLX.__queue_for__(unquote(tensor), unquote(name))
      ref = make_ref()

      case EMLX.NIF.unquote(name)(unquote_splicing(nif_args)) do
        # done inline: small or already evaluated (EMLX.CommandQueue.inline_limits/0)
        {:ok, value} ->
          unquote(value)

        :ok ->
          receive do
            {^ref, {:ok, value}} -> unquote(value)
            {^ref, {:error, message}} -> raise EMLX.NIFError, message
          end

        {:error, message} ->
          raise EMLX.NIFError, message
      end
    end
  end

  defp normalize(:device, args) do
    for {arg_name, _, ctx} = var <- args, arg_name in [:device, :scalar, :value] do
      fun = if arg_name == :device, do: :__device__, else: :__scalar__
      quote(do: unquote(var) = EMLX.unquote(fun)(unquote({arg_name, [], ctx})))
    end
  end

  defp normalize(_kind, _args), do: []

  defp arg_spec({arg_name, _, _}) do
    case Atom.to_string(arg_name) do
      name when name in ["tensors", "indices"] -> quote(do: [EMLX.tensor_ref()])
      name when name in ["tensor_min", "tensor_max"] -> quote(do: EMLX.tensor_ref() | nil)
      "tensor" <> _ -> quote(do: EMLX.tensor_ref())
      "shape" -> quote(do: EMLX.shape())
      "type" -> quote(do: EMLX.type())
      "device" -> quote(do: EMLX.device() | {EMLX.device(), integer()})
      "integer?" -> quote(do: boolean() | EMLX.type())
      "spec" -> quote(do: String.t())
      name when name in ["keep_axes", "reverse", "inclusive", "equal_nan"] -> quote(do: boolean())
      name when name in ["scalar", "value"] -> quote(do: number() | atom() | tuple() | map())
      name when name in ["axis", "offset"] -> quote(do: integer())
      name when name in ~w(k kth ddof repeats num num_splits) -> quote(do: integer())
      name when name in ~w(source destination start_axis end_axis) -> quote(do: integer())
      name when name in ["axis1", "axis2"] -> quote(do: integer())
      "precise" -> quote(do: boolean())
      name when name in ~w(nan posinf neginf alpha beta) -> quote(do: number())
      "axes" <> _ -> quote(do: [integer()] | nil)
      "batch_" <> _ -> quote(do: [integer()])
      name when name in ["start", "stop", "step", "rtol", "atol"] -> quote(do: number())
      name when name in ["m", "n", "limit", "permissions"] -> quote(do: non_neg_integer())
      _ -> quote(do: [integer()])
    end
  end
end
