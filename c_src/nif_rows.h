/* nif_rows.h — every function of the NIF, one row each.
 *
 *   X(c_name, "erlang_name", "signature", flags, handler)
 *
 * The signature has one letter per argument (so its length is the arity);
 * the dispatcher decodes and validates each argument from its letter before
 * the handler runs (nif_decode.c has the full list):
 *
 *   t tensor {device, ref}          o tensor or nil        T list of tensors
 *   r tensor that may have been deallocated (only deallocate/1 takes one)
 *   s shape (tuple/list, >= 0)      R shape with one -1    n list of int64
 *   a axes (list of ints)           A axes or nil (all)    i int64
 *   u int64 >= 0                    U uint64               f finite number
 *   x scalar (int, float, :nan, :infinity, :neg_infinity, {re, im}, boolean)
 *   b boolean                       y dtype                Y dtype or boolean
 *   d device atom                   B binary               S short string
 *   q command queue                 k reference (the reply tag of a job)
 *   P compiled program              z any term (decoded by the handler)
 *   L list of tensors, maybe empty
 *
 * Adding a function is one row here plus its handler; lib/emlx/nif.ex reads
 * this file at compile time to define the Erlang stubs, so the two cannot
 * drift. Rows whose signature ends in "qk" compute: they submit a job to the
 * queue and the result arrives as {ref, {:ok, value} | {:error, message}},
 * or they return {:ok, value} at once when the work was done inline (small
 * work, or already evaluated: nif_async.c). */
#ifndef EMLX_NIF_ROWS_H
#define EMLX_NIF_ROWS_H

#define EMLX_NIF_ROWS(X)                                                                           \
  /* ---- creation ---------------------------------------------------------- */                   \
  X(from_blob, "from_blob", "Bsyd", 0, h_from_blob)                                                \
  X(scalar_tensor, "scalar_tensor", "xyd", 0, h_scalar_tensor)                                     \
  X(full, "full", "xsyd", 0, h_full)                                                               \
  X(ones, "ones", "syd", 0, h_ones)                                                                \
  X(arange, "arange", "fffYd", 0, h_arange)                                                        \
  X(eye, "eye", "uuyd", 0, h_eye)                                                                  \
  /* ---- elementwise ------------------------------------------------------- */                   \
  X(add, "add", "tt", 0, h_add)                                                                    \
  X(subtract, "subtract", "tt", 0, h_subtract)                                                     \
  X(multiply, "multiply", "tt", 0, h_multiply)                                                     \
  X(divide, "divide", "tt", 0, h_divide)                                                           \
  X(negate, "negate", "t", 0, h_negate)                                                            \
  X(exp, "exp", "t", 0, h_exp)                                                                     \
  X(astype, "astype", "ty", 0, h_astype)                                                           \
  /* ---- math family (nif_math.c) ---------------------------------------- */                     \
  X(abs, "abs", "t", 0, h_abs)                                                                     \
  X(acos, "acos", "t", 0, h_acos)                                                                  \
  X(acosh, "acosh", "t", 0, h_acosh)                                                               \
  X(asin, "asin", "t", 0, h_asin)                                                                  \
  X(asinh, "asinh", "t", 0, h_asinh)                                                               \
  X(atan, "atan", "t", 0, h_atan)                                                                  \
  X(atanh, "atanh", "t", 0, h_atanh)                                                               \
  X(bitwise_not, "bitwise_not", "t", 0, h_bitwise_not)                                             \
  X(ceil, "ceil", "t", 0, h_ceil)                                                                  \
  X(conjugate, "conjugate", "t", 0, h_conjugate)                                                   \
  X(cos, "cos", "t", 0, h_cos)                                                                     \
  X(cosh, "cosh", "t", 0, h_cosh)                                                                  \
  X(erf, "erf", "t", 0, h_erf)                                                                     \
  X(erf_inv, "erf_inv", "t", 0, h_erf_inv)                                                         \
  X(erfc, "erfc", "t", 0, h_erfc)                                                                  \
  X(expm1, "expm1", "t", 0, h_expm1)                                                               \
  X(floor, "floor", "t", 0, h_floor)                                                               \
  X(imag, "imag", "t", 0, h_imag)                                                                  \
  X(is_infinity, "is_infinity", "t", 0, h_is_infinity)                                             \
  X(is_nan, "is_nan", "t", 0, h_is_nan)                                                            \
  X(log, "log", "t", 0, h_log)                                                                     \
  X(log1p, "log1p", "t", 0, h_log1p)                                                               \
  X(logical_not, "logical_not", "t", 0, h_logical_not)                                             \
  X(real, "real", "t", 0, h_real)                                                                  \
  X(round, "round", "t", 0, h_round)                                                               \
  X(round_half_away, "round_half_away", "t", 0, h_round_half_away)                                 \
  X(rsqrt, "rsqrt", "t", 0, h_rsqrt)                                                               \
  X(sigmoid, "sigmoid", "t", 0, h_sigmoid)                                                         \
  X(sign, "sign", "t", 0, h_sign)                                                                  \
  X(sin, "sin", "t", 0, h_sin)                                                                     \
  X(sinh, "sinh", "t", 0, h_sinh)                                                                  \
  X(sqrt, "sqrt", "t", 0, h_sqrt)                                                                  \
  X(tan, "tan", "t", 0, h_tan)                                                                     \
  X(tanh, "tanh", "t", 0, h_tanh)                                                                  \
  X(quotient, "quotient", "tt", 0, h_quotient)                                                     \
  X(floor_divide, "floor_divide", "tt", 0, h_floor_divide)                                         \
  X(remainder, "remainder", "tt", 0, h_remainder)                                                  \
  X(remainder_trunc, "remainder_trunc", "tt", 0, h_remainder_trunc)                                \
  X(pow, "pow", "tt", 0, h_pow)                                                                    \
  X(atan2, "atan2", "tt", 0, h_atan2)                                                              \
  X(maximum, "maximum", "tt", 0, h_maximum)                                                        \
  X(minimum, "minimum", "tt", 0, h_minimum)                                                        \
  X(equal, "equal", "tt", 0, h_equal)                                                              \
  X(not_equal, "not_equal", "tt", 0, h_not_equal)                                                  \
  X(greater, "greater", "tt", 0, h_greater)                                                        \
  X(greater_equal, "greater_equal", "tt", 0, h_greater_equal)                                      \
  X(less, "less", "tt", 0, h_less)                                                                 \
  X(less_equal, "less_equal", "tt", 0, h_less_equal)                                               \
  X(logical_and, "logical_and", "tt", 0, h_logical_and)                                            \
  X(logical_or, "logical_or", "tt", 0, h_logical_or)                                               \
  X(logical_xor, "logical_xor", "tt", 0, h_logical_xor)                                            \
  X(bitwise_and, "bitwise_and", "tt", 0, h_bitwise_and)                                            \
  X(bitwise_or, "bitwise_or", "tt", 0, h_bitwise_or)                                               \
  X(bitwise_xor, "bitwise_xor", "tt", 0, h_bitwise_xor)                                            \
  X(left_shift, "left_shift", "tt", 0, h_left_shift)                                               \
  X(right_shift, "right_shift", "tt", 0, h_right_shift)                                            \
  X(where, "where", "ttt", 0, h_where)                                                             \
  X(clip, "clip", "too", 0, h_clip)                                                                \
  X(isclose, "isclose", "ttffb", 0, h_isclose)                                                     \
  X(allclose, "allclose", "ttffb", 0, h_allclose)                                                  \
  /* ---- shape ------------------------------------------------------------- */                   \
  X(broadcast_to, "broadcast_to", "ts", 0, h_broadcast_to)                                         \
  X(reshape, "reshape", "tR", 0, h_reshape)                                                        \
  X(transpose, "transpose", "tA", 0, h_transpose)                                                  \
  X(slice, "slice", "tnnn", 0, h_slice)                                                            \
  X(squeeze, "squeeze", "tA", 0, h_squeeze)                                                        \
  X(copy, "copy", "t", 0, h_copy)                                                                  \
  /* ---- reductions, scans, sorting (nif_reduce.c) ------------------------- */                   \
  X(sum, "sum", "tAb", 0, h_sum)                                                                   \
  X(max, "max", "tAb", 0, h_max)                                                                   \
  X(min, "min", "tAb", 0, h_min)                                                                   \
  X(product, "product", "tAb", 0, h_product)                                                       \
  X(all, "all", "tAb", 0, h_all)                                                                   \
  X(any, "any", "tAb", 0, h_any)                                                                   \
  X(argmax_all, "argmax", "tb", 0, h_argmax)                                                       \
  X(argmax, "argmax", "tib", 0, h_argmax)                                                          \
  X(argmin_all, "argmin", "tb", 0, h_argmin)                                                       \
  X(argmin, "argmin", "tib", 0, h_argmin)                                                          \
  X(cumulative_sum, "cumulative_sum", "tibb", 0, h_cumulative_sum)                                 \
  X(cumulative_product, "cumulative_product", "tibb", 0, h_cumulative_product)                     \
  X(cumulative_max, "cumulative_max", "tibb", 0, h_cumulative_max)                                 \
  X(cumulative_min, "cumulative_min", "tibb", 0, h_cumulative_min)                                 \
  X(sort, "sort", "ti", 0, h_sort)                                                                 \
  X(argsort, "argsort", "ti", 0, h_argsort)                                                        \
  /* ---- indexing and layout (nif_indexing.c) ------------------------------ */                   \
  X(take, "take", "tti", 0, h_take)                                                                \
  X(take_along_axis, "take_along_axis", "tti", 0, h_take_along_axis)                               \
  X(gather, "gather", "tTas", 0, h_gather)                                                         \
  X(scatter, "scatter", "tTta", 0, h_scatter)                                                      \
  X(scatter_add, "scatter_add", "tTta", 0, h_scatter_add)                                          \
  X(slice_update, "slice_update", "ttnn", 0, h_slice_update)                                       \
  X(pad, "pad", "tannt", 0, h_pad)                                                                 \
  X(concatenate, "concatenate", "Ti", 0, h_concatenate)                                            \
  X(stack, "stack", "Ti", 0, h_stack)                                                              \
  X(as_strided, "as_strided", "tsni", 0, h_as_strided)                                             \
  X(view, "view", "ty", 0, h_view)                                                                 \
  /* ---- contractions (nif_matmul.c) --------------------------------------- */                   \
  X(tensordot, "tensordot", "ttaa", 0, h_tensordot)                                                \
  X(tensordot_batch, "tensordot", "ttaaaa", 0, h_tensordot)                                        \
  X(einsum, "einsum", "TS", 0, h_einsum)                                                           \
  /* ---- windows and convolution (nif_conv.c) ------------------------------ */                   \
  X(window_sum, "window_sum", "tnnnnn", 0, h_window_sum)                                           \
  X(window_max, "window_max", "tnnnnn", 0, h_window_max)                                           \
  X(window_min, "window_min", "tnnnnn", 0, h_window_min)                                           \
  X(window_product, "window_product", "tnnnnn", 0, h_window_product)                               \
  X(window_scatter_max, "window_scatter_max", "tttnnnn", 0, h_window_scatter_max)                  \
  X(window_scatter_min, "window_scatter_min", "tttnnnn", 0, h_window_scatter_min)                  \
  X(conv_general, "conv_general", "ttnnnnni", 0, h_conv_general)                                   \
  X(conv_general_full, "conv_general", "ttnnnnniib", 0, h_conv_general)                            \
  /* ---- Fourier transforms (nif_fft.c) ------------------------------------ */                   \
  X(fft, "fft", "tui", 0, h_fft)                                                                   \
  X(ifft, "ifft", "tui", 0, h_ifft)                                                                \
  X(fft2, "fft2", "tnA", 0, h_fft2)                                                                \
  X(ifft2, "ifft2", "tnA", 0, h_ifft2)                                                             \
  /* ---- linear algebra (nif_linalg.c) ------------------------------------ */                    \
  X(linalg_cholesky, "linalg_cholesky", "tb", 0, h_linalg_cholesky)                                \
  X(linalg_eigh, "linalg_eigh", "tS", 0, h_linalg_eigh)                                            \
  X(linalg_inv, "linalg_inv", "t", 0, h_linalg_inv)                                                \
  X(linalg_lu, "linalg_lu", "t", 0, h_linalg_lu)                                                   \
  X(linalg_lu_factor, "linalg_lu_factor", "t", 0, h_linalg_lu_factor)                              \
  X(linalg_pinv, "linalg_pinv", "t", 0, h_linalg_pinv)                                             \
  X(linalg_pinv_tol, "linalg_pinv", "tff", 0, h_linalg_pinv)                                       \
  X(linalg_qr, "linalg_qr", "tb", 0, h_linalg_qr)                                                  \
  X(linalg_solve, "linalg_solve", "tt", 0, h_linalg_solve)                                         \
  X(linalg_solve_triangular, "linalg_solve_triangular", "ttbbib", 0, h_linalg_solve_triangular)    \
  X(linalg_svd, "linalg_svd", "tbb", 0, h_linalg_svd)                                              \
  X(tri_inv, "tri_inv", "tb", 0, h_tri_inv)                                                        \
  /* ---- MLX's everyday model ops (nif_model_ops.c) ----------------------- */                    \
  X(mean, "mean", "tAb", 0, h_mean)                                                                \
  X(var, "var", "tAbi", 0, h_var)                                                                  \
  X(std, "std", "tAbi", 0, h_std)                                                                  \
  X(logsumexp, "logsumexp", "tAb", 0, h_logsumexp)                                                 \
  X(softmax, "softmax", "tAb", 0, h_softmax)                                                       \
  X(log_softmax, "log_softmax", "tAb", 0, h_log_softmax)                                           \
  X(logaddexp, "logaddexp", "tt", 0, h_logaddexp)                                                  \
  X(log2, "log2", "t", 0, h_log2)                                                                  \
  X(log10, "log10", "t", 0, h_log10)                                                               \
  X(isfinite, "isfinite", "t", 0, h_isfinite)                                                      \
  X(isposinf, "isposinf", "t", 0, h_isposinf)                                                      \
  X(isneginf, "isneginf", "t", 0, h_isneginf)                                                      \
  X(nan_to_num, "nan_to_num", "tf", 0, h_nan_to_num)                                               \
  X(nan_to_num_all, "nan_to_num", "tfff", 0, h_nan_to_num)                                         \
  X(square, "square", "t", 0, h_square)                                                            \
  X(reciprocal, "reciprocal", "t", 0, h_reciprocal)                                                \
  X(linspace, "linspace", "ffuyd", 0, h_linspace)                                                  \
  X(tri, "tri", "uuiyd", 0, h_tri)                                                                 \
  X(tril, "tril", "ti", 0, h_tril)                                                                 \
  X(triu, "triu", "ti", 0, h_triu)                                                                 \
  X(diagonal, "diagonal", "tiii", 0, h_diagonal)                                                   \
  X(trace, "trace", "tiii", 0, h_trace)                                                            \
  X(flip, "flip", "tA", 0, h_flip)                                                                 \
  X(roll, "roll", "tnA", 0, h_roll)                                                                \
  X(tile, "tile", "tn", 0, h_tile)                                                                 \
  X(repeat_flat, "repeat", "ti", 0, h_repeat)                                                      \
  X(repeat, "repeat", "tii", 0, h_repeat)                                                          \
  X(flatten, "flatten", "tii", 0, h_flatten)                                                       \
  X(moveaxis, "moveaxis", "tii", 0, h_moveaxis)                                                    \
  X(swapaxes, "swapaxes", "tii", 0, h_swapaxes)                                                    \
  X(split, "split", "tii", 0, h_split)                                                             \
  X(split_at, "split_at", "tni", 0, h_split_at)                                                    \
  X(outer, "outer", "tt", 0, h_outer)                                                              \
  X(put_along_axis_flat, "put_along_axis", "ttt", 0, h_put_along_axis)                             \
  X(put_along_axis, "put_along_axis", "ttti", 0, h_put_along_axis)                                 \
  X(topk_flat, "topk", "ti", 0, h_topk)                                                            \
  X(topk, "topk", "tii", 0, h_topk)                                                                \
  X(partition, "partition", "tii", 0, h_partition)                                                 \
  X(argpartition, "argpartition", "tii", 0, h_argpartition)                                        \
  X(addmm, "addmm", "tttff", 0, h_addmm)                                                           \
  /* ---- metadata (never computes) ----------------------------------------- */                   \
  X(shape, "shape", "t", 0, h_shape)                                                               \
  X(scalar_type, "scalar_type", "t", 0, h_scalar_type)                                             \
  X(deallocate, "deallocate", "r", 0, h_deallocate)                                                \
  /* ---- computing: submitted to a command queue --------------------------- */                   \
  X(eval, "eval", "tqk", 0, h_eval)                                                                \
  X(item, "item", "tqk", 0, h_item)                                                                \
  X(to_blob, "to_blob", "tqk", 0, h_to_blob)                                                       \
  X(to_blob_limit, "to_blob", "tuqk", 0, h_to_blob)                                                \
  X(strides, "strides", "tqk", 0, h_strides)                                                       \
  X(tensor_data_ptr, "tensor_data_ptr", "tqk", 0, h_tensor_data_ptr)                               \
  X(tensor_to_shm, "tensor_to_shm", "tuqk", 0, h_tensor_to_shm)                                    \
  X(to_device, "to_device", "tdqk", 0, h_to_device)                                                \
  /* ---- command queues ---------------------------------------------------- */                   \
  X(command_queue_new, "command_queue_new", "d", 0, h_command_queue_new)                           \
  X(command_queue_default, "command_queue_default", "d", 0, h_command_queue_default)               \
  X(command_queue_synchronize, "command_queue_synchronize", "qk", 0, h_command_queue_synchronize)  \
  X(inline_eval_limits, "inline_eval_limits", "", 0, h_inline_eval_limits)                         \
  X(set_inline_eval_limits, "set_inline_eval_limits", "uu", 0, h_set_inline_eval_limits)           \
  /* ---- memory ------------------------------------------------------------ */                   \
  X(memory_info, "memory_info", "", 0, h_memory_info)                                              \
  X(set_cache_limit, "set_cache_limit", "U", 0, h_set_cache_limit)                                 \
  X(set_memory_limit, "set_memory_limit", "U", 0, h_set_memory_limit)                              \
  X(clear_cache, "clear_cache", "", 0, h_clear_cache)                                              \
  X(reset_peak_memory, "reset_peak_memory", "", 0, h_reset_peak_memory)                            \
  /* ---- interop and devices ----------------------------------------------- */                   \
  X(array_from_shm, "array_from_shm", "Ssyu", 0, h_array_from_shm)                                 \
  X(tensor_from_local_ptr, "tensor_from_local_ptr", "UU", 0, h_tensor_from_local_ptr)              \
  X(shm_unlink, "shm_unlink", "S", 0, h_shm_unlink)                                                \
  X(metal_start_capture, "metal_start_capture", "S", 0, h_metal_start_capture)                     \
  X(metal_stop_capture, "metal_stop_capture", "", 0, h_metal_stop_capture)                         \
  X(device_available, "device_available", "d", 0, h_device_available)                              \
  X(engine_default_device, "engine_default_device", "", 0, h_engine_default_device)                \
  X(runtime_info, "runtime_info", "", 0, h_runtime_info)                                           \
  X(nif_stats, "nif_stats", "", 0, h_nif_stats)                                                    \
  X(eval_stats, "eval_stats", "", 0, h_eval_stats)                                                 \
  /* ---- bit counting and Nx's f8 / sub-byte types (nif_bits.c) ------------ */                   \
  X(count_leading_zeros, "count_leading_zeros", "t", 0, h_count_leading_zeros)                     \
  X(population_count, "population_count", "t", 0, h_population_count)                              \
  X(from_nx_blob, "from_nx_blob", "BsSyd", 0, h_from_nx_blob)                                      \
  X(nx_encode, "nx_encode", "BySu", 0, h_nx_encode)                                                \
  /* ---- programs: compiled once, replayed (nif_program.c) ------------------ */                  \
  X(program_compile, "program_compile", "z", 0, h_program_compile)                                 \
  X(program_stats, "program_stats", "P", 0, h_program_stats)                                       \
  X(program_run, "program_run", "PLqk", 0, h_program_run)                                          \
  /* ---- quantization (nif_quantize.c) ------------------------------------ */                    \
  X(quantize, "quantize", "tiiS", 0, h_quantize)                                                   \
  X(dequantize, "dequantize", "ttoiiS", 0, h_dequantize)                                           \
  X(quantized_matmul, "quantized_matmul", "tttobiiS", 0, h_quantized_matmul)                       \
  X(gather_qmm, "gather_qmm", "tttooobiiSb", 0, h_gather_qmm)                                      \
  /* ---- fused transformer kernels (nif_fast.c) ---------------------------- */                   \
  X(fast_rms_norm, "fast_rms_norm", "tof", 0, h_fast_rms_norm)                                     \
  X(fast_layer_norm, "fast_layer_norm", "toof", 0, h_fast_layer_norm)                              \
  X(fast_layer_norm_no_bias, "fast_layer_norm_no_bias", "tof", 0, h_fast_layer_norm_no_bias)       \
  X(fast_rope, "fast_rope", "tibffi", 0, h_fast_rope)                                              \
  X(fast_rope_ids, "fast_rope_ids", "tibfft", 0, h_fast_rope_ids)                                  \
  X(fast_rope_positions, "fast_rope_positions", "tibfft", 0, h_fast_rope_positions)                \
  X(fast_rope_with_freqs, "fast_rope_with_freqs", "tibftt", 0, h_fast_rope_with_freqs)             \
  X(fast_swiglu, "fast_swiglu", "tt", 0, h_fast_swiglu)                                            \
  /* ---- attention (nif_attention.c) -------------------------------------- */                    \
  X(fast_sdpa, "fast_sdpa", "tttfo", 0, h_fast_sdpa)                                               \
  X(fast_sdpa_causal, "fast_sdpa_causal", "tttfo", 0, h_fast_sdpa_causal)                          \
  X(fast_sdpa_masked, "fast_sdpa_masked", "tttfto", 0, h_fast_sdpa_masked)                         \
  X(fast_sdpa_causal_key_masked, "fast_sdpa_causal_key_masked", "tttfto", 0,                       \
    h_fast_sdpa_causal_key_masked)                                                                 \
  X(kv_cache_attention, "kv_cache_attention", "tttttuf", 0, h_kv_cache_attention)                  \
  X(kv_cache_attention_masked, "kv_cache_attention_masked", "tttttuft", 0,                         \
    h_kv_cache_attention_masked)                                                                   \
  X(kv_cache_sdpa_update, "kv_cache_sdpa_update", "tttttuf", 0, h_kv_cache_sdpa_update)            \
  X(causal_kv_attention, "causal_kv_attention", "tttttufo", 0, h_causal_kv_attention)

#endif
