#!/usr/bin/env python3
# A problem past 2^31 elements per tensor (Q and O: 16 x 32 x 32800 x 128 f16 = 2.15e9), through
# attn_mlir.runtime, checked on sampled rows (the last batches among them) against float64.
# On the GPU machine: python3 bench/huge_tensor_check.py KERNEL.json, the kernel compiled from
#   func.func @huge(q: ?x32x?x128xf16, k, v: ?x8x?x128xf16) with causal = bottom_right
# (bench/results/2026-12-02-h200-huge-tensor.log has its source and the result).
import math, os, sys, torch
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from attn_mlir.runtime import Kernel
B, HQ, HKV, T, D = 16, 32, 8, 32800, 128
k_ = Kernel(sys.argv[1] if len(sys.argv) > 1 else ".carry/big/huge.json")
g = torch.Generator(device="cuda").manual_seed(0)
q = torch.randn(B, HQ, T, D, device="cuda", dtype=torch.float16, generator=g)
k = torch.randn(B, HKV, T, D, device="cuda", dtype=torch.float16, generator=g)
v = torch.randn(B, HKV, T, D, device="cuda", dtype=torch.float16, generator=g)
out = torch.empty_like(q)
print("elements per Q/O:", q.numel(), "> 2^31:", q.numel() > 2**31, flush=True)
k_(q, k, v, out=out); torch.cuda.synchronize()
ev = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
ev[0].record(); k_(q, k, v, out=out); ev[1].record(); torch.cuda.synchronize()
print(f"time {ev[0].elapsed_time(ev[1]):.2f} ms", flush=True)
rows = [(B - 1, HQ - 1, T - 1), (B - 1, HQ - 1, 0), (B - 1, 0, T // 2), (B // 2, 7, 12345)]
gen = torch.Generator().manual_seed(1)
rows += [tuple(int(torch.randint(0, n, (1,), generator=gen)) for n in (B, HQ, T)) for _ in range(60)]
worst = 0.0
for b, h, t in rows:
    kh = h // (HQ // HKV)
    s = (k[b, kh, : t + 1].double() @ q[b, h, t].double()) / math.sqrt(D)
    p = torch.softmax(s, 0)
    ref = p @ v[b, kh, : t + 1].double()
    err = ((out[b, h, t].double() - ref).norm() / ref.norm()).item()
    worst = max(worst, err)
print(f"rows checked {len(rows)}, worst rel_l2 {worst:.2e}, tol 2e-03:", "PASS" if worst < 2e-3 else "FAIL")
sys.exit(0 if worst < 2e-3 else 1)
