defmodule EMLX.Debug do
  @moduledoc false
  # Development-only checks behind compile-time flags (see "Compile-time
  # debug flags" in `EMLX`'s moduledoc):
  #
  #     config :emlx, enable_bounds_check: true
  #     config :emlx, detect_non_finites: true
  #     config :emlx, compiler_debug: true
  #
  # Each flag is read once with `Application.compile_env/3`. The macros below
  # decide at expansion time: with the flag off a call site expands to its
  # plain value (or `:ok`), so no call, no atom and no branch is left in the
  # caller's BEAM code; with it on, the call site expands to a call of the
  # matching `__check_*__` function. Changing a flag needs
  # `mix compile --force`.

  @enable_bounds_check Application.compile_env(:emlx, :enable_bounds_check, false)
  @detect_non_finites Application.compile_env(:emlx, :detect_non_finites, false)
  @compiler_debug Application.compile_env(:emlx, :compiler_debug, false)

  @doc false
  def flags do
    [
      enable_bounds_check: @enable_bounds_check,
      detect_non_finites: @detect_non_finites,
      compiler_debug: @compiler_debug
    ]
  end

  @doc false
  # Returns `tensor`; with `:detect_non_finites` it first raises when the
  # tensor holds a NaN or an infinity.
  defmacro check_finite!(tensor, op) do
    if @detect_non_finites do
      quote do: EMLX.Debug.__check_finite__(unquote(tensor), unquote(op))
    else
      tensor
    end
  end

  @doc false
  # `:ok`; with `:enable_bounds_check` it first raises unless every value of
  # the index tensor(s) is in `[0, size)` of the matching axis of `tensor`.
  # `indices` is a tensor and `axes` an axis, or lists of both.
  defmacro check_indices!(tensor, indices, axes, op) do
    if @enable_bounds_check do
      quote do
        EMLX.Debug.__check_indices__(
          unquote(tensor),
          unquote(indices),
          unquote(axes),
          unquote(op)
        )
      end
    else
      :ok
    end
  end

  @doc false
  # `:ok`; with `:compiler_debug` it raises when `condition` is false.
  defmacro compiler_assert!(condition, message) do
    if @compiler_debug do
      quote do
        if unquote(condition) do
          :ok
        else
          raise RuntimeError, "EMLX compiler invariant violated: " <> unquote(message)
        end
      end
    else
      :ok
    end
  end

  @doc false
  # x * 0 is NaN exactly where x is NaN or infinite, so one reduction of
  # x * 0 tells whether any element is non-finite.
  def __check_finite__({device, _} = tensor, op) do
    case EMLX.scalar_type(tensor) do
      {kind, _} = type when kind in [:f, :bf, :c] ->
        zero = EMLX.scalar_tensor(0, type, device)
        probe = tensor |> EMLX.multiply(zero) |> EMLX.sum(nil, false)

        case EMLX.item(probe) do
          value when is_number(value) ->
            tensor

          {re, im} when is_number(re) and is_number(im) ->
            tensor

          %{re: re, im: im} when is_number(re) and is_number(im) ->
            tensor

          _ ->
            raise ArgumentError,
                  "#{op} produced NaN or Inf. Disable :detect_non_finites for production."
        end

      _ ->
        tensor
    end
  end

  @doc false
  def __check_indices__(tensor, indices, axes, op) do
    shape = EMLX.shape(tensor)
    pairs = if is_list(indices), do: Enum.zip(indices, List.wrap(axes)), else: [{indices, axes}]

    for {index, axis} <- pairs do
      axis = if axis < 0, do: axis + tuple_size(shape), else: axis
      check_bounds(index, elem(shape, axis), axis, shape, op)
    end

    :ok
  end

  defp check_bounds(indices, limit, axis, shape, op) do
    if EMLX.shape(indices) |> Tuple.to_list() |> Enum.product() > 0 do
      # As unsigned, a negative index becomes huge, so one max covers both ends.
      largest = indices |> EMLX.astype({:u, 64}) |> EMLX.max(nil, false) |> EMLX.item()

      if largest >= limit do
        raise ArgumentError,
              "#{op}: index out of bounds on axis #{axis}: all values must be in [0, #{limit}), " <>
                "got #{signed(largest)}. Tensor shape: #{inspect(shape)}"
      end
    end
  end

  defp signed(u) when u >= 0x8000000000000000, do: u - 0x10000000000000000
  defp signed(u), do: u
end
