#!/usr/bin/env python3
"""Compiles the kernels attn_bench.py times, on a machine with MLIR.

    compile_bench_kernels.py --attn-translate PATH --out DIR [--chip sm_90a]
                             [--translate-arg ARG ...]

One kernel per (dtype f16/bf16, head dim 64/128, causal or not) with every
size dynamic, and the seed workload's two forms (f32, 96 heads, head dim
128: the additive mask tensor as the seed passes it, and `causal`), and
the variants' kernels (causal sliding windows, a causal softcap). The
.mlir sources are written next to the PTX and manifests.
"""

import argparse
import os
import subprocess
import sys


def function(name, elt, d, heads, causal, mask, window=None, softcap=None):
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
    return (f"func.func @{name}({', '.join(args)}) -> {t} {{\n"
            f"  %o = attn.attention {operands}{attr} : {types} -> {t}\n"
            f"  return %o : {t}\n}}\n")


def kernels():
    for elt in ("f16", "bf16"):
        for d in (64, 128):
            for causal in (False, True):
                name = f"{elt}_d{d}_{'causal' if causal else 'full'}"
                yield name, function(name, elt, d, "?", causal, False)
    # attn_bench.py's variants: causal sliding windows and a causal softcap.
    for elt, d in (("bf16", 128), ("f16", 64)):
        for window in (256, 1024, 4096):
            name = f"{elt}_d{d}_window{window}"
            yield name, function(name, elt, d, "?", True, False, window=window)
        name = f"{elt}_d{d}_softcap50"
        yield name, function(name, elt, d, "?", True, False, softcap=50.0)
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
