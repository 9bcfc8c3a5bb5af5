#!/usr/bin/env python3
"""Strided outputs on the GPU: each kernel of DIR (compile_bench_kernels.py)
writes its output into a (B, T, H, D) buffer viewed as (B, H, T, D), and into
rows padded by 16 elements, and must give exactly its dense output, at
T = 1, 17, 100, 129 (the buffers are poisoned with NaN, so a row the kernel
misses shows).

    strided_output_check.py [DIR]      (default .carry/new)
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

KERNELS = ("seed_causal", "seed_mask", "bf16_d128_causal", "f16_d64_full", "bf16_d64_causal")


def main():
    import torch

    from attn_mlir.runtime import Kernel

    directory = sys.argv[1] if len(sys.argv) > 1 else ".carry/new"
    ok = total = 0
    for name in KERNELS:
        kernel = Kernel(os.path.join(directory, name + ".json"))
        seed = name.startswith("seed")
        dt = torch.float32 if seed else (torch.bfloat16 if name.startswith("bf16") else torch.float16)
        d = 128 if (seed or "d128" in name) else 64
        h, b = (96 if seed else 4), 2
        for t in (1, 17, 100, 129):
            q, k, v = (torch.randn(b, h, t, d, device="cuda", dtype=dt) for _ in range(3))
            mask = None
            if name == "seed_mask":
                tril = torch.tril(torch.ones(t, t, device="cuda")).view(1, 1, t, t)
                mask = torch.where(tril == 0, float("-inf"), 0.0).to(dt)
            dense = kernel(q, k, v, mask)
            outs = {"(B, T, H, D)": torch.full((b, t, h, d), float("nan"), device="cuda",
                                               dtype=dt).transpose(1, 2),
                    "padded rows": torch.full((b, h, t, d + 16), float("nan"), device="cuda",
                                              dtype=dt)[..., :d]}
            for kind, out in outs.items():
                kernel(q, k, v, mask, out=out)
                torch.cuda.synchronize()
                same = torch.equal(out, dense)
                total += 1
                ok += same
                if not same:
                    diff = (out.float() - dense.float()).abs().max().item()
                    print(f"{name} T={t} {kind}: differs from the dense output (max |diff| {diff})")
    print(f"strided-out: {ok} of {total} outputs equal to the dense output")
    return 0 if ok == total else 1


if __name__ == "__main__":
    sys.exit(main())
