#!/usr/bin/env python3
"""Inputs that make the online softmax's reference max move late and far.

    lazy_rescale.py --attn-run PATH --workdir DIR [--target cpu|cuda]
    lazy_rescale.py --attn-run PATH --emit-kernels KDIR          (MLIR host)
    lazy_rescale.py --attn-run PATH --workdir DIR --manifests KDIR  (GPU host)

Random inputs keep every score within a few units of the first block's
max, so after the first block the lazy rescale of --attn-online-softmax
(the reference max moves only when a block's max exceeds it by more than
2^8 in exp2 units) never fires again. Here the key norms grow (or shrink)
along the sequence, so the row max keeps growing by far more than that
threshold (shrinking: it seldom does, and P stays up to 2^8). For each
dtype and variant the script writes the .mlir and .npy inputs, runs
`attn-run --check` against the float64 reference, and prints one line per
case with the number of key blocks (of block_n keys) at which the
threshold is crossed for at least one row, computed here with numpy.
A GPU machine without MLIR runs the cases from kernels emitted on a host
with it (`--emit-kernels`, then `--manifests` there with the runner-only
attn-run); the inputs are generated the same way on both.
"""

import argparse
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import attn_cases  # noqa: E402

B, H, T, D = 1, 2, 300, 32
BLOCK_N = 32
SCALE = 1.0 / np.sqrt(D)


def bf16(x):
    """x rounded to bfloat16 (nearest even), as (the f32 values, the 2-byte
    void array attn-run reads as bf16: numpy.save of ml_dtypes.bfloat16)."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    top = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return (top.astype(np.uint32) << 16).view(np.float32), top.view("V2")


def rounded(x, elt):
    """(the values as the kernel sees them, the array to save)."""
    if elt == "bf16":
        return bf16(x)
    y = x.astype(np.float32 if elt == "f32" else np.float16)
    return y.astype(np.float32), y


def crossings(q, k, mask):
    """Key blocks (of 32 keys) at which some row's block max exceeds its running
    reference by more than 8 / (scale * log2 e), as the lazy rule moves it."""
    s = np.einsum("bhqd,bhkd->bhqk", q.astype(np.float64), k.astype(np.float64))
    if mask is not None:
        s = s + mask.astype(np.float64)
    limit = 8.0 / (SCALE * np.log2(np.e))
    ref = np.full(s.shape[:3], -np.inf)
    count = 0
    for j0 in range(0, T, BLOCK_N):
        block = s[..., j0:j0 + BLOCK_N].max(axis=-1)
        grow = block > ref + limit
        if j0 > 0 and grow.any():
            count += 1
        ref = np.where(grow, block, ref)
    return count


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--attn-run", required=True)
    ap.add_argument("--workdir")
    ap.add_argument("--target", default="cpu")
    ap.add_argument("--emit-kernels", metavar="KDIR",
                    help="only compile each case for the GPU into KDIR")
    ap.add_argument("--manifests", metavar="KDIR",
                    help="run the kernels of KDIR (--emit-kernels) on the GPU")
    args = ap.parse_args()
    if not args.emit_kernels and not args.workdir:
        ap.error("--workdir is required unless --emit-kernels is given")
    workdir = args.emit_kernels or args.workdir
    os.makedirs(workdir, exist_ok=True)
    rng = np.random.default_rng(7)
    ok = True
    for elt in ("f32", "f16", "bf16"):
        for trend in ("growing", "shrinking"):
            for causal, mask in ((False, False), (True, False), (False, True)):
                # Keys j scaled by 1 + j/25 (growing) or its reverse: row
                # maxima move by tens of exp2 units across the blocks.
                ramp = 1.0 + np.arange(T) / 25.0
                if trend == "shrinking":
                    ramp = ramp[::-1].copy()
                q = rng.standard_normal((B, H, T, D))
                k = rng.standard_normal((B, H, T, D)) * ramp[None, None, :, None]
                v = rng.standard_normal((B, H, T, D))
                m = None
                if mask:
                    # An additive float mask (the unfolded-scale path): a
                    # bias, and -inf on a band.
                    m = rng.standard_normal((T, T)) * 2.0
                    m[np.abs(np.subtract.outer(np.arange(T), np.arange(T))) % 7 == 3] = -np.inf
                name = f"{elt}_{trend}_{'causal' if causal else 'mask' if mask else 'full'}"
                files, seen = [], {}
                for tag, x in (("q", q), ("k", k), ("v", v), ("m", m)):
                    if x is None:
                        continue
                    seen[tag], saved = rounded(x, elt)
                    path = os.path.join(workdir, f"{name}_{tag}.npy")
                    np.save(path, saved)
                    files.append("--input=@" + path)
                cross = crossings(seen["q"], seen["k"], seen.get("m"))
                src = os.path.join(workdir, name + ".mlir")
                with open(src, "w") as f:
                    f.write(attn_cases.mlir_text(dict(
                        # f32 runs the exact (ieee) path: with scores this
                        # large, tf32's 10-bit rounding of Q and K moves the
                        # logits by ~1e-2, past tf32's tolerance, which is
                        # stated for inputs in [-1, 1) (Reference.cpp); the
                        # ieee path checks the rescale itself to 1e-5.
                        name=name, dtype="f32-ieee" if elt == "f32" else elt,
                        b=B, hq=H, hkv=H, tq=T, tk=T, d=D, dv=D, dynamic=True,
                        causal="top_left" if causal else None,
                        mask="float2" if mask else None, seed=0)))
                if args.emit_kernels:
                    out = subprocess.run([args.attn_run, src, "--target=cuda",
                                          f"--emit-kernel={args.emit_kernels}"],
                                         capture_output=True, text=True)
                    if out.returncode != 0:
                        print(f"{name}: emit FAILED {out.stderr.strip()}")
                        ok = False
                    continue
                if args.manifests:
                    cmd = [args.attn_run,
                           os.path.join(args.manifests, name + ".json")]
                else:
                    cmd = [args.attn_run, src, f"--target={args.target}"]
                out = subprocess.run(cmd + files + ["--check"],
                                     capture_output=True, text=True)
                last = (out.stdout.strip().splitlines() or [out.stderr.strip()])[-1]
                ok &= out.returncode == 0 and last.startswith("check: PASS")
                print(f"{name}: crossings={cross} {last}")
    if args.emit_kernels:
        for f in os.listdir(workdir):
            if f.endswith(".npy") or f.endswith(".mlir"):
                os.remove(os.path.join(workdir, f))
    print("lazy-rescale:", "ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
