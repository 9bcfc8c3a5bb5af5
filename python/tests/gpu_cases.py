"""The cases of test_torch_gpu.py, as data: the GPU test runs them through
attn_mlir.torch.attention, and precompile.py compiles their kernels ahead of
time on a machine with the compiler (the GPU machine has none)."""

CASES = [
    # name, dtype, B, Hq, Hkv, Tq, Tk, D, Dv, causal, mask kind, strided
    ("gqa_causal_bf16", "bf16", 2, 8, 2, 129, 129, 64, 64, True, None, False),
    ("mha_f16_tq_ne_tk", "f16", 1, 4, 4, 17, 1000, 128, 128, False, None, False),
    ("f32_float_mask", "f32", 2, 2, 2, 65, 65, 64, 64, False, "float4", False),
    ("strided_bf16_causal", "bf16", 2, 4, 4, 127, 127, 128, 128, True, None, True),
    ("bool_mask_bottom_right", "f16", 1, 2, 1, 63, 200, 64, 64, "bottom_right", "bool2", False),
]


def signature_for(case):
    """The Signature attn_mlir.torch derives for the case's tensors."""
    from attn_mlir.compiler import Signature

    name, dtype, b, hq, hkv, tq, tk, d, dv, causal, mask, strided = case
    mask_shape = mask_dtype = None
    if mask == "float4":
        mask_shape, mask_dtype = (1, 1, None, None), dtype
    elif mask == "bool2":
        mask_shape, mask_dtype = (None, None), "i1"
    causal = "top_left" if causal is True else (causal or None)
    return Signature(dtype, (None, hq, None, d), (None, hkv, None, d), (None, hkv, None, dv),
                     mask_dtype=mask_dtype, mask=mask_shape, causal=causal)
