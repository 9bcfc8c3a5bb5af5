#!/usr/bin/env python3
"""Would the seed kernels start sooner if each thread block prefetched its
tensor maps first? (a probe: the kernels' results stay right).

    prefetch_maps_probe.py --kernels DIR --out DIR [--names seed_causal,seed_mask]
                           [--next N [--next-kv]]

Copies the manifests and PTX of `--kernels` (compile_bench_kernels.py's
output) to `--out`, adding at the top of each kernel's body, where thread 0
of the block alone runs it, a `prefetch.tensormap` of every tensor-map
parameter (the 128-byte CUtensorMaps the host puts in global memory). A
thread block's first tensor copy with a map otherwise fetches the map on
its way: at T=256 the first mbarrier wait (Q and K's first block) holds
11.9% of the `causal` kernel's stall samples
(bench/results/2026-12-02-h200-half-box-probe.log). Then, on the GPU:
ab_kernels.py --a DIR --b OUT (with the check: the outputs must match).

With `--next N` it adds instead, right after the thread block's own Q copy
(thread 0), a `cp.async.bulk.prefetch.tensor` into L2 of the Q box of the
thread block N x (SM count) on in launch order (x fastest; the seed
kernels' mapping up to 0.4.7: query block nctaid.x - 1 - ctaid.x, batch
ctaid.y / 96, head ctaid.y % 96; it refuses the later grid), one instruction where `--prefetch-ahead` issues one
bulk prefetch a row; `--next-kv` adds that block's first K and V boxes.
With two programs an SM, N = 2 is about the one that starts when this
one's slot frees, so its Q would come from the L2 instead of DRAM.
"""

import argparse
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from half_kv_probe import read_kernel  # noqa: E402


def add_prefetches(ptx, kernel, slots):
    """Inserts the prefetches after the kernel's register declarations."""
    start = ptx.index(f".entry {kernel}(")
    decls = re.compile(r"(\n\t\.reg [^\n]*;)+\n")
    m = decls.search(ptx, start)
    if not m:
        raise SystemExit(f"{kernel}: no register declarations")
    lines = ["\t{", "\t.reg .b64 %pfm_a;", "\t.reg .b32 %pfm_t;", "\t.reg .pred %pfm_p;",
             "\tmov.u32 %pfm_t, %tid.x;", "\tsetp.eq.u32 %pfm_p, %pfm_t, 0;"]
    for s in slots:
        lines += [f"\tld.param.b64 %pfm_a, [{kernel}_param_{s}];",
                  "\t@%pfm_p prefetch.tensormap [%pfm_a];"]
    lines.append("\t}")
    return ptx[:m.end()] + "\n".join(lines) + "\n" + ptx[m.end():]


QCOPY = re.compile(r"^\s*cp\.async\.bulk\.tensor\.4d\.\S+ \[[^\]]+\], \[(%rd\d+), \{[^}]+\}\], \[[^\]]+\];\n", re.M)


def add_next_prefetch(ptx, kernel, slots, ahead, kv):
    """Inserts the prefetch of thread block + ahead x nsmid after the first
    tensor copy with the Q map (slots: the Q, K and V map params)."""
    start = ptx.index(f".entry {kernel}(")
    loads = dict((int(i), reg) for reg, i in re.findall(
        r"ld\.param\.[bu]64\s+(%rd\d+), \[" + re.escape(kernel) + r"_param_(\d+)\];", ptx[start:]))
    qmap = loads[slots[0]]
    for m in QCOPY.finditer(ptx, start):
        if m.group(1) == qmap:
            break
    else:
        raise SystemExit(f"{kernel}: no tensor copy with the Q map {qmap}")
    t = "\t"
    lines = [f"{t}{{", f"{t}.reg .b32 %nx<12>;", f"{t}.reg .b64 %nm<3>;", f"{t}.reg .pred %np;",
             f"{t}mov.u32 %nx0, %nctaid.x;", f"{t}mov.u32 %nx1, %ctaid.x;",
             f"{t}mov.u32 %nx2, %ctaid.y;", f"{t}mov.u32 %nx3, %nsmid;",
             f"{t}mad.lo.u32 %nx4, %nx2, %nx0, %nx1;",
             f"{t}mad.lo.u32 %nx4, %nx3, {ahead}, %nx4;",
             f"{t}rem.u32 %nx5, %nx4, %nx0;", f"{t}div.u32 %nx6, %nx4, %nx0;",
             f"{t}mov.u32 %nx7, %nctaid.y;", f"{t}setp.lt.u32 %np, %nx6, %nx7;",
             f"{t}sub.u32 %nx8, %nx0, %nx5;", f"{t}sub.u32 %nx8, %nx8, 1;",
             f"{t}shl.b32 %nx8, %nx8, 6;",
             f"{t}div.u32 %nx9, %nx6, 96;", f"{t}rem.u32 %nx10, %nx6, 96;",
             f"{t}mov.u32 %nx11, 0;",
             f"{t}ld.param.b64 %nm0, [{kernel}_param_{slots[0]}];",
             f"{t}@%np cp.async.bulk.prefetch.tensor.4d.L2.global.tile [%nm0, {{%nx11, %nx8, %nx10, %nx9}}];"]
    if kv:
        lines += [f"{t}ld.param.b64 %nm1, [{kernel}_param_{slots[1]}];",
                  f"{t}ld.param.b64 %nm2, [{kernel}_param_{slots[2]}];"]
        for d in range(4):
            lines += [f"{t}mov.u32 %nx8, {32 * d};",
                      f"{t}@%np cp.async.bulk.prefetch.tensor.4d.L2.global.tile [%nm1, {{%nx8, %nx11, %nx10, %nx9}}];"]
        lines += [f"{t}@%np cp.async.bulk.prefetch.tensor.4d.L2.global.tile [%nm2, {{%nx11, %nx11, %nx10, %nx9}}];"]
    lines.append(f"{t}}}")
    return ptx[:m.end()] + "\n".join(lines) + "\n" + ptx[m.end():]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--kernels", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--names", default="seed_causal,seed_mask")
    ap.add_argument("--next", type=int, default=0)
    ap.add_argument("--next-kv", action="store_true")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for name in args.names.split(","):
        manifest, slots, ptx = read_kernel(args.kernels, name)
        params = manifest["params"]
        maps = [slots[i] for i, p in enumerate(params) if p["kind"] == "tensor_map"]
        if args.next:
            ops = [p["operand"] for p in params if p["kind"] == "tensor_map"]
            if ops[:3] != ["query", "key", "value"]:
                raise SystemExit(f"{name}: tensor maps {ops}, not query, key, value")
            # The next thread block's coordinates are those of 0.4.6's grid
            # (query blocks, B * 96, 1); 0.4.8's is (query blocks, Hq, B).
            grid = manifest.get("grid")
            if grid is not None and grid[1] != {"mul": ["B", "Hq"]}:
                raise SystemExit(f"{name}: --next reads the grid of 0.4.6's kernels "
                                 f"(y = B * Hq), got {manifest['grid']}")
            patched = add_next_prefetch(ptx, manifest["kernel"], maps, args.next, args.next_kv)
            said = f"thread block +{args.next} x SMs: Q{' K V' if args.next_kv else ''} prefetched"
        else:
            patched = add_prefetches(ptx, manifest["kernel"], maps)
            said = f"{len(maps)} tensor maps prefetched"
        with open(os.path.join(args.out, manifest["ptx"]), "w") as f:
            f.write(patched)
        shutil.copy(os.path.join(args.kernels, name + ".json"), args.out)
        print(f"{name}: {said}")


if __name__ == "__main__":
    main()
