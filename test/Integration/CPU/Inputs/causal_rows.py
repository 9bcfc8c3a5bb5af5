"""Writes the additive masks of causal-rows.test into a directory.

causal.npy (T=200) is the seed's causal mask tensor: every map row has the
triangular mask's classes, so every program runs a causal program's loops.
Each near-miss mask (T=128, 64x32 blocks) breaks one of the conditions of
that check in one map row, and a program that took the causal loops anyway
would attend keys the mask removes, or drop keys it keeps:
  near_count.npy  rows 0..63 also see keys 32..63: classes 3, 1 (the count
                  of triangular blocks is short of the range's);
  near_first.npy  rows 64..127 lose keys 0..31: classes 0, 1, 3, 3 (the
                  first live block is not 0);
  near_last.npy   rows 0..63 lose keys 32..63 (already removed for rows
                  0..31): classes 3, 0 (the last live block is before the
                  diagonal's).
bottom_right.npy (Tq=129, Tk=65) is the triangle of a bottom-right causal
mask, key j seen from row i when j <= i + 65 - 129, for a function that is
causal bottom-right as well: the diagonal at offset -64, the first 64 rows
see no key (their row has no live block: the map's loops), the others are
causal rows with that offset.
"""
import sys

import numpy as np


def causal(t):
    i = np.arange(t)[:, None]
    j = np.arange(t)[None, :]
    return np.where(j <= i, 0.0, -np.inf).astype(np.float32)


def main():
    out = sys.argv[1]
    np.save(f"{out}/causal.npy", causal(200)[None, None])
    i, j = np.arange(129)[:, None], np.arange(65)[None, :]
    bottom_right = np.where(j <= i + 65 - 129, 0.0, -np.inf).astype(np.float32)
    np.save(f"{out}/bottom_right.npy", bottom_right[None, None])
    m = causal(128)
    m[0:64, 32:64] = 0.0
    np.save(f"{out}/near_count.npy", m[None, None])
    m = causal(128)
    m[64:128, 0:32] = -np.inf
    np.save(f"{out}/near_first.npy", m[None, None])
    m = causal(128)
    m[0:64, 32:64] = -np.inf
    np.save(f"{out}/near_last.npy", m[None, None])


if __name__ == "__main__":
    main()
