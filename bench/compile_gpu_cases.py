#!/usr/bin/env python3
"""Compiles the GPU check cases to PTX + manifests on a machine with MLIR.

    compile_gpu_cases.py --attn-translate PATH --out DIR [--random 200] [--configs 40] [--variants 100] [--seed 1]
                         [--default-block M,N,W] [--translate-arg ARG ...]

Takes the execution matrix of test/Integration/attn_cases.py (the one the
CPU path runs in CI) plus `--random` random cases, `--configs` cases
with the non-default configs of CONFIG_BLOCKS and `--variants` cases with
windows, softcaps and regions (split-KV decode cases with their
--split-programs, kv_lengths and paged-cache cases among them), compiles each distinct
function once with attn-translate for sm_90a, and writes DIR/cases.json
(each case: its kernel, shapes, causal, mask kind, NaN row, seed) for
gpu_check.py to run on the GPU machine, which has no MLIR.
"""

import argparse
import concurrent.futures
import hashlib
import json
import os
import random
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test", "Integration"))
import attn_cases  # noqa: E402

# GPU programs own whole m16 tiles per warp and k16 key blocks.
GPU_BLOCKS = {(16, 8): (16, 16, 1), (64, 32): (64, 32, 4), (8, 16): (32, 16, 2)}

# Configs that --block-m/--block-n/--num-warps/--num-stages can ask for and
# the defaults do not use (M, N, W, stages or None): 16-bit key blocks are
# whole k16 steps, f32 ones whole k8 steps (tf32). A 16-bit key block of 8
# or 24 keys once compiled and was wrong, and no config of the matrix had one
# (bench/results/2026-12-02-h200-partial-key-steps.log).
CONFIG_BLOCKS = {
    "16bit": [(64, 16, 4, None), (64, 48, 4, 2), (128, 16, 4, 3), (128, 48, 4, 1),
              (32, 32, 2, 2), (16, 64, 1, None), (128, 32, 8, None), (128, 64, 8, 2),
              (256, 32, 8, 2)],
    "f32": [(64, 8, 4, None), (64, 24, 4, 2), (64, 48, 4, 1), (16, 8, 1, 3),
            (32, 24, 2, 2), (128, 32, 4, 1), (128, 32, 8, None), (256, 32, 8, 1)],
}


def config_cases(count, seed=7):
    """`count` cases of the matrix's axes, each with one of CONFIG_BLOCKS
    (its own random stream: the other cases stay as they were)."""
    rng = random.Random(seed)
    cases = []
    for i in range(count):
        case = attn_cases.random_case(rng, i, 5e8)
        wide = case["dtype"].startswith("f32")
        # f32 tiles of head dim 256 leave no room for these blocks.
        if wide and max(case["d"], case["dv"]) > 128:
            case["d"] = case["dv"] = 128
        m, n, w, stages = rng.choice(CONFIG_BLOCKS["f32" if wide else "16bit"])
        if attn_cases.narrow_rows(case):
            stages = None  # one stage, as their kernels take
        case.update(name=f"c{i}", gpu_block=(m, n, w), stages=stages, block=None)
        cases.append(case)
    return cases


def variant_cases(count, seed=11):
    """`count` random cases of the variant sweep's generator (windows,
    softcaps, score_mods, mask_mods; its own stream)."""
    rng = random.Random(seed)
    return [dict(attn_cases.random_variant_case(rng, i, 5e8), name=f"v{i}")
            for i in range(count)]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--attn-translate", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--random", type=int, default=200)
    ap.add_argument("--configs", type=int, default=40,
                    help="cases with a config of CONFIG_BLOCKS (block sizes, warps, stages)")
    ap.add_argument("--variants", type=int, default=100,
                    help="random cases with windows, softcaps, score_mods and mask_mods "
                         "(SPEC section 1.1)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--chip", default="sm_90a")
    ap.add_argument("--translate-arg", action="append", default=[],
                    help="one more attn-translate argument (repeatable), e.g. --translate-arg=--bulk-store")
    ap.add_argument("--default-block", default=None,
                    help="M,N,W: --block-m/--block-n/--num-warps for the cases that name no block "
                         "(e.g. 64,64,4: 16-row warps in whole warpgroups, which wgmma needs)")
    ap.add_argument("--keep-block-x", type=int, default=0,
                    help="keep only the kernels whose manifest block is this wide, and their "
                         "cases (256: the warp-specialized ones; a smaller folder to carry)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

    rng = random.Random(args.seed)
    cases = attn_cases.matrix_cases()
    cases += [dict(attn_cases.random_case(rng, i, 5e8), name=f"r{i}") for i in range(args.random)]
    cases += config_cases(args.configs)
    cases += variant_cases(args.variants)
    jobs = {}
    default_block = tuple(int(x) for x in args.default_block.split(",")) if args.default_block else None
    for case in cases:
        if "gpu_block" in case:
            case["block"] = tuple(case.pop("gpu_block"))
        else:
            case["block"] = GPU_BLOCKS.get(tuple(case["block"])) if case["block"] else default_block
        text = attn_cases.mlir_text(dict(case, name="attn"))
        stages = case.get("stages")
        # Split-KV cases (a static Tq of one query block) name their program
        # count; the others take the target's default.
        split = case.get("split")
        key = hashlib.sha1((text + repr(case["block"]) + repr(stages)
                            + ("" if split is None else f"split={split}")).encode()).hexdigest()[:12]
        case["kernel"] = key
        jobs[key] = (text, case["block"], stages, split)

    def compile_one(item):
        key, (text, block, stages, split) = item
        mlir = os.path.join(args.out, key + ".mlir")
        with open(mlir, "w") as f:
            f.write(text)
        cmd = [args.attn_translate, "--attn-to-ptx", mlir, "-o", os.path.join(args.out, key + ".ptx"),
               f"--chip={args.chip}"]
        cmd += args.translate_arg
        if block:
            cmd += [f"--block-m={block[0]}", f"--block-n={block[1]}", f"--num-warps={block[2]}"]
        if stages:
            cmd.append(f"--num-stages={stages}")
        if split is not None:
            cmd.append(f"--split-programs={split}")
        proc = subprocess.run(cmd, capture_output=True, text=True)
        return key, proc.returncode, proc.stderr.strip()

    failed = {}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for key, rc, err in pool.map(compile_one, jobs.items()):
            if rc:
                failed[key] = err
    for case in cases:
        case["compile_error"] = failed.get(case["kernel"])
    if args.keep_block_x:
        dropped = set()
        for key in jobs:
            manifest = os.path.join(args.out, key + ".json")
            if key in failed or not os.path.exists(manifest):
                continue
            with open(manifest) as f:
                if json.load(f)["block"][0] != args.keep_block_x:
                    dropped.add(key)
        for key in dropped:
            for ext in (".mlir", ".ptx", ".json"):
                if os.path.exists(os.path.join(args.out, key + ext)):
                    os.remove(os.path.join(args.out, key + ext))
        cases = [c for c in cases if c["kernel"] not in dropped]
        jobs = {k: v for k, v in jobs.items() if k not in dropped}
    with open(os.path.join(args.out, "cases.json"), "w") as f:
        json.dump(cases, f, indent=1)
    print(f"compiled {len(jobs) - len(failed)} kernels for {len(cases)} cases, {len(failed)} failed")
    for key, err in list(failed.items())[:10]:
        print(f"  {key}: {err.splitlines()[0] if err else '?'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
