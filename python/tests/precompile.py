#!/usr/bin/env python3
"""Compiles the kernels of gpu_cases.py into a cache directory, ahead of
time, for a GPU machine without the compiler (this machine needs no torch:
the variant cases trace with stand-in captures; the kvcache cases take
attn_mlir.kvcache's signatures):
    precompile.py CACHE_DIR [--chip sm_90a]"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
from attn_mlir.compiler import Signature, compile  # noqa: E402
from gpu_cases import (CASES, KVCACHE_CASES, LSE_CASES, LSE_VARIANT_CASES,  # noqa: E402
                       PAGED_CASES, VARIANT_CASES, KVCache, VARLEN_CASES, kvcache_signature_for, signature_for,
                       variant_signature_for, varlen_signature_for)

ap = argparse.ArgumentParser()
ap.add_argument("cache")
ap.add_argument("--chip", default="sm_90a")
args = ap.parse_args()
for name, sig in ([(case[0], signature_for(case)) for case in CASES]
                  + [(case.name, variant_signature_for(case)) for case in VARIANT_CASES]
                  + [(case[0] + " (lse)", signature_for(case, lse=True)) for case in CASES
                     if case[0] in LSE_CASES]
                  + [(case.name + " (lse)", variant_signature_for(case, lse=True))
                     for case in VARIANT_CASES if case.name in LSE_VARIANT_CASES]):
    artifact = compile(sig, chip=args.chip, cache_dir=args.cache)
    print(name, artifact.directory, "cached" if artifact.cached else "compiled")
# attention_with_kvcache: with and without the log-sum-exp (the LSE cases
# run both); the decode kernels with their split_programs.
for case in KVCACHE_CASES + PAGED_CASES:
    for lse in (False, True) if case.lse else (False,):
        sig, split_programs = kvcache_signature_for(case._replace(lse=lse))
        artifact = compile(sig, chip=args.chip, cache_dir=args.cache, split_programs=split_programs)
        print(case.name + (" (lse)" if lse else ""), artifact.directory,
              "cached" if artifact.cached else "compiled")
# The kernels test_torch_serving_gpu.py's other kvcache tests call: the f16 B8 case
# without lengths (a whole cache, an int length), with and without the
# log-sum-exp; attention(kv_lengths=) on the speculative-decode shapes (a
# dynamic Tq, bottom_right, no window).
b8 = next(c for c in KVCACHE_CASES if c.name == "decode_f16_b8_tk1k")
for lse in (False, True):
    sig, split_programs = kvcache_signature_for(b8._replace(lengths=None, lse=lse))
    artifact = compile(sig, chip=args.chip, cache_dir=args.cache, split_programs=split_programs)
    print(b8.name + " (whole cache" + (", lse)" if lse else ")"), artifact.directory,
          "cached" if artifact.cached else "compiled")
# test_paged_errors' kernel: f16 decode over pages of 16 with lengths.
sig, split_programs = kvcache_signature_for(KVCache("paged_errors", "f16", 2, 1, 4, 2, 48, 64,
                                                    64, False, lse=False, page=16))
artifact = compile(sig, chip=args.chip, cache_dir=args.cache, split_programs=split_programs)
print("paged errors", artifact.directory, "cached" if artifact.cached else "compiled")
# test_kvcache_append's kernels: bf16 causal Tq 2 over a cache with lengths,
# over pages of 64 with lengths, and without lengths (an int length).
for append in (KVCache("append", "bf16", 3, 2, 8, 2, 300, 64, 64, True, lse=False),
               KVCache("append paged", "bf16", 3, 2, 8, 2, 300, 64, 64, True, lse=False, page=64),
               KVCache("append int", "bf16", 3, 2, 8, 2, 300, 64, 64, False, lse=False,
                       lengths=None)):
    sig, split_programs = kvcache_signature_for(append)
    artifact = compile(sig, chip=args.chip, cache_dir=args.cache, split_programs=split_programs)
    print(append.name, artifact.directory, "cached" if artifact.cached else "compiled")
spec = next(c for c in KVCACHE_CASES if c.name == "spec_decode_f16_tq4_window")
sig = Signature("f16", (None, spec.hq, None, spec.d), (None, spec.hkv, None, spec.d),
                (None, spec.hkv, None, spec.dv), causal="bottom_right", lse=True,
                kv_lengths=True)
artifact = compile(sig, chip=args.chip, cache_dir=args.cache)
print("attention(kv_lengths=)", artifact.directory, "cached" if artifact.cached else "compiled")
# attention_varlen: with and without the log-sum-exp (the LSE cases run
# both).
for case in VARLEN_CASES:
    for lse in (False, True) if case.lse else (False,):
        artifact = compile(varlen_signature_for(case, lse), chip=args.chip, cache_dir=args.cache)
        print(case.name + (" (lse)" if lse else ""), artifact.directory,
              "cached" if artifact.cached else "compiled")
