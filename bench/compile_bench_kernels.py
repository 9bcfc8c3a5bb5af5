#!/usr/bin/env python3
"""Compiles the kernels attn_bench.py times, on a machine with MLIR.

    compile_bench_kernels.py --attn-translate PATH --out DIR [--chip sm_90a]
                             [--translate-arg ARG ...]

One kernel per (dtype f16/bf16, head dim 64/128, causal or not) with every
size dynamic, and the seed workload's two forms (f32, 96 heads, head dim
128: the additive mask tensor as the seed passes it, and `causal`), and
the variants' kernels (causal sliding windows, a causal softcap, ALiBi,
prefix-LM and document masks), and decode steps of 1 and 16 query rows
(GQA 32/8, bf16, head dim 128), and packed variable-length prefill
(cu_seqlens, bf16, head dim 128, causal, heads dynamic). The
.mlir sources are written next to the PTX and manifests.
"""

import argparse
import os
import subprocess
import sys


# The variants' regions: ALiBi (slopes[h] * (j - i)), prefix-LM (keys
# j <= i or j < 1024) and document masks (doc[b, i] == doc[b, j]); each with
# the function arguments of its captured tensors.
ALIBI = ("""score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %slope = tensor.extract %slopes[%h] : tensor<?xf32>
    %d = arith.subi %j, %i : index
    %di = arith.index_cast %d : index to i64
    %df = arith.sitofp %di : i64 to f32
    %bias = arith.mulf %slope, %df : f32
    %t = arith.addf %s, %bias : f32
    attn.yield %t : f32
  }""", ["%slopes: tensor<?xf32>"])
PREFIX_LM = ("""mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %p = arith.constant 1024 : index
    %causal = arith.cmpi ule, %j, %i : index
    %prefix = arith.cmpi ult, %j, %p : index
    %keep = arith.ori %causal, %prefix : i1
    attn.yield %keep : i1
  }""", [])
DOCUMENT = ("""mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %di = tensor.extract %doc[%b, %i] : tensor<?x?xi32>
    %dj = tensor.extract %doc[%b, %j] : tensor<?x?xi32>
    %keep = arith.cmpi eq, %di, %dj : i32
    attn.yield %keep : i1
  }""", ["%doc: tensor<?x?xi32>"])


# The headdims workload of attn_bench.py: each padded head dim (not a
# multiple of 16) and the multiple of 16 above it.
HEAD_DIMS = (40, 48, 72, 80, 120, 128, 200, 208)


def function(name, elt, d, heads, causal, mask, window=None, softcap=None, region=None):
    t = f"tensor<?x{heads}x?x{d}x{elt}>"
    args = [f"%q: {t}", f"%k: {t}", f"%v: {t}"]
    types = f"{t}, {t}, {t}"
    operands = "%q, %k, %v"
    if mask:
        args.append(f"%m: tensor<1x1x?x?x{elt}>")
        types += f", tensor<1x1x?x?x{elt}>"
        operands += " mask(%m)"
    attrs = ["causal = #attn.causal<top_left>"] if causal else []
    if window is not None:
        attrs.append(f"window = #attn.window<left = {window}, right = 0>")
    if softcap is not None:
        attrs.append(f"softcap = {softcap} : f32")
    attr = " {" + ", ".join(attrs) + "}" if attrs else ""
    if region:
        attr += " " + region[0]
        args += region[1]
    return (f"func.func @{name}({', '.join(args)}) -> {t} {{\n"
            f"  %o = attn.attention {operands}{attr} : {types} -> {t}\n"
            f"  return %o : {t}\n}}\n")


def decode_function(name, tq, hkv=8):
    """A decode step: `tq` new query rows (static, so that the keys split
    over programs: docs/Serving.md) of 32 query heads against a cache of
    `hkv` KV heads, bf16, head dim 128."""
    q = f"tensor<?x32x{tq}x128xbf16>"
    kv = f"tensor<?x{hkv}x?x128xbf16>"
    return (f"func.func @{name}(%q: {q}, %k: {kv}, %v: {kv}) -> {q} {{\n"
            f"  %o = attn.attention %q, %k, %v : {q}, {kv}, {kv} -> {q}\n"
            f"  return %o : {q}\n}}\n")


def paged_decode_function(name, page):
    """A decode step over a paged KV cache (block_table): one new query row
    of 32 query heads against pools of pages of `page` keys of 8 KV heads,
    bf16, head dim 128: decode_q1's problem with the keys paged."""
    q = "tensor<?x32x1x128xbf16>"
    kv = f"tensor<?x8x{page}x128xbf16>"
    bt = "tensor<?x?xi32>"
    return (f"func.func @{name}(%q: {q}, %k: {kv}, %v: {kv}, %bt: {bt}) -> {q} {{\n"
            f"  %o = attn.attention %q, %k, %v block_table(%bt : {bt}) : {q}, {kv}, {kv} -> {q}\n"
            f"  return %o : {q}\n}}\n")


def varlen_function(name):
    """Packed sequences (cu_seqlens): batch 1, the heads and the packed
    lengths dynamic, bf16, head dim 128, causal per sequence."""
    t = "tensor<1x?x?x128xbf16>"
    c = "tensor<?xi32>"
    return (f"func.func @{name}(%q: {t}, %k: {t}, %v: {t}, %cq: {c}, %ck: {c}) -> {t} {{\n"
            f"  %o = attn.attention %q, %k, %v cu_seqlens(%cq, %ck : {c}, {c}) "
            f"{{causal = #attn.causal<bottom_right>}} : {t}, {t}, {t} -> {t}\n"
            f"  return %o : {t}\n}}\n")


# The page sizes of the paged decode kernels.
PAGES = (16, 64, 256)


def kernels():
    for elt in ("f16", "bf16"):
        for d in (64, 128):
            for causal in (False, True):
                name = f"{elt}_d{d}_{'causal' if causal else 'full'}"
                yield name, function(name, elt, d, "?", causal, False)
    # attn_bench.py's variants: causal sliding windows, a causal softcap,
    # causal ALiBi, prefix-LM and causal document masks.
    for elt, d in (("bf16", 128), ("f16", 64)):
        for window in (256, 1024, 4096):
            name = f"{elt}_d{d}_window{window}"
            yield name, function(name, elt, d, "?", True, False, window=window)
        name = f"{elt}_d{d}_softcap50"
        yield name, function(name, elt, d, "?", True, False, softcap=50.0)
        for variant, causal, region in (("alibi", True, ALIBI), ("prefixlm", False, PREFIX_LM),
                                        ("document", True, DOCUMENT)):
            name = f"{elt}_d{d}_{variant}"
            yield name, function(name, elt, d, "?", causal, False, region=region)
    # attn_bench.py's head dims: padded ones beside the next multiple of 16.
    for d in HEAD_DIMS:
        name = f"bf16_d{d}_full"
        yield name, function(name, "bf16", d, "?", False, False)
    for tq in (1, 16):
        yield f"decode_q{tq}", decode_function(f"decode_q{tq}", tq)
    for hkv in (32, 4):  # GQA ratios 1 and 8 (attn_bench.py's DECODE_SHAPES)
        yield f"decode_q1_kv{hkv}", decode_function(f"decode_q1_kv{hkv}", 1, hkv)
    for page in PAGES:  # attn_bench.py's paged decode rows
        yield f"decode_q1_paged{page}", paged_decode_function(f"decode_q1_paged{page}", page)
    yield "varlen_bf16_d128_causal", varlen_function("varlen_bf16_d128_causal")
    yield "seed_mask", function("seed_mask", "f32", 128, 96, False, True)
    yield "seed_causal", function("seed_causal", "f32", 128, 96, True, False)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--attn-translate", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--chip", default="sm_90a")
    ap.add_argument("--translate-arg", action="append", default=[],
                    help="one more attn-translate argument (repeatable)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for name, text in kernels():
        src = os.path.join(args.out, name + ".mlir")
        with open(src, "w") as f:
            f.write(text)
        subprocess.run([args.attn_translate, "--attn-to-ptx", src, f"--chip={args.chip}",
                        "-o", os.path.join(args.out, name + ".ptx")]
                       + args.translate_arg,
                       check=True)
        print("compiled", name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
