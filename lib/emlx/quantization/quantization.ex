if Code.ensure_loaded?(Nx) do
  defmodule EMLX.Quantization do
    @moduledoc """
    Quantized `Nx.Tensor`s on `EMLX.Backend` (the `Nx` forms of
    `EMLX.quantize/2`, `EMLX.dequantize/1`, `EMLX.quantized_matmul/2` and
    `EMLX.gather_quantized_matmul/4`).

    A quantized tensor keeps its logical shape; its type is the storage
    type (`{:s, 2}`, `{:s, 4}`, `{:s, 8}`) and its `EMLX.Backend` data holds
    the packed weights and an `EMLX.Quantization.Config`. Only `Nx.dot/4`
    with the quantized tensor as the right operand (and these functions)
    accept it: `Nx.dot(x, [-1], qw, [-1])` runs `EMLX.quantized_matmul/8`
    with `transpose: true` (`x @ W^T`) and, for a 2-D `qw`, `Nx.dot(x, [-1],
    qw, [0])` runs it with `transpose: false` (`x @ W`). Any other use (a
    quantized left operand, another op) raises `ArgumentError`; call
    `EMLX.dequantize/1` first.

    Inside a `defn` compiled by `EMLX`, a quantized argument is the same:
    the program takes its packed weights, scales and biases as inputs and
    `Nx.dot/4` lowers to the quantized kernel; its group size, bits, mode,
    transpose flag, dense type and the packed tensors' shapes and types are
    part of the compile cache's keys, so tensors quantized differently never
    share a program.
    """

    alias EMLX.Quantization.Config
    alias Nx.Tensor, as: T

    @doc "See `EMLX.quantize/2`."
    def quantize(%T{} = tensor, opts) do
      opts = Keyword.validate!(opts, type: nil, group_size: nil, mode: "affine")
      mode = to_string(opts[:mode])

      bits =
        case {mode, opts[:type]} do
          {"affine", nil} -> 4
          {"affine", {:s, b}} when b in [2, 4, 8] -> b
          {"mxfp8", t} when t in [nil, {:s, 8}] -> 8
          {m, t} when m in ["mxfp4", "nvfp4"] and t in [nil, {:s, 4}] -> 4
          {m, t} -> raise ArgumentError, "unsupported :type #{inspect(t)} for mode #{inspect(m)}"
        end

      group = opts[:group_size]
      ref = EMLX.Backend.from_nx(tensor)

      {wq, scales, biases} =
        try do
          EMLX.quantize(ref, group, bits, mode)
        rescue
          e in EMLX.NIFError -> reraise ArgumentError, e.message, __STACKTRACE__
        end

      default_group = %{"affine" => 64, "mxfp4" => 32, "mxfp8" => 32, "nvfp4" => 16}

      config = %Config{
        scales: scales,
        biases: biases,
        group_size: group || Map.fetch!(default_group, mode),
        bits: bits,
        mode: mode,
        transpose: true,
        type: tensor.type
      }

      %{tensor | type: {:s, bits}, data: %EMLX.Backend{ref: wq, quantization: config}}
    end

    @doc "The quantization config of a quantized tensor, or `nil`."
    def config(%T{data: %EMLX.Backend{quantization: %Config{} = c}}), do: c
    def config(_), do: nil

    @doc "See `EMLX.dequantize/1`."
    def dequantize(%T{data: %EMLX.Backend{ref: wq, quantization: %Config{} = c}} = t) do
      dense = EMLX.dequantize(wq, c.scales, c.biases, c.group_size, c.bits, c.mode)
      EMLX.Backend.to_nx(dense, %{t | type: c.type, data: nil})
    end

    def dequantize(%T{}),
      do: raise(ArgumentError, "EMLX.dequantize/1 expects a tensor made by EMLX.quantize/2")

    @doc "See `EMLX.quantized_matmul/2`."
    def quantized_matmul(%T{} = activation, %T{} = qw) do
      if config(activation),
        do: raise(ArgumentError, "quantized_matmul: the left operand must not be quantized")

      last = tuple_size(qw.shape) - 1
      Nx.dot(activation, [tuple_size(activation.shape) - 1], qw, [last])
    end

    @doc "See `EMLX.gather_quantized_matmul/4`."
    def gather_quantized_matmul(%T{} = x, %T{} = qw, %T{} = rhs_indices, opts) do
      opts = Keyword.validate!(opts, lhs_indices: nil, sorted_indices: false)
      c = config(qw) || raise ArgumentError, "gather_quantized_matmul: qw must be quantized"

      if config(x),
        do: raise(ArgumentError, "gather_quantized_matmul: x must not be quantized")

      lhs = opts[:lhs_indices] && EMLX.Backend.from_nx(opts[:lhs_indices])

      out =
        EMLX.gather_qmm(
          EMLX.Backend.from_nx(x),
          qw.data.ref,
          c.scales,
          c.biases,
          lhs,
          EMLX.Backend.from_nx(rhs_indices),
          c.transpose,
          c.group_size,
          c.bits,
          c.mode,
          opts[:sorted_indices]
        )

      EMLX.Backend.to_nx(out)
    end

    @doc false
    # Nx.dot(l, contract_l, batch_l, r, contract_r, batch_r) with a quantized
    # r: the quantized kernel when the layout is one it runs, else the
    # dense product of the dequantized weights.
    def dot(out, l, contract_l, batch_l, r, contract_r, batch_r) do
      if config(l),
        do: raise(ArgumentError, "Nx.dot: a quantized tensor may only be the right operand")

      c = config(r)
      rank_l = tuple_size(l.shape)
      rank_r = tuple_size(r.shape)

      transpose =
        cond do
          batch_l != [] or batch_r != [] or contract_l != [rank_l - 1] -> nil
          contract_r == [rank_r - 1] and rank_r == 2 -> true
          contract_r == [0] and rank_r == 2 -> false
          true -> nil
        end

      if transpose == nil or not c.transpose do
        dense = dequantize(r)
        Nx.dot(l, contract_l, batch_l, dense, contract_r, batch_r) |> Nx.as_type(out.type)
      else
        x = EMLX.Backend.from_nx(l)

        ref =
          EMLX.quantized_matmul(
            x,
            r.data.ref,
            c.scales,
            c.biases,
            transpose,
            c.group_size,
            c.bits,
            c.mode
          )

        EMLX.Backend.to_nx(ref, out)
      end
    end
  end
end
