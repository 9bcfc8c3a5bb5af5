#!/usr/bin/env python3
"""How much of a per-call CUDA-event time is the host's launch, on the GPU.

    timing_methods.py --kernels DIR --seed-dir DIR [--seqlens 128,256,512]

attn_bench.py times one call between two CUDA events and waits after each
call, so the interval also holds whatever the host does between recording
the start event and the launch reaching the GPU (Python, the provider's
launcher). This script times the seed workload's providers (attn-mlir with
the mask tensor and with `causal`, the seed's Triton kernel) three ways in
one run:

- `call`: attn_bench.py's method (events around one call, synchronize);
- `queued`: the same, with a GPU sleep enqueued before the start event, so
  the host's launch work overlaps the sleep and the interval holds only the
  GPU's work (the GPU is busy when the events are recorded);
- `batch`: events around 10 calls issued back to back, divided by 10.

and attn-mlir `causal` once more on uniform [-1, 1) data (attn-run's
inputs) against torch.randn (the seed's), to separate data from method.
Prints a table of medians (ms) and the seed / ours ratios per method.
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
    ap.add_argument("--seed-dir", required=True)
    ap.add_argument("--seqlens", default="128,256,512")
    ap.add_argument("--reps", type=int, default=30)
    args = ap.parse_args()

    import torch
    from attn_mlir.runtime import Kernel
    sys.path.insert(0, args.seed_dir)
    import seed_triton_attn as seed

    torch.backends.cuda.matmul.allow_tf32 = True
    km = Kernel(os.path.join(args.kernels, "seed_mask.json"))
    kc = Kernel(os.path.join(args.kernels, "seed_causal.json"))

    def event():
        return torch.cuda.Event(enable_timing=True)

    def median(xs):
        return sorted(xs)[len(xs) // 2]

    def timed(fn, sleep, calls, reps):
        """Median ms per call of `reps` event-timed runs of `calls` calls,
        each after an optional GPU sleep (about 1 ms ahead of the host)."""
        times = []
        for _ in range(reps):
            if sleep:
                torch.cuda._sleep(2_000_000)
            s, e = event(), event()
            s.record()
            for _ in range(calls):
                fn()
            e.record()
            e.synchronize()
            times.append(s.elapsed_time(e) / calls)
        return median(times)

    def call(fn):
        return timed(fn, sleep=False, calls=1, reps=args.reps)

    def queued(fn):
        return timed(fn, sleep=True, calls=1, reps=args.reps)

    def batch(fn):
        return timed(fn, sleep=True, calls=10, reps=max(args.reps // 3, 5))

    methods = (("call", call), ("queued", queued), ("batch", batch))
    b, h, d = 32, 96, 128
    rows = []
    for t in (int(x) for x in args.seqlens.split(",")):
        q, k, v = (torch.randn(b, h, t, d, device="cuda") for _ in range(3))
        tril = torch.tril(torch.ones(t, t)).view(1, 1, t, t)
        mask = torch.where(tril == 0, float("-inf"), 0.0).cuda()
        out = torch.empty_like(q)
        providers = (
            ("ours mask", lambda: km(q, k, v, mask, out=out)),
            ("ours causal", lambda: kc(q, k, v, out=out)),
            ("seed triton", lambda: seed.flash_attn_forward(q, k, v, mask,
                                                            DOTPROD_PRECISION="tf32")),
        )
        times = {}
        for name, fn in providers:
            for _ in range(5):
                fn()
            torch.cuda.synchronize()
            for m, timer in methods:
                times[name, m] = timer(fn)
        uq, uk, uv = (torch.rand(b, h, t, d, device="cuda") * 2 - 1 for _ in range(3))
        times["ours causal uniform", "batch"] = batch(lambda: kc(uq, uk, uv, out=out))
        del uq, uk, uv
        for (name, m), ms in sorted(times.items()):
            rows.append((t, name, m, ms))
            print(f"T={t} {name:20s} {m:7s} {ms:.4f} ms", flush=True)
        for m, _ in methods:
            s = times["seed triton", m]
            print(f"T={t} ratio {m:7s} seed/mask {s / times['ours mask', m]:.2f}x "
                  f"seed/causal {s / times['ours causal', m]:.2f}x", flush=True)
        del q, k, v, out, mask
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
