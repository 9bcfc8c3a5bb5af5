#!/usr/bin/env python3
"""What programmatic dependent launch would save the mask-tensor kernels.

    pdl_probe.py --kernels DIR [--names seed_mask] [--seed-seq 128,256,512]
                 [--rounds 80]

Runs on the GPU machine over the output of compile_bench_kernels.py. A
kernel with a mask tensor is two launches: the block map's classification
kernel, then the attention kernel, which the stream starts only once the
first has finished. With programmatic dependent launch (sm_90) the second
grid may start while the first runs and waits for it in the kernel
(`griddepcontrol.wait`), so its launch, and what it does before reading
the map, overlap the map kernel. Nothing of the compiler changes: this
script rewrites the PTX (`griddepcontrol.launch_dependents` at the map
kernel's first instruction, `griddepcontrol.wait` after the attention
kernel's first `cp.async.commit_group`, which follows Q's copies and
precedes the scan of the map row) and launches the attention kernel with
cuLaunchKernelEx and CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
then times both forms interleaved (ab_kernels.py's method) on the seed
workload, after checking that they give the same output.
"""

import argparse
import ctypes
import os
import re
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)

CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6


class LaunchAttributeValue(ctypes.Union):
    _fields_ = [("pad", ctypes.c_char * 64), ("value", ctypes.c_int)]


class LaunchAttribute(ctypes.Structure):
    _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_char * 4),
                ("value", LaunchAttributeValue)]


class LaunchConfig(ctypes.Structure):
    _fields_ = [("gridDimX", ctypes.c_uint), ("gridDimY", ctypes.c_uint),
                ("gridDimZ", ctypes.c_uint), ("blockDimX", ctypes.c_uint),
                ("blockDimY", ctypes.c_uint), ("blockDimZ", ctypes.c_uint),
                ("sharedMemBytes", ctypes.c_uint), ("hStream", ctypes.c_void_p),
                ("attrs", ctypes.POINTER(LaunchAttribute)), ("numAttrs", ctypes.c_uint)]


def patch_ptx(text, main, prologue):
    """The PTX with the two griddepcontrol instructions (see above)."""
    entries = [m.start() for m in re.finditer(r"^\.visible \.entry ", text, re.M)] + [len(text)]
    out, last = [], 0
    for begin, end in zip(entries, entries[1:]):
        body = text[begin:end]
        name = re.match(r"\.visible \.entry (\w+)", body).group(1)
        if name == prologue:
            # Before the first instruction after the declarations.
            lines = body.split("\n")
            brace = lines.index("{")
            i = brace + 1
            while lines[i].strip() == "" or lines[i].lstrip().startswith((".reg", ".shared", ".local", "//")):
                i += 1
            lines.insert(i, "\tgriddepcontrol.launch_dependents;")
            body = "\n".join(lines)
        elif name == main:
            at = body.index("cp.async.commit_group;") + len("cp.async.commit_group;")
            body = body[:at] + "\n\tgriddepcontrol.wait;" + body[at:]
        out.append(text[last:begin])
        out.append(body)
        last = end
    out.append(text[last:])
    return "".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--kernels", required=True)
    ap.add_argument("--names", default="seed_mask")
    ap.add_argument("--seed-seq", default="128,256,512")
    ap.add_argument("--rounds", type=int, default=80)
    args = ap.parse_args()

    import json

    import torch

    import attn_mlir.runtime as rt
    from ab_kernels import problem, timed_pair

    plain_launch = rt._launch()
    launch_ex = rt._driver().cuLaunchKernelEx
    launch_ex.argtypes = [ctypes.POINTER(LaunchConfig), ctypes.c_void_p, ctypes.c_void_p,
                          ctypes.c_void_p]
    launch_ex.restype = ctypes.c_int
    programmatic = set()

    def launch(function, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        handle = function.value if isinstance(function, ctypes.c_void_p) else function
        if handle not in programmatic:
            return plain_launch(function, gx, gy, gz, bx, by, bz, shared, stream, params, extra)
        if isinstance(stream, ctypes.c_void_p):  # as the runtime passes it
            stream = stream.value
        attr = LaunchAttribute(id=CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION)
        attr.value.value = 1
        config = LaunchConfig(gx, gy, gz, bx, by, bz, shared, stream, ctypes.pointer(attr), 1)
        return launch_ex(ctypes.byref(config), function, params, extra)

    rt._launch = lambda: launch
    work = tempfile.mkdtemp()
    rows = []
    for name in args.names.split(","):
        manifest_path = os.path.join(args.kernels, name + ".json")
        with open(manifest_path) as f:
            manifest = json.load(f)
        prologue = [p["kernel"] for p in manifest.get("prologue", [])]
        if len(prologue) != 1:
            print(f"{name}: no prologue kernel, nothing to overlap")
            continue
        with open(os.path.join(args.kernels, manifest["ptx"])) as f:
            ptx = f.read()
        os.makedirs(os.path.join(work, "pdl"), exist_ok=True)
        with open(os.path.join(work, "pdl", manifest["ptx"]), "w") as f:
            f.write(patch_ptx(ptx, manifest["kernel"], prologue[0]))
        shutil.copy(manifest_path, os.path.join(work, "pdl", name + ".json"))
        plain = rt.Kernel(manifest_path)
        pdl = rt.Kernel(os.path.join(work, "pdl", name + ".json"))
        handle = pdl._function
        programmatic.add(handle.value if isinstance(handle, ctypes.c_void_p) else handle)
        for t in [int(x) for x in args.seed_seq.split(",")]:
            q, k, v, mask = problem(torch, name, t)
            a, b = plain(q, k, v, mask), pdl(q, k, v, mask)
            torch.cuda.synchronize()
            diff = (a.double() - b.double()).abs().max().item()
            calls = {"plain": lambda: plain(q, k, v, mask), "pdl": lambda: pdl(q, k, v, mask)}
            med, ratio = timed_pair(torch, calls, args.rounds)
            rows.append((name, t, med["plain"], med["pdl"], ratio, diff))
            print(f"{name} T={t}: plain {med['plain']:.4f} ms, pdl {med['pdl']:.4f} ms, "
                  f"per round {ratio:.3f}, max |diff| {diff:.1e}", flush=True)
    print("\n| kernel | T | plain ms | PDL ms | PDL / plain per round | max abs diff |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, t, a, b, r, d in rows:
        print(f"| {name} | {t} | {a:.4f} | {b:.4f} | {r:.3f} | {d:.1e} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
