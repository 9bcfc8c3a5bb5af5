#!/usr/bin/env python3
"""Host cost per launch of a kernel that takes tensor maps (K and V by TMA
tensor copies, the 16-bit default on sm_90a) against the same kernel without
them (--tensor-copies=none), through attn_mlir.runtime, on the GPU.

    tensor_map_overhead.py --a DIR --b DIR [--kernel bf16_d128_causal]
                           [--t 512] [--heads 16] [--calls 2000]

DIR_A and DIR_B are two outputs of compile_bench_kernels.py (A: compiled with
--translate-arg=--tensor-copies=none, B: the default). A launch whose K and
V are tensors it has not seen costs B a cuTensorMapEncodeTiled and a 128-byte
upload per map (runtime.Kernel._fill_tensor_maps); one it has seen costs a
dictionary lookup. Two modes, each timed as `--calls` launches back to back
(no synchronization in between; the host time per call is the loop's wall
time over the calls, and the device time per call the CUDA-event time over
them):

  same   the same q, k, v and output every call (an inference loop);
  fresh  K and V at a new address every call: views at successive offsets
         of one large buffer, so that no map is found in the cache (a
         training step's new activations, at worst).

A small problem (B=1, T=--t, bf16, head dim of the kernel) keeps the device
time short, so the host's share shows. Prints one table.
"""

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", required=True, help="kernels without tensor maps")
    ap.add_argument("--b", required=True, help="kernels with tensor maps")
    ap.add_argument("--kernel", default="bf16_d128_causal")
    ap.add_argument("--t", type=int, default=512)
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--calls", type=int, default=2000)
    args = ap.parse_args()

    import torch
    from attn_mlir.runtime import Kernel

    elt, d = args.kernel.split("_")[0], int(args.kernel.split("_")[1][1:])
    dtype = {"f16": torch.float16, "bf16": torch.bfloat16}[elt]
    shape = (1, args.heads, args.t, d)
    n = args.heads * args.t * d
    q = torch.randn(shape, device="cuda", dtype=dtype)
    out = torch.empty_like(q)
    # One buffer that K and V are views of, at a new 256-byte offset each call.
    step = 128  # elements: 256 bytes
    pool = torch.randn(n + step * (args.calls + 1), device="cuda", dtype=dtype)
    kernels = {side: Kernel(os.path.join(path, args.kernel + ".json"))
               for side, path in (("A", args.a), ("B", args.b))}

    def views(i):
        k = pool[i * step:i * step + n].view(shape)
        v = pool[(i + 1) * step:(i + 1) * step + n].view(shape)
        return k, v

    rows = []
    for mode in ("same", "fresh"):
        for side, kernel in kernels.items():
            k0, v0 = views(0)
            ref = kernel(q, k0, v0, out=torch.empty_like(q))
            for _ in range(50):  # warm-up, and the maps of offset 0 cached
                kernel(q, k0, v0, out=out)
            torch.cuda.synchronize()
            assert torch.equal(out, ref)
            pre = [views(i) if mode == "fresh" else (k0, v0) for i in range(1, args.calls + 1)]
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize()
            start.record()
            t0 = time.perf_counter()
            for k, v in pre:
                kernel(q, k, v, out=out)
            host = time.perf_counter() - t0
            stop.record()
            torch.cuda.synchronize()
            device = start.elapsed_time(stop) / 1e3
            rows.append((mode, side, host / args.calls * 1e6, device / args.calls * 1e6))
    print(f"| mode | side | host us/call | device us/call |  ({args.kernel}, B=1 H={args.heads} "
          f"T={args.t}, {args.calls} calls)")
    print("| --- | --- | --- | --- |")
    for mode, side, host, device in rows:
        print(f"| {mode} | {side} | {host:.1f} | {device:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
