#!/usr/bin/env python3
"""What sustained load does to the GPU's clock, and so to a kernel's time.

    power_cap.py --kernels DIR [--attn-run PATH] [--launches N]

Runs the seed's `causal` kernel (DIR/seed_causal.json: fp32, B=32, H=96,
T=512, D=128) N times back to back from an idle GPU, each launch between
its own CUDA events, while `nvidia-smi` samples the SM clock, the power
draw and the active clock-event reasons every 50 ms. Prints the median
time per 100 launches, the samples, and attn-run's --bench median for 20,
100 and 400 timed launches (with --attn-run). On the H200 (2026-12-01) the
clock drops from 1980 MHz to 1590-1830 MHz within about 200 ms, at the 700 W
cap (reason 0x4, software power cap): the first ~25 launches run about 8%
faster than every later one, which is why attn-run and attn_bench.py warm
up for 250 ms before timing.
"""

import argparse
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--kernels", required=True)
    ap.add_argument("--attn-run", default=None)
    ap.add_argument("--launches", type=int, default=1500)
    args = ap.parse_args()

    import torch
    from attn_mlir.runtime import Kernel

    manifest = os.path.join(args.kernels, "seed_causal.json")
    kernel = Kernel(manifest)
    b, h, t, d = 32, 96, 512, 128
    q, k, v = (torch.randn(b, h, t, d, device="cuda") for _ in range(3))
    out = torch.empty_like(q)
    kernel(q, k, v, out=out)
    torch.cuda.synchronize()
    time.sleep(3)  # idle: back to the boost clock
    monitor = subprocess.Popen(
        ["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw,clocks_event_reasons.active",
         "--format=csv,noheader", "-lms", "50"], stdout=subprocess.PIPE, text=True)
    time.sleep(0.5)
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(args.launches)]
    start = time.time()
    for s, e in events:
        s.record()
        kernel(q, k, v, out=out)
        e.record()
    torch.cuda.synchronize()
    wall = time.time() - start
    time.sleep(0.3)
    monitor.terminate()
    samples = monitor.communicate()[0].strip().splitlines()
    times = [s.elapsed_time(e) for s, e in events]
    print(f"{args.launches} launches of seed_causal (B{b} H{h} T{t} D{d}) in {wall:.2f} s")
    print(f"launches 0-19: median {sorted(times[:20])[10]:.3f} ms")
    elapsed = 0.0
    for i in range(0, args.launches, 100):
        window = sorted(times[i:i + 100])
        print(f"launches {i:4d}-{i + len(window) - 1:4d}: median {window[len(window) // 2]:.3f} ms "
              f"(from {elapsed:5.0f} ms)")
        elapsed += sum(times[i:i + 100])
    print("nvidia-smi every 200 ms (timestamp, SM clock, power, clock-event reasons):")
    for line in samples[::4]:
        print("  " + line)
    if args.attn_run:
        for iters in (20, 100, 400):
            run = subprocess.run([args.attn_run, manifest] + [f"--input={b}x{h}x{t}x{d}xf32"] * 3 +
                                 ["--bench", f"--iters={iters}"], capture_output=True, text=True)
            line = [x for x in run.stdout.splitlines() if x.startswith("bench:")]
            print(f"attn-run --iters={iters}: {line[0] if line else run.stderr.strip()[-200:]}")


if __name__ == "__main__":
    main()
