#!/usr/bin/env python3
"""A tuned Triton FlashAttention-2 forward for the seed workload: the best
hand-written Triton we could write for it, as a second anchor next to the
seed's own kernel (which computes every key block of every row and reads
the mask tensor in each).

fp32 inputs, tf32 dots (Triton 3.6 emits Hopper's wgmma for them on
sm_90a), online softmax in exp2 with the scale folded in, and two forms:

- `causal=True`: the key loop stops at the diagonal (no block above it is
  computed) and the diagonal blocks are masked by index;
- `mask=M` (a (T, T) additive float mask, as the seed passes it): every key
  block is computed and the mask is read in each, as the seed does (a
  kernel cannot skip blocks of a mask tensor without reading it).

Autotuned over block sizes, warps and stages (keyed on T and the form); on
the H200 (2026-12-01) the winners were 128x32, 8 warps, 3 stages (causal,
T >= 256), 64x32x4x2 (causal, T=128) and 128x64x8x2 (mask). Used by
bench/attn_bench.py; run alone it checks itself against SDPA and times the
seed workload:

    python3 bench/triton_tuned_attn.py
"""

import math

import torch
import triton
import triton.language as tl

LOG2E = 1.4426950408889634

CONFIGS = [
    triton.Config({"BM": bm, "BN": bn}, num_warps=w, num_stages=s)
    for bm, bn, w, s in ((64, 32, 4, 2), (64, 64, 4, 2), (128, 32, 8, 3), (128, 64, 8, 2),
                         (128, 32, 8, 2), (64, 32, 4, 3))
]


@triton.autotune(configs=CONFIGS, key=["T", "CAUSAL", "MASK"])
@triton.jit
def _forward(Q, K, V, M, O, stride_h, stride_t, stride_mask, T, qk_scale, D: tl.constexpr,
             BM: tl.constexpr, BN: tl.constexpr, CAUSAL: tl.constexpr, MASK: tl.constexpr):
    start_m = tl.program_id(0)
    base = tl.program_id(1).to(tl.int64) * stride_h  # (B * H) flattened, dense
    rows = start_m * BM + tl.arange(0, BM)
    cols = tl.arange(0, BN)
    dims = tl.arange(0, D)
    q = tl.load(Q + base + rows[:, None] * stride_t + dims[None, :], mask=rows[:, None] < T,
                other=0.0)
    m_i = tl.full([BM], float("-inf"), tl.float32)
    l_i = tl.zeros([BM], tl.float32)
    acc = tl.zeros([BM, D], tl.float32)
    hi = tl.minimum((start_m + 1) * BM, T) if CAUSAL else T
    for start_n in range(0, hi, BN):
        keys = start_n + cols
        k = tl.load(K + base + keys[None, :] * stride_t + dims[:, None], mask=keys[None, :] < T,
                    other=0.0)
        s = tl.dot(q, k, input_precision="tf32") * qk_scale
        if MASK:
            s += tl.load(M + rows[:, None] * stride_mask + keys[None, :],
                         mask=(rows[:, None] < T) & (keys[None, :] < T),
                         other=float("-inf")) * 1.4426950408889634  # log2(e)
        else:
            s = tl.where(keys[None, :] < T, s, float("-inf"))
        if CAUSAL:
            s = tl.where(keys[None, :] <= rows[:, None], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)  # fully masked rows
        p = tl.math.exp2(s - m_safe[:, None])
        alpha = tl.math.exp2(m_i - m_safe)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(V + base + keys[:, None] * stride_t + dims[None, :], mask=keys[:, None] < T,
                    other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p, v, input_precision="tf32")
        m_i = m_new
    acc = acc / tl.where(l_i == 0.0, 1.0, l_i)[:, None]  # fully masked rows: 0
    tl.store(O + base + rows[:, None] * stride_t + dims[None, :], acc, mask=rows[:, None] < T)


def attention(q, k, v, mask=None, causal=False):
    """softmax(q k^T / sqrt(D) + mask) v for dense (B, H, T, D) fp32 CUDA
    tensors; `mask` a (T, T) (or (1, 1, T, T)) additive float mask."""
    b, h, t, d = q.shape
    for x in (q, k, v):
        if not x.is_contiguous() or x.shape != q.shape:
            raise ValueError("q, k, v: dense tensors of one (B, H, T, D) shape")
    if mask is not None:
        mask = mask.reshape(t, t)
        if mask.stride(1) != 1:
            raise ValueError("mask: the last dimension must be contiguous")
    out = torch.empty_like(q)
    grid = lambda meta: (triton.cdiv(t, meta["BM"]), b * h)  # noqa: E731
    _forward[grid](q, k, v, q if mask is None else mask, out, t * d, d,
                   0 if mask is None else mask.stride(0), t, LOG2E / math.sqrt(d), D=d,
                   CAUSAL=causal, MASK=mask is not None)
    return out


def best_config():
    """The autotuner's choice for the last shape it ran, as a string."""
    c = _forward.best_config
    return f"{c.kwargs['BM']}x{c.kwargs['BN']}x{c.num_warps}x{c.num_stages}" if c else "-"


def main():
    torch.backends.cuda.matmul.allow_tf32 = True
    import torch.nn.functional as F

    # Correctness first: odd sizes, fully masked rows (mask), against float64.
    for t in (1, 17, 129, 300):
        q, k, v = (torch.randn(2, 3, t, 128, device="cuda") for _ in range(3))
        tril = torch.tril(torch.ones(t, t, device="cuda"))
        mask = torch.where(tril == 0, float("-inf"), 0.0)
        mask[t // 2] = float("-inf")
        ref_c = F.scaled_dot_product_attention(q.double(), k.double(), v.double(), is_causal=True)
        ref_m = F.scaled_dot_product_attention(q.double(), k.double(), v.double(),
                                               attn_mask=mask.double()).nan_to_num(0.0)
        for name, out, ref in (("causal", attention(q, k, v, causal=True), ref_c),
                               ("mask", attention(q, k, v, mask=mask), ref_m)):
            err = (out.double() - ref).abs().max().item()
            print(f"check T={t} {name}: max_abs={err:.2e} {'PASS' if err < 2e-2 else 'FAIL'}")
    b, h, d = 32, 96, 128
    for t in (128, 256, 512):
        q, k, v = (torch.randn(b, h, t, d, device="cuda") for _ in range(3))
        tril = torch.tril(torch.ones(t, t, device="cuda"))
        mask = torch.where(tril == 0, float("-inf"), 0.0)
        for name, fn in (("causal", lambda: attention(q, k, v, causal=True)),
                         ("mask", lambda: attention(q, k, v, mask=mask))):
            ms = triton.testing.do_bench(fn, warmup=100, rep=300, return_mode="median")
            print(f"B{b} H{h} T{t} D{d} {name}: {ms:.3f} ms ({best_config()})")


if __name__ == "__main__":
    main()
