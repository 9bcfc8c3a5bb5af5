#!/usr/bin/env python3
"""The SASS of a kernel's tensor-core loops, by opcode, without a GPU.

    sass_loops.py KERNEL.ptx [--arch sm_90a] [--ptxas PATH] [--nvdisasm PATH]
    sass_loops.py --sass FILE        (a saved `nvdisasm -c` listing)

Assembles the PTX with ptxas, disassembles the cubin with nvdisasm (the
CUDA toolkit's, or the one in PyPI's `nvidia-cuda-nvdisasm` wheel: `pip
download --no-deps nvidia-cuda-nvdisasm`, then unzip it), and prints one line
per loop (a backward branch) whose body holds an HMMA or HGMMA: its first
and last instruction index, its instruction count and its most frequent
opcodes. Two builds of a kernel, or two kernels, then compare loop by loop
before any device time is spent: e.g. the seed's mask-tensor kernel runs
its unmasked blocks in 568 instructions against the `causal` kernel's 496,
its wgmma descriptors built in ordinary registers and moved to uniform ones
(R2UR) before every HGMMA (docs/Wgmma.md).
"""

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

TENSOR_OPS = ("HMMA", "HGMMA")


def parse(listing):
    """(instructions, labels) of an `nvdisasm -c` listing."""
    instructions, labels = [], {}
    for line in listing.splitlines():
        label = re.match(r"\s*(\.L_x_\d+):", line)
        if label:
            labels[label.group(1)] = len(instructions)
            continue
        inst = re.match(r"\s*/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;", line)
        if inst:
            instructions.append(inst.group(1))
    return instructions, labels


def opcode(text):
    words = text.split()
    op = words[1] if words[0].startswith("@") and len(words) > 1 else words[0]
    return op.split(".")[0]


def loops(listing):
    """(first, last, count, Counter of opcodes) per tensor-core loop."""
    instructions, labels = parse(listing)
    found = []
    for i, text in enumerate(instructions):
        target = re.search(r"\bBRA\b.*?(\.L_x_\d+)", text)
        if not target or labels.get(target.group(1), i + 1) > i:
            continue
        first = labels[target.group(1)]
        body = instructions[first:i + 1]
        ops = collections.Counter(opcode(t) for t in body)
        if any(ops[t] for t in TENSOR_OPS):
            found.append((first, i, len(body), ops))
    return found


def disassemble(ptx, arch, ptxas, nvdisasm):
    with tempfile.TemporaryDirectory() as tmp:
        cubin = os.path.join(tmp, "kernel.cubin")
        subprocess.run([ptxas, f"-arch={arch}", ptx, "-o", cubin], check=True)
        return subprocess.run([nvdisasm, "-c", cubin], check=True, capture_output=True,
                              text=True).stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ptx", nargs="?")
    ap.add_argument("--sass", help="a saved nvdisasm -c listing instead of PTX")
    ap.add_argument("--arch", default="sm_90a")
    ap.add_argument("--ptxas", default=shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas")
    ap.add_argument("--nvdisasm", default=shutil.which("nvdisasm") or "/usr/local/cuda/bin/nvdisasm")
    ap.add_argument("--top", type=int, default=12)
    args = ap.parse_args()
    if bool(args.ptx) == bool(args.sass):
        sys.exit("sass_loops.py: give one PTX file or --sass FILE")
    if args.sass:
        with open(args.sass) as f:
            listing = f.read()
    else:
        if not os.path.exists(args.nvdisasm):
            sys.exit(f"sass_loops.py: no nvdisasm at {args.nvdisasm} (--nvdisasm PATH)")
        listing = disassemble(args.ptx, args.arch, args.ptxas, args.nvdisasm)
    for first, last, count, ops in loops(listing):
        common = ", ".join(f"{k}:{v}" for k, v in ops.most_common(args.top))
        print(f"loop [{first}-{last}] {count} instructions: {common}")


if __name__ == "__main__":
    main()
