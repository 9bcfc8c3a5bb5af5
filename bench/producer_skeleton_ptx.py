#!/usr/bin/env python3
"""Feasibility probe for a producer warpgroup (docs/Wgmma.md, the
FlashAttention-3 plan): rewrites a compiled kernel's PTX so that it runs with
a second, idle warpgroup beside its consumers, as a producer would.

    producer_skeleton_ptx.py SRC_DIR DST_DIR NAME [NAME ...]

For each NAME, SRC_DIR/NAME.{ptx,json} (attn-translate's PTX and launch
manifest) become DST_DIR/NAME.{ptx,json} where the main kernel
(`NAME_kernel`) has `.maxntid 256` and `.maxnreg 128` (two CTAs of 256
threads per SM); threads 128-255 run `setmaxnreg.dec.sync.aligned.u32 24` and
exit; threads 0-127 run `setmaxnreg.inc.sync.aligned.u32 232` and the
unchanged kernel, whose CTA barriers (`bar.sync 0`, `bar.red.or.pred ..., 0,
...`) become named barrier 1 of 128 threads; the manifest's block is 256.
Its output must equal the original's bit for bit (bench/ab_kernels.py
prints the difference); its time is what the register split and the larger
CTA cost. An experiment on compiled output, not a code path of the compiler.
"""

import json
import os
import re
import sys

PROLOGUE = """\t{
\t.reg .b32 \t%wg_t;
\t.reg .pred \t%wg_p;
\tmov.u32 \t%wg_t, %tid.x;
\tsetp.ge.u32 \t%wg_p, %wg_t, 128;
\t@%wg_p bra \t$L__PRODUCER;
\t}
\tsetmaxnreg.inc.sync.aligned.u32 232;
"""


def rewrite(ptx, kernel):
    entry = ptx.index(f".entry {kernel}(")
    head, main = ptx[:entry], ptx[entry:]
    if ".maxntid 128, 1, 1" not in main:
        raise SystemExit(f"{kernel}: expected .maxntid 128, 1, 1")
    main = main.replace(".maxntid 128, 1, 1", ".maxntid 256, 1, 1\n.maxnreg 128", 1)
    body = main.index("\n", main.index("__dynamic_shmem__0;")) + 1
    main = main[:body] + PROLOGUE + main[body:]
    end = main.index("\n}\n", body)
    main = main[:end] + "\n$L__PRODUCER:\n\tsetmaxnreg.dec.sync.aligned.u32 24;\n\tret;" + main[end:]
    main = main.replace("bar.sync \t0;", "bar.sync \t1, 128;")
    main = re.sub(r"bar\.red\.or\.pred \t(%p\d+), 0, (%p\d+);", r"bar.red.or.pred \t\1, 1, 128, \2;", main)
    return head + main


def main():
    if len(sys.argv) < 4:
        raise SystemExit(__doc__)
    src, dst, names = sys.argv[1], sys.argv[2], sys.argv[3:]
    os.makedirs(dst, exist_ok=True)
    for name in names:
        with open(os.path.join(src, name + ".json")) as f:
            manifest = json.load(f)
        with open(os.path.join(src, manifest["ptx"])) as f:
            ptx = rewrite(f.read(), manifest["kernel"])
        manifest["block"] = [256, 1, 1]
        with open(os.path.join(dst, manifest["ptx"]), "w") as f:
            f.write(ptx)
        with open(os.path.join(dst, name + ".json"), "w") as f:
            json.dump(manifest, f, indent=2)
        print(f"{name}: {os.path.join(dst, manifest['ptx'])}")


if __name__ == "__main__":
    main()
