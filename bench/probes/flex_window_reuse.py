"""Causal windows of 256, 1024 and 4096 keys (bf16 D128, 16k tokens per
batch, T = 4k and 16k): our kernel, FlexAttention through one torch.compile'd
flex_attention called for every window in turn (as attn_bench.py's variants
workload did), and Flex freshly compiled per window, each against a float64
reference of batch 0, heads 0-1; and attn_bench.variant_reference against
that reference.

    python3 bench/probes/flex_window_reuse.py .carry/bk   # compile_bench_kernels.py's folder
"""
import math, os, sys
import torch
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
from attn_mlir.runtime import Kernel
from torch.nn.attention.flex_attention import create_block_mask, flex_attention
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import attn_bench
attn_bench.import_torch()
variant_reference = attn_bench.variant_reference

kernels = sys.argv[1]
torch._dynamo.config.recompile_limit = 1 << 16
torch._dynamo.config.accumulated_recompile_limit = 1 << 16


def ref64(q, k, v, left, heads=2):
    t, d = q.shape[2], q.shape[3]
    i = torch.arange(t, device="cuda")[:, None]
    j = torch.arange(t, device="cuda")[None, :]
    keep = (i >= j) & (i - j <= left)
    outs = []
    for h in range(heads):
        s = (q[0, h].double() @ k[0, h].double().T) / math.sqrt(d)
        s = s.masked_fill(~keep, float("-inf"))
        outs.append(torch.softmax(s, -1) @ v[0, h].double())
    return torch.stack(outs)


def err(out, ref):
    o = out[0, :ref.shape[0]].double()
    return ((o - ref).norm() / ref.norm()).item()


def inputs(t):
    b, h, d = max(1, 16384 // t), 16, 128
    g = torch.Generator(device="cuda").manual_seed(t)
    return [torch.randn(b, h, t, d, device="cuda", dtype=torch.bfloat16, generator=g)
            for _ in range(3)]


def mask_mod(left):
    return lambda bb, hh, qi, kv, left=left: (qi >= kv) & (qi - kv <= left)


points = [(t, left) for t in (4096, 16384) for left in (256, 1024, 4096)]
errs = {}
flex = torch.compile(flex_attention, dynamic=False)  # one compiled function, as the bench
for t, left in points:
    q, k, v = inputs(t)
    bm = create_block_mask(mask_mod(left), q.shape[0], None, t, t, device="cuda")
    errs[t, left] = [flex(q, k, v, block_mask=bm)]
for t, left in points:
    q, k, v = inputs(t)
    bm = create_block_mask(mask_mod(left), q.shape[0], None, t, t, device="cuda")
    torch._dynamo.reset()
    fresh = torch.compile(flex_attention, dynamic=False)(q, k, v, block_mask=bm)
    kern = Kernel(os.path.join(kernels, f"bf16_d128_window{left}.json"))
    out = torch.empty_like(q)
    kern(q, k, v, out=out)
    ref = ref64(q, k, v, left)
    shared = errs[t, left][0]
    vr = variant_reference(q, k, v, None, mask_mod(left))
    errs[t, left] = [err(out, ref), err(shared, ref), err(fresh, ref),
                     ((vr - ref).norm() / ref.norm()).item()]
    del ref, shared
    torch.cuda.empty_cache()
print("| T | window | ours | flex (one compiled fn) | flex (fresh compile) | variant_reference |")
print("|---|---|---|---|---|---|")
for (t, left), e in errs.items():
    print(f"| {t} | {left} | " + " | ".join(f"{x:.1e}" for x in e) + " |")
