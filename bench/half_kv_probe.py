#!/usr/bin/env python3
"""What the seed kernels would gain if half of their K and V bytes did not
come from the L2 (a timing probe: its outputs are wrong).

    half_kv_probe.py --kernels DIR --out DIR [--names seed_causal,seed_mask]
                     [--control | --half-box | --unpadded [--operands query,value]]

Copies the manifests and PTX of `--kernels` (compile_bench_kernels.py's
output) to `--out`, rewriting each tensor copy of the K and V maps (the
kernel's second and third tensor_map params) so that the key coordinate of
every odd key block (bit 5 of the row: blocks of 32 keys) gains 2^30. Such
a box lies wholly past the tensor's end: TMA fills it with zeros without
reading memory, and still completes the slot's byte count, so the kernel
runs the same instructions and barriers while its K and V reads from the
L2 halve. Q's copies (rows in multiples of 64) are left alone. With
`--control` the added term is `key & 2^30` (zero for any real key, which
ptxas cannot know): the same added instructions, no box moved.

With `--half-box` every K and V box keeps its coordinates but loses half
its rows instead: the manifest's key and value maps get boxes of half the
keys and each K/V mbarrier expects half the bytes (the constants 16384 and
16896 of the `expect_tx` operands), so every K/V copy reads half its bytes
through the L2 and none goes out of bounds (the first probe's boxes past the
end made the kernels 12-46% slower: TMA's out-of-bounds fill is not free).

With `--unpadded` the Q and V boxes lose their 4 out-of-bounds pad
columns (132 -> 128, the padded rows `mma.sync` reads) and their
mbarriers expect the unpadded bytes (33792 -> 32768, 16896 -> 16384): every
box lies wholly in bounds, the rows land 16 bytes a row off (wrong
results), and the timing says what the partly out-of-bounds boxes cost;
`--operands query` or `value` unpads one of the two.

Then, on the GPU: ab_kernels.py --a DIR --b OUT --no-check. TMA multicast
to clusters of two programs (docs/Wgmma.md, "T=256 is bound by the L2")
would cut the seed's K and V reads by 40% at T=256; this probe bounds what
fewer L2 bytes are worth there (the moved boxes also skip the load's
latency, which multicast would not).
"""

import argparse
import json
import os
import re
import shutil

COPY = re.compile(r"^(\s*)(cp\.async\.bulk\.tensor\.4d\.\S+ \[[^\]]+\], \[(%rd\d+), \{)"
                  r"([^,]+), (%r\d+)(, [^}]+\}\], \[[^\]]+\];)$", re.M)


def param_slots(params):
    """The PTX param index of each manifest param: a memref or workspace is
    3 + 2 x rank slots (pointers, offset, sizes, strides), a size or a
    tensor map one (attn_mlir.runtime._pack's layout)."""
    slots, at = [], 0
    for p in params:
        slots.append(at)
        at += 3 + 2 * p["rank"] if p["kind"] in ("memref", "workspace") else 1
    return slots


def read_kernel(kernels, name):
    """The manifest `name`.json of directory `kernels`, its params' PTX slots
    and its PTX text."""
    with open(os.path.join(kernels, name + ".json")) as f:
        manifest = json.load(f)
    with open(os.path.join(kernels, manifest["ptx"])) as f:
        ptx = f.read()
    return manifest, param_slots(manifest["params"]), ptx


def map_registers(ptx, kernel, indices):
    """The registers the kernel loads its params `indices` into."""
    body = ptx[ptx.index(f".entry {kernel}("):]
    loads = dict((int(i), reg) for reg, i in re.findall(
        r"ld\.param\.[bu]64\s+(%rd\d+), \[" + re.escape(kernel) + r"_param_(\d+)\];", body))
    return {loads[i] for i in indices}


def patch(ptx, registers, control):
    term = "1073741824" if control else "32"
    shift = "0" if control else "25"

    count = 0

    def rewrite(m):
        nonlocal count
        indent, head, reg, first, key, tail = m.groups()
        if reg not in registers:
            return m.group(0)
        count += 1
        return (f"{indent}{{\n{indent}.reg .b32 %hkv_t, %hkv_k;\n"
                f"{indent}and.b32 %hkv_t, {key}, {term};\n"
                f"{indent}shl.b32 %hkv_t, %hkv_t, {shift};\n"
                f"{indent}add.s32 %hkv_k, {key}, %hkv_t;\n"
                f"{indent}{head}{first}, %hkv_k{tail}\n{indent}}}")

    out = COPY.sub(rewrite, ptx)
    return out, count


def rewrite_expected_bytes(ptx, changes):
    """Rewrites the byte counts (`changes`: old -> new) that `expect_tx`
    operands are set to by a mov."""
    registers = set(re.findall(r"mbarrier\.arrive\.expect_tx\.\S+ %rd\d+, \[[^\]]+\], (%r\d+);", ptx))
    count = 0

    def rewrite(m):
        nonlocal count
        if m.group(2) not in registers or m.group(3) not in changes:
            return m.group(0)
        count += 1
        return f"{m.group(1)}{m.group(2)}, {changes[m.group(3)]};"

    return re.sub(r"(mov\.b32\s+)(%r\d+), (\d+);", rewrite, ptx), count


def halve_expected_bytes(ptx):
    """Halves the K/V byte counts (16384: a K tile of 32 keys, 16896: a V
    tile of 32 padded rows) that the `expect_tx` operands are set to."""
    return rewrite_expected_bytes(ptx, {"16384": "8192", "16896": "8448"})


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--kernels", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--names", default="seed_causal,seed_mask")
    ap.add_argument("--control", action="store_true")
    ap.add_argument("--half-box", action="store_true")
    ap.add_argument("--unpadded", action="store_true")
    ap.add_argument("--operands", default="query,value",
                    help="with --unpadded: which of query and value")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for name in args.names.split(","):
        manifest, slots, ptx = read_kernel(args.kernels, name)
        params = manifest["params"]
        wanted = [slots[i] for i, p in enumerate(params)
                  if p["kind"] == "tensor_map" and p["operand"] in ("key", "value")]
        chosen = map_registers(ptx, manifest["kernel"], wanted)
        if len(chosen) != 2:
            raise SystemExit(f"{name}: expected a key and a value tensor map, found {len(chosen)}")
        if args.unpadded:
            operands = args.operands.split(",")
            changes = {"33792": "32768"} if "query" in operands else {}
            if "value" in operands:
                changes["16896"] = "16384"
            patched, count = rewrite_expected_bytes(ptx, changes)
            boxes = 0
            for p in params:
                if p["kind"] == "tensor_map" and p["operand"] in operands \
                        and p["box"][3] == 132:
                    p["box"][3] = 128
                    boxes += 1
            with open(os.path.join(args.out, name + ".json"), "w") as f:
                json.dump(manifest, f, indent=2)
            print(f"{name}: {count} Q/V byte counts and {boxes} boxes unpadded")
        elif args.half_box:
            patched, count = halve_expected_bytes(ptx)
            for p in params:
                if p["kind"] == "tensor_map" and p["operand"] in ("key", "value"):
                    p["box"][2] //= 2
            with open(os.path.join(args.out, name + ".json"), "w") as f:
                json.dump(manifest, f, indent=2)
            print(f"{name}: {count} K/V byte counts and 2 boxes halved")
        else:
            patched, count = patch(ptx, chosen, args.control)
            shutil.copy(os.path.join(args.kernels, name + ".json"), args.out)
            print(f"{name}: {count} tensor copies of K and V ({', '.join(sorted(chosen))}) rewritten"
                  f"{' (control)' if args.control else ''}")
        with open(os.path.join(args.out, manifest["ptx"]), "w") as f:
            f.write(patched)


if __name__ == "__main__":
    main()
