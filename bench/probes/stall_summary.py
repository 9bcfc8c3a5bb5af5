#!/usr/bin/env python3
"""Summarises ncu's per-instruction stall sampling of one kernel.

    ncu --section SourceCounters --section WarpStateStats --page source \\
        --print-source sass --csv ... > X.csv
    stall_summary.py X.csv [--top 25]

Prints the share of all stall samples per stall reason, per opcode (with
its executed instructions and its three main reasons), per execution count
(the instructions a warp executes equally often: once per program, once per
iteration of a key loop, ...; their count, their share of the executed
instructions and of the samples), and the instructions with the most
samples, in program order.
"""

import argparse
import collections
import csv
import sys

REASON_PREFIXES = ("stall_", "smsp__pcsamp_warps_issue_stalled_")


def number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return 0.0


def opcode(sass):
    words = sass.split()
    if not words:
        return ""
    op = words[1] if words[0].startswith("@") and len(words) > 1 else words[0]
    return op.split(".")[0]


def short(reason):
    return reason.replace("smsp__pcsamp_warps_issue_stalled_", "")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args()

    rows = list(csv.reader(open(args.csv, errors="replace")))
    head = next(i for i, r in enumerate(rows) if any(c.strip() == "Source" for c in r))
    names = [c.strip() for c in rows[head]]
    data = [r for r in rows[head + 1:] if len(r) == len(names)]
    source = names.index("Source")
    samples = next(i for i, c in enumerate(names) if c.startswith("Warp Stall Sampling (All"))
    executed = next((i for i, c in enumerate(names) if c.startswith("Instructions Executed")), None)
    reasons = [(i, c) for i, c in enumerate(names) if c.startswith(REASON_PREFIXES)]
    total = sum(number(r[samples]) for r in data) or 1.0

    by_op = collections.defaultdict(lambda: [0.0, 0.0, collections.Counter()])
    for r in data:
        entry = by_op[opcode(r[source])]
        entry[0] += number(r[samples])
        entry[1] += number(r[executed]) if executed is not None else 0.0
        for i, name in reasons:
            entry[2][name] += number(r[i])

    print(f"total samples {total:.0f}; reason columns: {len(reasons)}")
    overall = collections.Counter()
    for entry in by_op.values():
        overall.update(entry[2])
    for name, value in overall.most_common(10):
        print(f"  {short(name):50s} {100 * value / total:5.1f}%")
    for op, (share, count, why) in sorted(by_op.items(), key=lambda kv: -kv[1][0])[:14]:
        top = ", ".join(f"{short(n)} {100 * v / max(share, 1.0):.0f}%" for n, v in why.most_common(3))
        print(f"{op:8s} {100 * share / total:5.1f}%  exec {count / 1e6:8.2f}M  [{top}]")
    if executed is not None:
        # Code regions by how often a warp runs them: with one launch, every
        # instruction of a region has the same count.
        by_count = collections.defaultdict(lambda: [0, 0.0, 0.0])
        for r in data:
            count = number(r[executed])
            entry = by_count[count]
            entry[0] += 1
            entry[1] += count
            entry[2] += number(r[samples])
        all_executed = sum(entry[1] for entry in by_count.values()) or 1.0
        print("by execution count (instructions, executed, samples):")
        for count, (static, dynamic, share) in sorted(by_count.items(),
                                                      key=lambda kv: -kv[1][2])[:8]:
            print(f"  {count:12.0f}  {static:5d}  {100 * dynamic / all_executed:5.1f}%"
                  f"  {100 * share / total:5.1f}%")
    print("top instructions:")
    hottest = sorted(range(len(data)), key=lambda i: -number(data[i][samples]))[:args.top]
    for i in sorted(hottest):
        r = data[i]
        top = ", ".join(f"{short(n)} {number(r[j]):.0f}"
                        for j, n in sorted(reasons, key=lambda jn: -number(r[jn[0]]))[:2])
        print(f"  #{i:5d} {100 * number(r[samples]) / total:5.2f}%  {r[source].strip()[:70]:70s} [{top}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
