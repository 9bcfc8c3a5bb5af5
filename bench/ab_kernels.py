#!/usr/bin/env python3
"""Same-run A/B of two builds of the benchmark kernels, on the GPU.

    ab_kernels.py --a DIR --b DIR [--kernels NAME,...] [--seq 512,2048,16384]
                  [--seed-seq 128,256,512] [--rounds 60]

DIR_A and DIR_B are two outputs of compile_bench_kernels.py (the compiler
before and after a change). Each (kernel, T) point runs both kernels in one
process through attn_mlir.runtime on the same torch.randn inputs: first a
check that B's output matches A's, then a warm-up of both, round-robin, for
at least 250 ms (the clocks a sustained workload runs at), then `--rounds`
rounds of one CUDA-event-timed call of each, alternating which goes first.
Under the H200's power cap the SM clock swings by up to 15% with a period
near a second (bench/results/2026-12-01-h200-power-cap.log): timing A and
B call by call lets both meet the same swings, where timing one after the
other (separate attn-run processes, as this script did before) measured
the swing as often as the change. The table gives each side's median and
B's median over A's, and the median of the per-round ratios B / A.

16-bit kernels run 16k tokens per batch with hidden 2048 (B = 16384 / T,
H = 2048 / D); the seed kernels run B=32, H=96, D=128 in fp32, and
`seed_mask` (or any kernel whose manifest takes a mask) gets the additive
causal mask tensor (1, 1, T, T), as the seed passes it. A side whose
manifest takes no mask runs without it, so B may be a `causal` kernel
standing in for A's mask kernel (same output).
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

SIXTEEN = [f"{e}_d{d}_{c}" for e in ("bf16", "f16") for d in (64, 128)
           for c in ("full", "causal")]


def problem(torch, name, t):
    """(q, k, v, mask) of kernel `name` at T = t."""
    if name.startswith("seed"):
        b, h, d, dtype = 32, 96, 128, torch.float32
    else:
        elt, d = name.split("_")[0], int(name.split("_")[1][1:])
        b, h = 16384 // t, 2048 // d
        dtype = {"f16": torch.float16, "bf16": torch.bfloat16}[elt]
    q, k, v = (torch.randn(b, h, t, d, device="cuda", dtype=dtype) for _ in range(3))
    tril = torch.tril(torch.ones(t, t, device="cuda")).view(1, 1, t, t)
    mask = torch.where(tril == 0, float("-inf"), 0.0).to(dtype)
    return q, k, v, mask


def interleaved_times(torch, calls, rounds):
    """CUDA-event times (ms) of each of `calls` (a dict), `rounds` each, one
    call at a time, in the dict's order in even rounds and reversed in odd
    ones (for two calls: alternating which goes first)."""
    order = list(calls)
    times = {side: [] for side in calls}
    for r in range(rounds):
        for side in (order if r % 2 == 0 else order[::-1]):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            calls[side]()
            e.record()
            e.synchronize()
            times[side].append(s.elapsed_time(e))
    return times


def timed_pair(torch, calls, rounds):
    """Warms up both `calls` (a dict of two) together, times them with
    interleaved_times, and returns each side's median (ms) and the median of
    the per-round ratios second / first."""
    from attn_mlir.explain import warm_up

    first, second = calls
    warm_up(lambda: (calls[first](), calls[second]()))
    times = interleaved_times(torch, calls, rounds)
    med = {side: sorted(ts)[len(ts) // 2] for side, ts in times.items()}
    ratios = sorted(b / a for a, b in zip(times[first], times[second]))
    return med, ratios[len(ratios) // 2]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--a", required=True)
    ap.add_argument("--b", required=True)
    ap.add_argument("--rounds", type=int, default=60)
    ap.add_argument("--kernels", default=",".join(SIXTEEN + ["seed_causal", "seed_mask"]))
    ap.add_argument("--seq", default="512,2048,16384")
    ap.add_argument("--seed-seq", default="128,256,512")
    ap.add_argument("--no-check", action="store_true",
                    help="B is a timing probe whose output is not the answer "
                         "(e.g. its stores predicated off): report, do not stop")
    args = ap.parse_args()

    import torch

    from attn_mlir.runtime import Kernel

    rows = []
    for name in args.kernels.split(","):
        paths = {side: os.path.join(getattr(args, side), name + ".json") for side in ("a", "b")}
        if not all(os.path.exists(p) for p in paths.values()):
            print(f"{name}: not in both directories, skipped", flush=True)
            continue
        kernels = {side: Kernel(p) for side, p in paths.items()}
        takes_mask = {}
        for side, p in paths.items():
            with open(p) as f:
                takes_mask[side] = json.load(f).get("mask") is not None
        seqs = args.seed_seq if name.startswith("seed") else args.seq
        for t in (int(s) for s in seqs.split(",")):
            q, k, v, mask = problem(torch, name, t)
            masks = {side: mask if takes_mask[side] else None for side in ("a", "b")}
            outs = {side: torch.empty_like(q) for side in ("a", "b")}
            calls = {side: (lambda s=side: kernels[s](q, k, v, masks[s], out=outs[s]))
                     for side in outs}
            calls["a"](), calls["b"]()
            torch.cuda.synchronize()
            diff = (outs["a"].float() - outs["b"].float()).abs().max().item()
            if not diff <= 2e-2 and not args.no_check:
                raise SystemExit(f"{name} T={t}: A and B differ by {diff} (max abs)")

            med, ratio = timed_pair(torch, calls, args.rounds)
            rows.append((name, t, med["a"], med["b"], ratio, diff))
            print(f"{name} T={t}: a={med['a']:.4f} b={med['b']:.4f} b/a={med['b'] / med['a']:.3f} "
                  f"(per round {ratio:.3f}), max |a-b| {diff:.1e}", flush=True)
            del q, k, v, mask, outs

    print("\n| kernel | T | A ms | B ms | B / A | B / A per round | max abs diff |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, t, a, b, r, diff in rows:
        print(f"| {name} | {t} | {a:.4f} | {b:.4f} | {b / a:.3f} | {r:.3f} | {diff:.1e} |")


if __name__ == "__main__":
    main()
