#!/usr/bin/env python3
"""Where the host time of a launch on new K/V addresses goes (a tensor map
kernel, attn_mlir.runtime), on the GPU machine:

    tensor_map_breakdown.py [KERNEL.json]

KERNEL.json: a bf16 kernel at head dim 128 with tensor maps (default
.carry/bk-tc/bf16_d128_causal.json, compile_bench_kernels.py's); the problem
is B=1, H=16, T=512.

Times, per call over 2000 calls: encoding one map (cuTensorMapEncodeTiled
through ctypes, at a new address each time), copying 128 bytes to the
device (cuMemcpyHtoDAsync), allocating 128 bytes (torch.empty), and a
whole launch whose maps are cached. Prints one line.
"""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import torch  # noqa: E402
from attn_mlir import runtime  # noqa: E402
from attn_mlir.runtime import Kernel  # noqa: E402

k = Kernel(sys.argv[1] if len(sys.argv) > 1 else ".carry/bk-tc/bf16_d128_causal.json")
shape = (1, 16, 512, 128)
q = torch.randn(shape, device="cuda", dtype=torch.bfloat16)
kk = torch.randn(shape, device="cuda", dtype=torch.bfloat16)
out = torch.empty_like(q)
k(q, kk, kk, out=out)
torch.cuda.synchronize()
plan = next(iter(k._plans.values()))
template = plan.tensor_maps[0][2]
N = 2000
e = template._replace(global_address=template.global_address + kk.data_ptr())
t0 = time.perf_counter()
for i in range(N):
    runtime.encode_tensor_map(e._replace(global_address=e.global_address + 256 * i))
t_enc = (time.perf_counter() - t0) / N * 1e6
data = runtime.encode_tensor_map(e)
buf = torch.empty(128 * N, dtype=torch.uint8, device="cuda")
stream = runtime._current_stream(torch, q.device)
t0 = time.perf_counter()
for i in range(N):
    runtime._copy_to_device(buf.data_ptr() + 128 * i, data, stream)
t_copy = (time.perf_counter() - t0) / N * 1e6
torch.cuda.synchronize()
t0 = time.perf_counter()
keep = [torch.empty(128, dtype=torch.uint8, device="cuda") for _ in range(N)]
t_alloc = (time.perf_counter() - t0) / N * 1e6
t0 = time.perf_counter()
for i in range(N):
    k(q, kk, kk, out=out)
torch.cuda.synchronize()
t_launch = (time.perf_counter() - t0) / N * 1e6
print(f"encode {t_enc:.1f} us, copy {t_copy:.1f} us, alloc {t_alloc:.1f} us, cached launch {t_launch:.1f} us")
