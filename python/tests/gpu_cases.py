"""The cases of test_torch_gpu.py and test_torch_serving_gpu.py, as data:
the GPU tests run them through attn_mlir.torch, and precompile.py compiles
their kernels ahead of
time on a machine with the compiler (the GPU machine has none).

VARIANT_CASES add windows, softcaps and FlexAttention-style callables
(SPEC section 1.1). LSE_CASES and LSE_VARIANT_CASES name the cases run again
with return_lse=True (SPEC section 1.2), whose kernels also write the
log-sum-exp. Their callables come from factories taking the captured
tensors and the torch functions: on the GPU, torch tensors and torch; in
precompile.py, mods.TensorSpec stand-ins and TORCH_FUNCTIONS (which hand a
traced argument to its `__torch_function__`, as torch does), so that both
trace the same regions and find the same kernels."""

import collections
import math

CASES = [
    # name, dtype, B, Hq, Hkv, Tq, Tk, D, Dv, causal, mask kind, strided
    ("gqa_causal_bf16", "bf16", 2, 8, 2, 129, 129, 64, 64, True, None, False),
    ("mha_f16_tq_ne_tk", "f16", 1, 4, 4, 17, 1000, 128, 128, False, None, False),
    ("f32_float_mask", "f32", 2, 2, 2, 65, 65, 64, 64, False, "float4", False),
    ("strided_bf16_causal", "bf16", 2, 4, 4, 127, 127, 128, 128, True, None, True),
    ("bool_mask_bottom_right", "f16", 1, 2, 1, 63, 200, 64, 64, "bottom_right", "bool2", False),
]


# The cases run again with return_lse=True: masks with fully masked rows,
# causal both ways, GQA, Tq != Tk, strided views, each dtype; the variants
# with a softcap, score_mods and mask_mods (rows without keys among them).
LSE_CASES = ("gqa_causal_bf16", "mha_f16_tq_ne_tk", "f32_float_mask", "strided_bf16_causal",
             "bool_mask_bottom_right")
LSE_VARIANT_CASES = ("window_bottom_right_mqa_f32", "softcap_causal_bf16", "combination_bf16",
                     "flex_style_f16", "empty_rows_f32")


def signature_for(case, lse=False):
    """The Signature attn_mlir.torch derives for the case's tensors (with
    return_lse=`lse`)."""
    from attn_mlir.compiler import Signature

    name, dtype, b, hq, hkv, tq, tk, d, dv, causal, mask, strided = case
    mask_shape = mask_dtype = None
    if mask == "float4":
        mask_shape, mask_dtype = (1, 1, None, None), dtype
    elif mask == "bool2":
        mask_shape, mask_dtype = (None, None), "i1"
    causal = "top_left" if causal is True else (causal or None)
    return Signature(dtype, (None, hq, None, d), (None, hkv, None, d), (None, hkv, None, dv),
                     mask_dtype=mask_dtype, mask=mask_shape, causal=causal, lse=lse)


# captures: {name: (dtype, shape)}; mods(captures, torch) -> the score_mod /
# mask_mod keyword arguments.
Variant = collections.namedtuple(
    "Variant", "name dtype b hq hkv tq tk d dv causal window softcap captures mods",
    defaults=(None, None, {}, None))


def _alibi(c, torch):
    from attn_mlir.mods import alibi
    return dict(score_mod=alibi(c["slopes"]))


def _document(c, torch):
    from attn_mlir.mods import document
    return dict(mask_mod=document(c["doc"]))


def _packed_document_causal(c, torch):
    from attn_mlir.mods import and_masks, causal_mask, document
    return dict(mask_mod=and_masks(causal_mask, document(c["doc"])))


def _prefix_lm(c, torch):
    from attn_mlir.mods import prefix_lm
    return dict(mask_mod=prefix_lm(c["prefix"]))


def _prefix_lm_constant(c, torch):
    from attn_mlir.mods import prefix_lm
    return dict(mask_mod=prefix_lm(40))


def _combination(c, torch):
    from attn_mlir.mods import alibi, document
    return dict(score_mod=alibi(c["slopes"]), mask_mod=document(c["doc"]))


def _flex_style(c, torch):
    # As FlexAttention users write them: torch functions, abs, a Python
    # constant, the head index in float arithmetic.
    def relative_bias(score, b, h, q_idx, kv_idx):
        bias = torch.where(abs(q_idx - kv_idx) < 16, 0.5, -0.25 * torch.exp(-(h + 1) / 4))
        return 4.0 * torch.tanh(score / 4.0) + bias

    def sliding_window_causal(b, h, q_idx, kv_idx):
        return (q_idx >= kv_idx) & (q_idx - kv_idx <= 96)
    return dict(score_mod=relative_bias, mask_mod=sliding_window_causal)


def _empty_rows(c, torch):
    # Rows q % 7 == 3 lose every key (a -inf score), rows keep one key in
    # three (Python's modulo of a negative difference).
    def neg_inf_rows(score, b, h, q_idx, kv_idx):
        return torch.where(q_idx % 7 == 3, -math.inf, score)

    def dilated(b, h, q_idx, kv_idx):
        return (kv_idx - q_idx) % 3 == 0
    return dict(score_mod=neg_inf_rows, mask_mod=dilated)


def _document_weights(c, torch):
    # A capture indexed by a value read from another; doc read by both.
    doc, weights = c["doc"], c["weights"]

    def per_document_bias(score, b, h, q_idx, kv_idx):
        return score + weights[doc[b, kv_idx]]

    def same_document(b, h, q_idx, kv_idx):
        return doc[b, q_idx] == doc[b, kv_idx]
    return dict(score_mod=per_document_bias, mask_mod=same_document)


VARIANT_CASES = [
    Variant("window_causal_gqa_bf16", "bf16", 2, 8, 2, 300, 300, 64, 64, True, window=(64, 0)),
    Variant("window_two_sided_f16_tq_ne_tk", "f16", 1, 4, 4, 100, 700, 128, 128, False,
            window=(50, 30)),
    Variant("window_bottom_right_mqa_f32", "f32", 2, 2, 1, 77, 300, 64, 64, "bottom_right",
            window=(100, 0)),
    Variant("softcap_causal_bf16", "bf16", 2, 4, 4, 129, 129, 128, 128, True, softcap=2.0),
    Variant("window_softcap_causal_bf16", "bf16", 1, 4, 4, 200, 200, 128, 128, True,
            window=(32, 0), softcap=2.0),
    Variant("alibi_causal_gqa_f16", "f16", 2, 8, 2, 200, 200, 64, 64, True,
            captures=dict(slopes=("float32", ("hq",))), mods=_alibi),
    Variant("document_bf16", "bf16", 2, 4, 2, 257, 257, 64, 64, False,
            captures=dict(doc=("int32", ("b", "t"))), mods=_document),
    Variant("packed_document_causal_f32_tq_ne_tk", "f32", 1, 4, 4, 100, 300, 64, 64, False,
            captures=dict(doc=("int64", ("t",))), mods=_packed_document_causal),
    Variant("prefix_lm_per_batch_f16", "f16", 2, 4, 4, 150, 150, 64, 64, False,
            captures=dict(prefix=("int64", ("b",))), mods=_prefix_lm),
    Variant("prefix_lm_window_bf16", "bf16", 1, 4, 2, 200, 200, 64, 64, False, window=(-1, 64),
            mods=_prefix_lm_constant),
    Variant("combination_bf16", "bf16", 2, 8, 2, 200, 333, 128, 128, "bottom_right",
            window=(128, 0), softcap=5.0,
            captures=dict(slopes=("float32", ("hq",)), doc=("int32", ("b", "t"))),
            mods=_combination),
    Variant("flex_style_f16", "f16", 2, 4, 1, 190, 190, 64, 64, False, mods=_flex_style),
    Variant("empty_rows_f32", "f32", 1, 2, 2, 64, 64, 32, 32, False, mods=_empty_rows),
    Variant("document_weights_bf16", "bf16", 2, 4, 4, 160, 160, 64, 64, True,
            captures=dict(doc=("int32", ("b", "t")), weights=("float32", (4,))),
            mods=_document_weights),
]


def capture_shape(case, shape):
    """A capture's shape: "b", "hq" and "t" (max(Tq, Tk)) from the case."""
    sizes = dict(b=case.b, hq=case.hq, t=max(case.tq, case.tk))
    return tuple(sizes.get(d, d) for d in shape)


class _TorchFunctions:
    """torch's functions as the tracer meets them, without torch: a call
    with a traced argument goes to its `__torch_function__`."""

    def __getattr__(self, name):
        def fn(*args, **kwargs):
            for x in (*args, *kwargs.values()):
                handler = getattr(type(x), "__torch_function__", None)
                if handler is not None:
                    return handler(fn, (), args, kwargs)
            raise TypeError(f"torch.{name} without a traced argument needs torch")
        fn.__name__ = name
        return fn


TORCH_FUNCTIONS = _TorchFunctions()


def variant_options(case, captures, torch):
    """The keyword arguments of attn_mlir.torch.attention for the case
    (besides q, k, v): causal, window, softcap and the callables."""
    options = dict(causal=case.causal, window=case.window, softcap=case.softcap)
    if case.mods is not None:
        options.update(case.mods(captures, torch))
    return options


def variant_signature_for(case, lse=False):
    """The Signature attn_mlir.torch derives for the case, traced with
    stand-in captures (with return_lse=`lse`)."""
    from attn_mlir.compiler import Signature
    from attn_mlir.mods import TensorSpec, trace

    captures = {name: TensorSpec(dtype, capture_shape(case, shape))
                for name, (dtype, shape) in case.captures.items()}
    options = variant_options(case, captures, TORCH_FUNCTIONS)
    traced = trace(options.get("score_mod"), options.get("mask_mod"))
    causal = "top_left" if case.causal is True else (case.causal or None)
    window = None if case.window in (None, (-1, -1)) else case.window
    softcap = float(case.softcap) if case.softcap else None
    return Signature(case.dtype, (None, case.hq, None, case.d), (None, case.hkv, None, case.d),
                     (None, case.hkv, None, case.dv), causal=causal, window=window,
                     softcap=softcap, lse=lse, **traced.signature_fields())


# attention_with_kvcache (FlashAttention's flash_attn_with_kvcache
# conventions): q (B, Tq, Hq, D), caches (B, Tk, Hkv, D / Dv). lengths:
# "tensor" (random int32 cache_seqlens in 0 .. Tk, with one empty and one
# full cache where B allows), "int" (every batch Tk - 37), None (the whole
# cache). num_splits: 0 splits the keys as the launch asks (split-KV when
# Tq <= 16), 1 never. Run with return_softmax_lse too where lse is set.
# page: a paged cache (block_table) of pages of that many keys (Tk a
# multiple of it), the caches' pages scattered over a pool in random order.
KVCache = collections.namedtuple(
    "KVCache", "name dtype b tq hq hkv tk d dv causal window softcap lengths lse num_splits page",
    defaults=((-1, -1), 0.0, "tensor", True, 0, None))

KVCACHE_CASES = [
    # Split-KV decode, GQA 32 / 8 heads, B 1..8, Tk 1k..32k.
    KVCache("decode_bf16_b1_tk32k", "bf16", 1, 1, 32, 8, 32768, 128, 128, True),
    KVCache("decode_bf16_b2_tk16k", "bf16", 2, 1, 32, 8, 16384, 128, 128, True),
    KVCache("decode_bf16_b4_tk8k", "bf16", 4, 1, 32, 8, 8192, 128, 128, True),
    KVCache("decode_f16_b8_tk1k", "f16", 8, 1, 32, 8, 1024, 128, 128, False),
    KVCache("decode_f16_b8_tk32k_d64", "f16", 8, 1, 32, 8, 32768, 64, 64, True, lse=False),
    KVCache("decode_bf16_b3_tk5000_never_split", "bf16", 3, 1, 32, 8, 5000, 128, 128, True,
            num_splits=1),
    KVCache("decode_bf16_b3_tk5000", "bf16", 3, 1, 32, 8, 5000, 128, 128, True),
    # Every batch one length (an int: a view of the cache), no lengths at all.
    KVCache("decode_bf16_int_length", "bf16", 2, 1, 32, 8, 4096, 128, 128, True, lengths="int"),
    KVCache("decode_f16_whole_cache", "f16", 2, 1, 16, 2, 3000, 64, 64, False, lengths=None),
    # Speculative decode (Tq 4 and 16, static), a sliding window, a softcap,
    # tf32, another value head dim.
    KVCache("spec_decode_f16_tq4_window", "f16", 3, 4, 32, 8, 5000, 128, 128, True,
            window=(256, 0)),
    KVCache("spec_decode_bf16_tq16", "bf16", 5, 16, 16, 4, 2000, 128, 128, True),
    KVCache("decode_f32_softcap_mqa", "f32", 2, 1, 8, 1, 3000, 64, 64, True, softcap=30.0),
    KVCache("decode_f16_window_one_row", "f16", 4, 1, 8, 2, 2500, 128, 64, False,
            window=(300, -1)),
    # Prefill against a cache (Tq 100: dynamic, no split).
    KVCache("prefill_bf16_tq100", "bf16", 2, 100, 8, 2, 700, 64, 64, True),
]

# A paged KV cache (block_table): pages of 16, 64 and 256 keys, split-KV
# decode with GQA packing, an int length, speculative decode with a
# window, never split, prefill; the reference reads the contiguous caches
# the pages were cut from.
PAGED_CASES = [
    KVCache("paged_decode_bf16_p16", "bf16", 4, 1, 32, 8, 8192, 128, 128, True, page=16),
    KVCache("paged_decode_bf16_p64", "bf16", 3, 1, 32, 8, 5056, 128, 128, True, page=64),
    KVCache("paged_decode_bf16_p256", "bf16", 2, 1, 32, 8, 16384, 128, 128, True, page=256),
    KVCache("paged_decode_f16_p64_int", "f16", 2, 1, 16, 2, 3008, 64, 64, True, lengths="int",
            page=64),
    KVCache("paged_decode_bf16_p64_never_split", "bf16", 3, 1, 32, 8, 5056, 128, 128, True,
            num_splits=1, page=64),
    KVCache("paged_spec_f16_p16_window", "f16", 3, 4, 32, 8, 5008, 128, 128, True,
            window=(256, 0), page=16),
    KVCache("paged_decode_f32_p32", "f32", 2, 1, 8, 2, 3008, 64, 64, True, page=32),
    KVCache("paged_prefill_bf16_p64", "bf16", 2, 100, 8, 2, 704, 64, 64, True, page=64),
]


def paged_pool(case, k_cache, v_cache, gen):
    """The caches' pages scattered over a pool of B * P + 5 pages in random
    order: (k_pool, v_pool) (NP, page, Hkv, D / Dv) and the int32 (B, P)
    block_table, on the caches' device."""
    import torch

    b, tk, page = case.b, case.tk, case.page
    pages = tk // page
    pool = b * pages + 5
    order = torch.randperm(pool, generator=gen, device=k_cache.device)[:b * pages]
    table = order.reshape(b, pages).to(torch.int32)
    k_pool = k_cache.new_zeros(pool, page, case.hkv, case.d)
    v_pool = v_cache.new_zeros(pool, page, case.hkv, case.dv)
    k_pool[order] = k_cache.reshape(b * pages, page, case.hkv, case.d)
    v_pool[order] = v_cache.reshape(b * pages, page, case.hkv, case.dv)
    return k_pool, v_pool, table


def kvcache_signature_for(case):
    """The Signature and split_programs attention_with_kvcache compiles for
    the case (attn_mlir.kvcache's mapping of its options)."""
    from attn_mlir import kvcache

    split_programs = kvcache.check_unsupported(num_splits=case.num_splits)
    causal, window, softcap, scale = kvcache.options(case.causal, case.window, case.softcap, None,
                                                     case.tq, case.tk)
    paged = case.page is not None
    keys = case.page if paged else case.tk
    sig = kvcache.signature(case.dtype, (case.b, case.tq, case.hq, case.d),
                            (case.b, keys, case.hkv, case.d),
                            (case.b, keys, case.hkv, case.dv), causal=causal, window=window,
                            softcap=softcap, scale=scale, lse=case.lse,
                            kv_lengths=case.lengths == "tensor" or (paged and case.lengths == "int"),
                            block_table=paged)
    return sig, split_programs


# attention_varlen (FlashAttention's flash_attn_varlen_func conventions):
# q (total_q, Hq, D), k / v (total_k, Hkv, D / Dv), the sequences' query and
# key lengths (keys: the queries' when None); causal and windows aligned to
# the bottom right of each sequence. Lengths of 0, odd lengths, Tq_s != Tk_s
# (prefill against a longer context, and rows without keys), one sequence,
# many; every dtype. Run with return_softmax_lse too where lse is set.
Varlen = collections.namedtuple(
    "Varlen", "name dtype lengths_q lengths_k hq hkv d dv causal window softcap lse",
    defaults=((-1, -1), 0.0, True))

VARLEN_CASES = [
    Varlen("prefill_bf16_causal", "bf16", [1000, 17, 0, 2047, 300, 64], None, 32, 8, 128, 128,
           True),
    Varlen("prefill_f16_d64_noncausal", "f16", [129, 1, 900, 0, 65], None, 16, 4, 64, 64, False),
    Varlen("chunked_prefill_bf16", "bf16", [128, 37, 1, 300], [2000, 37, 700, 4096], 32, 8, 128,
           128, True),
    Varlen("rows_without_keys_f16", "f16", [300, 90], [100, 0], 8, 2, 128, 128, True),
    Varlen("window_bf16", "bf16", [1500, 700, 3], None, 16, 2, 128, 128, True, (256, 0)),
    Varlen("one_sequence_f32", "f32", [777], None, 8, 8, 64, 64, True, lse=False),
    Varlen("many_short_f16_softcap", "f16", [(i * 37) % 50 for i in range(64)], None, 8, 1, 64,
           64, True, softcap=20.0),
]


def varlen_signature_for(case, lse=None):
    """The Signature attention_varlen compiles for the case."""
    from attn_mlir import kvcache
    from attn_mlir.compiler import Signature

    lengths_k = case.lengths_k or case.lengths_q
    causal, window, softcap, scale = kvcache.options(
        case.causal, case.window, case.softcap, None, max(max(case.lengths_q), 1),
        max(max(lengths_k), 1), caller="attention_varlen")
    return Signature(case.dtype, (1, case.hq, None, case.d), (1, case.hkv, None, case.d),
                     (1, case.hkv, None, case.dv), causal=causal, window=window,
                     softcap=softcap, scale=scale, lse=case.lse if lse is None else lse,
                     cu_seqlens=True)
