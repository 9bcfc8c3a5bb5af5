#!/usr/bin/env python3
"""Writes the inputs of lse-output.test and checks the two .npy files attn-run
wrote (--output=@o.npy --output=@lse.npy) against numpy's float64 attention,
independent of attn-run's reference:

    lse_reference.py make DIR     q, k, v (f32, GQA 4:2) and an i1 mask
    lse_reference.py check DIR    o.npy and lse.npy against float64

The problem is bottom-right causal with Tq > Tk, so the first Tq - Tk rows
of every head see no key, and the mask removes every key of row Tq - 1 too:
their O is 0 and their LSE -inf."""

import os
import sys

import numpy as np

B, HQ, HKV, TQ, TK, D, DV = 2, 4, 2, 23, 17, 16, 8


def make(directory):
    rng = np.random.default_rng(7)
    for name, shape in (("q", (B, HQ, TQ, D)), ("k", (B, HKV, TK, D)), ("v", (B, HKV, TK, DV))):
        np.save(os.path.join(directory, name + ".npy"),
                rng.uniform(-1, 1, shape).astype(np.float32))
    mask = rng.random((TQ, TK)) < 0.8
    mask[TQ - 1, :] = False
    np.save(os.path.join(directory, "mask.npy"), mask)


def reference(directory):
    q, k, v = (np.load(os.path.join(directory, n + ".npy")).astype(np.float64) for n in "qkv")
    mask = np.load(os.path.join(directory, "mask.npy"))
    k, v = np.repeat(k, HQ // HKV, axis=1), np.repeat(v, HQ // HKV, axis=1)
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(D)
    keep = (np.arange(TK)[None, :] <= np.arange(TQ)[:, None] + TK - TQ) & mask
    s = np.where(keep, s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    p = np.exp(s - m)
    total = p.sum(axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        o = np.where(total > 0, (p @ v) / total, 0.0)
        lse = np.where(total[..., 0] > 0, m[..., 0] + np.log(total[..., 0]), -np.inf)
    return o, lse


def check(directory):
    o, lse = (np.load(os.path.join(directory, n + ".npy")) for n in ("o", "lse"))
    ref_o, ref_lse = reference(directory)
    print("o", o.shape, o.dtype, "lse", lse.shape, lse.dtype)
    empty = np.isneginf(ref_lse)
    print("rows without keys", int(empty.sum()), "of", empty.size,
          "-inf where expected", bool((np.isneginf(lse) == empty).all()))
    o_err = np.abs(o - ref_o).max()
    lse_err = (np.abs(lse[~empty] - ref_lse[~empty]) / (1 + np.abs(ref_lse[~empty]))).max()
    ok = o_err < 1e-5 and lse_err < 1e-5 and bool((np.isneginf(lse) == empty).all())
    print("o max_abs below 1e-5", o_err < 1e-5, "lse max_err below 1e-5", lse_err < 1e-5)
    print("zero rows", bool((o[empty] == 0).all()))
    return 0 if ok else 1


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2])
        sys.exit(0)
    sys.exit(check(sys.argv[2]))
