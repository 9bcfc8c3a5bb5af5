#!/usr/bin/env python3
"""Summarises ncu per-instruction stall sampling: by opcode and reason, and the top instructions.

    ncu --section SourceCounters --section WarpStateStats --page source --print-source sass --csv ... > X.csv
    stall_summary.py X.csv
"""
import csv, sys, collections
rows = list(csv.reader(open(sys.argv[1], errors="replace")))
# find header row
hi = next(i for i, r in enumerate(rows) if any("Source" == c.strip() for c in r))
hdr = [c.strip() for c in rows[hi]]
data = rows[hi + 1:]
src = hdr.index("Source")
def col(name):
    for i, c in enumerate(hdr):
        if c == name: return i
    return None
samp = next(i for i, c in enumerate(hdr) if c.startswith("Warp Stall Sampling (All"))
execd = next((i for i, c in enumerate(hdr) if c.startswith("Instructions Executed")), None)
reasons = [(i, c) for i, c in enumerate(hdr) if c.startswith("stall_") or c.startswith("smsp__pcsamp_warps_issue_stalled")]
def num(x):
    try: return float(x.replace(",", ""))
    except: return 0.0
tot = sum(num(r[samp]) for r in data if len(r) > samp) or 1
byop = collections.defaultdict(lambda: [0.0, 0.0, collections.Counter()])
for r in data:
    if len(r) <= samp: continue
    op = r[src].strip().split()
    if not op: continue
    o = op[0] if not op[0].startswith("@") else (op[1] if len(op) > 1 else op[0])
    o = o.split(".")[0]
    e = byop[o]; e[0] += num(r[samp]); e[1] += num(r[execd]) if execd is not None else 0
    for i, c in reasons: e[2][c] += num(r[i])
print(f"total samples {tot:.0f}; reason columns: {len(reasons)}")
agg = collections.Counter()
for o, e in byop.items(): agg.update(e[2])
for c, v in agg.most_common(10): print(f"  {c:50s} {100*v/tot:5.1f}%")
for o, e in sorted(byop.items(), key=lambda kv: -kv[1][0])[:14]:
    top = ", ".join(f"{c.replace('smsp__pcsamp_warps_issue_stalled_','')} {100*v/max(e[0],1):.0f}%" for c, v in e[2].most_common(3))
    print(f"{o:8s} {100*e[0]/tot:5.1f}%  exec {e[1]/1e6:8.2f}M  [{top}]")
print("top instructions:")
idx = sorted(range(len(data)), key=lambda i: -num(data[i][samp]) if len(data[i]) > samp else 0)[:25]
for i in sorted(idx):
    r = data[i]
    top = ", ".join(f"{c.replace('smsp__pcsamp_warps_issue_stalled_','')} {num(r[j]):.0f}" for j, c in sorted(reasons, key=lambda jc: -num(r[jc[0]]))[:2])
    print(f"  #{i:5d} {100*num(r[samp])/tot:5.2f}%  {r[src].strip()[:70]:70s} [{top}]")
