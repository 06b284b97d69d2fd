defmodule EMLX.APICoverageTest do
  # Every function of the spec's list (../shared/spec/functions.txt, copied
  # below) whose engine side exists — a declaration `emlx_<name>(` in
  # include/ — must be exported by EMLX. When the engine gains an op, this
  # test names the NIF row and EMLX function to add.
  use ExUnit.Case, async: true

  @spec_functions ~w(abs acos acosh add all allclose any arange argmax argmin argsort
    as_strided asin asinh astype atan atan2 atanh bitwise_and bitwise_not bitwise_or
    bitwise_xor broadcast_to causal_kv_attention ceil clear_cache clip concatenate
    conjugate conv_general copy cos cosh cumulative_max cumulative_min cumulative_product
    cumulative_sum deallocate default_device dequantize divide einsum equal erf erf_inv
    eval exp expm1 eye fast_layer_norm fast_layer_norm_no_bias fast_rms_norm fast_rope
    fast_rope_ids fast_rope_positions fast_rope_with_freqs fast_sdpa fast_sdpa_causal
    fast_sdpa_causal_key_masked fast_sdpa_masked fast_swiglu fft fft2 floor from_blob
    full gather gather_qmm gather_quantized_matmul greater greater_equal ifft ifft2 imag
    is_infinity is_nan is_tensor isclose item kv_cache_attention kv_cache_attention_masked
    kv_cache_sdpa_update left_shift less less_equal linalg_cholesky linalg_eigh linalg_inv
    linalg_lu linalg_pinv linalg_qr linalg_solve linalg_solve_triangular linalg_svd log
    log1p logical_and logical_not logical_or logical_xor max maximum memory_info
    metal_start_capture metal_stop_capture min minimum multiply negate not_equal ones pad
    pow product quantize quantized_matmul quotient real remainder reset_peak_memory
    reshape right_shift round rsqrt scalar_tensor scalar_type scatter scatter_add
    set_cache_limit set_memory_limit shape shm_unlink sigmoid sign sin sinh slice
    slice_update sort sqrt squeeze stack strides subtract sum take take_along_axis tan
    tanh tensor_data_ptr tensor_to_shm tensordot to_blob to_device to_nx transpose
    tri_inv view where window_scatter_max window_scatter_min)a

  # Their own issues add these (quantization, fused kernels, Nx integration).
  @later ~w(quantize dequantize quantized_matmul gather_qmm gather_quantized_matmul
    causal_kv_attention to_nx)a

  test "every spec'd function whose engine side exists is exported by EMLX" do
    headers =
      Path.wildcard(Path.expand("../../include/**/*.h", __DIR__))
      |> Enum.map_join("\n", &File.read!/1)

    declared =
      for [_, name] <- Regex.scan(~r/\bemlx_(\w+)\s*\(/, headers), into: MapSet.new(), do: name

    exported =
      for {name, _} <- EMLX.__info__(:functions) ++ EMLX.__info__(:macros),
          into: MapSet.new(),
          do: name

    missing =
      for name <- @spec_functions,
          name not in @later,
          not String.starts_with?(Atom.to_string(name), ["fast_sdpa", "kv_cache_"]),
          MapSet.member?(declared, Atom.to_string(name)),
          not MapSet.member?(exported, name),
          do: name

    assert missing == [],
           "the engine declares emlx_<name> for #{inspect(missing)}: add a row to " <>
             "c_src/nif_rows.h, its handler, and the EMLX function"
  end

  test "the functions EMLX provides without an engine counterpart" do
    for name <- ~w(default_device is_tensor item eval to_blob strides shape scalar_type
                   deallocate memory_info metal_start_capture metal_stop_capture shm_unlink
                   tensor_data_ptr tensor_to_shm to_device)a do
      assert name in (Keyword.keys(EMLX.__info__(:functions)) ++
                        Keyword.keys(EMLX.__info__(:macros)))
    end
  end
end
