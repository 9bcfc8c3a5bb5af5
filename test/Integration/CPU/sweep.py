#!/usr/bin/env python3
"""The execution matrix and a seeded random sweep of attn-run --check.

    sweep.py --attn-run PATH --matrix [--jobs 2] [--workdir DIR]
    sweep.py --attn-run PATH [--count 300] [--seed 1] [--jobs 2] [--workdir DIR]
    sweep.py --attn-run PATH --manifests KDIR [--jobs 8] [--workdir DIR]   (GPU host)
    sweep.py ... --scores-ahead    (every case with two stages and --scores-ahead)
    sweep.py --attn-run PATH --variants [--count 300] [--seed 1] ...

--matrix runs the fixed matrix (every dtype, head dim, sequence-length pair,
causal alignment, mask kind and rank, GQA/MQA, NaN rows, block sizes).
Otherwise it draws `count` cases (dtype, head dims, sequence lengths, GQA, causal, masks
with -inf and fully masked rows, NaN rows, dynamic or static shapes, block
sizes; about one in four returns the log-sum-exp too, which --check checks
with the output; about one in six has a static Tq of 1..16 and
--split-programs, one in five kv_lengths: attn_cases.add_serving_axes) from
`seed`, runs each through attn-run --check, and ends with
`sweep: N passed, M failed`; each failure is printed with its case and the
command that reproduces it. Exit code 1 if any case fails.

--manifests runs on a GPU machine without MLIR: KDIR is the output of
bench/compile_gpu_cases.py (the matrix plus its random cases, compiled to
PTX and launch manifests where MLIR is), and each of its cases is one
`attn-run KDIR/<kernel>.json --target=cuda --check` of a runner-only
attn-run (ATTN_RUNNER_ONLY), with the same inputs as on the host (the
random Q, K, V from the case's seed; masks and NaN rows as .npy files).
A case whose kernel did not compile fails.

--variants draws the cases with the variants of SPEC.md section 1.1 mixed
in (sliding windows, softcaps, ALiBi and other score_mods, document,
prefix-LM, chunked and dilated mask_mods; see attn_cases.random_variant_case)
on top of the random axes above.
"""

import argparse
import concurrent.futures
import json
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import attn_cases  # noqa: E402


# Options that choose how attn-run compiles: a manifest's kernel is
# compiled already (compile_gpu_cases.py passed them to attn-translate).
COMPILE_OPTIONS = ("--block-m=", "--block-n=", "--num-stages=", "--split-programs=")


def run_case(attn_run, case, workdir, target, manifests=None, scores_ahead=False):
    if scores_ahead:
        # --attn-pipeline's scores-ahead applies to two-stage loops.
        case = dict(case, stages=2)
    mlir, files = attn_cases.write_case(case, workdir)
    if manifests:
        if case.get("score_mod") or case.get("mask_mod"):
            # The runner without MLIR cannot evaluate the regions (their
            # check is gpu_check.py's, through the Python runtime).
            return case, None, "regions: not checked here", []
        if case.get("compile_error"):
            return case, False, "compile error: " + case["compile_error"].splitlines()[0], []
        manifest = os.path.join(manifests, case["kernel"] + ".json")
        args = attn_cases.attn_run_args(case, manifest, files, "cuda")
        cmd = [attn_run] + [a for a in args if not a.startswith(COMPILE_OPTIONS)]
    else:
        cmd = [attn_run] + attn_cases.attn_run_args(case, mlir, files, target)
        if scores_ahead:
            cmd.append("--scores-ahead")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    lines = proc.stdout.strip().splitlines()
    last = lines[-1] if lines else ""
    ok = proc.returncode == 0 and last.startswith("check: PASS")
    return case, ok, last or proc.stderr.strip(), cmd


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--attn-run", required=True)
    parser.add_argument("--count", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--workdir", default="sweep-work")
    parser.add_argument("--target", default="cpu")
    parser.add_argument("--max-work", type=float, default=3e7)
    parser.add_argument("--matrix", action="store_true",
                        help="run the fixed matrix instead of random cases")
    parser.add_argument("--manifests", metavar="KDIR",
                        help="run the cases of KDIR/cases.json (bench/compile_gpu_cases.py) "
                             "from their PTX and launch manifests on the GPU")
    parser.add_argument("--variants", action="store_true",
                        help="random cases with windows, softcaps, score_mods "
                             "and mask_mods")
    parser.add_argument("--scores-ahead", action="store_true",
                        help="compile every case with two stages and --scores-ahead "
                             "(the next key block's scores first)")
    args = parser.parse_args()
    if args.scores_ahead and args.manifests:
        parser.error("--scores-ahead chooses how attn-run compiles; a manifest's "
                     "kernel is compiled already")

    if args.manifests:
        with open(os.path.join(args.manifests, "cases.json")) as f:
            cases = json.load(f)
    elif args.matrix:
        cases = attn_cases.matrix_cases()
    else:
        rng = random.Random(args.seed)
        if args.variants:
            cases = [attn_cases.random_variant_case(rng, i, min(args.max_work, 1e7))
                     for i in range(args.count)]
        else:
            cases = [attn_cases.random_case(rng, i, args.max_work)
                     for i in range(args.count)]
    passed, skipped, failed = 0, 0, []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(run_case, args.attn_run, c, args.workdir, args.target,
                               args.manifests, args.scores_ahead) for c in cases]
        for future in concurrent.futures.as_completed(futures):
            case, ok, last, cmd = future.result()
            if ok is None:
                skipped += 1
            elif ok:
                passed += 1
            else:
                failed.append((case, last, cmd))
    for case, last, cmd in sorted(failed, key=lambda f: f[0]["name"]):
        print(f"FAIL {case['name']}: {attn_cases.describe(case)}\n  {last}\n  repro: {' '.join(cmd)}")
    counts = {}
    for case in cases:
        for key in ("dtype", "causal", "mask", "lse", "split", "kv_lengths") + attn_cases.VARIANT_KEYS:
            value = case.get(key)
            if key == "window" and value:
                value = "set"
            counts[(key, value)] = counts.get((key, value), 0) + 1
    print("coverage: " + ", ".join(f"{k}={v}:{n}" for (k, v), n in sorted(counts.items(), key=str)))
    print(f"sweep: {passed} passed, {len(failed)} failed"
          + (f", {skipped} with regions skipped" if skipped else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
