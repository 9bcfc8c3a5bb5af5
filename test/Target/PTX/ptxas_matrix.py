#!/usr/bin/env python3
"""Compiles a matrix of kernels to PTX and assembles each with ptxas.

    ptxas_matrix.py --attn-translate PATH --ptxas PATH --workdir DIR [--chip sm_90a]

Matrix: {f32 tf32, f32 ieee, f16, bf16} x head dim {16, 64, 128, 256} x
five variants (plain MHA; causal top_left + GQA 4:1; bottom_right + rank-4
float mask; i1 rank-2 mask + MQA; bottom_right + a window and a softcap), plus D != Dv, the padded head dims
40, 68/36, 72/120 and 200, rows that are not whole 16-byte vectors (59,
111/30, 1/3), and the benchmark's ten
kernels (dynamic head count; the seed's) and eight split-KV decode kernels
(--split-programs=264: Tq 1 and 16, the log-sum-exp, kv_lengths; each with
its combine kernel) and eight kernels of packed sequences (cu_seqlens:
every dtype at head dims 64 and 128, causal, GQA, the log-sum-exp) and
six kernels of a paged KV cache (block_table: bf16 at head dim 128, pages
of 16, 64 and 256 keys, decode with kv_lengths and split-KV, and prefill),
all with the default kernel
config (on sm_90a the 16-bit kernels on wgmma and the f32 tf32 ones at
head dims 64 and 128 load K and V by TMA tensor copies:
--tensor-copies=auto); those f32 kernels and the seed's, and the
benchmark's 16-bit kernels, again with --tensor-copies=none (every
thread's cp.async). For each kernel `ptxas -v` must
report a 0-byte stack frame and no spills, for every entry of its module. Prints one line per kernel
and a summary last.
"""

import argparse
import concurrent.futures
import os
import re
import subprocess
import sys

VARIANTS = {
    "mha": dict(hq=8, hkv=8, causal=None, mask=None),
    "gqa_causal": dict(hq=8, hkv=2, causal="top_left", mask=None),
    "br_floatmask": dict(hq=4, hkv=4, causal="bottom_right", mask=("f", "1x?x?x?")),
    "mqa_boolmask": dict(hq=8, hkv=1, causal=None, mask=("i1", "?x?")),
    "window_softcap": dict(hq=8, hkv=2, causal="bottom_right", mask=None,
                           window=(256, 0), softcap=30.0),
}


def function(name, dtype, d, dv, hq, hkv, causal, mask, window=None, softcap=None,
             tq="?", lse=False, kv_lengths=False, varlen=False, page=None):
    elt = dtype.split("-")[0]
    b = "1" if varlen else "?"
    t = lambda h, dd, tt="?": f"tensor<{b}x{h}x{tt}x{dd}x{elt}>"  # noqa: E731
    # A paged cache: pools of pages of `page` keys.
    kt = t(hkv, d, page) if page else t(hkv, d)
    vt = t(hkv, dv, page) if page else t(hkv, dv)
    args = [f"%q: {t(hq, d, tq)}", f"%k: {kt}", f"%v: {vt}"]
    types = f"{t(hq, d, tq)}, {kt}, {vt}"
    operands = "%q, %k, %v"
    if mask:
        mt = f"tensor<{mask[1]}x{elt if mask[0] == 'f' else 'i1'}>"
        args.append(f"%m: {mt}")
        types += f", {mt}"
        operands += " mask(%m)"
    if page:
        operands += " block_table(%bt : tensor<?x?xi32>)"
    if kv_lengths:
        args.append("%l: tensor<?xi32>")
        operands += " kv_lengths(%l : tensor<?xi32>)"
    if varlen:
        args += ["%cq: tensor<?xi32>", "%ck: tensor<?xi32>"]
        operands += " cu_seqlens(%cq, %ck : tensor<?xi32>, tensor<?xi32>)"
    if page:
        args.append("%bt: tensor<?x?xi32>")
    attrs = []
    if causal:
        attrs.append(f"causal = #attn.causal<{causal}>")
    if dtype == "f32-ieee":
        attrs.append("precision = #attn.precision<ieee>")
    if window:
        attrs.append(f"window = #attn.window<left = {window[0]}, right = {window[1]}>")
    if softcap:
        attrs.append(f"softcap = {softcap} : f32")
    attr = " {" + ", ".join(attrs) + "}" if attrs else ""
    results, values = t(hq, dv, tq), "%o"
    if lse:
        results += f", tensor<{b}x{hq}x{tq}xf32>"
        values += ", %lse"
    return (f"func.func @{name}({', '.join(args)}) -> ({results}) {{\n"
            f"  {values} = attn.attention {operands}{attr} : {types} -> {results}\n"
            f"  return {values} : {results}\n}}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--attn-translate", required=True)
    ap.add_argument("--ptxas", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--chip", default="sm_90a")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    kernels = []
    for dtype in ("f32-tf32", "f32-ieee", "f16", "bf16"):
        for d in (16, 64, 128, 256):
            for variant, kw in VARIANTS.items():
                kernels.append((f"{dtype.replace('-', '_')}_d{d}_{variant}", dtype, d, d, kw))
    kernels.append(("bf16_d64_dv128", "bf16", 64, 128, VARIANTS["gqa_causal"]))
    kernels.append(("f16_d128_dv64", "f16", 128, 64, VARIANTS["mha"]))
    # Head dims padded to whole 16-element chunks (rows of 16-byte vectors),
    # every dtype, with and without a mask tensor, D != Dv.
    for dtype in ("f32-tf32", "f32-ieee", "f16", "bf16"):
        for d, dv in ((40, 40), (72, 120), (200, 200)):
            for variant in ("gqa_causal", "br_floatmask"):
                kernels.append((f"{dtype.replace('-', '_')}_d{d}_dv{dv}_{variant}_padded",
                                dtype, d, dv, VARIANTS[variant]))
    kernels.append(("f32_tf32_d68_dv36_padded", "f32-tf32", 68, 36, VARIANTS["mha"]))
    # Rows that are not whole 16-byte vectors (one stage, narrower vectors).
    for dtype in ("f32-tf32", "f32-ieee", "f16", "bf16"):
        for d, dv in ((59, 59), (111, 30)):
            for variant in ("gqa_causal", "br_floatmask"):
                kernels.append((f"{dtype.replace('-', '_')}_d{d}_dv{dv}_{variant}_narrow",
                                dtype, d, dv, VARIANTS[variant]))
    kernels.append(("bf16_d1_dv3_narrow", "bf16", 1, 3, VARIANTS["mha"]))
    # The benchmark's kernels (bench/compile_bench_kernels.py): head count
    # dynamic, and the seed's 96 heads with its (1, 1, T, T) mask tensor.
    for dtype in ("f16", "bf16"):
        for d in (64, 128):
            for causal in (None, "top_left"):
                kind = "causal" if causal else "full"
                kernels.append((f"bench_{dtype}_d{d}_{kind}", dtype, d, d,
                                dict(hq="?", hkv="?", causal=causal, mask=None)))
    kernels.append(("bench_seed_mask", "f32-tf32", 128, 128,
                    dict(hq=96, hkv=96, causal=None, mask=("f", "1x1x?x?"))))
    kernels.append(("bench_seed_causal", "f32-tf32", 128, 128,
                    dict(hq=96, hkv=96, causal="top_left", mask=None)))
    # Without TMA tensor copies (every thread's cp.async): the f32 kernels
    # whose K and V go by tensor copies by default, and the benchmark's
    # 16-bit ones.
    kernels += [(name + "_cp_async", dtype, d, dv, kw, ["--tensor-copies=none"])
                for name, dtype, d, dv, kw, *_ in list(kernels)
                if (dtype == "f32-tf32" and d in (64, 128))
                or (name.startswith("bench_") and dtype in ("f16", "bf16"))]

    # Split-KV decode kernels (a static Tq of one query block; 264
    # programs) and their combine kernels: GQA 32/8 at head dim 128 with the
    # log-sum-exp and kv_lengths (Tq 1), and speculative decode at head dim
    # 64 (Tq 16), every dtype.
    for dtype in ("f32-tf32", "f32-ieee", "f16", "bf16"):
        kernels.append((f"decode_{dtype.replace('-', '_')}_d128_gqa", dtype, 128, 128,
                        dict(hq=32, hkv=8, causal="bottom_right", mask=None, tq=1,
                             lse=True, kv_lengths=True), ["--split-programs=264"]))
        kernels.append((f"decode_{dtype.replace('-', '_')}_d64_tq16", dtype, 64, 64,
                        dict(hq=8, hkv=2, causal="bottom_right", mask=None, tq=16),
                        ["--split-programs=264"]))

    # Packed sequences (cu_seqlens): the program's sequence lookup before
    # the key loops, K and V boxes at the sequence's keys.
    for dtype in ("f32-tf32", "f32-ieee", "f16", "bf16"):
        for d in (64, 128):
            kernels.append((f"varlen_{dtype.replace('-', '_')}_d{d}", dtype, d, d,
                            dict(hq=8, hkv=2, causal="top_left", mask=None, lse=True,
                                 varlen=True)))

    # A paged KV cache (block_table): the page lookup before each K/V box;
    # key blocks of min(64, page) keys.
    for page in (16, 64, 256):
        kernels.append((f"paged_decode_bf16_d128_p{page}", "bf16", 128, 128,
                        dict(hq=32, hkv=8, causal="bottom_right", mask=None, tq=1,
                             lse=True, kv_lengths=True, page=page),
                        ["--split-programs=264"]))
        kernels.append((f"paged_prefill_bf16_d128_p{page}", "bf16", 128, 128,
                        dict(hq=32, hkv=8, causal="bottom_right", mask=None,
                             kv_lengths=True, page=page)))

    def build(item):
        name, dtype, d, dv, kw, *extra = item
        extra = extra[0] if extra else []
        base = os.path.join(args.workdir, name)
        with open(base + ".mlir", "w") as f:
            f.write(function(name, dtype, d, dv, **kw))
        tr = subprocess.run([args.attn_translate, "--attn-to-ptx", base + ".mlir", "-o", base + ".ptx",
                             f"--chip={args.chip}", *extra], capture_output=True, text=True)
        if tr.returncode:
            return name, False, "attn-translate: " + tr.stderr.strip().splitlines()[0]
        px = subprocess.run([args.ptxas, f"-arch={args.chip}", "-v", base + ".ptx", "-o", base + ".cubin"],
                            capture_output=True, text=True)
        report = px.stdout + px.stderr
        if px.returncode:
            return name, False, "ptxas failed: " + report.strip().splitlines()[-1]
        # Every entry of the module (a split kernel's combine kernel too).
        frames = re.findall(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads",
                            report)
        regs = re.findall(r"Used (\d+) registers", report)
        clean = bool(frames) and all(f == ("0", "0", "0") for f in frames)
        bad = [f for f in frames if f != ("0", "0", "0")]
        frame = bad[0] if bad else (frames[0] if frames else None)
        line = (f"{'+'.join(regs) if regs else '?'} registers, "
                + (f"{frame[0]} bytes stack frame, {frame[1]} bytes spill stores, "
                   f"{frame[2]} bytes spill loads" if frame else "no report"))
        if len(frames) > 1:
            line += f" ({len(frames)} entries)"
        with open(base + ".ptx") as f:
            if "cp.async.bulk.tensor" in f.read():
                line += ", tensor copies"
        return name, clean, line

    bad = tma = 0
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for name, ok, line in pool.map(build, kernels):
            print(f"{'ok  ' if ok else 'BAD '} {name}: {line}")
            bad += not ok
            tma += "tensor copies" in line
    print(f"ptxas-matrix: {tma} kernels with tensor copies")
    print(f"ptxas-matrix: {len(kernels)} kernels, {bad} with spills, stack or errors")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
