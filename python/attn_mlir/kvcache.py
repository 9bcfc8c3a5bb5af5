"""FlashAttention's `flash_attn_with_kvcache` conventions mapped onto
`attn.attention` (pure Python, no torch: attn_mlir.torch calls it, and the
CI tests check it without a GPU).

FlashAttention's arguments and what they become:

- q (B, Tq, Hq, D), k_cache / v_cache (B, Tk, Hkv, D / Dv): the (batch,
  seq, head, dim) layout, viewed as (B, H, T, D) without a copy.
- cache_seqlens: an int32 (B,) tensor becomes the op's `kv_lengths`; an
  int n keeps the first n keys of every batch (a view of the cache, no
  operand); None, the whole cache.
- causal: bottom-right aligned with each batch's length, as in
  FlashAttention: `#attn.causal<bottom_right>`, with `kv_lengths[b]`
  standing for Tk.
- window_size (left, right), -1 unbounded: FlashAttention's window is
  always aligned to the bottom right, query i keeping the keys
  `i + L - Tq - left .. i + L - Tq + right` (L the batch's length). The
  op's window is shifted by L - Tq only under bottom_right causal, so the
  windows that keep no key past the diagonal map onto it (causal, right 0,
  or a single query row, whose right bound never cuts an existing key);
  a window reaching past the diagonal of several rows without causal is
  refused (NotImplementedError).
- softcap 0.0: none; softmax_scale None: 1/sqrt(D).
- k, v (B, Tnew, Hkv, D / Dv): appended to the cache in place before the
  attention, at each batch's keys cache_seqlens[b] .. cache_seqlens[b] +
  Tnew - 1 (through block_table's pages for a paged cache), which then sees
  cache_seqlens + Tnew keys; cache_seqlens is required with them.
- block_table: an int32 (B, P) tensor makes k_cache / v_cache pools of
  pages (num_blocks, page_block_size, Hkv, D), viewed as (NP, Hkv, page,
  D), the op's `block_table` (Tk = P * page); an int cache_seqlens then
  becomes a (B,) operand (pages are not sliced). check_block_table checks
  the entries a batch uses on the host, check_page_size the page.

The decode signature: Tq is static when it is at most STATIC_TQ_MAX, so
that the compiler splits the keys over programs (split-KV; docs/Serving.md);
a longer Tq is dynamic (one kernel for every prefill length).
"""

from .compiler import Signature

# The longest query of a decode kernel: up to it Tq is part of the
# signature (one query block, so that split-KV applies).
STATIC_TQ_MAX = 16
# The programs split-KV aims for (attn-translate --split-programs): two per
# SM of an H100 / H200 (132 SMs). FlashAttention's num_splits=0 (its
# heuristic) compiles with it, num_splits=1 with 0 (never split).
SPLIT_PROGRAMS = 264

# FlashAttention's arguments that are not supported, with their defaults.
UNSUPPORTED = (
    ("rotary_cos", None, "rotary embedding: apply it to q (and the new keys) before the call"),
    ("rotary_sin", None, "rotary embedding: apply it to q (and the new keys) before the call"),
    ("cache_batch_idx", None, "a batch index into the cache: index k_cache / v_cache first"),
    ("cache_leftpad", None, "left-padded caches"),
    ("alibi_slopes", None, "ALiBi slopes: attn_mlir.torch.attention with "
                           "score_mod=attn_mlir.mods.alibi(slopes)"),
)

_DTYPES = ("f32", "f16", "bf16")


def check_unsupported(**given):
    """Raises NotImplementedError naming the first of FlashAttention's
    arguments in `given` that is set but not supported here; returns the
    split_programs of the compile for `num_splits` (0: SPLIT_PROGRAMS, the
    split count then follows each launch's sizes; 1: 0, never split)."""
    for name, default, what in UNSUPPORTED:
        if given.get(name, default) is not default:
            raise NotImplementedError(f"attention_with_kvcache: {name}= is not supported ({what})")
    rotary = given.get("rotary_interleaved", True)
    if not isinstance(rotary, bool):
        raise TypeError(f"rotary_interleaved: expected a bool, got {rotary!r}")
    splits = given.get("num_splits", 0)
    if isinstance(splits, bool) or not isinstance(splits, int) or splits not in (0, 1):
        raise NotImplementedError(f"attention_with_kvcache: num_splits={splits!r} is not supported: "
                                  "the split count is the compiler's, from each launch's sizes "
                                  "(split-KV, docs/Serving.md); pass 0 (split as needed) or 1 "
                                  "(never split)")
    return SPLIT_PROGRAMS if splits == 0 else 0


def static_tq(tq):
    """Whether a query of `tq` rows compiles with Tq in the signature."""
    return 1 <= tq <= STATIC_TQ_MAX


def options(causal, window_size, softcap, softmax_scale, tq, tk_cache,
            caller="attention_with_kvcache"):
    """The op's attributes for FlashAttention's (causal, window_size,
    softcap, softmax_scale) with `tq` query rows and a cache of `tk_cache`
    keys: (causal, window, softcap, scale), causal None or "bottom_right",
    window None or (left, right), softcap and scale None or a float.
    TypeError / ValueError for bad values, NotImplementedError for a window
    the op cannot express (see the module doc). For packed sequences
    (attention_varlen, `caller`), `tq` and `tk_cache` are the longest
    sequence's: every bound they drop cuts no key of any sequence."""
    if not isinstance(causal, bool):
        raise TypeError(f"causal: expected a bool, got {causal!r}")
    if not isinstance(window_size, (tuple, list)) or len(window_size) != 2 or any(
            isinstance(w, bool) or not isinstance(w, int) or w < -1 for w in window_size):
        raise ValueError(f"window_size: expected (left, right), integers >= -1 (-1: unbounded), "
                         f"got {window_size!r}")
    if isinstance(softcap, bool) or not isinstance(softcap, (int, float)) or not (
            0 <= softcap < float("inf")):
        raise ValueError(f"softcap: expected a finite number >= 0 (0: none), got {softcap!r}")
    if softmax_scale is not None and (
            isinstance(softmax_scale, bool) or not isinstance(softmax_scale, (int, float))
            or not 0 < softmax_scale < float("inf")):
        raise ValueError(f"softmax_scale: expected None (1/sqrt(D)) or a finite positive number, "
                         f"got {softmax_scale!r}")
    left, right = (int(w) for w in window_size)
    # FlashAttention's own normalization: a bound as long as the cache is
    # none, and causal is a right bound of 0.
    if left >= tk_cache:
        left = -1
    if right >= tk_cache:
        right = -1
    if causal:
        right = 0
    # A right bound of Tq - 1 or more never cuts a key that exists (query i
    # keeps keys up to i + L - Tq + right >= L - 1).
    if right >= tq - 1 and right != 0:
        right = -1
    if tq == 1 and right == -1 and left >= 0:
        right = 0  # one row: the diagonal is the last key, so causal cuts nothing
    if right == 0:
        op_causal, window = "bottom_right", (None if left == -1 else (left, 0))
    elif (left, right) == (-1, -1):
        op_causal, window = None, None
    else:
        raise NotImplementedError(
            f"{caller}: window_size={tuple(window_size)} without causal for "
            f"{tq} query rows: FlashAttention aligns the window to the bottom right, which "
            "attn.attention's window does only under causal; supported are causal=True, "
            "a right bound of 0, (-1, -1), or a single query row")
    return (op_causal, window, float(softcap) if softcap else None,
            None if softmax_scale is None else float(softmax_scale))


def signature(dtype, q_shape, k_shape, v_shape, causal=None, window=None, softcap=None,
              scale=None, lse=False, kv_lengths=False, block_table=False):
    """The Signature of attention_with_kvcache for q (B, Tq, Hq, D),
    k_cache (B, Tk, Hkv, D) and v_cache (B, Tk, Hkv, Dv) shapes, in
    FlashAttention's layout: B and Tk dynamic, Tq static up to
    STATIC_TQ_MAX, the heads and head dims static. With `block_table` the
    caches are (num_blocks, page, Hkv, D) pools: the page is static."""
    if dtype not in _DTYPES:
        raise ValueError(f"dtype: expected one of {_DTYPES}, got {dtype!r}")
    b, tq, hq, d = q_shape
    hkv, dv = k_shape[2], v_shape[3]
    page = k_shape[1] if block_table else None
    return Signature(dtype, (None, hq, tq if static_tq(tq) else None, d), (None, hkv, page, d),
                     (None, hkv, page, dv), causal=causal, scale=scale, window=window,
                     softcap=softcap, lse=lse, kv_lengths=kv_lengths, block_table=block_table)


# A paged cache's page sizes on the GPU: a key block lies within one page,
# one TMA box of a power-of-two row count (docs/Serving.md).
PAGE_SIZES = (16, 32, 64, 128, 256)


def check_page_size(page):
    """Raises ValueError unless `page` (page_block_size, k_cache.shape[1]
    under block_table) is a power of two in 16..256."""
    if page not in PAGE_SIZES:
        raise ValueError(f"block_table: page_block_size (k_cache.shape[1]) {page}: the kernels "
                         "take a power of two in 16..256")


def check_block_table(rows, lengths, page, pool):
    """Checks a paged cache's table on the host: `rows` its entries (B lists
    of P ints), `lengths` the per-batch key counts (None: every batch's P *
    page keys), `page` the page size and `pool` the pages in k_cache. The
    entries a batch uses, its first ceil(n_b / page) (n_b clamped to 0 ..
    P * page, as the kernel clamps it), must name pages 0 .. pool - 1; a
    ValueError names the first that does not. The kernel clamps every id
    into the pool, so an unchecked bad id never reads outside it."""
    for b, row in enumerate(rows):
        keys = len(row) * page
        if lengths is not None:
            keys = min(max(int(lengths[b]), 0), keys)
        for p in range(-(-keys // page)):
            if not 0 <= row[p] < pool:
                raise ValueError(f"block_table[{b}, {p}] = {row[p]} is not a page of the pool "
                                 f"(0..{pool - 1}: k_cache has {pool} blocks)")
