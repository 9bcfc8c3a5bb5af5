#!/usr/bin/env python3
"""Where a program's time goes: clock64 stamps at a kernel's phase boundaries.

    program_timeline.py --kernels DIR [--names seed_causal,seed_mask]
                        [--seed-seq 256,512] [--out FILE.json]

Runs on the GPU machine over the output of compile_bench_kernels.py
(bench/). For each kernel it rewrites the PTX (nothing of the compiler
changes) so that thread 0 of every program stores `%clock64` at

  entry      the kernel's first instruction;
  ready      the barrier after the first cp.async wait (Q and the first
             K/V blocks have landed: the prologue); in a kernel of tensor
             copies, the end of the first mbarrier wait
             (Q has landed);
  loopN      the exit of the N-th pipelined key loop (a loop head is a block
             that starts with `cp.async.wait_group`, or with a barrier in a
             kernel of tensor copies; its exit is the `bra.uni` after the
             back branch; a loop in a branch the program did not take
             counts 0 cycles);
  epilogue   the last `cp.async.wait_group` (after the key loops), or the
             first output store in a kernel of tensor copies;
  exit       a barrier before `ret` (every warp has issued its stores);

(not warp-specialized kernels: their roles share no phases)

plus `%smid`, into a `.global` array of the module, read back with
cuModuleGetGlobal. The seed workload runs as in ab_kernels.py (B=32, H=96,
D=128 fp32, the causal mask tensor for kernels that take one). It prints,
per kernel and T: the instrumented and plain kernels' times (how much the
stamps perturb), each phase's median cycles by query block, and per SM the
cycles between a program's exit and the next program's entry in the slot it
left (the launch gap), and how much of each slot's time programs occupy.
"""

import argparse
import ctypes
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, ".."))  # bench/

SLOTS = 10  # u64 per program: up to 8 stamps, smid, spare
MAX_PROGRAMS = 1 << 16
ARRAY = "attn_timeline"


def stamp(index, barrier=False, entry=False):
    """PTX that stores %clock64 into slot `index` of this program's record
    (thread 0 only; record = the linear thread block id). A scoped block, so
    that it declares its own registers."""
    lines = ["\t{",
             "\t.reg .u64 %tl_c, %tl_a, %tl_w;",
             "\t.reg .u32 %tl_t, %tl_x, %tl_y, %tl_z, %tl_nx, %tl_ny, %tl_l, %tl_s;",
             "\t.reg .pred %tl_p;"]
    if barrier:
        lines.append("\tbar.sync 0;")
    lines.append("\tmov.u64 %tl_c, %clock64;")
    lines += [
        "\tmov.u32 %tl_t, %tid.x;",
        "\tsetp.eq.u32 %tl_p, %tl_t, 0;",
        "\tmov.u32 %tl_x, %ctaid.x;",
        "\tmov.u32 %tl_y, %ctaid.y;",
        "\tmov.u32 %tl_z, %ctaid.z;",
        "\tmov.u32 %tl_nx, %nctaid.x;",
        "\tmov.u32 %tl_ny, %nctaid.y;",
        "\tmad.lo.u32 %tl_l, %tl_z, %tl_ny, %tl_y;",
        "\tmad.lo.u32 %tl_l, %tl_l, %tl_nx, %tl_x;",
        f"\tmov.u64 %tl_a, {ARRAY};",
        f"\tmad.wide.u32 %tl_a, %tl_l, {SLOTS * 8}, %tl_a;",
        f"\t@%tl_p st.global.u64 [%tl_a+{index * 8}], %tl_c;",
    ]
    if entry:
        lines += ["\tmov.u32 %tl_s, %smid;",
                  "\tcvt.u64.u32 %tl_w, %tl_s;",
                  f"\t@%tl_p st.global.u64 [%tl_a+{(SLOTS - 2) * 8}], %tl_w;"]
    lines.append("\t}")
    return "\n".join(lines) + "\n"


def instrument(ptx, kernel):
    """The PTX with stamps in `kernel`'s entry, and the stamps' names."""
    start = ptx.index(f".entry {kernel}(")
    body_open = ptx.index("{", ptx.index(")", start))
    # The kernel's body ends at the first line that is just "}".
    body_close = ptx.index("\n}", body_open)
    body = ptx[body_open + 1:body_close]
    lines = body.split("\n")

    if any("setmaxnreg" in l for l in lines):
        raise SystemExit(f"{kernel}: a warp-specialized kernel (its roles have no common phases)")
    # Kernels whose tiles come by tensor copies (the f32 defaults since
    # 0.4.1) wait on mbarriers: their key loops start with the refill
    # barrier.
    tensor = any("cp.async.bulk.tensor" in l for l in lines)
    head_mark = "bar.sync" if tensor else "cp.async.wait_group"
    heads = set()
    for i, line in enumerate(lines):
        m = re.match(r"^(\$L__\w+):$", line.strip())
        if m and any(head_mark in l for l in lines[i + 1:i + 4]):
            heads.add(m.group(1))
    exits = []
    for i, line in enumerate(lines):
        m = re.match(r"^@%p\d+ bra\s+(\$L__\w+);$", line.strip())
        if m and m.group(1) in heads and i + 1 < len(lines):
            n = re.match(r"^bra\.uni\s+(\$L__\w+);$", lines[i + 1].strip())
            if n and n.group(1) not in exits:
                exits.append(n.group(1))

    names = ["entry", "ready"] + [f"loop{k + 1}" for k in range(len(exits))] + ["epilogue", "exit"]
    if len(names) > SLOTS - 2:
        raise SystemExit(f"{kernel}: {len(names)} stamps do not fit {SLOTS - 2} slots")
    index = {n: k for k, n in enumerate(names)}
    if tensor:
        # Ready: the end of the first mbarrier wait's scope (Q's tile); the
        # epilogue: the first output store.
        first_wait = next(i for i, l in enumerate(lines) if "mbarrier.try_wait" in l)
        ready = next(i for i in range(first_wait, len(lines)) if lines[i].strip() == "}")
        last_wait = next(i for i, l in enumerate(lines) if l.strip().startswith("st.global")
                         or re.match(r"^@%p\d+ st\.global", l.strip()))
    else:
        first_wait = next(i for i, l in enumerate(lines) if "cp.async.wait_group" in l)
        ready = next(i for i in range(first_wait, len(lines)) if "bar.sync" in lines[i])
        last_wait = max(i for i, l in enumerate(lines) if "cp.async.wait_group" in l)
    rets = [i for i, l in enumerate(lines) if l.strip() == "ret;"]
    if len(rets) != 1:
        raise SystemExit(f"{kernel}: expected one ret, found {len(rets)}")
    # The entry stamp goes after the body's leading declarations (not after
    # a `.reg` of a scoped block further down, such as an mbarrier wait's).
    decls = (".reg", ".shared", ".local")
    entry = None
    for i, l in enumerate(lines):
        if l.strip().startswith(decls):
            entry = i
        elif l.strip() and entry is not None:
            break

    inserts = {entry: [stamp(index["entry"], entry=True)],
               ready: [stamp(index["ready"])],
               last_wait - 1: [stamp(index["epilogue"])]}
    for k, label in enumerate(exits):
        at = next(i for i, l in enumerate(lines) if l.strip() == f"{label}:")
        inserts.setdefault(at, []).append(stamp(index[f"loop{k + 1}"]))
    out = []
    for i, line in enumerate(lines):
        if i == rets[0]:
            out.append(stamp(index["exit"], barrier=True))
        out.append(line)
        for text in inserts.get(i, []):
            out.append(text)
    decl = f".global .align 8 .b8 {ARRAY}[{MAX_PROGRAMS * SLOTS * 8}];\n\n"
    text = ptx[:body_open + 1] + "\n".join(out) + ptx[body_close:]
    # Module-scope declarations come before the first .entry / .func.
    first = min(x for x in (text.find(".visible .entry"), text.find(".entry")) if x >= 0)
    return text[:first] + decl + text[first:], names


def read_timeline(kernel, programs):
    from attn_mlir.runtime import _check, _driver

    cuda = _driver()
    ptr, size = ctypes.c_uint64(), ctypes.c_size_t()
    _check(cuda.cuModuleGetGlobal_v2(ctypes.byref(ptr), ctypes.byref(size), kernel._module,
                                     ARRAY.encode()), "cuModuleGetGlobal")
    host = (ctypes.c_uint64 * (programs * SLOTS))()
    _check(cuda.cuMemcpyDtoH_v2(host, ptr, ctypes.c_size_t(programs * SLOTS * 8)), "cuMemcpyDtoH")
    return [list(host[p * SLOTS:(p + 1) * SLOTS]) for p in range(programs)]


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if xs else float("nan")


def analyse(records, names, grid_x):
    """Phase medians by query block, launch gaps and slot occupancy.

    Columns: each phase from entry to exit, and the program's total."""
    k = len(names)
    by_block, per_sm = {}, {}
    for blk, rec in enumerate(records):
        r = list(rec)
        if not r[1]:
            continue
        # A loop in a branch the program did not take left its stamp 0: it
        # took no time there.
        for i in range(1, k):
            if not r[i]:
                r[i] = r[i - 1]
        qb = grid_x - 1 - (blk % grid_x)  # query block gridDim.x - 1 - x
        by_block.setdefault(qb, []).append(
            [r[i + 1] - r[i] for i in range(k - 1)] + [r[k - 1] - r[0]])
        per_sm.setdefault(r[SLOTS - 2], []).append((r[0], r[k - 1]))
    table = {qb: [median([v[i] for v in vs]) for i in range(len(vs[0]))]
             for qb, vs in sorted(by_block.items())}
    # Per SM: the thread blocks in entry order; a block's slot is the one
    # whose last block exited most recently before its entry.
    gaps, busy, span = [], 0, 0
    for sm, blocks in per_sm.items():
        blocks.sort()
        slots = []  # exit times of the slots' last thread blocks
        for entry, exit_ in blocks:
            done = [x for x in slots if x <= entry]
            if done and len(slots) >= 2:
                last = max(done)
                gaps.append(entry - last)
                slots.remove(last)
            slots.append(exit_)
            busy += exit_ - entry
        span += 2 * (max(e for _, e in blocks) - min(x for x, _ in blocks))
    return table, sorted(gaps), busy / span if span else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--kernels", required=True)
    ap.add_argument("--names", default="seed_causal,seed_mask")
    ap.add_argument("--seed-seq", default="256,512")
    ap.add_argument("--out")
    args = ap.parse_args()

    import torch

    from ab_kernels import interleaved_times, problem
    from attn_mlir.explain import warm_up
    from attn_mlir.runtime import Kernel

    results = []
    for name in args.names.split(","):
        manifest = os.path.join(args.kernels, name + ".json")
        with open(manifest) as f:
            m = json.load(f)
        with open(os.path.join(args.kernels, name + ".ptx")) as f:
            ptx = f.read()
        text, names = instrument(ptx, m["kernel"])
        plain, stamped = Kernel(manifest), Kernel(manifest, ptx=text)
        for t in (int(s) for s in args.seed_seq.split(",")):
            q, k, v, mask = problem(torch, name, t)
            mk = mask if m.get("mask") is not None else None
            out_a, out_b = torch.empty_like(q), torch.empty_like(q)
            calls = {"plain": lambda: plain(q, k, v, mk, out=out_a),
                     "stamped": lambda: stamped(q, k, v, mk, out=out_b)}
            warm_up(lambda: (calls["plain"](), calls["stamped"]()))
            times = interleaved_times(torch, calls, 30)
            diff = (out_a - out_b).abs().max().item()
            calls["stamped"]()
            torch.cuda.synchronize()
            grid_x = (t + 63) // 64
            records = read_timeline(stamped, 32 * 96 * grid_x)
            table, gaps, occupancy = analyse(records, names, grid_x)
            med = {s: median(v) for s, v in times.items()}
            print(f"\n## {name} T={t}: plain {med['plain']:.4f} ms, stamped {med['stamped']:.4f} ms "
                  f"({med['stamped'] / med['plain']:.3f}x), max |diff| {diff:.1e}")
            phases = ([f"{names[i]}->{names[i + 1]}" for i in range(len(names) - 1)]
                      + ["total"])
            print("| query block | " + " | ".join(phases) + " |")
            print("| --- " * (len(phases) + 1) + "|")
            for qb, row in table.items():
                print(f"| {qb} | " + " | ".join(f"{x:.0f}" for x in row) + " |")
            pct = [gaps[int(len(gaps) * f)] for f in (0.1, 0.5, 0.9)] if gaps else []
            print(f"launch gap (cycles) p10/p50/p90: {pct}; slot occupancy {occupancy:.3f}")
            results.append({"kernel": name, "T": t, "plain_ms": med["plain"],
                            "stamped_ms": med["stamped"], "stamps": names,
                            "phase_medians_by_query_block": table, "gap_p10_p50_p90": pct,
                            "slot_occupancy": occupancy})
            del q, k, v, mask, out_a, out_b
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
