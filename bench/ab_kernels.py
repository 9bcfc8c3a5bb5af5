#!/usr/bin/env python3
"""Same-run A/B of two builds of the benchmark kernels, on the GPU.

    ab_kernels.py --attn-run PATH --a DIR --b DIR [--masks DIR] [--reps 2]
                  [--kernels NAME,...] [--seq 512,2048,16384]

DIR_A and DIR_B are two outputs of compile_bench_kernels.py (the compiler
before and after a change). Each (kernel, T) point runs `attn-run --bench`
on both, interleaved A B A B ..., so that clock and thermal drift hit both
alike; the table gives each side's best median and B's time over A's.
16-bit kernels run 16k tokens per batch with hidden 2048 (B = 16384 / T,
H = 2048 / D); the seed kernels run B=32, H=96, D=128, and `seed_mask`
reads the causal mask tensor `causal<T>.npy` from --masks (made by
`bash bench/mask_cost.sh prepare`, T=512 only).
"""

import argparse
import os
import re
import subprocess
import sys

SIXTEEN = [f"{e}_d{d}_{c}" for e in ("bf16", "f16") for d in (64, 128)
           for c in ("full", "causal")]


def inputs(name, t, masks):
    if name.startswith("seed"):
        shape = f"32x96x{t}x128xf32"
        extra = []
        if name == "seed_mask":
            path = os.path.join(masks or "", f"causal{t}.npy")
            if t == 512 and masks and not os.path.exists(path):
                path = os.path.join(masks, "causal.npy")
            if not os.path.exists(path):
                return None
            extra = [f"--input=@{path}"]
        return [f"--input={shape}"] * 3 + extra
    elt, d = name.split("_")[0], int(name.split("_")[1][1:])
    shape = f"{16384 // t}x{2048 // d}x{t}x{d}x{elt}"
    return [f"--input={shape}"] * 3


def bench(runner, manifest, args, iters):
    out = subprocess.run([runner, manifest, *args, "--bench",
                          f"--iters={iters}"], capture_output=True, text=True)
    m = re.search(r"median_ms=([0-9.]+)", out.stdout)
    if out.returncode != 0 or not m:
        line = (out.stderr or out.stdout).strip().splitlines()
        print(f"  {manifest}: failed: {line[-1] if line else out.returncode}",
              file=sys.stderr)
        return None
    return float(m.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--attn-run", required=True)
    ap.add_argument("--a", required=True)
    ap.add_argument("--b", required=True)
    ap.add_argument("--masks")
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--kernels", default=",".join(SIXTEEN +
                                                  ["seed_causal", "seed_mask"]))
    ap.add_argument("--seq", default="512,2048,16384")
    ap.add_argument("--seed-seq", default="128,256,512")
    args = ap.parse_args()

    rows = []
    for name in args.kernels.split(","):
        seqs = args.seed_seq if name.startswith("seed") else args.seq
        for t in (int(s) for s in seqs.split(",")):
            ins = inputs(name, t, args.masks)
            if ins is None:
                continue
            best = {"a": None, "b": None}
            for _ in range(args.reps):
                for side in ("a", "b"):
                    manifest = os.path.join(getattr(args, side), name + ".json")
                    ms = bench(args.attn_run, manifest, ins, args.iters)
                    if ms is not None and (best[side] is None or ms < best[side]):
                        best[side] = ms
            rows.append((name, t, best["a"], best["b"]))
            a, b = best["a"], best["b"]
            ratio = f"{b / a:.3f}" if a and b else "-"
            print(f"{name} T={t}: a={a} b={b} b/a={ratio}", flush=True)

    print("\n| kernel | T | A ms | B ms | B / A |\n| --- | --- | --- | --- | --- |")
    for name, t, a, b in rows:
        ratio = f"{b / a:.3f}" if a and b else "-"
        print(f"| {name} | {t} | {a} | {b} | {ratio} |")


if __name__ == "__main__":
    main()
