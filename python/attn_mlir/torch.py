"""`attn_mlir.torch.attention`: attn-mlir kernels called from PyTorch.

    out = attn_mlir.torch.attention(q, k, v, mask=None, causal=False, scale=None,
                                    window=None, softcap=None, score_mod=None, mask_mod=None,
                                    return_lse=False, kv_lengths=None)
    out = attn_mlir.torch.attention_with_kvcache(q, k_cache, v_cache, cache_seqlens=None,
                                                 softmax_scale=None, causal=False,
                                                 window_size=(-1, -1), softcap=0.0,
                                                 return_softmax_lse=False)
    out = attn_mlir.torch.attention_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k,
                                           max_seqlen_q, max_seqlen_k, softmax_scale=None,
                                           causal=False, window_size=(-1, -1), softcap=0.0,
                                           return_softmax_lse=False)

attention_with_kvcache follows FlashAttention's flash_attn_with_kvcache
((B, T, H, D) tensors, per-batch cache lengths, bottom-right causal; see its
doc and attn_mlir.kvcache), attention_varlen its flash_attn_varlen_func
(packed sequences: (total, H, D) tensors and cu_seqlens offsets); the rest
of this doc is about attention.

q: (B, Hq, Tq, D), k: (B, Hkv, Tk, D), v: (B, Hkv, Tk, Dv), CUDA tensors of
one dtype (float32, float16, bfloat16), any strides whose last dimension is
contiguous (a (B, T, H, D) tensor viewed as (B, H, T, D) needs no copy).
mask: None, or a bool / float tensor of rank 2 or 4 broadcastable to
(B, Hq, Tq, Tk). causal: False, True (PyTorch's is_causal: top-left), or
"top_left" / "bottom_right". The variants of SPEC.md section 1.1:
window=(left, right) keeps keys i - left .. i + right of query i (-1:
unbounded; shifted by Tk - Tq under "bottom_right"), softcap=c turns each
score s into c * tanh(s / c), and score_mod(score, b, h, q_idx, kv_idx) /
mask_mod(b, h, q_idx, kv_idx) are FlexAttention's callables, traced into the
op's regions on each call (attn_mlir.mods: what they may use; the ready-made
alibi, document, prefix_lm, sliding_window, causal_mask, and_masks and
or_masks are here too). The tensors they index are the kernel's captures:
int32, int64 or float32, on q's device, with a contiguous last dimension,
and large enough for every index the callables read (the kernel does not
check bounds). return_lse=True returns `(out, lse)` as FlexAttention's
return_lse does: lse is the float32 (B, Hq, Tq) log-sum-exp of each query
row's final scores (natural log; SPEC.md section 1.2), -inf for a row with
no kept key.

The kernel for each signature (dtype, heads, head dims, mask kind, causal,
scale, window, softcap, the traced regions and the captures' types) is
compiled once and cached on disk (attn_mlir.compiler); B, T and the
captures' sizes are dynamic. Runs on the current stream. Without
callables, attention is the custom op `attn_mlir::attention`, which
torch.compile graphs call as one node; with score_mod or mask_mod it runs
outside the graph (torch.compiler.disable: a graph break), since the
callables are traced here, by calling them with proxies.
"""

import torch

from . import kvcache as _kvcache
from .compiler import Signature, compile as _compile
from .mods import (alibi, and_masks, causal_mask, document, or_masks, prefix_lm,  # noqa: F401
                   sliding_window, trace)
from .runtime import Kernel

_DTYPES = {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16"}
# Loaded kernels by (cache entry, device), and by (signature, device).
_kernels = {}
_resolved = {}


def _chip(device):
    major, minor = torch.cuda.get_device_capability(device)
    return f"sm_{major}{minor}a" if major == 9 else f"sm_{major}{minor}"


def _check(q, k, v, mask, names=("q", "k", "v"), keys_required=True, paged=False):
    """Checks q, k, v (and the mask) in the (B, H, T, D) layout; `names`
    name them in the messages. Without `keys_required`, Tk may be 0. With
    `paged`, k and v are pools of pages (NP, Hkv, page, D)."""
    nq, nk, nv = names
    for name, t in ((nq, q), (nk, k), (nv, v)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name}: expected a torch.Tensor, got {type(t).__name__}")
        if t.dim() != 4:
            raise ValueError(f"{name}: expected rank 4 ({'B, H, T, D'}), got shape {tuple(t.shape)}")
        if not t.is_cuda:
            raise ValueError(f"{name}: expected a CUDA tensor, got device {t.device}")
        if t.dtype not in _DTYPES:
            raise TypeError(f"{name}: expected float32, float16 or bfloat16, got {t.dtype}")
        if t.stride(-1) != 1:
            raise ValueError(f"{name}: the last dimension must be contiguous (stride 1), "
                             f"got strides {t.stride()}")
    for name, t in ((nk, k), (nv, v)):
        if t.dtype != q.dtype:
            raise TypeError(f"{name}: expected the dtype of {nq} ({q.dtype}), got {t.dtype}")
        if t.device != q.device:
            raise ValueError(f"{name}: expected {nq}'s device {q.device}, got {t.device}")
    if paged and v.shape[0] != k.shape[0]:
        raise ValueError(f"{nv}: pages must be {nk}'s ({k.shape[0]}), got {v.shape[0]}")
    elif not paged and (k.shape[0] != q.shape[0] or v.shape[0] != q.shape[0]):
        raise ValueError(f"{nk}, {nv}: batch must be {nq}'s ({q.shape[0]}), got {k.shape[0]} and "
                         f"{v.shape[0]}")
    if k.shape[3] != q.shape[3]:
        raise ValueError(f"{nk}: head dim must be {nq}'s ({q.shape[3]}), got {k.shape[3]}")
    if v.shape[1] != k.shape[1] or v.shape[2] != k.shape[2]:
        raise ValueError(f"{nv}: heads and length must be {nk}'s {tuple(k.shape[1:3])}, got "
                         f"{tuple(v.shape[1:3])}")
    if k.shape[1] == 0 or q.shape[1] % k.shape[1]:
        raise ValueError(f"{nq}: heads ({q.shape[1]}) must be a multiple of {nk}'s heads "
                         f"({k.shape[1]}), which must be >= 1")
    if keys_required and k.shape[2] == 0 and q.numel() and v.shape[3]:
        raise ValueError(f"{nk}, {nv}: at least one key is needed (Tk >= 1), got Tk = 0")
    if mask is not None:
        if not isinstance(mask, torch.Tensor) or mask.dim() not in (2, 4):
            raise ValueError("mask: expected a tensor of rank 2 (Tq, Tk) or 4 (B, Hq, Tq, Tk)")
        if mask.dtype not in (torch.bool,) + tuple(_DTYPES):
            raise TypeError(f"mask: expected bool or a float dtype, got {mask.dtype}")
        if not mask.is_cuda or (mask.shape[-1] != 1 and mask.stride(-1) != 1):
            raise ValueError("mask: expected a CUDA tensor with a contiguous last dimension "
                             f"(stride 1), got strides {mask.stride()}")
        if mask.device != q.device:
            raise ValueError(f"mask: expected q's device {q.device}, got {mask.device}")
        full = (q.shape[0], q.shape[1], q.shape[2], k.shape[2])[4 - mask.dim():]
        for i, (m, f) in enumerate(zip(mask.shape, full)):
            if m not in (1, f):
                raise ValueError(f"mask: dim {i} is {m}, must be 1 or {f} to broadcast to "
                                 f"(B, Hq, Tq, Tk) = {tuple(full)}")


def _check_lengths(lengths, q, name="kv_lengths"):
    """Checks per-batch key counts: an int32 (B,) tensor on q's device with
    stride 1 (the kernel reads them contiguously)."""
    if not isinstance(lengths, torch.Tensor):
        raise TypeError(f"{name}: expected an int32 tensor of shape (B,), got "
                        f"{type(lengths).__name__}")
    if lengths.dtype != torch.int32:
        raise TypeError(f"{name}: expected int32 (torch.int32), got {lengths.dtype}: pass "
                        f"{name}.to(torch.int32)")
    if lengths.dim() != 1 or lengths.shape[0] != q.shape[0]:
        raise ValueError(f"{name}: expected shape ({q.shape[0]},), one length per batch, got "
                         f"{tuple(lengths.shape)}")
    if lengths.device != q.device:
        raise ValueError(f"{name}: expected q's device {q.device}, got {lengths.device}")
    if lengths.shape[0] > 1 and lengths.stride(0) != 1:
        raise ValueError(f"{name}: expected a contiguous tensor (stride 1), got stride "
                         f"{lengths.stride(0)}: pass {name}.contiguous()")


def _check_block_table(table, q, k_cache):
    """Checks a paged cache's table and pool: an int32 (B, P) tensor on q's
    device with a contiguous last dim, a page size the GPU kernels take."""
    if not isinstance(table, torch.Tensor):
        raise TypeError(f"block_table: expected an int32 tensor of shape (B, P), got "
                        f"{type(table).__name__}")
    if table.dtype != torch.int32:
        raise TypeError(f"block_table: expected int32 (torch.int32), got {table.dtype}: pass "
                        "block_table.to(torch.int32)")
    if table.dim() != 2 or table.shape[0] != q.shape[0] or table.shape[1] < 1:
        raise ValueError(f"block_table: expected shape ({q.shape[0]}, P), a row of P >= 1 pages "
                         f"per batch, got {tuple(table.shape)}")
    if table.device != q.device:
        raise ValueError(f"block_table: expected q's device {q.device}, got {table.device}")
    if table.shape[1] > 1 and table.stride(1) != 1:
        raise ValueError(f"block_table: expected a contiguous last dim (stride 1), got stride "
                         f"{table.stride(1)}: pass block_table.contiguous()")
    _kvcache.check_page_size(k_cache.shape[1])


def _signature(q, k, v, mask, causal, scale, window=None, softcap=None, traced=None,
               lse=False, kv_lengths=False, static_tq=False, block_table=False):
    """The Signature of a call on (B, H, T, D) views: B, T dynamic, the
    heads and head dims static; with `static_tq`, Tq static too (decode:
    split-KV applies); with `kv_lengths`, the op takes per-batch key
    counts; with `block_table`, k and v are pools of pages (NP, Hkv, page,
    D), the page static."""
    if causal is True:
        causal = "top_left"
    elif causal is False:
        causal = None
    dyn = lambda t: (None, t.shape[1], t.shape[2] if block_table else None,  # noqa: E731
                     t.shape[3])
    query = (None, q.shape[1], q.shape[2] if static_tq else None, q.shape[3])
    mask_shape = mask_dtype = None
    if mask is not None:
        mask_dtype = "i1" if mask.dtype == torch.bool else _DTYPES[mask.dtype]
        mask_shape = tuple(1 if d == 1 else None for d in mask.shape)
    regions = traced.signature_fields() if traced is not None else {}
    return Signature(_DTYPES[q.dtype], query, dyn(k), dyn(v), mask_dtype=mask_dtype,
                     mask=mask_shape, causal=causal, scale=scale, window=window,
                     softcap=softcap, lse=lse, kv_lengths=kv_lengths, block_table=block_table,
                     **regions)


def _kernel_for(q, k, v, mask, causal, scale, window=None, softcap=None, traced=None,
                lse=False, kv_lengths=False, static_tq=False, split_programs=-1,
                block_table=False):
    """The loaded kernel for this call: looked up in memory by signature and
    device after the first call (a dict lookup), so only the first call of
    a signature pays for the compile cache's file checks (or the compile).
    With `lse` the kernel returns (out, lse); with `kv_lengths` it takes
    per-batch key counts; `static_tq` and `split_programs` as in
    attention_with_kvcache (decode kernels), `block_table` for a paged
    cache."""
    sig = _signature(q, k, v, mask, causal, scale, window, softcap, traced, lse, kv_lengths,
                     static_tq, block_table)
    device = q.device.index if q.device.index is not None else torch.cuda.current_device()
    key = (sig, device) if split_programs == -1 else (sig, device, split_programs)
    kernel = _resolved.get(key)
    if kernel is not None:
        return kernel
    artifact = _compile(sig, chip=_chip(q.device), split_programs=split_programs)
    kernel = _kernels.get((artifact.directory, device))
    if kernel is None:
        with torch.cuda.device(device):  # load into this device's context
            kernel = _kernels[(artifact.directory, device)] = Kernel(artifact.manifest_path)
    # The kernel takes the captures in the trace's order (mods.trace).
    takes = [(c["element_type"], len(c["shape"])) for c in kernel.manifest.data.get("captures", [])]
    if takes != list(sig.captures):
        raise RuntimeError(f"the kernel {artifact.directory} takes the captures {takes}, the "
                           f"trace gives {list(sig.captures)}")
    if (kernel.manifest.lse_shape is not None) != lse:
        raise RuntimeError(f"the kernel {artifact.directory} "
                           f"{'writes no' if lse else 'writes a'} log-sum-exp, "
                           f"the call asks for {'one' if lse else 'none'}")
    if (kernel.manifest.kv_lengths_shape is not None) != kv_lengths:
        raise RuntimeError(f"the kernel {artifact.directory} takes "
                           f"{'no' if kv_lengths else ''} kv_lengths, the call "
                           f"{'gives them' if kv_lengths else 'gives none'}")
    _resolved[key] = kernel
    return kernel


def _attention_impl(q, k, v, mask, causal, scale, window=None, softcap=None, lse=False,
                    kv_lengths=None):
    _check(q, k, v, mask)
    # A mask's broadcast dims (size 1) are read at index 0 by the kernel.
    kernel = _kernel_for(q, k, v, mask, causal, scale, window, softcap, lse=lse,
                         kv_lengths=kv_lengths is not None)
    return kernel(q, k, v, mask, kv_lengths=kv_lengths)


@torch.library.custom_op("attn_mlir::attention", mutates_args=())
def _attention_op(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                  mask: torch.Tensor | None, causal: str, scale: float, window_left: int = -1,
                  window_right: int = -1, softcap: float = 0.0,
                  kv_lengths: torch.Tensor | None = None) -> torch.Tensor:
    window = None if (window_left, window_right) == (-1, -1) else (window_left, window_right)
    return _attention_impl(q, k, v, mask, causal or None, scale if scale > 0 else None, window,
                           softcap if softcap > 0 else None, kv_lengths=kv_lengths)


@_attention_op.register_fake
def _(q, k, v, mask, causal, scale, window_left=-1, window_right=-1, softcap=0.0,
      kv_lengths=None):
    return q.new_empty(q.shape[0], q.shape[1], q.shape[2], v.shape[3])


@torch.library.custom_op("attn_mlir::attention_lse", mutates_args=())
def _attention_lse_op(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                      mask: torch.Tensor | None, causal: str, scale: float, window_left: int = -1,
                      window_right: int = -1, softcap: float = 0.0,
                      kv_lengths: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    window = None if (window_left, window_right) == (-1, -1) else (window_left, window_right)
    return _attention_impl(q, k, v, mask, causal or None, scale if scale > 0 else None, window,
                           softcap if softcap > 0 else None, lse=True, kv_lengths=kv_lengths)


@_attention_lse_op.register_fake
def _(q, k, v, mask, causal, scale, window_left=-1, window_right=-1, softcap=0.0,
      kv_lengths=None):
    return (q.new_empty(q.shape[0], q.shape[1], q.shape[2], v.shape[3]),
            q.new_empty(q.shape[0], q.shape[1], q.shape[2], dtype=torch.float32))


def _kvcache_impl(q, k_cache, v_cache, cache_seqlens, causal, scale, window, softcap, lse,
                  split_programs, block_table=None):
    """attention_with_kvcache on checked (B, T, H, D) tensors: the kernel
    runs on (B, H, T, D) views and writes a (B, Tq, Hq, Dv) output through
    its strides; Tq is static up to kvcache.STATIC_TQ_MAX. With a
    block_table, k_cache and v_cache are (NP, page, Hkv, D) pools of pages,
    run as (NP, Hkv, page, D) views."""
    qh, kh, vh = (t.transpose(1, 2) for t in (q, k_cache, v_cache))
    b, tq, hq, _ = q.shape
    out = torch.empty(b, tq, hq, v_cache.shape[3], dtype=q.dtype, device=q.device)
    kernel = _kernel_for(qh, kh, vh, None, causal, scale, window, softcap, lse=lse,
                         kv_lengths=cache_seqlens is not None,
                         static_tq=_kvcache.static_tq(tq), split_programs=split_programs,
                         block_table=block_table is not None)
    result = kernel(qh, kh, vh, None, out=out.transpose(1, 2), kv_lengths=cache_seqlens,
                    block_table=block_table)
    return (out, result[1]) if lse else out


@torch.library.custom_op("attn_mlir::attention_with_kvcache", mutates_args=())
def _kvcache_op(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
                cache_seqlens: torch.Tensor | None, causal: str, scale: float, window_left: int,
                window_right: int, softcap: float, split_programs: int,
                block_table: torch.Tensor | None = None) -> torch.Tensor:
    window = None if (window_left, window_right) == (-1, -1) else (window_left, window_right)
    return _kvcache_impl(q, k_cache, v_cache, cache_seqlens, causal or None,
                         scale if scale > 0 else None, window, softcap if softcap > 0 else None,
                         False, split_programs, block_table)


@_kvcache_op.register_fake
def _(q, k_cache, v_cache, cache_seqlens, causal, scale, window_left, window_right, softcap,
      split_programs, block_table=None):
    return q.new_empty(q.shape[0], q.shape[1], q.shape[2], v_cache.shape[3])


@torch.library.custom_op("attn_mlir::attention_with_kvcache_lse", mutates_args=())
def _kvcache_lse_op(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
                    cache_seqlens: torch.Tensor | None, causal: str, scale: float,
                    window_left: int, window_right: int, softcap: float,
                    split_programs: int,
                    block_table: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    window = None if (window_left, window_right) == (-1, -1) else (window_left, window_right)
    return _kvcache_impl(q, k_cache, v_cache, cache_seqlens, causal or None,
                         scale if scale > 0 else None, window, softcap if softcap > 0 else None,
                         True, split_programs, block_table)


@_kvcache_lse_op.register_fake
def _(q, k_cache, v_cache, cache_seqlens, causal, scale, window_left, window_right, softcap,
      split_programs, block_table=None):
    return (q.new_empty(q.shape[0], q.shape[1], q.shape[2], v_cache.shape[3]),
            q.new_empty(q.shape[0], q.shape[2], q.shape[1], dtype=torch.float32))


def _varlen_impl(q, k, v, cu_seqlens_q, cu_seqlens_k, causal, scale, window, softcap, lse):
    """attention_varlen on checked (total, H, D) tensors: the kernel runs on
    (1, H, total, D) views and writes a (total_q, Hq, Dv) output through its
    strides."""
    qh, kh, vh = (t.unsqueeze(0).transpose(1, 2) for t in (q, k, v))
    out = torch.empty(q.shape[0], q.shape[1], v.shape[2], dtype=q.dtype, device=q.device)
    sig = Signature(_DTYPES[q.dtype], (1, q.shape[1], None, q.shape[2]),
                    (1, k.shape[1], None, k.shape[2]), (1, v.shape[1], None, v.shape[2]),
                    causal=causal, scale=scale, window=window, softcap=softcap, lse=lse,
                    cu_seqlens=True)
    kernel = _kernel_for_signature(sig, q.device)
    result = kernel(qh, kh, vh, None, out=out.unsqueeze(0).transpose(1, 2),
                    cu_seqlens_q=cu_seqlens_q, cu_seqlens_k=cu_seqlens_k)
    return (out, result[1][0]) if lse else out


def _kernel_for_signature(sig, device):
    """The loaded kernel of `sig` on `device` (compiled once, cached)."""
    index = device.index if device.index is not None else torch.cuda.current_device()
    kernel = _resolved.get((sig, index))
    if kernel is not None:
        return kernel
    artifact = _compile(sig, chip=_chip(device))
    kernel = _kernels.get((artifact.directory, index))
    if kernel is None:
        with torch.cuda.device(index):
            kernel = _kernels[(artifact.directory, index)] = Kernel(artifact.manifest_path)
    if (kernel.manifest.cu_seqlens_shapes is not None) != sig.cu_seqlens or (
            kernel.manifest.lse_shape is not None) != sig.lse:
        raise RuntimeError(f"the kernel {artifact.directory} does not match its signature "
                           "(cu_seqlens, lse)")
    _resolved[(sig, index)] = kernel
    return kernel


@torch.library.custom_op("attn_mlir::attention_varlen", mutates_args=())
def _varlen_op(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, cu_seqlens_q: torch.Tensor,
               cu_seqlens_k: torch.Tensor, causal: str, scale: float, window_left: int,
               window_right: int, softcap: float) -> torch.Tensor:
    window = None if (window_left, window_right) == (-1, -1) else (window_left, window_right)
    return _varlen_impl(q, k, v, cu_seqlens_q, cu_seqlens_k, causal or None,
                        scale if scale > 0 else None, window, softcap if softcap > 0 else None,
                        False)


@_varlen_op.register_fake
def _(q, k, v, cu_seqlens_q, cu_seqlens_k, causal, scale, window_left, window_right, softcap):
    return q.new_empty(q.shape[0], q.shape[1], v.shape[2])


@torch.library.custom_op("attn_mlir::attention_varlen_lse", mutates_args=())
def _varlen_lse_op(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                   cu_seqlens_q: torch.Tensor, cu_seqlens_k: torch.Tensor, causal: str,
                   scale: float, window_left: int, window_right: int,
                   softcap: float) -> tuple[torch.Tensor, torch.Tensor]:
    window = None if (window_left, window_right) == (-1, -1) else (window_left, window_right)
    return _varlen_impl(q, k, v, cu_seqlens_q, cu_seqlens_k, causal or None,
                        scale if scale > 0 else None, window, softcap if softcap > 0 else None,
                        True)


@_varlen_lse_op.register_fake
def _(q, k, v, cu_seqlens_q, cu_seqlens_k, causal, scale, window_left, window_right, softcap):
    return (q.new_empty(q.shape[0], q.shape[1], v.shape[2]),
            q.new_empty(q.shape[1], q.shape[0], dtype=torch.float32))


def _check_seqlens_values(name, offsets, total, max_seqlen):
    """The runtime check of packed sequences' offsets (one small copy to
    the host): they rise from 0 or more to at most `total`, and no sequence
    is longer than `max_seqlen`. Skipped while torch.compile traces or a
    CUDA graph captures (no host copy there)."""
    if torch.compiler.is_compiling() or torch.cuda.is_current_stream_capturing():
        return
    values = offsets.tolist()
    previous = 0
    for s, value in enumerate(values):
        if value < previous or value > total:
            if value > total:
                raise ValueError(f"{name}[{s}] = {value} is past the packed length {total}")
            raise ValueError(f"{name}[{s}] = {value} is below {previous}" + (
                f" ({name}[{s - 1}]): the offsets must not decrease" if s else ""))
        if s and value - previous > max_seqlen:
            raise ValueError(f"{name}: sequence {s - 1} has {value - previous} tokens, more than "
                             f"max_seqlen ({max_seqlen})")
        previous = value


def attention_varlen(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                     softmax_scale=None, causal=False, window_size=(-1, -1), softcap=0.0,
                     return_softmax_lse=False):
    """Packed variable-length sequences with FlashAttention's
    `flash_attn_varlen_func` conventions: q (total_q, Hq, D), k (total_k,
    Hkv, D) and v (total_k, Hkv, Dv), CUDA tensors of one dtype with a
    contiguous last dimension; cu_seqlens_q / cu_seqlens_k int32 (N + 1,)
    offsets on q's device (sequence s owns query rows cu_seqlens_q[s] ..
    cu_seqlens_q[s+1]-1 and keys cu_seqlens_k[s] .. cu_seqlens_k[s+1]-1);
    max_seqlen_q / max_seqlen_k the longest sequence's lengths (checked,
    and used to normalize the window; the kernel needs neither). causal is
    aligned to the bottom right of each sequence (FlashAttention >= 2.1),
    window_size (left, right) likewise (-1: unbounded; as in
    attention_with_kvcache, a window reaching past the diagonal needs
    causal=True or a right bound of 0), softcap 0.0 none, softmax_scale
    None 1/sqrt(D). Returns out (total_q, Hq, Dv) and, with
    return_softmax_lse, the float32 (Hq, total_q) log-sum-exp (-inf for a
    row without keys). Rows of q outside every sequence get zeros (and lse
    -inf).

    The offsets are checked on the host before the launch (one small copy;
    not while torch.compile traces or a CUDA graph captures): they must
    rise from 0 or more to at most total_q (total_k), no sequence longer
    than max_seqlen. The kernel itself clamps every offset into its
    operand, so no value reads or writes outside the tensors. One kernel
    per (dtype, heads, head dims, options) serves every batch of
    sequences: the sequence count and lengths are launch sizes."""
    if not isinstance(return_softmax_lse, bool):
        raise TypeError(f"return_softmax_lse: expected a bool, got {return_softmax_lse!r}")
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name}: expected a torch.Tensor, got {type(t).__name__}")
        if t.dim() != 3:
            raise ValueError(f"{name}: expected rank 3 (total, H, D), got shape {tuple(t.shape)}")
    qh, kh, vh = (t.unsqueeze(0).transpose(1, 2) for t in (q, k, v))
    _check(qh, kh, vh, None, ("q", "k", "v"), keys_required=False)
    for name, t in (("cu_seqlens_q", cu_seqlens_q), ("cu_seqlens_k", cu_seqlens_k)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name}: expected an int32 tensor of shape (N + 1,), got "
                            f"{type(t).__name__}")
        if t.dtype != torch.int32:
            raise TypeError(f"{name}: expected int32 (torch.int32), got {t.dtype}: pass "
                            f"{name}.to(torch.int32)")
        if t.dim() != 1 or t.shape[0] < 2:
            raise ValueError(f"{name}: expected shape (N + 1,) with N >= 1 sequences, got "
                             f"{tuple(t.shape)}")
        if t.device != q.device:
            raise ValueError(f"{name}: expected q's device {q.device}, got {t.device}")
        if t.stride(0) != 1:
            raise ValueError(f"{name}: expected a contiguous tensor (stride 1), got stride "
                             f"{t.stride(0)}: pass {name}.contiguous()")
    if cu_seqlens_q.shape[0] != cu_seqlens_k.shape[0]:
        raise ValueError(f"cu_seqlens_k: {cu_seqlens_k.shape[0]} offsets, but cu_seqlens_q has "
                         f"{cu_seqlens_q.shape[0]} (one N + 1)")
    for name, value in (("max_seqlen_q", max_seqlen_q), ("max_seqlen_k", max_seqlen_k)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{name}: expected an int >= 0, got {value!r}")
    _check_seqlens_values("cu_seqlens_q", cu_seqlens_q, q.shape[0], max_seqlen_q)
    _check_seqlens_values("cu_seqlens_k", cu_seqlens_k, k.shape[0], max_seqlen_k)
    op_causal, window, softcap, scale = _kvcache.options(
        causal, window_size, softcap, softmax_scale, max(max_seqlen_q, 1), max(max_seqlen_k, 1),
        caller="attention_varlen")
    if k.shape[0] == 0 or q.numel() == 0:
        # No key at all (or nothing to compute): zeros, and a log-sum-exp of -inf.
        out = q.new_zeros(q.shape[0], q.shape[1], v.shape[2])
        if not return_softmax_lse:
            return out
        return out, torch.full((q.shape[1], q.shape[0]), float("-inf"), device=q.device)
    op = _varlen_lse_op if return_softmax_lse else _varlen_op
    return op(q, k, v, cu_seqlens_q, cu_seqlens_k, op_causal or "", scale or 0.0,
              *(window or (-1, -1)), softcap or 0.0)


def _captures(traced, q):
    """The captured tensors of `traced`, checked for the kernel: torch
    tensors on q's device, not empty, with a last dimension of stride 1 (a
    size-1 last dimension gets one: only its index 0 is read)."""
    captures = []
    for i, t in enumerate(traced.captures):
        what = f"capture {i} (the {traced.capture_types[i][0]} tensor of shape {tuple(t.shape)})"
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{what}: expected a torch.Tensor, got {type(t).__name__}")
        if t.device != q.device:
            raise ValueError(f"{what}: expected q's device {q.device}, got {t.device}")
        if t.numel() == 0:
            raise ValueError(f"{what}: the kernel reads it, but it is empty")
        if t.stride(-1) != 1:
            if t.shape[-1] != 1:
                raise ValueError(f"{what}: the last dimension must be contiguous (stride 1), "
                                 f"got strides {t.stride()}: pass t.contiguous()")
            t = t.as_strided(t.shape, t.stride()[:-1] + (1,))
        captures.append(t)
    return captures


@torch.compiler.disable
def _attention_mods(q, k, v, mask, causal, scale, window, softcap, score_mod, mask_mod,
                    lse=False, kv_lengths=None):
    traced = trace(score_mod, mask_mod)
    captures = _captures(traced, q)
    kernel = _kernel_for(q, k, v, mask, causal, scale, window, softcap, traced, lse,
                         kv_lengths=kv_lengths is not None)
    return kernel(q, k, v, mask, captures=captures, kv_lengths=kv_lengths)


def _check_positive(name, value):
    """Checks that `value` is None or a finite positive number; returns
    whether it is a number."""
    if value is None:
        return False
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name}: expected a number or None, got {type(value).__name__} "
                        f"{value!r}")
    if not (value > 0 and value != float("inf")):
        raise ValueError(f"{name}: expected a finite positive number, got {value}")
    return True


def _check_options(causal, scale, window=None, softcap=None):
    """Checks the options; returns the window ((left, right), or None for no
    window or (-1, -1)) and the softcap (a float or None)."""
    _check_positive("scale", scale)
    if not (causal is None or isinstance(causal, bool)
            or (isinstance(causal, str) and causal in ("top_left", "bottom_right"))):
        raise ValueError(f"causal: expected a bool, 'top_left' or 'bottom_right', got {causal!r}")
    if window is not None:
        if not isinstance(window, (tuple, list)) or len(window) != 2 or any(
                isinstance(w, bool) or not isinstance(w, int) or w < -1 for w in window):
            raise ValueError(f"window: expected (left, right), integers >= -1 (-1: unbounded), "
                             f"got {window!r}")
        window = None if tuple(window) == (-1, -1) else (int(window[0]), int(window[1]))
    if _check_positive("softcap", softcap):
        softcap = float(softcap)
    return window, softcap


def attention(q, k, v, mask=None, causal=False, scale=None, window=None, softcap=None,
              score_mod=None, mask_mod=None, return_lse=False, kv_lengths=None):
    """Scaled dot-product attention through attn-mlir, with the variants of
    SPEC.md section 1.1 (see the module doc). With return_lse=True, returns
    `(out, lse)`: lse the float32 (B, Hq, Tq) log-sum-exp (SPEC.md section
    1.2), as FlexAttention's return_lse. `kv_lengths`, an int32 (B,) tensor
    on q's device, is the op's per-batch key counts: batch b sees only its
    first kv_lengths[b] keys (clamped to 0 .. Tk), and that count stands for
    Tk in the bottom_right causal and window offsets; a batch with none
    gives zeros (and lse -inf)."""
    window, softcap = _check_options(causal, scale, window, softcap)
    if not isinstance(return_lse, bool):
        raise TypeError(f"return_lse: expected a bool, got {type(return_lse).__name__} "
                        f"{return_lse!r}")
    _check(q, k, v, mask)
    if kv_lengths is not None:
        _check_lengths(kv_lengths, q)
    if score_mod is not None or mask_mod is not None:
        return _attention_mods(q, k, v, mask, causal, scale, window, softcap, score_mod, mask_mod,
                               return_lse, kv_lengths)
    name = "top_left" if causal is True else (causal or "")
    left, right = window or (-1, -1)
    op = _attention_lse_op if return_lse else _attention_op
    return op(q, k, v, mask, name, float(scale) if scale else 0.0, left, right, softcap or 0.0,
              kv_lengths)


def _append_to_cache(k_cache, v_cache, k, v, lengths, block_table):
    """FlashAttention's k=, v=: writes k (B, Tnew, Hkv, D) and v (B, Tnew,
    Hkv, Dv) into the (B, T, H, D) caches, or through block_table into the
    pools of pages, at batch b's keys lengths[b] .. lengths[b] + Tnew - 1,
    in place. Returns the new lengths (an int for an int)."""
    for name, new, cache in (("k", k, k_cache), ("v", v, v_cache)):
        if not isinstance(new, torch.Tensor):
            raise TypeError(f"{name}: expected a torch.Tensor, got {type(new).__name__}")
        if new.dim() != 4 or new.shape[0] != k.shape[0] or new.shape[1] != k.shape[1] \
                or new.shape[2:] != cache.shape[2:]:
            raise ValueError(f"{name}: expected shape (B, Tnew, {cache.shape[2]}, {cache.shape[3]}) "
                             f"with k's B and Tnew, got {tuple(new.shape)}")
        if new.dtype != cache.dtype or new.device != cache.device:
            raise TypeError(f"{name}: expected the cache's dtype and device, got {new.dtype} on "
                            f"{new.device}")
    b, tnew = k.shape[:2]
    if lengths is None:
        raise ValueError("k=, v=: cache_seqlens is required (the keys the new ones follow)")
    capacity = k_cache.shape[1] * (block_table.shape[1] if block_table is not None else 1)
    device = k_cache.device
    starts = (torch.full((b,), lengths, dtype=torch.int64, device=device)
              if isinstance(lengths, int) else lengths.to(torch.int64))
    positions = starts[:, None] + torch.arange(tnew, device=device)
    if positions.numel() and not 0 <= int(positions.min()) <= int(positions.max()) < capacity:
        raise ValueError(f"k=, v=: cache_seqlens + {tnew} new keys past the cache's {capacity}")
    batches = torch.arange(b, device=device)[:, None].expand(b, tnew)
    if block_table is None:
        k_cache[batches, positions] = k
        v_cache[batches, positions] = v
    else:
        page = k_cache.shape[1]
        pages = block_table.to(torch.int64)[batches, positions // page]
        k_cache[pages, positions % page] = k
        v_cache[pages, positions % page] = v
    if isinstance(lengths, int):
        return lengths + tnew
    return (lengths + tnew).to(torch.int32)


def attention_with_kvcache(q, k_cache, v_cache, cache_seqlens=None, softmax_scale=None,
                           causal=False, window_size=(-1, -1), softcap=0.0,
                           return_softmax_lse=False, *, k=None, v=None, rotary_cos=None,
                           rotary_sin=None, cache_batch_idx=None, cache_leftpad=None,
                           block_table=None, rotary_interleaved=True, alibi_slopes=None,
                           num_splits=0):
    """Decode (and speculative decode, or prefill) against a KV cache with
    FlashAttention's `flash_attn_with_kvcache` conventions:
    q (B, Tq, Hq, D), k_cache (B, Tk, Hkv, D) and v_cache (B, Tk, Hkv, Dv),
    CUDA tensors of one dtype in the (batch, seq, head, dim) layout, any
    strides with a contiguous last dimension (viewed as (B, H, T, D), no
    copy). cache_seqlens: None (the whole cache), an int (every batch's
    length) or an int32 (B,) tensor on q's device: batch b sees its first
    cache_seqlens[b] keys (clamped to 0 .. Tk; none: zeros). causal is
    aligned to the bottom right of each batch's keys, window_size
    (left, right) too (-1: unbounded; without causal, only windows that
    keep no key past the diagonal: see attn_mlir.kvcache), softcap 0.0
    none, softmax_scale None 1/sqrt(D). Returns out (B, Tq, Hq, Dv), and
    with return_softmax_lse also the float32 (B, Hq, Tq) log-sum-exp
    (-inf for a row without keys, where FlashAttention writes +inf).

    Tq up to 16 compiles into the kernel's signature, so that split-KV
    applies: the keys are split over programs as each launch's sizes ask
    (num_splits=0, FlashAttention's heuristic; num_splits=1 never splits).
    A paged cache (block_table, an int32 (B, P) tensor on q's device):
    k_cache and v_cache are (num_blocks, page_block_size, Hkv, D) pools of
    pages, page_block_size a power of two in 16..256, and batch b's key j
    is in page block_table[b, j // page_block_size]; Tk is P *
    page_block_size. The entries a batch uses (its first
    ceil(cache_seqlens[b] / page_block_size)) are checked on the host to
    name pages of the pool before the launch (a ValueError names the
    first that does not).

    k=, v= (B, Tnew, Hkv, D / Dv) append keys first, in place: batch b's
    at keys cache_seqlens[b] .. cache_seqlens[b] + Tnew - 1 of its cache or
    of its pages (block_table), and the attention then sees cache_seqlens +
    Tnew keys, as in FlashAttention (cache_seqlens is required; keys past
    the cache are a ValueError). Rotary embeddings, cache_batch_idx,
    cache_leftpad and alibi_slopes raise NotImplementedError naming the
    argument."""
    split_programs = _kvcache.check_unsupported(
        k=k, v=v, rotary_cos=rotary_cos, rotary_sin=rotary_sin, cache_batch_idx=cache_batch_idx,
        cache_leftpad=cache_leftpad, block_table=block_table, rotary_interleaved=rotary_interleaved,
        alibi_slopes=alibi_slopes, num_splits=num_splits)
    if not isinstance(return_softmax_lse, bool):
        raise TypeError(f"return_softmax_lse: expected a bool, got {return_softmax_lse!r}")
    names = ("q", "k_cache", "v_cache")
    for name, t in zip(names, (q, k_cache, v_cache)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name}: expected a torch.Tensor, got {type(t).__name__}")
        if t.dim() != 4:
            raise ValueError(f"{name}: expected rank 4 (B, T, H, D), got shape {tuple(t.shape)}")
    qh, kh, vh = (t.transpose(1, 2) for t in (q, k_cache, v_cache))
    # Shapes, dtypes, devices and strides, named as the caller knows them.
    _check(qh, kh, vh, None, names, keys_required=False, paged=block_table is not None)
    b, tq, hq, _ = q.shape
    tk = k_cache.shape[1]
    if block_table is not None:
        _check_block_table(block_table, q, k_cache)
        tk = block_table.shape[1] * k_cache.shape[1]
    op_causal, window, softcap, scale = _kvcache.options(causal, window_size, softcap,
                                                         softmax_scale, tq, tk)
    lengths = cache_seqlens
    if (k is None) != (v is None):
        raise ValueError("k=, v=: expected both or neither")
    if k is not None:
        if isinstance(lengths, torch.Tensor):
            _check_lengths(lengths, q, "cache_seqlens")
        elif lengths is not None and (isinstance(lengths, bool) or not isinstance(lengths, int)):
            raise TypeError("cache_seqlens: expected an int or an int32 tensor of shape (B,) "
                            f"with k=, v=, got {type(lengths).__name__}")
        lengths = _append_to_cache(k_cache, v_cache, k, v, lengths, block_table)
    if isinstance(lengths, bool):
        raise TypeError("cache_seqlens: expected None, an int or an int32 tensor of shape (B,), "
                        "got a bool")
    if isinstance(lengths, int) and block_table is not None:
        if not 0 <= lengths <= tk:
            raise ValueError(f"cache_seqlens: {lengths} keys in a cache of {tk}")
        # Pages are not sliced: every batch's length as the operand.
        lengths = torch.full((b,), lengths, dtype=torch.int32, device=q.device)
    elif isinstance(lengths, int):
        if not 0 <= lengths <= tk:
            raise ValueError(f"cache_seqlens: {lengths} keys in a cache of {tk}")
        # Every batch's length: a view of the cache's first keys, no operand.
        k_cache, v_cache, tk, lengths = k_cache[:, :lengths], v_cache[:, :lengths], lengths, None
    elif lengths is not None:
        if not isinstance(lengths, torch.Tensor):
            raise TypeError(f"cache_seqlens: expected None, an int or an int32 tensor of shape "
                            f"(B,), got {type(lengths).__name__} (FlashAttention's fourth "
                            "positional argument is k; pass cache_seqlens= by keyword)")
        _check_lengths(lengths, q, "cache_seqlens")
    if block_table is not None and q.numel():
        # The ids a batch uses, on the host (one copy of the table).
        _kvcache.check_block_table(block_table.tolist(),
                                   None if lengths is None else lengths.tolist(),
                                   k_cache.shape[1], k_cache.shape[0])
    if tk == 0 or q.numel() == 0:
        # No key at all (or nothing to compute): zeros, and a log-sum-exp of -inf.
        out = q.new_zeros(b, tq, hq, v_cache.shape[3])
        if not return_softmax_lse:
            return out
        return out, torch.full((b, hq, tq), float("-inf"), device=q.device)
    op = _kvcache_lse_op if return_softmax_lse else _kvcache_op
    return op(q, k_cache, v_cache, lengths, op_causal or "", scale or 0.0, *(window or (-1, -1)),
              softcap or 0.0, split_programs, block_table)


def explain(q, k, v, mask=None, causal=False, scale=None, median_ms=None):
    """The explain report (attn_mlir.explain.Report; docs/Explain.md) of the
    kernel `attention(q, k, v, mask, causal, scale)` runs: timed here (median
    of 30) unless `median_ms` is given. `print(report.text())` prints the
    lines of `attn-run --bench --explain`."""
    from . import explain as _explain

    _check_options(causal, scale)
    _check(q, k, v, mask)
    kernel = _kernel_for(q, k, v, mask, causal or None, scale)
    return _explain.explain(kernel, q, k, v, mask, median_ms=median_ms)
