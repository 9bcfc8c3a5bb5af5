"""Calls a seed_mask kernel a few times on the seed's inputs, for a profiler.

    ncu -k regex:mask_map --launch-skip 2 --launch-count 3 \
        --metrics gpu__time_duration.sum python3 bench/mask_map_ncu.py DIR T

DIR holds seed_mask.json and its PTX (bench/compile_bench_kernels.py); T is
the sequence length (B=32, H=96, D=128 fp32 and the seed's additive causal
mask tensor (1, 1, T, T)). Each call launches the classification kernel and
the attention kernel; ncu then times the launches it selects
(bench/results/2026-12-01-h200-mask-prologue.log).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

import torch  # noqa: E402

from attn_mlir.runtime import Kernel  # noqa: E402


def main():
    directory, t = sys.argv[1], int(sys.argv[2])
    kernel = Kernel(os.path.join(directory, "seed_mask.json"))
    q, k, v = (torch.randn(32, 96, t, 128, device="cuda") for _ in range(3))
    tril = torch.tril(torch.ones(t, t, device="cuda")).view(1, 1, t, t)
    mask = torch.where(tril == 0, float("-inf"), 0.0)
    out = torch.empty_like(q)
    for _ in range(6):
        kernel(q, k, v, mask, out=out)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
