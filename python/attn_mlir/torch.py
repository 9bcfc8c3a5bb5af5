"""`attn_mlir.torch.attention`: attn-mlir kernels called from PyTorch.

    out = attn_mlir.torch.attention(q, k, v, mask=None, causal=False, scale=None,
                                    window=None, softcap=None, score_mod=None, mask_mod=None,
                                    return_lse=False)

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


def _check(q, k, v, mask):
    for name, t in (("q", q), ("k", k), ("v", v)):
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
    for name, t in (("k", k), ("v", v)):
        if t.dtype != q.dtype:
            raise TypeError(f"{name}: expected the dtype of q ({q.dtype}), got {t.dtype}")
        if t.device != q.device:
            raise ValueError(f"{name}: expected q's device {q.device}, got {t.device}")
    if k.shape[0] != q.shape[0] or v.shape[0] != q.shape[0]:
        raise ValueError(f"k, v: batch must be q's ({q.shape[0]}), got {k.shape[0]} and {v.shape[0]}")
    if k.shape[3] != q.shape[3]:
        raise ValueError(f"k: head dim must be q's ({q.shape[3]}), got {k.shape[3]}")
    if v.shape[1] != k.shape[1] or v.shape[2] != k.shape[2]:
        raise ValueError(f"v: heads and length must be k's {tuple(k.shape[1:3])}, got {tuple(v.shape[1:3])}")
    if k.shape[1] == 0 or q.shape[1] % k.shape[1]:
        raise ValueError(f"q: heads ({q.shape[1]}) must be a multiple of k's heads ({k.shape[1]}), "
                         "which must be >= 1")
    if k.shape[2] == 0 and q.numel() and v.shape[3]:
        raise ValueError("k, v: at least one key is needed (Tk >= 1), got Tk = 0")
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


def _signature(q, k, v, mask, causal, scale, window=None, softcap=None, traced=None,
               lse=False):
    if causal is True:
        causal = "top_left"
    elif causal is False:
        causal = None
    dyn = lambda t: (None, t.shape[1], None, t.shape[3])  # noqa: E731
    mask_shape = mask_dtype = None
    if mask is not None:
        mask_dtype = "i1" if mask.dtype == torch.bool else _DTYPES[mask.dtype]
        mask_shape = tuple(1 if d == 1 else None for d in mask.shape)
    regions = traced.signature_fields() if traced is not None else {}
    return Signature(_DTYPES[q.dtype], dyn(q), dyn(k), dyn(v), mask_dtype=mask_dtype,
                     mask=mask_shape, causal=causal, scale=scale, window=window,
                     softcap=softcap, lse=lse, **regions)


def _kernel_for(q, k, v, mask, causal, scale, window=None, softcap=None, traced=None,
                lse=False):
    """The loaded kernel for this call: looked up in memory by signature and
    device after the first call (a dict lookup), so only the first call of
    a signature pays for the compile cache's file checks (or the compile).
    With `lse` the kernel returns (out, lse)."""
    sig = _signature(q, k, v, mask, causal, scale, window, softcap, traced, lse)
    device = q.device.index if q.device.index is not None else torch.cuda.current_device()
    kernel = _resolved.get((sig, device))
    if kernel is not None:
        return kernel
    artifact = _compile(sig, chip=_chip(q.device))
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
    _resolved[(sig, device)] = kernel
    return kernel


def _attention_impl(q, k, v, mask, causal, scale, window=None, softcap=None, lse=False):
    _check(q, k, v, mask)
    # A mask's broadcast dims (size 1) are read at index 0 by the kernel.
    return _kernel_for(q, k, v, mask, causal, scale, window, softcap, lse=lse)(q, k, v, mask)


@torch.library.custom_op("attn_mlir::attention", mutates_args=())
def _attention_op(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                  mask: torch.Tensor | None, causal: str, scale: float, window_left: int = -1,
                  window_right: int = -1, softcap: float = 0.0) -> torch.Tensor:
    window = None if (window_left, window_right) == (-1, -1) else (window_left, window_right)
    return _attention_impl(q, k, v, mask, causal or None, scale if scale > 0 else None, window,
                           softcap if softcap > 0 else None)


@_attention_op.register_fake
def _(q, k, v, mask, causal, scale, window_left=-1, window_right=-1, softcap=0.0):
    return q.new_empty(q.shape[0], q.shape[1], q.shape[2], v.shape[3])


@torch.library.custom_op("attn_mlir::attention_lse", mutates_args=())
def _attention_lse_op(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                      mask: torch.Tensor | None, causal: str, scale: float, window_left: int = -1,
                      window_right: int = -1,
                      softcap: float = 0.0) -> tuple[torch.Tensor, torch.Tensor]:
    window = None if (window_left, window_right) == (-1, -1) else (window_left, window_right)
    return _attention_impl(q, k, v, mask, causal or None, scale if scale > 0 else None, window,
                           softcap if softcap > 0 else None, lse=True)


@_attention_lse_op.register_fake
def _(q, k, v, mask, causal, scale, window_left=-1, window_right=-1, softcap=0.0):
    return (q.new_empty(q.shape[0], q.shape[1], q.shape[2], v.shape[3]),
            q.new_empty(q.shape[0], q.shape[1], q.shape[2], dtype=torch.float32))


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
                    lse=False):
    traced = trace(score_mod, mask_mod)
    captures = _captures(traced, q)
    kernel = _kernel_for(q, k, v, mask, causal, scale, window, softcap, traced, lse)
    return kernel(q, k, v, mask, captures=captures)


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
              score_mod=None, mask_mod=None, return_lse=False):
    """Scaled dot-product attention through attn-mlir, with the variants of
    SPEC.md section 1.1 (see the module doc). With return_lse=True, returns
    `(out, lse)`: lse the float32 (B, Hq, Tq) log-sum-exp (SPEC.md section
    1.2), as FlexAttention's return_lse."""
    window, softcap = _check_options(causal, scale, window, softcap)
    if not isinstance(return_lse, bool):
        raise TypeError(f"return_lse: expected a bool, got {type(return_lse).__name__} "
                        f"{return_lse!r}")
    _check(q, k, v, mask)
    if score_mod is not None or mask_mod is not None:
        return _attention_mods(q, k, v, mask, causal, scale, window, softcap, score_mod, mask_mod,
                               return_lse)
    name = "top_left" if causal is True else (causal or "")
    left, right = window or (-1, -1)
    op = _attention_lse_op if return_lse else _attention_op
    return op(q, k, v, mask, name, float(scale) if scale else 0.0, left, right, softcap or 0.0)


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
