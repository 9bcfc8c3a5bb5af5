#!/usr/bin/env python3
"""Kernel-config sweep: compile variants here, time them on the GPU.

    # here (MLIR): one kernel per (workload, config) + ptxas resources
    config_sweep.py compile --attn-translate PATH --out DIR [--baseline PATH]
    # on the GPU (no MLIR): check each variant, then time it
    config_sweep.py run DIR [--seqlens 1024,4096,16384]

Workloads: f16/bf16 head dim 64/128, causal and full, with 16k tokens per
batch and hidden 2048; the seed's workload (f32 tf32, B=32, H=96, D=128,
T=128/256/512) with its additive causal mask tensor and with `causal`.
Each variant is `name@BMxBNxWxS` (block_m, block_n, num_warps,
num_stages); `default` is what selectKernelConfig picks, `baseline` the
default of another attn-translate (--baseline: an A/B of two compilers in
one run, since run-to-run noise on the GPU reaches several percent). Every variant is
first checked against SDPA (float64 for the seed) and then timed with CUDA
events (warm-up, median of 20). The table printed last gives ms and
TFLOP/s per variant, the best variant marked.
"""

import argparse
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import compile_bench_kernels as cbk  # noqa: E402

# Sweep 2 also timed "+ldm" variants (tf32 Q/K fragments through ldmatrix,
# an experiment switch since removed: no faster). Sweep 3 times the stage
# counts --attn-pipeline makes real (the GPU lowering used to stop at 2);
# sweep 4 was its A/B (--baseline). Sweep 5 times the seed's key blocks
# and stages again now that a mask tensor is read once per block. Sweep 6
# times the seed's shapes again once tf32 fragments are read 16 bytes at a
# time (Tf32Fragments.cpp): 32-row warps, 8 warps, 3 stages.
CONFIGS = {
    "bf16_d64": ["default"],
    "bf16_d128": ["default"],
    "seed": ["default", "128x32x4x2", "128x32x8x2", "64x32x4x3", "128x64x8x2"],
}


def variants(baseline):
    for name, text in cbk.kernels():
        if name.startswith("f16"):
            continue
        family = "seed" if name.startswith("seed") else name.rsplit("_", 1)[0]
        for cfg in CONFIGS[family] + (["baseline"] if baseline else []):
            yield name, text, cfg


def compile_all(args):
    os.makedirs(args.out, exist_ok=True)
    ptxas = os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "ptxas")
    resources = {}
    for name, text, cfg in variants(args.baseline):
        src = os.path.join(args.out, name + ".mlir")
        with open(src, "w") as f:
            f.write(text)
        tag = f"{name}@{cfg}"
        translate = args.baseline if cfg == "baseline" else args.attn_translate
        cmd = [translate, "--attn-to-ptx", src, "-o", os.path.join(args.out, tag + ".ptx")]
        if cfg not in ("default", "baseline"):
            bm, bn, w, s = cfg.split("x")
            cmd += [f"--block-m={bm}", f"--block-n={bn}", f"--num-warps={w}", f"--num-stages={s}"]
        subprocess.run(cmd, check=True)
        out = subprocess.run([ptxas, "-arch=sm_90a", "-v", os.path.join(args.out, tag + ".ptx"),
                              "-o", os.devnull], capture_output=True, text=True, check=True).stderr
        regs = int(re.search(r"Used (\d+) registers", out).group(1))
        spill = int(re.search(r"(\d+) bytes spill stores", out).group(1))
        resources[tag] = {"registers": regs, "spill_bytes": spill}
        print(f"{tag}: {regs} registers, {spill} bytes spilled")
    with open(os.path.join(args.out, "resources.json"), "w") as f:
        json.dump(resources, f, indent=1)
    return 0


def run_all(args):
    import torch
    import torch.nn.functional as F
    sys.path.insert(0, os.path.join(HERE, "..", "python"))
    from attn_mlir.runtime import Kernel

    def time_ms(fn, reps=20, warmup=5):
        for _ in range(warmup):
            fn()
        torch.cuda.synchronize()
        times = []
        for _ in range(reps):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        return sorted(times)[len(times) // 2]

    with open(os.path.join(args.dir, "resources.json")) as f:
        resources = json.load(f)
    kernels = {}
    for tag in resources:
        kernels[tag] = Kernel(os.path.join(args.dir, tag + ".json"))

    def rel(a, b):
        return ((a.double() - b.double()).norm() / b.double().norm()).item()

    rows = []
    seqlens = [int(t) for t in args.seqlens.split(",")]
    for name in sorted({tag.split("@")[0] for tag in resources}):
        tags = [t for t in resources if t.startswith(name + "@")]
        if name.startswith("seed"):
            points = [(32, 96, t, 128, torch.float32) for t in (128, 256, 512)]
        else:
            d = int(re.search(r"_d(\d+)", name).group(1))
            points = [(16384 // t, 2048 // d, t, d, torch.bfloat16) for t in seqlens]
        causal = name.endswith("causal")
        for b, h, t, d, dtype in points:
            q, k, v = (torch.randn(b, h, t, d, device="cuda", dtype=dtype) for _ in range(3))
            args_ = (q, k, v)
            if name == "seed_mask":
                mask = torch.full((t, t), float("-inf"), device="cuda").triu(1)[None, None]
                args_ = (q, k, v, mask)
                ref = F.scaled_dot_product_attention(q[:1, :2].double(), k[:1, :2].double(),
                                                     v[:1, :2].double(), attn_mask=mask.double())
            else:
                ref = F.scaled_dot_product_attention(q[:1, :2].double(), k[:1, :2].double(), v[:1, :2].double(),
                                                     is_causal=causal or name == "seed_causal")
            # The seed's workload counts full FLOPs, as attn_bench.py does.
            flops = 4 * b * h * t * t * d / (2 if causal else 1)
            for tag in tags:
                out = kernels[tag](*args_)
                err = rel(out[:1, :2], ref)
                ms = time_ms(lambda: kernels[tag](*args_, out=out))
                rows.append((f"{name} T{t}", tag.split("@")[1], resources[tag]["registers"],
                             resources[tag]["spill_bytes"], err, ms, flops / ms / 1e9))
    print("| workload | config | regs | spill | rel err | ms | TFLOP/s |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    best = {}
    for r in rows:
        if r[4] < 1e-2 and (r[0] not in best or r[5] < best[r[0]]):
            best[r[0]] = r[5]
    for r in rows:
        mark = " **best**" if best.get(r[0]) == r[5] else ""
        print(f"| {r[0]} | {r[1]}{mark} | {r[2]} | {r[3]} | {r[4]:.1e} | {r[5]:.3f} | {r[6]:.0f} |")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("compile")
    c.add_argument("--attn-translate", required=True)
    c.add_argument("--out", required=True)
    c.add_argument("--baseline", help="another attn-translate: its default config as variant 'baseline'")
    r = sub.add_parser("run")
    r.add_argument("dir")
    r.add_argument("--seqlens", default="1024,4096,16384")
    args = ap.parse_args()
    return compile_all(args) if args.cmd == "compile" else run_all(args)


if __name__ == "__main__":
    sys.exit(main())
