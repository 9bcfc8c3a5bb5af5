#!/usr/bin/env python3
"""Runs compiled attn-mlir kernels on a GPU and checks them in float64.

    gpu_check.py DIR [--filter SUBSTR] [--out OUTDIR]

DIR holds PTX + manifests and cases.json from compile_gpu_cases.py. Each case
gets fresh random inputs (never zeros; masks with -inf and a fully masked
row, structured as the CPU matrix's for seeds divisible by 3, optional NaN
query row; for odd seeds Q, K, V and the output in (B, T, H, D) storage viewed
as (B, H, T, D)), its output buffer poisoned with NaN first, a
launch through attn_mlir.runtime (CUDA driver, PyTorch's stream), and a
comparison with a float64 reference of SPEC section 1 computed with torch
on the GPU. Tolerances (rel_l2, max_abs) per dtype, as docs/Testing.md
states: f32 ieee 1e-5/1e-4, f32 tf32 2e-3/1e-2, f16 2e-3/1e-2,
bf16 1e-2/5e-2. A kernel that writes the log-sum-exp (a case with "lse",
SPEC section 1.2) gets a NaN-poisoned float32 (B, Hq, Tq) buffer too, for
odd seeds in (B, T, H) storage, checked against the float64 logsumexp of the
same scores: -inf and NaN rows exactly, the others within LSE_TOL * (1 +
|lse|). A case with "kv_lengths" passes attn_cases.kv_lengths_array's
per-batch key counts (int32, on the device) to the kernel, and the
reference removes each batch's keys from its count on, which also stands
for Tk in the bottom-right and window offsets. A case with "varlen" (packed
sequences) passes attn_cases.varlen_arrays' cu_seqlens_q and cu_seqlens_k,
and the reference computes each sequence alone (its rows and keys, b = the
sequence for the regions), rows of no sequence zero with lse -inf. A case
with "page" (a paged KV cache) passes pools of pages that hold the random K
and V in the order of attn_cases.block_table_array's table (the pool's
other pages NaN, so a wrong page poisons the output) and the table; the
reference reads the contiguous K and V. Split-KV cases need nothing
here: the manifest's epilogue kernel merges the splits. Prints one line per
failure and a summary table last.
"""

import argparse
import json
import math
import os
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
from attn_mlir.runtime import Kernel  # noqa: E402

sys.path.insert(0, os.path.join(HERE, "..", "test", "Integration"))
try:  # the CPU matrix's structured masks need numpy
    import numpy as np
    import attn_cases
except ImportError:
    attn_cases = None

TOL = {"f32-ieee": (1e-5, 1e-4), "f32-tf32": (2e-3, 1e-2), "f16": (2e-3, 1e-2), "bf16": (1e-2, 5e-2)}
LSE_TOL = {"f32-ieee": 1e-5, "f32-tf32": 2e-3, "f16": 1e-3, "bf16": 8e-3}
DTYPE = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}


def mask_shape(case):
    kind, tq, tk = case["mask"], case["tq"], case["tk"]
    if kind is None:
        return None
    if kind.endswith("2"):
        return [tq, tk]
    return [1, case["hq"], tq, tk] if case["seed"] % 2 else [case["b"], 1, tq, tk]


def make_inputs(case, gen):
    dt = DTYPE[case["dtype"].split("-")[0]]
    b, hq, hkv, tq, tk, d, dv = (case[k] for k in ("b", "hq", "hkv", "tq", "tk", "d", "dv"))
    rnd = lambda *s: (torch.rand(*s, generator=gen, device="cuda") * 2 - 1).to(dt)  # noqa: E731
    q, k, v = rnd(b, hq, tq, d), rnd(b, hkv, tk, d), rnd(b, hkv, tk, dv)
    if case["nan_row"]:
        q[0, 0, tq // 2, 0] = float("nan")
    if case["seed"] % 2:  # (B, T, H, D) storage viewed as (B, H, T, D)
        q, k, v = (t.transpose(1, 2).contiguous().transpose(1, 2) for t in (q, k, v))
    mask = None
    ms = mask_shape(case)
    structured = case["seed"] % 3 == 0 or case.get("pattern")
    if ms is not None and structured and attn_cases is None:
        raise RuntimeError("structured masks need numpy")
    if ms is not None and structured:
        # The CPU matrix's structured masks (whole removed, zero-term,
        # triangular and mixed blocks of the block map), from the seed, or
        # its named pattern (the seed's causal mask tensor).
        m = attn_cases._mask_array(case, np.random.default_rng(case["seed"]))
        mask = torch.from_numpy(np.ascontiguousarray(m)).to("cuda")
        mask = mask if mask.dtype == torch.bool else mask.to(dt)
    elif ms is not None:
        if case["mask"].startswith("bool"):
            mask = torch.rand(*ms, generator=gen, device="cuda") < 0.7
            mask.view(-1, ms[-1])[0, :] = False
        else:
            mask = torch.rand(*ms, generator=gen, device="cuda") * 4 - 2
            mask[torch.rand(*ms, generator=gen, device="cuda") < 0.2] = -math.inf
            mask.view(-1, ms[-1])[0, :] = -math.inf
            mask = mask.to(dt)
    return q, k, v, mask


def make_captures(case):
    """The tensors the case's regions read (attn_cases.captures: ALiBi
    slopes, document ids), made as the CPU sweep makes them."""
    if not case.get("score_mod") and not case.get("mask_mod"):
        return {}
    rng = np.random.default_rng(case["seed"])
    return {name: torch.from_numpy(np.ascontiguousarray(
                attn_cases._capture_array(name, shape, elt, rng))).to("cuda")
            for name, shape, elt in attn_cases.captures(case)}


def modify(case, s, keep, captures):
    """SPEC section 1.1's score_mod and mask_mod of attn_cases' regions, in
    float64: (s, keep) over (B, Hq, Tq, Tk)."""
    tq, tk = s.shape[-2], s.shape[-1]
    i = torch.arange(tq, device=s.device)[:, None]
    j = torch.arange(tk, device=s.device)[None, :]
    h = torch.arange(s.shape[1], device=s.device)[None, :, None, None].double()
    score_mod = case.get("score_mod")
    if score_mod == "alibi":
        s = s + captures["slopes"].double()[None, :, None, None] * (j - i)
    elif score_mod == "neg_inf":
        s = s.masked_fill(((i + 2 * j) % 5 == 0) | (i % 11 == 3), -math.inf)
    elif score_mod == "branchy":
        s = torch.where(s > 0, 2 * torch.tanh(s), s * (1 + h / 4))
    mask_mod = (case.get("mask_mod") or "").replace("_i64", "")
    if mask_mod == "document":
        doc = captures["doc"]
        keep = keep & (doc[:, None, :tq, None] == doc[:, None, None, :tk])
    elif mask_mod == "prefix_lm":
        keep = keep & ((j < 7) | (j <= i))
    elif mask_mod == "chunked":
        keep = keep & (torch.div(i, 24, rounding_mode="floor") == torch.div(j, 24, rounding_mode="floor"))
    elif mask_mod == "dilated":
        keep = keep & ((j - i) % 3 == 0)
    return s, keep


def reference(case, q, k, v, mask, scale, captures=None, lse=False, kv_lengths=None):
    """SPEC section 1 (with 1.1's window and softcap) in float64: masked
    keys are removed from the sum. With `lse`, (O, LSE): the log-sum-exp of
    the same final scores, -inf for a row without keys."""
    hq, hkv, tq, tk = case["hq"], case["hkv"], case["tq"], case["tk"]
    g = hq // hkv
    qd = q.double()
    kd = k.double().repeat_interleave(g, dim=1)
    vd = v.double().repeat_interleave(g, dim=1)
    s = (qd @ kd.transpose(-1, -2)) * scale
    if case.get("softcap"):
        s = case["softcap"] * torch.tanh(s / case["softcap"])
    # Per batch (B, 1, 1, 1): its key count, Tk without kv_lengths.
    n = torch.full((q.shape[0], 1, 1, 1), tk, dtype=torch.long, device=q.device)
    if kv_lengths is not None:
        n = kv_lengths.long().clamp(0, tk).view(-1, 1, 1, 1)
    off = n - tq if case["causal"] == "bottom_right" else torch.zeros_like(n)
    i = torch.arange(tq, device=q.device)[:, None]
    j = torch.arange(tk, device=q.device)[None, :]
    keep = j < n
    if case["causal"]:
        keep = keep & (j <= i + off)
    if case.get("window"):  # SPEC section 1.1
        left, right = case["window"]
        if left >= 0:
            keep = keep & (j >= i + off - left)
        if right >= 0:
            keep = keep & (j <= i + off + right)
    keep = keep.expand(s.shape)
    if mask is not None:
        m = mask if mask.dim() == 4 else mask[None, None]
        if mask.dtype == torch.bool:
            keep = keep & m
        else:
            keep = keep & (m != -math.inf)
            s = s + m.double().masked_fill(m == -math.inf, 0)
    s, keep = modify(case, s, keep, captures or {})
    keep = keep & (s != -math.inf)  # a kept key whose final score is -inf
    s = s.masked_fill(~keep, -math.inf)
    empty = ~keep.any(-1, keepdim=True)
    mx = s.amax(-1, keepdim=True).masked_fill(empty, 0)
    p = torch.exp(s - mx)
    o = (p @ vd) / p.sum(-1, keepdim=True)
    if lse:
        rows = (mx + torch.log(p.sum(-1, keepdim=True))).masked_fill(empty, -math.inf)
        return o.masked_fill(empty, 0), rows[..., 0]
    return o.masked_fill(empty, 0)


def varlen_reference(case, q, k, v, scale, captures, lse, cu_q, cu_k):
    """reference() of each packed sequence alone: (O, LSE) of the whole
    packed query, zero rows and -inf where no sequence is."""
    out = torch.zeros(q.shape[:3] + (v.shape[3],), dtype=torch.float64, device=q.device)
    rows = torch.full(q.shape[:3], -math.inf, dtype=torch.float64, device=q.device)
    for s in range(len(cu_q) - 1):
        q0, q1, k0, k1 = int(cu_q[s]), int(cu_q[s + 1]), int(cu_k[s]), int(cu_k[s + 1])
        if q1 == q0:
            continue
        sub = dict(case, tq=q1 - q0, tk=k1 - k0)
        seq_captures = {n: (t[s:s + 1] if n == "doc" else t) for n, t in captures.items()}
        if k1 == k0:
            continue
        o, l = reference(sub, q[:, :, q0:q1], k[:, :, k0:k1], v[:, :, k0:k1], None, scale,
                         seq_captures, lse=True)
        out[:, :, q0:q1] = o
        rows[:, :, q0:q1] = l
    return (out, rows) if lse else out


def compare_lse(lse, ref, tol):
    """-inf and NaN rows matched exactly; the others within tol * (1 +
    |ref|). Returns ok, the largest scaled error and the mismatched rows."""
    lse = lse.double()
    fin = torch.isfinite(ref)
    mismatched = int((~fin & ~((lse == ref) | (lse.isnan() & ref.isnan()))).sum())
    mismatched += int((fin & ~torch.isfinite(lse)).sum())
    both = fin & torch.isfinite(lse)
    err = ((lse - ref).abs() / (1 + ref.abs()))[both]
    mx = err.max().item() if err.numel() else 0.0
    return mismatched == 0 and mx <= tol, mx, mismatched


def compare(out, ref, tol):
    out = out.double()
    nan_ref, nan_out = ~torch.isfinite(ref), ~torch.isfinite(out)
    mismatched = int((nan_ref != nan_out).sum())
    fin = ~nan_ref
    diff = (out - ref)[fin]
    denom = ref[fin].norm().item() or 1.0
    rel = diff.norm().item() / denom if diff.numel() else 0.0
    mx = diff.abs().max().item() if diff.numel() else 0.0
    ok = mismatched == 0 and rel <= tol[0] and mx <= tol[1]
    return ok, rel, mx, mismatched


def paged_pools(case, k, v):
    """The case's K and V (B, Hkv, Tk, D) as pools of pages (NP, Hkv, page,
    D) in the order of attn_cases.block_table_array, unused pages NaN, and
    the int32 (B, P) table on the device."""
    pages, pool = attn_cases.paged_sizes(case)
    page = case["page"]
    table = torch.from_numpy(attn_cases.block_table_array(case)).to("cuda")
    ids = table.flatten().long()
    pools = []
    for x in (k, v):
        b, h, _, d = x.shape
        p = torch.full((pool, h, page, d), float("nan"), dtype=x.dtype, device="cuda")
        p[ids] = x.reshape(b, h, pages, page, d).transpose(1, 2).reshape(b * pages, h, page, d)
        pools.append(p)
    return pools[0], pools[1], table


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("dir")
    ap.add_argument("--filter", default="")
    ap.add_argument("--out", default=None)
    ap.add_argument("--progress", action="store_true",
                    help="print each case's name before it runs (to find a hang)")
    ap.add_argument("--block-x", type=int, default=0,
                    help="only the cases whose kernel's manifest block is this wide "
                         "(256: the warp-specialized kernels)")
    args = ap.parse_args()
    with open(os.path.join(args.dir, "cases.json")) as f:
        cases = json.load(f)
    kernels, results = {}, []
    t0 = time.time()
    for case in cases:
        if args.filter not in case["name"]:
            continue
        if args.block_x and not case.get("compile_error"):
            with open(os.path.join(args.dir, case["kernel"] + ".json")) as f:
                if json.load(f)["block"][0] != args.block_x:
                    continue
        if args.progress:
            print(f"RUN {case['name']} {case['kernel']}", flush=True)
        row = dict(name=case["name"], kernel=case["kernel"])
        try:
            if case.get("compile_error"):
                raise RuntimeError("compile error: " + case["compile_error"].splitlines()[0])
            if case["kernel"] not in kernels:
                kernels[case["kernel"]] = Kernel(os.path.join(args.dir, case["kernel"] + ".json"))
            kernel = kernels[case["kernel"]]
            gen = torch.Generator(device="cuda").manual_seed(case["seed"])
            q, k, v, mask = make_inputs(case, gen)
            captures = make_captures(case)
            out = torch.full((case["b"], case["hq"], case["tq"], case["dv"]), float("nan"),
                             dtype=q.dtype, device="cuda")
            if case["seed"] % 2:  # the output in (B, T, H, Dv) storage too
                out = out.transpose(1, 2).contiguous().transpose(1, 2)
            lse = None
            if kernel.manifest.lse_shape is not None:
                lse = torch.full((case["b"], case["hq"], case["tq"]), float("nan"),
                                 dtype=torch.float32, device="cuda")
                if case["seed"] % 2:  # (B, T, H) storage viewed as (B, H, T)
                    lse = lse.transpose(1, 2).contiguous().transpose(1, 2)
            lengths = None
            if case.get("kv_lengths"):
                lengths = torch.from_numpy(attn_cases.kv_lengths_array(case)).to("cuda")
            extra = {} if lengths is None else {"kv_lengths": lengths}
            if case.get("varlen"):
                cu_q, cu_k = (torch.from_numpy(a).to("cuda") for a in attn_cases.varlen_arrays(case))
                extra.update(cu_seqlens_q=cu_q, cu_seqlens_k=cu_k)
            kk, vk = k, v
            if case.get("page"):
                kk, vk, extra["block_table"] = paged_pools(case, k, v)
            kernel(q, kk, vk, mask, out=out, captures=list(captures.values()), lse=lse, **extra)
            torch.cuda.synchronize()
            scale = kernel.manifest.attributes["scale"]
            if case.get("varlen"):
                ref = varlen_reference(case, q, k, v, scale, captures, lse is not None, cu_q, cu_k)
            else:
                ref = reference(case, q, k, v, mask, scale, captures, lse=lse is not None,
                                kv_lengths=lengths)
            ok, rel, mx, nanmis = compare(out, ref[0] if lse is not None else ref,
                                          TOL[case["dtype"]])
            row.update(ok=ok, rel_l2=rel, max_abs=mx, nan_mismatch=nanmis)
            if lse is not None:
                lse_ok, lse_err, lse_mis = compare_lse(lse, ref[1], LSE_TOL[case["dtype"]])
                row.update(ok=ok and lse_ok, lse_max_err=lse_err, lse_mismatch=lse_mis)
        except Exception as e:  # report and go on
            row.update(ok=False, error=f"{type(e).__name__}: {e}")
        results.append(row)
        if not row["ok"]:
            desc = " ".join(f"{k}={case[k]}" for k in ("dtype", "b", "hq", "hkv", "tq", "tk", "d", "dv",
                                                       "causal", "mask", "nan_row", "block", "lse",
                                                       "split", "kv_lengths", "varlen", "page",
                                                       "window", "softcap", "score_mod", "mask_mod")
                            if case.get(k) is not None)
            print(f"FAIL {case['name']} [{desc}] {row.get('error') or row}", flush=True)
    passed = sum(r["ok"] for r in results)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "gpu_check.json"), "w") as f:
            json.dump(results, f, indent=1)
    worst, worst_lse = {}, {}
    for case, r in zip([c for c in cases if args.filter in c["name"]], results):
        if "rel_l2" in r:
            worst[case["dtype"]] = max(worst.get(case["dtype"], 0.0), r["rel_l2"])
        if "lse_max_err" in r:
            worst_lse[case["dtype"]] = max(worst_lse.get(case["dtype"], 0.0), r["lse_max_err"])
    print(f"| device | {torch.cuda.get_device_name()} | {time.time() - t0:.1f} s |")
    for dt, w in sorted(worst.items()):
        print(f"| worst rel_l2 {dt} | {w:.2e} | tol {TOL[dt][0]:.0e} |")
    for dt, w in sorted(worst_lse.items()):
        print(f"| worst lse_max_err {dt} | {w:.2e} | tol {LSE_TOL[dt]:.0e} |")
    print(f"gpu-check: {passed} passed, {len(results) - passed} failed")
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
