#!/usr/bin/env python3
"""First timing of attn-mlir kernels against PyTorch SDPA on the same GPU.

    quick_perf.py KERNEL_DIR [--seed-dir DIR_WITH_seed_triton_attn.py]

Times (CUDA events, warm-up, median of 20) bf16 head dim 64/128, causal and
not, with 16k tokens per batch and hidden 2048 (the FlashAttention papers'
setting), against SDPA's flash and cuDNN backends; and the seed workload
(fp32, B32 H96 T512 D128, additive causal mask) against the seed's Triton
kernel when its path is given. Checks each result against SDPA first.
"""

import argparse
import os
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
from attn_mlir.runtime import Kernel  # noqa: E402


def bench(fn, reps=20, warmup=5):
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


def rel(a, b):
    return ((a.float() - b.float()).norm() / b.float().norm()).item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--seed-dir", default=None)
    ap.add_argument("--seqlens", default="512,1024,2048,4096,8192,16384")
    args = ap.parse_args()
    rows = []
    for d in (64, 128):
        h = 2048 // d
        for causal in (False, True):
            name = f"bf16_d{d}_{'top_left' if causal else 'none'}"
            kernel = Kernel(os.path.join(args.dir, name + ".json"))
            variants = {f"attn-mlir[{v}]": Kernel(os.path.join(args.dir, f"{name}_{v}.json"))
                        for v in ("m64", "m128", "s1")
                        if os.path.exists(os.path.join(args.dir, f"{name}_{v}.json"))}
            for t in map(int, args.seqlens.split(",")):
                b = 16384 // t
                q, k, v = (torch.randn(b, h, t, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
                flops = 4 * b * h * t * t * d / (2 if causal else 1)
                out = kernel(q, k, v)
                ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                err = rel(out, ref)
                ours = bench(lambda: kernel(q, k, v, out=out))
                res = {"attn-mlir": ours}
                for label, variant in variants.items():
                    res[label] = bench(lambda: variant(q, k, v, out=out))
                for label, backend in (("sdpa-flash", SDPBackend.FLASH_ATTENTION),
                                       ("sdpa-cudnn", SDPBackend.CUDNN_ATTENTION)):
                    try:
                        with sdpa_kernel(backend):
                            res[label] = bench(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal))
                    except Exception:
                        res[label] = float("nan")
                rows.append((f"bf16 d{d} {'causal' if causal else 'full'} T{t}", err, flops, res))
    # The seed workload.
    b, h, d = 32, 96, 128
    for t in (128, 256, 512):
        q, k, v = (torch.randn(b, h, t, d, device="cuda", dtype=torch.float32) for _ in range(3))
        mask = torch.full((t, t), float("-inf"), device="cuda").triu(1)[None, None]
        flops = 4 * b * h * t * t * d
        km = Kernel(os.path.join(args.dir, "seed_mask.json"))
        kc = Kernel(os.path.join(args.dir, "seed_causal.json"))
        out = km(q, k, v, mask)
        ref = F.scaled_dot_product_attention(q.double(), k.double(), v.double(), attn_mask=mask.double())
        err = rel(out, ref)
        err2 = rel(kc(q, k, v), ref)
        res = {"attn-mlir(mask)": bench(lambda: km(q, k, v, mask, out=out)),
               "attn-mlir(causal)": bench(lambda: kc(q, k, v, out=out))}
        for name in ("seed_mask_s1", "seed_causal_s1"):
            path = os.path.join(args.dir, name + ".json")
            if os.path.exists(path):
                kv = Kernel(path)
                args_ = (q, k, v, mask) if "mask" in name else (q, k, v)
                res[f"attn-mlir[{name}]"] = bench(lambda: kv(*args_, out=out))
        if args.seed_dir:
            sys.path.insert(0, args.seed_dir)
            try:
                import seed_triton_attn as seed  # noqa: E402
                res["seed-triton"] = bench(
                    lambda: seed.flash_attn_forward(q, k, v, mask, DOTPROD_PRECISION="tf32"))
            except Exception as e:  # the seed's API may differ
                print("seed kernel:", type(e).__name__, e)
        rows.append((f"seed f32 mask T{t} (err causal {err2:.1e})", err, flops, res))
    print("| workload | rel err | implementation ms (TFLOP/s) ... |")
    for name, err, flops, res in rows:
        cells = " | ".join(f"{k} {v:.3f} ({flops / v / 1e9:.0f})" for k, v in res.items())
        print(f"| {name} | {err:.1e} | {cells} |")


if __name__ == "__main__":
    main()
