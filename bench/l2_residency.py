#!/usr/bin/env python3
"""How much of the seed kernels' time is HBM traffic of Q, O, K and V.

    l2_residency.py --kernels DIR

Times DIR/seed_causal.json and DIR/seed_mask.json (fp32, B=32, H=96,
D=128; T = 512, 256, 128) with some operands viewed with stride 0 over
batch and head (`x[:1, :1].expand(B, H, T, D)`): every program then reads
(or writes) one (T, D) slab, which stays in L2, while the work and the
launch stay the same. Variants: base; Q from L2; O to L2 (the writes of
all programs land on one slab: a timing, not a result); Q and O; all of
Q, K, V and O. The difference to base bounds what hiding that traffic
(e.g. persistent programs prefetching the next program's Q) can gain.
Median of 30 CUDA-event timings after attn_mlir.explain.warm_up.
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--kernels", required=True)
    args = ap.parse_args()

    import torch
    from attn_mlir.explain import time_kernel
    from attn_mlir.runtime import Kernel

    kernels = {"causal": Kernel(os.path.join(args.kernels, "seed_causal.json")),
               "mask": Kernel(os.path.join(args.kernels, "seed_mask.json"))}
    b, h, d = 32, 96, 128
    names = ("base", "q_l2", "o_l2", "qo_l2", "all_l2")
    print("| form | T | " + " | ".join(f"{n} ms" for n in names) + " | all_l2 / base |")
    print("|" + " --- |" * (len(names) + 3))
    for t in (512, 256, 128):
        q, k, v = (torch.randn(b, h, t, d, device="cuda") for _ in range(3))
        out = torch.empty_like(q)
        tril = torch.tril(torch.ones(t, t, device="cuda")).view(1, 1, t, t)
        mask = torch.where(tril == 0, float("-inf"), 0.0)
        ref = torch.nn.functional.scaled_dot_product_attention(q[:1], k[:1], v[:1], is_causal=True)
        slab = lambda x: x[:1, :1].expand(b, h, t, d)  # noqa: E731
        qs, ks, vs, os_ = slab(q), slab(k), slab(v), slab(out)
        variants = {"base": (q, k, v, out), "q_l2": (qs, k, v, out), "o_l2": (q, k, v, os_),
                    "qo_l2": (qs, k, v, os_), "all_l2": (qs, ks, vs, os_)}
        for form, kernel in kernels.items():
            m = mask if form == "mask" else None
            kernel(q, k, v, m, out=out)
            torch.cuda.synchronize()
            err = (out[:1] - ref).abs().max().item()
            if err > 2e-2:
                raise SystemExit(f"{form} T={t}: max_abs {err} against SDPA")
            ms = {}
            for name, (qq, kk, vv, oo) in variants.items():
                ms[name] = time_kernel(lambda: kernel(qq, kk, vv, m, out=oo))
            print(f"| {form} | {t} | " + " | ".join(f"{ms[n]:.4f}" for n in names) +
                  f" | {ms['all_l2'] / ms['base']:.3f} |", flush=True)
        del q, k, v, out


if __name__ == "__main__":
    main()
