defmodule EMLX.Quantization.Config do
  @moduledoc """
  What a quantized `Nx.Tensor` (made by `EMLX.quantize/2`) carries beside
  its packed uint32 weights, in its `EMLX.Backend` data:

    * `:scales` — per-group scales (`{device, ref}`), in the original type
      (`"affine"`) or `{:u, 8}` (the microscaled modes)
    * `:biases` — per-group biases (`"affine"`), or `nil`
    * `:group_size`, `:bits`, `:mode` — MLX's quantization parameters
    * `:transpose` — `true`: the tensor is a weight `{..., N, K}` quantized
      along K, used as `x @ W^T` (MLX's default layout)
    * `:type` — the dense type the tensor was quantized from (what
      `EMLX.dequantize/1` gives back)
  """
  @enforce_keys [:scales, :group_size, :bits, :mode]
  defstruct [:scales, :biases, :group_size, :bits, :mode, transpose: true, type: {:f, 32}]

  @type t() :: %__MODULE__{
          scales: EMLX.tensor_ref(),
          biases: EMLX.tensor_ref() | nil,
          group_size: pos_integer(),
          bits: pos_integer(),
          mode: String.t(),
          transpose: boolean(),
          type: tuple()
        }
end
