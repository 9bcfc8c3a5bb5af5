#!/usr/bin/env python3
"""attn-mlir against the anchors, in one run on one GPU: tables, JSON,
plots and the explain report of our kernels.

The whole flow (the GPU machine has PyTorch, Triton and matplotlib but no
LLVM/MLIR, so our kernels are compiled beforehand, here):

  # 1. here, on the machine with the compiler (build/ built):
  bash bench/prepare_gpu_run.sh       # .carry/: kernels, seed kernel, cache, runner-only attn-run
  #    (its core: compile_bench_kernels.py --attn-translate build/bin/attn-translate --out .carry/bk
  #     and the seed's seed_triton_attn.py copied to .carry/anchors: read by path, never committed)
  python3 bench/compile_latency.py     # compile latency: CPU-only, writes bench/results/
  # 2. carry .carry/ (ignored by git, about 3 MB) to the GPU machine and run:
  python3 bench/attn_bench.py --kernels .carry/bk --seed-dir .carry/anchors --out $OUT
  # 3. copy $OUT/* into bench/results/ and commit.

Writes, under --out (default bench/results), with DATE the day and GPU the
device ("h200"):
  DATE-GPU-attn-bench.md     the tables (per figure: implementations x T, in
                             TFLOP/s; then every row: ms, TFLOP/s, error) and
                             the explain report of each attn-mlir kernel at
                             its largest point
  DATE-GPU-attn-bench.json   the rows, the explain reports, device, versions
  DATE-GPU-attn-bench.png    every figure in one grid (the README shows it)
  DATE-GPU-attn-bench-FIG.png  one per figure: f16/bf16 x d64/d128 x
                             full/causal, and seed

Workloads:
- seed: fp32, B=32, H=96, D=128, T in {128, 256, 512}, the additive causal
  mask tensor exactly as the seed passes it: attn-mlir with the mask tensor
  and with `causal`, the seed's Triton kernel (tf32), a tuned Triton kernel
  in both forms (bench/triton_tuned_attn.py: causal by loop bounds, wgmma
  tf32, autotuned), manual PyTorch (tf32 matmuls, softmax), SDPA with the
  mask tensor and with is_causal;
- modern (the FlashAttention papers' sweep): fp16 and bf16, head dim 64
  and 128, causal and not, 16k tokens per batch with hidden 2048
  (B = 16384 / T, H = 2048 / D), T from 512 to 16384: attn-mlir against
  SDPA's flash (FlashAttention-2), cuDNN, efficient and math backends (math
  only where its T x T scores fit in memory).

- decode: steps of 1 and 16 query rows (GQA 32/8, bf16, D128) against KV
  caches of 4k..128k keys, B = 1..128, in TB/s of memory moved: attn-mlir
  against SDPA's flash and cuDNN backends (decode_workload()); the
  single-row GQA-8 steps also over a paged cache (block_table: pages of 16,
  64 and 256 keys in random order, the same keys).
- varlen: packed prefill (cu_seqlens) of 16k tokens in sequences of random
  lengths 128..4096 (bf16, D128, 16 heads, causal): attn-mlir's varlen
  kernel against the same tokens as a padded batch (B = N, T = the longest,
  our kernel and SDPA's flash and cuDNN backends), against a batch of
  equal-length sequences of the same token count (our dense kernel), and
  FlashAttention's flash_attn_varlen_func where installed; TFLOP/s of the
  useful work (each sequence's causal pairs), varlen_workload().
- variants: causal sliding windows of 256, 1024 and 4096 keys, a causal
  softcap of 50, causal ALiBi, prefix-LM (1024) and causal document masks
  (packed documents of 256..4096 tokens), bf16 D128 and f16 D64, T = 4k,
  16k, 32k: attn-mlir against FlexAttention (its first call, the compile,
  timed too), FlashAttention-2 where it has the variant and is installed,
  and our causal kernel, FLOPs over the kept pairs (variants_workload()).
- headdims: bf16 full attention, 16k tokens at T = 4096, 16 heads, head dims
  40, 72, 120 and 200 (padded inside the kernel) each beside the multiple of
  16 above it, useful FLOPs of the operand's own D: attn-mlir against SDPA's
  flash and cuDNN backends (headdims_workload()).

FLOPs as FlashAttention counts them (4*B*H*T*T*D, halved for causal), except
on the seed workload, counted as the seed does (no halving). Timing: the
providers of one shape interleaved (measure(): warm-up calls round-robin for
at least 250 ms, the clocks a sustained workload runs at; then 30 rounds of
one call each between CUDA events, each round in an order of its own), the
median of each; every input set is larger than the 60 MB L2. Each provider's output is compared first: with
a float64 reference on the seed workload, with SDPA's default backend on the
modern one (the float64 matrix check is bench/gpu_check.py). A provider that
fails on a shape gets a row with the error instead of a time.
"""

import argparse
import datetime
import json
import math
import os
import platform
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
from attn_mlir import explain as ex  # noqa: E402
from attn_mlir.runtime import Kernel  # noqa: E402
import plots  # noqa: E402  (bench/plots.py)

ROWS = []
ORDER = "shuffled"  # measure(): see --order
EXPLAINS = []
torch = F = SDPBackend = sdpa_kernel = None  # imported by main(): --help needs no torch


def import_torch():
    global torch, F, SDPBackend, sdpa_kernel
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel


def measure(workload, shape, providers, ref, flops, meta, reps=30, warmup=10):
    """Checks each of `providers` ([(name, fn)]) against `ref`, then times
    them interleaved: warm-up calls round-robin (each at least `warmup`
    times, together at least 250 ms: the GPU's sustained clocks, see
    attn_mlir.explain.warm_up), then `reps` rounds of one CUDA-event-timed
    call each, so that every provider meets the same power-cap clock swings
    (the H200's SM clock moves between about 1600 and 1830 MHz with a
    period near a second under a heavy kernel). Each round takes the
    providers in an order of its own (ORDER = "shuffled": a seeded random
    permutation per round), so that each follows each of the others about
    equally often; in one fixed order (ORDER = "fixed") a provider always
    follows the same one, and its time measured that neighbour too (the
    seed's `causal` kernel, right after the light mask kernel, up to 8%
    faster at T=128 than shuffled:
    bench/results/2026-12-01-h200-bench-order.log). A row per provider,
    with the median; `meta` (t, b, h, d, dtype, causal) places it in its
    figure.
    A provider that fails gets a row with the error instead of a time."""
    rows, live = {}, []
    for name, fn in providers:
        try:
            out = fn()
            torch.cuda.synchronize()
            err = rel_err(out, ref)
            del out
            live.append((name, fn))
            rows[name] = dict(workload=workload, shape=shape, provider=name, rel_err=err, **meta)
        except Exception as e:  # a provider that cannot run this shape
            rows[name] = dict(workload=workload, shape=shape, provider=name, ms=None, tflops=None,
                              rel_err=None, note=f"{type(e).__name__}: {str(e)[:80]}", **meta)
            torch.cuda.empty_cache()

    def round_robin():
        for _, fn in live:
            fn()

    ex.warm_up(round_robin, warmup)
    times = {name: [] for name, _ in live}
    shuffler = random.Random(0)
    for _ in range(reps):
        order = list(live)
        if ORDER == "shuffled":
            shuffler.shuffle(order)
        for name, fn in order:
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            fn()
            e.record()
            e.synchronize()
            times[name].append(s.elapsed_time(e))
    for name, ts in times.items():
        ms = sorted(ts)[len(ts) // 2]
        rows[name].update(ms=ms, tflops=flops / ms / 1e9)
    for name, _ in providers:
        row = rows[name]
        ROWS.append(row)
        ms = f"{row['ms']:.3f}" if row["ms"] else "-"
        print(f"{workload} | {shape} | {name} | {ms} ms | {row['tflops'] or 0:.0f} TFLOP/s | "
              f"err {row['rel_err'] if row['rel_err'] is not None else '-'}", flush=True)
    return rows


def bench(fn, reps=30, warmup=10):
    """The median of `reps` CUDA-event timings of fn() alone, in ms, after
    attn_mlir.explain.warm_up (bench/probes/fa2_parity.py uses it)."""
    return ex.time_kernel(fn, reps=reps, warmup=warmup)


def rel_err(out, ref):
    """||out - ref|| / ||ref||; a `ref` of fewer heads (variant_reference)
    is the reference of batch 0's first heads."""
    if ref.dim() == out.dim() - 1:
        out = out[0, :ref.shape[0]]
    out, ref = out.double(), ref.double()
    if not torch.isfinite(out).all():
        return float("nan")
    return ((out - ref).norm() / ref.norm()).item()


def explain_at(name, shape, kernel, row, q, k, v, mask, out):
    """Our explain report of `kernel` at the time `row` measured."""
    entry = dict(kernel=name, shape=shape)
    try:
        if row["ms"] is None:
            raise RuntimeError(f"not timed: {row.get('note')}")
        report = ex.compute(ex.gather(kernel, q, k, v, mask, out, row["ms"]))
        entry.update(lines=report.lines(), report=ex.to_json(report))
        print("\n".join([f"{name} {shape}:"] + report.lines()), flush=True)
    except Exception as e:  # the bench goes on; the md says what failed
        entry.update(error=f"{type(e).__name__}: {e}")
        print(f"explain {name}: {entry['error']}", flush=True)
    EXPLAINS.append(entry)


def seed_workload(kernels, seed_dir, seqlens):
    sys.path.insert(0, seed_dir)
    import seed_triton_attn as seed  # noqa: E402
    import triton_tuned_attn as tuned  # noqa: E402  (bench/)

    torch.backends.cuda.matmul.allow_tf32 = True
    km = Kernel(os.path.join(kernels, "seed_mask.json"))
    kc = Kernel(os.path.join(kernels, "seed_causal.json"))
    b, h, d = 32, 96, 128
    for t in seqlens:
        shape = f"B{b} H{h} T{t} D{d} fp32"
        q, k, v = (torch.randn(b, h, t, d, device="cuda") for _ in range(3))
        tril = torch.tril(torch.ones(t, t)).view(1, 1, t, t)
        mask = torch.where(tril == 0, float("-inf"), 0.0).cuda()
        ref = F.scaled_dot_product_attention(q.double(), k.double(), v.double(), attn_mask=mask.double())
        flops = 4 * b * h * t * t * d  # as the seed counts it (no causal halving)
        out = torch.empty_like(q)
        meta = dict(t=t, b=b, h=h, d=d, dtype="f32", causal=True)
        def manual():
            s = (q @ k.transpose(-1, -2)) / math.sqrt(d) + mask
            return torch.softmax(s, dim=-1) @ v

        providers = [
            ("attn-mlir (mask tensor)", lambda: km(q, k, v, mask, out=out)),
            ("attn-mlir (causal)", lambda: kc(q, k, v, out=out)),
            ("seed triton (tf32)",
             lambda: seed.flash_attn_forward(q, k, v, mask, DOTPROD_PRECISION="tf32")),
            # The best Triton we wrote for this workload (bench/triton_tuned_attn.py).
            ("triton tuned (causal)", lambda: tuned.attention(q, k, v, causal=True)),
            ("triton tuned (mask tensor)", lambda: tuned.attention(q, k, v, mask=mask)),
            ("torch manual (tf32)", manual),
            ("sdpa (mask tensor)", lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=mask)),
            ("sdpa (is_causal)", lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True)),
        ]
        rows = measure("seed", shape, providers, ref, flops, meta)
        for form, kwargs in (("causal", dict(causal=True)), ("mask tensor", dict(mask=mask))):
            tuned.attention(q, k, v, **kwargs)  # the autotuner's choice for this shape
            rows[f"triton tuned ({form})"]["config"] = tuned.best_config()
        if t == seqlens[-1]:
            explain_at("seed_mask", shape, km, rows["attn-mlir (mask tensor)"], q, k, v, mask, out)
            explain_at("seed_causal", shape, kc, rows["attn-mlir (causal)"], q, k, v, None, out)
        del q, k, v, out


def math_fits(b, h, t, dtype):
    """SDPA's math backend materializes the B x H x T x T scores (and the
    probabilities, in float32 for the softmax): run it only where four such
    float32 matrices fit in half the free memory."""
    free, _ = torch.cuda.mem_get_info()
    return 4 * b * h * t * t * 4 < free / 2


def modern_workload(kernels, seqlens):
    for dtype_name, dtype in (("f16", torch.float16), ("bf16", torch.bfloat16)):
        for d in (64, 128):
            h = 2048 // d
            for causal in (False, True):
                name = f"{dtype_name}_d{d}_{'causal' if causal else 'full'}"
                kernel = Kernel(os.path.join(kernels, name + ".json"))
                for t in seqlens:
                    b = 16384 // t
                    shape = f"{dtype_name} D{d} {'causal' if causal else 'full'} T{t} (B{b} H{h})"
                    q, k, v = (torch.randn(b, h, t, d, device="cuda", dtype=dtype) for _ in range(3))
                    # Reference: SDPA's own choice of backend (a float64 one would not
                    # fit at 16k tokens); accuracy in float64 is gpu_check.py's job.
                    ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                    flops = 4 * b * h * t * t * d / (2 if causal else 1)
                    out = torch.empty_like(q)
                    meta = dict(t=t, b=b, h=h, d=d, dtype=dtype_name, causal=causal)
                    providers = [("attn-mlir", lambda: kernel(q, k, v, out=out))]
                    for label, backend in (("sdpa flash (FA2)", SDPBackend.FLASH_ATTENTION),
                                           ("sdpa cudnn", SDPBackend.CUDNN_ATTENTION),
                                           ("sdpa efficient", SDPBackend.EFFICIENT_ATTENTION),
                                           ("sdpa math", SDPBackend.MATH)):
                        if backend == SDPBackend.MATH and not math_fits(b, h, t, dtype):
                            continue

                        def run(backend=backend):
                            with sdpa_kernel(backend):
                                return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                        providers.append((label, run))
                    rows = measure("modern", shape, providers, ref, flops, meta)
                    if t == seqlens[-1]:
                        explain_at(name, shape, kernel, rows["attn-mlir"], q, k, v, None, out)
                    del q, k, v, out, ref
                    torch.cuda.empty_cache()


def headdims_workload(kernels, t=4096):
    """bf16 full attention at 16k tokens for each head dim of
    compile_bench_kernels.HEAD_DIMS: a padded head dim (D not a multiple of
    16) beside the multiple of 16 above it, in useful FLOPs (4 B H T^2 D of
    the operand's own D), and SDPA's backends."""
    from compile_bench_kernels import HEAD_DIMS
    for d in HEAD_DIMS:
        name = f"bf16_d{d}_full"
        kernel = Kernel(os.path.join(kernels, name + ".json"))
        b, h = 16384 // t, 16
        shape = f"bf16 D{d} full T{t} (B{b} H{h})"
        q, k, v = (torch.randn(b, h, t, d, device="cuda", dtype=torch.bfloat16)
                   for _ in range(3))
        ref = F.scaled_dot_product_attention(q, k, v)
        out = torch.empty_like(q)
        providers = [("attn-mlir", lambda: kernel(q, k, v, out=out))]
        for label, backend in (("sdpa flash (FA2)", SDPBackend.FLASH_ATTENTION),
                               ("sdpa cudnn", SDPBackend.CUDNN_ATTENTION)):
            def run(backend=backend):
                with sdpa_kernel(backend):
                    return F.scaled_dot_product_attention(q, k, v)
            providers.append((label, run))
        # No "t": the rows stay out of the modern sweep's figures (plots.py)
        # and go to the table of every row.
        measure("headdims", shape, providers, ref, 4 * b * h * t * t * d,
                dict(seqlen=t, b=b, h=h, d=d, dtype="bf16", causal=False))
        del q, k, v, out, ref
        torch.cuda.empty_cache()


# The variants (SPEC section 1.1) against FlexAttention: causal sliding
# windows of W keys and a causal softcap, as attn_mlir.torch users and Flex
# users write them. (name, window left or None, softcap or None).
PREFIX = 1024  # compile_bench_kernels.py's prefix-LM prefix


def doc_ids(b, t, generator):
    """Packed documents: per batch row, consecutive ids over random lengths
    of 256..4096 tokens (the last one cut at t); (B, T) int32 on the GPU,
    and the pairs a causal document mask keeps."""
    ids, pairs = torch.empty(b, t, dtype=torch.int32), 0
    for row in range(b):
        pos, doc = 0, 0
        while pos < t:
            n = min(int(torch.randint(256, 4097, (1,), generator=generator)), t - pos)
            ids[row, pos:pos + n] = doc
            pairs += n * (n + 1) // 2
            pos, doc = pos + n, doc + 1
    return ids.cuda(), pairs


def causal_pairs(t, left=None):
    """Query-key pairs a causal (top-left) row set keeps: sum over rows i of
    min(i, left) + 1."""
    if left is None or left >= t:
        return t * (t + 1) // 2
    return (left + 1) * (left + 2) // 2 + (t - left - 1) * (left + 1)


def window_visited_pairs(t, left, block_m, block_n):
    """The (row, key) pairs a causal window kernel computes: per query block,
    its rows times the keys of the key blocks its bounds visit
    (docs/Variants.md: start = floor((r0 - L) / bn), end = floor(r1 / bn) + 1)."""
    pairs = 0
    for r0 in range(0, t, block_m):
        r1 = min(r0 + block_m, t) - 1
        start = max(0, (r0 - left) // block_n)
        end = min(-(-t // block_n), r1 // block_n + 1)
        pairs += (r1 - r0 + 1) * (end - start) * block_n
    return pairs


def variants(h, t, b, generator):
    """(name, kernel suffix, Flex score_mod, Flex mask_mod, our captures,
    kept pairs per (batch, head)) for each variant at (h, t, b)."""
    causal = lambda bb, hh, qi, kv: qi >= kv  # noqa: E731
    out = []
    for left in (256, 1024, 4096):
        out.append((f"window {left}", f"window{left}", None,
                    lambda bb, hh, qi, kv, left=left: (qi >= kv) & (qi - kv <= left), (),
                    causal_pairs(t, left)))
    out.append(("softcap 50", "softcap50", lambda s, bb, hh, qi, kv: 50.0 * torch.tanh(s / 50.0),
                causal, (), causal_pairs(t)))
    slopes = torch.exp2(-8.0 * torch.arange(1, h + 1, device="cuda", dtype=torch.float32) / h)
    out.append(("alibi", "alibi", lambda s, bb, hh, qi, kv: s + slopes[hh] * (kv - qi), causal,
                (slopes,), causal_pairs(t)))
    prefix_pairs = min(PREFIX, t) ** 2 + causal_pairs(t) - causal_pairs(min(PREFIX, t))
    out.append(("prefix-lm 1024", "prefixlm", None,
                lambda bb, hh, qi, kv: (kv <= qi) | (kv < PREFIX), (), prefix_pairs))
    doc, pairs = doc_ids(b, t, generator)
    out.append(("document", "document", None,
                lambda bb, hh, qi, kv: (qi >= kv) & (doc[bb, qi] == doc[bb, kv]), (doc,),
                pairs / b))
    return out


def variant_reference(q, k, v, score_mod, mask_mod, heads=2):
    """The float64 attention of batch 0, heads 0 .. heads - 1, with Flex's
    `score_mod` and `mask_mod` evaluated on broadcast index grids: the
    variants' reference, independent of every provider (a Flex kernel
    compiled for one mask_mod has been seen to serve another)."""
    t, d = q.shape[2], q.shape[3]
    qi = torch.arange(t, device=q.device)[:, None]
    kv = torch.arange(t, device=q.device)[None, :]
    bb = torch.zeros((), dtype=torch.int64, device=q.device)
    outs = []
    for h in range(heads):
        hh = torch.full((), h, dtype=torch.int64, device=q.device)
        s = (q[0, h].double() @ k[0, h].double().T) / math.sqrt(d)
        if score_mod:
            s = score_mod(s, bb, hh, qi, kv).double()
        s = s.masked_fill(~mask_mod(bb, hh, qi, kv), float("-inf"))
        outs.append(torch.softmax(s, -1).nan_to_num() @ v[0, h].double())
        del s
    return torch.stack(outs)


def variants_workload(kernels, seqlens):
    """Each variant of variants() at bf16 D128 and f16 D64, 16k tokens per
    batch (B = 16384 / T, or 1), against FlexAttention (torch.compile'd
    flex_attention with its BlockMask, built outside the timing; its first
    call, the compile, timed as well), FlashAttention-2's window_size and
    softcap where the flash_attn package is installed, and our own causal
    kernel at the same shape. FLOPs count the kept pairs only
    (4 * B * H * D * pairs), for every provider, so the causal kernel's
    TFLOP/s is the ceiling a window's should approach. The reference of the
    error column is variant_reference's float64 attention of two heads."""
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    try:
        from flash_attn import flash_attn_func
    except ImportError:
        flash_attn_func = None
    # Every variant and shape is a compile of its own (a new mask_mod is a
    # new guard): lift dynamo's recompile limit, past which it runs Flex
    # eagerly (T x T scores).
    torch._dynamo.config.recompile_limit = 1 << 16
    torch._dynamo.config.accumulated_recompile_limit = 1 << 16
    flex = torch.compile(flex_attention, dynamic=False)
    generator = torch.Generator().manual_seed(0)
    for dtype_name, dtype, d in (("bf16", torch.bfloat16, 128), ("f16", torch.float16, 64)):
        h = 2048 // d
        causal_kernel = Kernel(os.path.join(kernels, f"{dtype_name}_d{d}_causal.json"))
        for t in seqlens:
            b = max(1, 16384 // t)
            for variant, suffix, score_mod, mask_mod, captures, pairs in variants(h, t, b,
                                                                                  generator):
                kernel = Kernel(os.path.join(kernels, f"{dtype_name}_d{d}_{suffix}.json"))
                shape = f"{dtype_name} D{d} {variant} T{t} (B{b} H{h})"
                q, k, v = (torch.randn(b, h, t, d, device="cuda", dtype=dtype) for _ in range(3))
                block_mask = create_block_mask(mask_mod, b, None, t, t, device="cuda")
                # A fresh compile per point: dynamo does not guard a
                # mask_mod's default arguments, so one compiled Flex served
                # every window with the first window's mask_mod
                # (bench/results/2026-12-05-h200-flex-window-reuse.md).
                torch._dynamo.reset()
                torch.cuda.synchronize()
                t0 = datetime.datetime.now()
                ref = flex(q, k, v, score_mod=score_mod, block_mask=block_mask)
                torch.cuda.synchronize()
                first_call_s = (datetime.datetime.now() - t0).total_seconds()
                del ref
                ref = variant_reference(q, k, v, score_mod, mask_mod)
                flops = 4 * b * h * d * pairs
                out = torch.empty_like(q)
                meta = dict(t=t, b=b, h=h, d=d, dtype=dtype_name, causal=True, variant=variant,
                            flex_first_call_s=first_call_s)
                providers = [
                    ("attn-mlir", lambda: kernel(q, k, v, out=out, captures=captures)),
                    ("attn-mlir (causal)", lambda: causal_kernel(q, k, v, out=out)),
                    ("flex attention",
                     lambda: flex(q, k, v, score_mod=score_mod, block_mask=block_mask)),
                ]
                kind = variant.split()[0]
                fa2 = (dict(window_size=(int(variant.split()[-1]), 0)) if kind == "window"
                       else dict(softcap=50.0) if kind == "softcap" else None)
                if flash_attn_func and fa2:
                    qt, kt, vt = (x.transpose(1, 2) for x in (q, k, v))
                    providers.append(("flash-attn 2", lambda: flash_attn_func(
                        qt, kt, vt, causal=True, **fa2).transpose(1, 2)))
                rows = measure("variants", shape, providers, ref, flops, meta)
                # A window's time over the pairs its blocks compute, against
                # the causal kernel's over its own (the 10% bar).
                row = rows["attn-mlir"]
                if variant.startswith("window") and row.get("ms"):
                    config = kernel.manifest.config
                    visited = window_visited_pairs(t, int(variant.split()[-1]),
                                                   config["block_m"], config["block_n"])
                    ROWS.append(dict(row, provider="attn-mlir (visited pairs)", rel_err=None,
                                     tflops=4 * b * h * d * visited / row["ms"] / 1e9))
                    causal_row = rows["attn-mlir (causal)"]
                    config = causal_kernel.manifest.config
                    visited = window_visited_pairs(t, t, config["block_m"], config["block_n"])
                    if causal_row.get("ms"):
                        ROWS.append(dict(causal_row, provider="attn-mlir (causal, visited pairs)",
                                         tflops=4 * b * h * d * visited / causal_row["ms"] / 1e9))
                # The causal kernel's time over the causal pairs, its own ceiling.
                row = rows["attn-mlir (causal)"]
                if row.get("ms"):
                    row["tflops"] = 4 * b * h * d * causal_pairs(t) / row["ms"] / 1e9
                    row["rel_err"] = None
                print(f"variants | {shape} | flex first call {first_call_s:.1f} s", flush=True)
                del q, k, v, out, ref, block_mask
                torch.cuda.empty_cache()


# Decode steps (issue shapes): Tq new rows of 32 query heads against a
# cache of Tk keys of Hkv KV heads (GQA ratios 1, 4 and 8), bf16, head dim
# 128. (B, Tq, Tk, Hkv).
DECODE_SHAPES = ((1, 1, 4096, 8), (1, 1, 32768, 8), (1, 1, 131072, 8), (8, 1, 8192, 8),
                 (16, 1, 16384, 8), (32, 1, 4096, 8), (128, 1, 4096, 8), (256, 1, 1024, 8),
                 (1, 1, 32768, 32), (32, 1, 4096, 32), (1, 1, 32768, 4), (32, 1, 4096, 4),
                 (4, 16, 16384, 8))


# The page sizes of the paged decode rows (compile_bench_kernels.PAGES).
PAGED_DECODE_PAGES = (16, 64, 256)


def decode_kernel_name(tq, hkv):
    """compile_bench_kernels.py's name of the decode kernel."""
    return f"decode_q{tq}" + ("" if hkv == 8 else f"_kv{hkv}")


def paged_pools(k, v, page, gen):
    """(B, H, Tk, D) keys and values as pools of pages (NP, H, page, D),
    NP = B * P + 3, in one random order, and the int32 (B, P) block table
    that reads them back in order."""
    b, h, tk, d = k.shape
    pages = tk // page
    order = torch.randperm(b * pages + 3, generator=gen)[:b * pages].cuda()
    pools = []
    for x in (k, v):
        pool = x.new_zeros(b * pages + 3, h, page, d)
        pool[order] = x.reshape(b, h, pages, page, d).transpose(1, 2).reshape(
            b * pages, h, page, d)
        pools.append(pool)
    return pools[0], pools[1], order.reshape(b, pages).to(torch.int32)


def decode_workload(kernels, baseline=None):
    """Each DECODE_SHAPES point against SDPA's flash and cuDNN backends
    (GQA through enable_gqa) and FlashAttention's flash_attn_with_kvcache
    where installed, and the same kernel from the `baseline` folder (another
    compiler's build) where given. The figure of merit is memory moved per
    call (Q, K, V and O bytes) over time, against the copy ceiling: a decode
    step reads its cache once."""
    try:
        from flash_attn import flash_attn_with_kvcache
    except ImportError:
        flash_attn_with_kvcache = None
    hq, d = 32, 128
    for b, tq, tk, hkv in DECODE_SHAPES:
        name = decode_kernel_name(tq, hkv)
        kernel = Kernel(os.path.join(kernels, name + ".json"))
        shape = f"decode B{b} Tq{tq} Tk{tk} (Hq{hq} Hkv{hkv} D{d} bf16)"
        q = torch.randn(b, hq, tq, d, device="cuda", dtype=torch.bfloat16)
        k, v = (torch.randn(b, hkv, tk, d, device="cuda", dtype=torch.bfloat16) for _ in range(2))
        ref = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
        flops = 4 * b * hq * tq * tk * d
        moved = 2 * (2 * q.numel() + k.numel() + v.numel())
        out = torch.empty_like(q)
        meta = dict(b=b, h=hq, d=d, dtype="bf16", causal=False, tq=tq, tk=tk, bytes=moved)
        providers = [("attn-mlir", lambda: kernel(q, k, v, out=out))]
        if baseline:
            base = Kernel(os.path.join(baseline, name + ".json"))
            providers.append(("attn-mlir (baseline)", lambda: base(q, k, v, out=out)))
        for label, backend in (("sdpa flash (FA2)", SDPBackend.FLASH_ATTENTION),
                               ("sdpa cudnn", SDPBackend.CUDNN_ATTENTION)):
            def run(backend=backend):
                with sdpa_kernel(backend):
                    return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
            providers.append((label, run))
        if flash_attn_with_kvcache:
            qt, kt, vt = (x.transpose(1, 2) for x in (q, k, v))
            providers.append(("flash-attn kvcache", lambda: flash_attn_with_kvcache(
                qt, kt, vt).transpose(1, 2)))
        # The same keys in a paged cache (block_table), pages in random
        # order: pages of 16, 64 and 256 keys against the contiguous kernel
        # (the single-row GQA-8 shapes, whose kernels compile_bench_kernels.py
        # has); FlashAttention's paged kvcache takes pages of 256.
        if tq == 1 and hkv == 8:
            gen = torch.Generator().manual_seed(b * tk)
            for page in PAGED_DECODE_PAGES:
                kp, vp, table = paged_pools(k, v, page, gen)
                paged = Kernel(os.path.join(kernels, f"decode_q1_paged{page}.json"))
                providers.append((f"attn-mlir paged {page}",
                                  lambda paged=paged, kp=kp, vp=vp, table=table:
                                  paged(q, kp, vp, out=out, block_table=table)))
                if flash_attn_with_kvcache and page == 256:
                    kpt, vpt = kp.transpose(1, 2), vp.transpose(1, 2)
                    providers.append(("flash-attn kvcache paged 256",
                                      lambda kpt=kpt, vpt=vpt, table=table: flash_attn_with_kvcache(
                                          qt, kpt, vpt, block_table=table).transpose(1, 2)))
        rows = measure("decode", shape, providers, ref, flops, meta)
        for row in rows.values():
            if row.get("ms"):
                row["tb_s"] = moved / row["ms"] / 1e9
        del q, k, v, out, ref
        torch.cuda.empty_cache()


# Packed prefill: (seed, total tokens); lengths uniform in 128 .. 4096, the
# last sequence the remainder (at least 128).
VARLEN_POINTS = ((1, 16384), (2, 16384), (3, 32768))


def varlen_lengths(seed, total, low=128, high=4096):
    rng = random.Random(seed)
    lengths = []
    while total - sum(lengths) > high + low:
        lengths.append(rng.randint(low, high))
    rest = total - sum(lengths)
    return lengths + ([rest // 2, rest - rest // 2] if rest > high else [rest])


def varlen_workload(kernels):
    """Packed variable-length prefill: the useful FLOPs (4 * H * D * the
    causal pairs of each sequence, L (L + 1) / 2) over each provider's time.
    Providers: the varlen kernel on the packed tokens; the same tokens as a
    padded batch (B = N sequences, T = the longest; our dense causal kernel
    and SDPA's flash and cuDNN backends, which compute the padding too);
    a batch of equal lengths with the same token count and mean length
    (our dense kernel: the figure the issue compares the packed kernel
    with, packed >= 0.95x); flash_attn_varlen_func where installed."""
    try:
        from flash_attn import flash_attn_varlen_func
    except ImportError:
        flash_attn_varlen_func = None
    h, d = 16, 128
    varlen = Kernel(os.path.join(kernels, "varlen_bf16_d128_causal.json"))
    dense = Kernel(os.path.join(kernels, "bf16_d128_causal.json"))
    for seed, total in VARLEN_POINTS:
        lengths = varlen_lengths(seed, total)
        n, longest = len(lengths), max(lengths)
        offsets = [0]
        for length in lengths:
            offsets.append(offsets[-1] + length)
        cu = torch.tensor(offsets, dtype=torch.int32, device="cuda")
        # (total, H, D) storage, FlashAttention's layout, viewed as (1, H, total, D).
        q, k, v = (torch.randn(total, h, d, device="cuda", dtype=torch.bfloat16)
                   for _ in range(3))
        qv, kv, vv = (x.unsqueeze(0).transpose(1, 2) for x in (q, k, v))
        out = torch.empty_like(q)
        outv = out.unsqueeze(0).transpose(1, 2)
        # The padded batch: each sequence's tokens at the start of its row.
        pad = [torch.zeros(n, h, longest, d, device="cuda", dtype=torch.bfloat16)
               for _ in range(3)]
        for s, (a, b) in enumerate(zip(offsets, offsets[1:])):
            for p, x in zip(pad, (q, k, v)):
                p[s, :, :b - a] = x[a:b].transpose(0, 1)
        pq, pk, pv = pad
        pout = torch.empty_like(pq)
        # Equal lengths, the same tokens: T the mean length, B = total / T.
        t_eq = total // n
        eq = [torch.randn(n, h, t_eq, d, device="cuda", dtype=torch.bfloat16) for _ in range(3)]
        eout = torch.empty_like(eq[0])
        pairs = sum(length * (length + 1) // 2 for length in lengths)
        flops = 4 * h * d * pairs
        shape = (f"varlen {total} tokens, {n} seqs {min(lengths)}..{longest} "
                 f"(H{h} D{d} bf16 causal)")
        # The reference: each sequence through SDPA's default backend.
        ref = torch.empty_like(q)
        for a, b in zip(offsets, offsets[1:]):
            x = [t[a:b].transpose(0, 1)[None] for t in (q, k, v)]
            ref[a:b] = F.scaled_dot_product_attention(*x, is_causal=True)[0].transpose(0, 1)

        def unpad(padded):
            res = torch.empty_like(q)
            for s, (a, b) in enumerate(zip(offsets, offsets[1:])):
                res[a:b] = padded[s, :, :b - a].transpose(0, 1)
            return res

        providers = [("attn-mlir varlen", lambda: (varlen(qv, kv, vv, out=outv, cu_seqlens_q=cu,
                                                          cu_seqlens_k=cu), out)[1])]
        # Padded rows are computed and thrown away (their outputs are
        # unpadded for the check only, outside the timed call).
        padded_calls = [("attn-mlir padded", lambda: dense(pq, pk, pv, out=pout))]
        for label, backend in (("sdpa flash padded", SDPBackend.FLASH_ATTENTION),
                               ("sdpa cudnn padded", SDPBackend.CUDNN_ATTENTION)):
            def run(backend=backend):
                with sdpa_kernel(backend):
                    return F.scaled_dot_product_attention(pq, pk, pv, is_causal=True)
            padded_calls.append((label, run))
        for label, fn in padded_calls:
            providers.append((label, _Checked(fn, unpad)))
        if flash_attn_varlen_func:
            providers.append(("flash-attn varlen", lambda: flash_attn_varlen_func(
                q, k, v, cu, cu, longest, longest, causal=True)))
        # No "t": the rows stay out of the modern figures (plots.figures).
        meta = dict(b=n, h=h, d=d, dtype="bf16", causal=True, tokens=total, lengths=lengths)
        measure("varlen", shape, providers, ref, flops, meta)
        # A batch of equal lengths, the same tokens: its own useful FLOPs.
        eq_flops = 4 * h * d * n * t_eq * (t_eq + 1) // 2
        eq_ref = F.scaled_dot_product_attention(*eq, is_causal=True)
        measure("varlen", f"equal lengths {n} x {t_eq} (H{h} D{d} bf16 causal)",
                [("attn-mlir equal lengths", lambda: dense(*eq, out=eout))], eq_ref, eq_flops,
                dict(meta, equal=True))
        del q, k, v, pad, pq, pk, pv, pout, eq, eout, out, ref, eq_ref
        torch.cuda.empty_cache()


class _Checked:
    """A padded provider: its first call returns the unpadded output (the
    check), every later call only the padded one (the timed calls)."""

    def __init__(self, fn, unpad):
        self.fn, self.unpad, self.checked = fn, unpad, False

    def __call__(self):
        result = self.fn()
        if not self.checked:
            self.checked = True
            return self.unpad(result)
        return result


def varlen_markdown(rows):
    """The varlen rows: useful TFLOP/s per provider, and the packed kernel
    against the equal-length batch of the same tokens (the issue's 0.95x)."""
    rows = [r for r in rows if r["workload"] == "varlen"]
    if not rows:
        return ""
    lines = ["| shape | provider | ms | useful TFLOP/s | rel err |", "|---|---|---|---|---|"]
    for r in rows:
        ms = f"{r['ms']:.3f}" if r["ms"] else r.get("note", "-")
        tf = f"{r['tflops']:.0f}" if r["tflops"] else "-"
        err = f"{r['rel_err']:.1e}" if r["rel_err"] is not None else "-"
        lines.append(f"| {r['shape']} | {r['provider']} | {ms} | {tf} | {err} |")
    packed = [r for r in rows if r["provider"] == "attn-mlir varlen" and r["tflops"]]
    equal = [r for r in rows if r["provider"] == "attn-mlir equal lengths" and r["tflops"]]
    for p, e in zip(packed, equal):
        lines.append(f"| {p['shape']} | packed / equal lengths | | "
                     f"{p['tflops'] / e['tflops']:.2f}x | |")
    return "## Varlen (packed prefill, useful FLOPs)\n\n" + "\n".join(lines) + "\n\n"


def decode_markdown(rows):
    """The decode rows as one table: ms and TB/s per provider."""
    rows = [r for r in rows if r["workload"] == "decode"]
    if not rows:
        return ""
    lines = ["| shape | provider | ms | TB/s | rel err |", "|---|---|---|---|---|"]
    for r in rows:
        ms = f"{r['ms']:.4f}" if r["ms"] else r.get("note", "-")
        tbs = f"{r['tb_s']:.2f}" if r.get("tb_s") else "-"
        err = f"{r['rel_err']:.1e}" if r["rel_err"] is not None else "-"
        lines.append(f"| {r['shape']} | {r['provider']} | {ms} | {tbs} | {err} |")
    return "## Decode (memory moved per call / time)\n\n" + "\n".join(lines) + "\n\n"


def markdown(rows):
    lines = ["| workload | shape | provider | ms | TFLOP/s | rel err |", "|---|---|---|---|---|---|"]
    for r in rows:
        ms = f"{r['ms']:.3f}" if r["ms"] else r.get("note", "-")
        tf = f"{r['tflops']:.0f}" if r["tflops"] else "-"
        err = f"{r['rel_err']:.1e}" if r["rel_err"] is not None else "-"
        lines.append(f"| {r['workload']} | {r['shape']} | {r['provider']} | {ms} | {tf} | {err} |")
    return "\n".join(lines)


def explain_markdown(explains):
    parts = []
    for e in explains:
        body = "\n".join(e["lines"]) if "lines" in e else f"explain failed: {e['error']}"
        parts.append(f"### {e['kernel']}: {e['shape']}\n\n```\n{body}\n```")
    return "\n\n".join(parts)


def device_tag(name):
    """"NVIDIA H200" -> "h200"."""
    return (name.split()[-1] if name.split() else "gpu").lower().replace("/", "-")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernels", required=True,
                    help="the kernels of compile_bench_kernels.py (PTX + manifests)")
    ap.add_argument("--seed-dir", required=True, help="the folder holding seed_triton_attn.py")
    ap.add_argument("--out", default=os.path.join(HERE, "results"),
                    help="where the md, json and png files go (default bench/results)")
    ap.add_argument("--tag", help="the device in the file names (default from its name: h200)")
    ap.add_argument("--quick", action="store_true", help="fewer sequence lengths")
    ap.add_argument("--only", help="a comma-separated list of the workloads to run "
                    "(seed, modern, variants, decode, varlen, headdims; default all)")
    ap.add_argument("--baseline-kernels",
                    help="the decode kernels of another build, timed beside ours (an A/B)")
    ap.add_argument("--order", choices=("shuffled", "fixed"), default="shuffled",
                    help="the order of the providers in each timed round (measure())")
    args = ap.parse_args()
    workloads = {"seed", "modern", "variants", "decode", "varlen", "headdims"}
    only = set(args.only.split(",")) if args.only else workloads
    if only - workloads:
        ap.error(f"--only: unknown workloads {sorted(only - workloads)}")
    global ORDER
    ORDER = args.order
    import_torch()
    import triton

    if "seed" in only:
        seed_workload(args.kernels, args.seed_dir, (128, 256, 512))
    if "modern" in only:
        modern_workload(args.kernels, (1024, 4096, 16384) if args.quick
                        else (512, 1024, 2048, 4096, 8192, 16384))
    if "variants" in only:
        variants_workload(args.kernels, (4096, 16384) if args.quick else (4096, 16384, 32768))
    if "decode" in only:
        decode_workload(args.kernels, args.baseline_kernels)
    if "varlen" in only:
        varlen_workload(args.kernels)
    if "headdims" in only:
        headdims_workload(args.kernels)
    device = torch.cuda.get_device_name()
    versions = dict(torch=torch.__version__, triton=triton.__version__,
                    cuda=torch.version.cuda, python=platform.python_version())
    command = "python3 bench/attn_bench.py " + " ".join(sys.argv[1:])
    write_results(args.out, args.tag or device_tag(device), device,
                  datetime.date.today().isoformat(), command, versions, ROWS, EXPLAINS)
    print(plots.pivot_markdown(ROWS))


def write_results(out, tag, device, date, command, versions, rows, explains):
    """Writes OUT/DATE-TAG-attn-bench.{md,json,png} and the per-figure PNGs
    (PNGs only where matplotlib is installed); returns the paths."""
    prefix = os.path.join(out, f"{date}-{tag}-attn-bench")
    os.makedirs(out, exist_ok=True)
    try:
        pngs = plots.write_plots(rows, prefix, device)
    except ImportError as e:  # the md says so; the GPU machine has matplotlib
        print(f"no plots: {e}", flush=True)
        pngs = []
    with open(prefix + ".json", "w") as f:
        json.dump(dict(device=device, date=date, command=command, versions=versions, rows=rows,
                       explain=[{k: v for k, v in e.items() if k != "lines"} for e in explains]),
                  f, indent=1)
    plot_line = ("Plots: " + ", ".join(f"`{os.path.basename(p)}`" for p in pngs) +
                 f"\n\n![all figures]({os.path.basename(prefix)}.png)" if pngs
                 else "No plots (matplotlib is not installed).")
    versions_line = ", ".join(f"{k} {v}" for k, v in versions.items())
    with open(prefix + ".md", "w") as f:
        f.write(f"# attn-mlir vs anchors on {device} ({date})\n\n"
                f"`{command}` ({versions_line}).\n\n{plot_line}\n\n"
                f"## TFLOP/s per figure\n\n{plots.pivot_markdown(rows)}\n\n"
                f"{decode_markdown(rows)}"
                f"{varlen_markdown(rows)}"
                f"## Explain: attn-mlir at its largest point\n\n{explain_markdown(explains)}\n\n"
                f"## Every row\n\n{markdown(rows)}\n")
    paths = [prefix + ".md", prefix + ".json"] + pngs
    print("wrote", *paths, flush=True)
    return paths


if __name__ == "__main__":
    main()
