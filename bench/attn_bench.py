#!/usr/bin/env python3
"""attn-mlir against the anchors, in one run on one GPU.

    attn_bench.py --kernels DIR --seed-dir PATH [--out DIR] [--quick]

DIR holds the kernels of compile_bench_kernels.py (PTX + manifests, made on
a machine with MLIR); PATH is the folder holding the seed's
seed_triton_attn.py (read from there, never copied into the project).

Workloads:
- seed: fp32, B=32, H=96, D=128, T in {128, 256, 512}, the additive causal
  mask tensor exactly as the seed passes it: attn-mlir with the mask tensor
  and with `causal`, the seed's Triton kernel (tf32), manual PyTorch (tf32
  matmuls, softmax), SDPA with the mask tensor and with is_causal;
- modern: fp16 and bf16, head dim 64 and 128, causal and not, 16k tokens
  per batch with hidden 2048 (B = 16384 / T, H = 2048 / D), T from 512 to
  16384: attn-mlir against SDPA's flash, cuDNN and efficient backends.

Timing: CUDA events around each call, 10 warm-up calls, the median of 30;
every input set is larger than the 60 MB L2 except the seed at T=128
(0.4 GB: larger too). Each provider's output is compared first: with a float64
reference on the seed workload, with SDPA's default backend on the modern
one (the float64 matrix check is bench/gpu_check.py).
Writes bench.json and bench.md under --out and prints the table last.
"""

import argparse
import json
import math
import os
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
from attn_mlir.runtime import Kernel  # noqa: E402

ROWS = []


def bench(fn, reps=30, warmup=10):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    return sorted(times)[len(times) // 2]


def rel_err(out, ref):
    out, ref = out.double(), ref.double()
    if not torch.isfinite(out).all():
        return float("nan")
    return ((out - ref).norm() / ref.norm()).item()


def record(workload, shape, provider, fn, ref, flops):
    try:
        out = fn()
        torch.cuda.synchronize()
        err = rel_err(out, ref)
        ms = bench(fn)
        row = dict(workload=workload, shape=shape, provider=provider, ms=ms,
                   tflops=flops / ms / 1e9, rel_err=err)
    except Exception as e:  # a provider that cannot run this shape
        row = dict(workload=workload, shape=shape, provider=provider, ms=None, tflops=None,
                   rel_err=None, note=f"{type(e).__name__}: {str(e)[:80]}")
    ROWS.append(row)
    ms = f"{row['ms']:.3f}" if row["ms"] else "-"
    print(f"{workload} | {shape} | {provider} | {ms} ms | "
          f"{row['tflops'] or 0:.0f} TFLOP/s | err {row['rel_err'] if row['rel_err'] is not None else '-'}",
          flush=True)


def seed_workload(kernels, seed_dir, seqlens):
    sys.path.insert(0, seed_dir)
    import seed_triton_attn as seed  # noqa: E402

    torch.backends.cuda.matmul.allow_tf32 = True
    km = Kernel(os.path.join(kernels, "seed_mask.json"))
    kc = Kernel(os.path.join(kernels, "seed_causal.json"))
    b, h, d = 32, 96, 128
    for t in seqlens:
        shape = f"B{b} H{h} T{t} D{d} fp32"
        q, k, v = (torch.randn(b, h, t, d, device="cuda") for _ in range(3))
        tril = torch.tril(torch.ones(t, t)).view(1, 1, t, t)
        mask = torch.where(tril == 0, float("-inf"), 0.0).cuda()
        ref = F.scaled_dot_product_attention(q.double(), k.double(), v.double(), attn_mask=mask.double())
        flops = 4 * b * h * t * t * d  # as the seed counts it (no causal halving)
        out = torch.empty_like(q)
        record("seed", shape, "attn-mlir (mask tensor)", lambda: km(q, k, v, mask, out=out), ref, flops)
        record("seed", shape, "attn-mlir (causal)", lambda: kc(q, k, v, out=out), ref, flops)
        record("seed", shape, "seed triton (tf32)",
               lambda: seed.flash_attn_forward(q, k, v, mask, DOTPROD_PRECISION="tf32"), ref, flops)

        def manual():
            s = (q @ k.transpose(-1, -2)) / math.sqrt(d) + mask
            return torch.softmax(s, dim=-1) @ v

        record("seed", shape, "torch manual (tf32)", manual, ref, flops)
        record("seed", shape, "sdpa (mask tensor)",
               lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=mask), ref, flops)
        record("seed", shape, "sdpa (is_causal)",
               lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True), ref, flops)
        del q, k, v, out


def modern_workload(kernels, seqlens):
    for dtype_name, dtype in (("f16", torch.float16), ("bf16", torch.bfloat16)):
        for d in (64, 128):
            h = 2048 // d
            for causal in (False, True):
                name = f"{dtype_name}_d{d}_{'causal' if causal else 'full'}"
                kernel = Kernel(os.path.join(kernels, name + ".json"))
                for t in seqlens:
                    b = 16384 // t
                    shape = f"{dtype_name} D{d} {'causal' if causal else 'full'} T{t} (B{b} H{h})"
                    q, k, v = (torch.randn(b, h, t, d, device="cuda", dtype=dtype) for _ in range(3))
                    # Reference: SDPA's own choice of backend (a float64 one would not
                    # fit at 16k tokens); accuracy in float64 is gpu_check.py's job.
                    ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                    flops = 4 * b * h * t * t * d / (2 if causal else 1)
                    out = torch.empty_like(q)
                    record("modern", shape, "attn-mlir", lambda: kernel(q, k, v, out=out), ref, flops)
                    for label, backend in (("sdpa flash (FA2)", SDPBackend.FLASH_ATTENTION),
                                           ("sdpa cudnn", SDPBackend.CUDNN_ATTENTION),
                                           ("sdpa efficient", SDPBackend.EFFICIENT_ATTENTION)):
                        def run(backend=backend):
                            with sdpa_kernel(backend):
                                return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                        record("modern", shape, label, run, ref, flops)
                    del q, k, v, out, ref


def markdown(rows):
    lines = ["| workload | shape | provider | ms | TFLOP/s | rel err |", "|---|---|---|---|---|---|"]
    for r in rows:
        ms = f"{r['ms']:.3f}" if r["ms"] else r.get("note", "-")
        tf = f"{r['tflops']:.0f}" if r["tflops"] else "-"
        err = f"{r['rel_err']:.1e}" if r["rel_err"] is not None else "-"
        lines.append(f"| {r['workload']} | {r['shape']} | {r['provider']} | {ms} | {tf} | {err} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--kernels", required=True)
    ap.add_argument("--seed-dir", required=True)
    ap.add_argument("--out", default=".")
    ap.add_argument("--quick", action="store_true", help="fewer sequence lengths")
    args = ap.parse_args()
    seed_workload(args.kernels, args.seed_dir, (128, 256, 512))
    modern_workload(args.kernels, (1024, 4096, 16384) if args.quick
                    else (512, 1024, 2048, 4096, 8192, 16384))
    device = torch.cuda.get_device_name()
    with open(os.path.join(args.out, "bench.json"), "w") as f:
        json.dump(dict(device=device, torch=torch.__version__, rows=ROWS), f, indent=1)
    table = markdown(ROWS)
    with open(os.path.join(args.out, "bench.md"), "w") as f:
        f.write(f"# attn-mlir vs anchors on {device} (torch {torch.__version__})\n\n{table}\n")
    print(table)


if __name__ == "__main__":
    main()
