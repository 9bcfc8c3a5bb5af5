#!/usr/bin/env python3
"""Same-run A/B of two versions of the Python runtime (attn_mlir.runtime)
on the same kernels, on the GPU.

    runtime_ab.py --old DIR --kernels DIR [--seed-seq 128,256,512] [--rounds 40]

--old: a folder holding an older copy of the package as `attn_mlir_old`
(e.g. `git archive OLD python/attn_mlir | tar -x -C /tmp` and then
`cp -r /tmp/python/attn_mlir .carry/oldpkg/attn_mlir_old`; its imports are
relative). --kernels: the output of compile_bench_kernels.py (its seed_mask
and seed_causal kernels are run by both versions).

Prints two tables: the host time of one call (the best of 7 runs of 300
calls on a tiny problem, whose kernels take less GPU time than a call
takes to launch, so the loop measures the host), with `out` given and
without; and the CUDA-event time of single calls on the seed workload,
each after a synchronize, as bench/attn_bench.py times its providers, where
the host time before and between the launches counts: the GPU is idle
until the first launch arrives. Both versions' outputs must be equal.
"""

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)


def host_us(torch, fn, n=300, reps=7):
    best = float("inf")
    for _ in range(reps):
        torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - t) / n * 1e6)
    torch.cuda.synchronize()
    return best


def event_us(torch, calls, rounds):
    """The median CUDA-event time (us) of a single call of each of `calls`,
    interleaved (ab_kernels.interleaved_times), after a common warm-up."""
    from ab_kernels import interleaved_times
    from attn_mlir.explain import warm_up

    warm_up(lambda: [c() for c in calls.values()])
    times = interleaved_times(torch, calls, rounds)
    return {name: sorted(ts)[len(ts) // 2] * 1000 for name, ts in times.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--old", required=True)
    ap.add_argument("--kernels", required=True)
    ap.add_argument("--seed-seq", default="128,256,512")
    ap.add_argument("--rounds", type=int, default=40)
    args = ap.parse_args()
    sys.path.insert(0, args.old)

    import torch
    from ab_kernels import problem
    from attn_mlir.runtime import Kernel as New
    from attn_mlir_old.runtime import Kernel as Old

    kernels = {(side, form): cls(os.path.join(args.kernels, f"seed_{form}.json"))
               for side, cls in (("old", Old), ("new", New)) for form in ("mask", "causal")}

    q, k, v = (torch.randn(1, 96, 16, 128, device="cuda") for _ in range(3))
    mask, out = torch.zeros(1, 1, 16, 16, device="cuda"), torch.empty_like(q)
    print("| runtime | kernel | host us a call (out given) | host us a call (out allocated) |")
    print("| --- | --- | --- | --- |")
    for (side, form), kernel in kernels.items():
        operands = (q, k, v, mask) if form == "mask" else (q, k, v)
        given = host_us(torch, lambda: kernel(*operands, out=out))
        allocated = host_us(torch, lambda: kernel(*operands))
        print(f"| {side} | seed_{form} | {given:.2f} | {allocated:.2f} |")

    print()
    print("| T | mask old us | mask new us | new / old | causal old us | causal new us | new / old |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for t in (int(x) for x in args.seed_seq.split(",")):
        q, k, v, mask = problem(torch, "seed_mask", t)
        out, check = torch.empty_like(q), torch.empty_like(q)
        kernels["old", "mask"](q, k, v, mask, out=out)
        kernels["new", "mask"](q, k, v, mask, out=check)
        if not torch.equal(out, check):
            sys.exit(f"T={t}: the two runtimes' outputs differ")
        r = event_us(torch, {
            "mo": lambda: kernels["old", "mask"](q, k, v, mask, out=out),
            "mn": lambda: kernels["new", "mask"](q, k, v, mask, out=out),
            "co": lambda: kernels["old", "causal"](q, k, v, out=out),
            "cn": lambda: kernels["new", "causal"](q, k, v, out=out)}, args.rounds)
        print(f"| {t} | {r['mo']:.1f} | {r['mn']:.1f} | {r['mn'] / r['mo']:.3f} | {r['co']:.1f} | "
              f"{r['cn']:.1f} | {r['cn'] / r['co']:.3f} |")


if __name__ == "__main__":
    main()
