"""The serving forms of attn_mlir.torch on a GPU: attention_with_kvcache
(FlashAttention's flash_attn_with_kvcache conventions: decode with
per-batch cache lengths, split-KV, speculative decode, windows, appended
keys) against a float64 reference that truncates each batch's keys to its
length, the paged cases (block_table) reading the same caches' pages
scattered over a pool in random order; attention_varlen
(flash_attn_varlen_func's conventions: packed sequences, cu_seqlens)
against a float64 reference that computes each sequence alone. Skips
without torch or a GPU; on a GPU machine without the compiler, set
ATTN_MLIR_CACHE_DIR to a cache filled by precompile.py."""

import itertools
import math
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

from test_torch_gpu import HAVE_GPU, LSE_TOL, TOL, check_lse  # noqa: E402

if HAVE_GPU:
    import torch

from gpu_cases import (KVCACHE_CASES, PAGED_CASES, VARLEN_CASES,  # noqa: E402
                       kvcache_signature_for, paged_pool)


def make_kvcache(case, gen, device="cuda"):
    """q (B, Tq, Hq, D), k_cache, v_cache (B, Tk, Hkv, D / Dv) and the
    case's cache_seqlens: random int32 lengths in 0 .. Tk (batch 0 full,
    batch 1 empty where B >= 3), Tk - 37 for "int", None."""
    dt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[case.dtype]
    rnd = lambda *s: (torch.rand(*s, generator=gen, device=device) * 2 - 1).to(dt)  # noqa: E731
    q = rnd(case.b, case.tq, case.hq, case.d)
    k_cache = rnd(case.b, case.tk, case.hkv, case.d)
    v_cache = rnd(case.b, case.tk, case.hkv, case.dv)
    lengths = None
    if case.lengths == "tensor":
        lengths = torch.randint(0, case.tk + 1, (case.b,), generator=gen, device=device,
                                dtype=torch.int32)
        if case.b >= 2:
            lengths[0] = case.tk
        if case.b >= 3:
            lengths[1] = 0
    elif case.lengths == "int":
        lengths = case.tk - 37
    return q, k_cache, v_cache, lengths


def kvcache_reference(case, q, k_cache, v_cache, lengths):
    """out (B, Tq, Hq, Dv) and lse (B, Hq, Tq) in float64, batch by batch on
    its first `lengths[b]` keys, FlashAttention's way: causal and the window
    aligned to the bottom right of those keys; zeros and -inf for a row
    without keys."""
    b, tq, hq, d = q.shape
    hkv, dv, g = k_cache.shape[2], v_cache.shape[3], hq // k_cache.shape[2]
    dev = q.device
    out = torch.zeros(b, tq, hq, dv, dtype=torch.float64, device=dev)
    lse = torch.full((b, hq, tq), -math.inf, dtype=torch.float64, device=dev)
    left, right = case.window
    if case.causal:
        right = 0
    for bi in range(b):
        n = case.tk if lengths is None else (lengths if isinstance(lengths, int)
                                             else int(lengths[bi]))
        if n <= 0:
            continue
        # The query heads of one KV head as rows: (Hkv, g * Tq, D).
        qb = q[bi].double().permute(1, 0, 2).reshape(hkv, g * tq, d)
        kb = k_cache[bi, :n].double().transpose(0, 1)
        vb = v_cache[bi, :n].double().transpose(0, 1)
        s = (qb @ kb.transpose(-1, -2) / math.sqrt(d)).reshape(hq, tq, n)
        if case.softcap:
            s = case.softcap * torch.tanh(s / case.softcap)
        i = torch.arange(tq, device=dev)[:, None]
        j = torch.arange(n, device=dev)[None]
        keep = torch.ones(tq, n, dtype=torch.bool, device=dev)
        if left >= 0:
            keep &= j >= i + n - tq - left
        if right >= 0:
            keep &= j <= i + n - tq + right
        s = s.masked_fill(~keep, -math.inf)
        empty = ~keep.any(-1, keepdim=True)
        p = torch.exp(s - s.amax(-1, keepdim=True).masked_fill(empty, 0))
        o = (p.reshape(hkv, g * tq, n) @ vb).reshape(hq, tq, dv) / p.sum(-1, keepdim=True)
        out[bi] = o.masked_fill(empty, 0).transpose(0, 1)
        lse[bi] = torch.logsumexp(s, -1)
    return out, lse


def make_varlen(case, gen, device="cuda"):
    """Packed q (total_q, Hq, D), k, v (total_k, Hkv, D / Dv) and the int32
    offsets of the case's lengths, with three padding rows after the last
    query (zeros, lse -inf)."""
    dt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[case.dtype]
    rnd = lambda *s: (torch.rand(*s, generator=gen, device=device) * 2 - 1).to(dt)  # noqa: E731
    lengths_k = case.lengths_k or case.lengths_q
    offsets = lambda ls: torch.tensor([0] + list(itertools.accumulate(ls)),  # noqa: E731
                                      dtype=torch.int32, device=device)
    cu_q, cu_k = offsets(case.lengths_q), offsets(lengths_k)
    q = rnd(int(cu_q[-1]) + 3, case.hq, case.d)
    k = rnd(int(cu_k[-1]), case.hkv, case.d)
    v = rnd(int(cu_k[-1]), case.hkv, case.dv)
    return q, k, v, cu_q, cu_k


def varlen_reference(case, q, k, v, cu_q, cu_k):
    """out (total_q, Hq, Dv) and lse (Hq, total_q) in float64, sequence by
    sequence through kvcache_reference's rule (bottom-right causal and
    window); rows of no sequence zero and -inf."""
    out = torch.zeros(q.shape[0], case.hq, case.dv, dtype=torch.float64, device=q.device)
    lse = torch.full((case.hq, q.shape[0]), -math.inf, dtype=torch.float64, device=q.device)
    for s in range(len(cu_q) - 1):
        q0, q1, k0, k1 = int(cu_q[s]), int(cu_q[s + 1]), int(cu_k[s]), int(cu_k[s + 1])
        if q1 == q0:
            continue
        seq = case._replace(tk=k1 - k0) if hasattr(case, "tk") else KVCacheLike(case, k1 - k0)
        o, l = kvcache_reference(seq, q[None, q0:q1], k[None, k0:k1], v[None, k0:k1], None)
        out[q0:q1] = o[0]
        lse[:, q0:q1] = l[0]
    return out, lse


class KVCacheLike:
    """A varlen case as kvcache_reference reads a KVCache case."""

    def __init__(self, case, tk):
        self.tk, self.window, self.causal, self.softcap = tk, case.window, case.causal, case.softcap


@unittest.skipUnless(HAVE_GPU, "needs PyTorch with a CUDA GPU")
class TorchServingTest(unittest.TestCase):
    def check_kvcache(self, case, seed=5):
        """attention_with_kvcache on the case's tensors against
        kvcache_reference: the output (and with case.lse the log-sum-exp)."""
        from attn_mlir.torch import attention_with_kvcache

        gen = torch.Generator(device="cuda").manual_seed(seed)
        q, k_cache, v_cache, lengths = make_kvcache(case, gen)
        options = dict(cache_seqlens=lengths, causal=case.causal, window_size=case.window,
                       softcap=case.softcap, num_splits=case.num_splits)
        # A paged case: the caches' pages in a pool, read through the table.
        k_in, v_in = k_cache, v_cache
        if case.page is not None:
            k_in, v_in, options["block_table"] = paged_pool(case, k_cache, v_cache, gen)
        out = attention_with_kvcache(q, k_in, v_in, **options)
        lse = None
        if case.lse:
            out_lse, lse = attention_with_kvcache(q, k_in, v_in, return_softmax_lse=True,
                                                  **options)
        torch.cuda.synchronize()
        ref, ref_lse = kvcache_reference(case, q, k_cache, v_cache, lengths)
        self.assertEqual(tuple(out.shape), (case.b, case.tq, case.hq, case.dv), case.name)
        self.assertTrue(out.is_contiguous(), case.name)
        self.assertTrue(torch.isfinite(out).all(), case.name)
        rel = ((out.double() - ref).norm() / ref.norm()).item()
        print(f"{case.name}: rel_l2 {rel:.2e}")
        self.assertLess(rel, TOL[case.dtype], case.name)
        # Rows without keys (an empty cache) are exactly zero.
        self.assertTrue((out[ref_lse.transpose(1, 2) == -math.inf] == 0).all(), case.name)
        if lse is not None:
            rel = ((out_lse.double() - ref).norm() / ref.norm()).item()
            self.assertLess(rel, TOL[case.dtype], case.name)
            check_lse(self, case.name, case.dtype, lse, ref_lse, (case.b, case.hq, case.tq))
        return q, k_cache, v_cache, lengths, out

    def test_kvcache_cases(self):
        for case in KVCACHE_CASES:
            with self.subTest(case=case.name):
                self.check_kvcache(case)

    def test_paged_cases(self):
        for case in PAGED_CASES:
            with self.subTest(case=case.name):
                self.check_kvcache(case)

    def test_paged_errors(self):
        from attn_mlir.torch import attention_with_kvcache
        q = torch.randn(2, 1, 4, 64, device="cuda", dtype=torch.float16)
        pool = torch.randn(6, 16, 2, 64, device="cuda", dtype=torch.float16)
        table = torch.tensor([[3, 0, 5], [1, 77, 2]], dtype=torch.int32, device="cuda")
        lengths = torch.tensor([40, 30], dtype=torch.int32, device="cuda")
        with self.assertRaisesRegex(ValueError, r"block_table\[1, 1\] = 77 is not a page of the "
                                                r"pool \(0..5: k_cache has 6 blocks\)"):
            attention_with_kvcache(q, pool, pool, cache_seqlens=lengths, block_table=table)
        # An entry past the batch's keys is never read.
        lengths[1] = 16
        attention_with_kvcache(q, pool, pool, cache_seqlens=lengths, block_table=table)
        with self.assertRaisesRegex(TypeError, "block_table: expected int32"):
            attention_with_kvcache(q, pool, pool, block_table=table.long())
        with self.assertRaisesRegex(ValueError, r"block_table: expected shape \(2, P\)"):
            attention_with_kvcache(q, pool, pool, block_table=table[:1])
        with self.assertRaisesRegex(ValueError, "page_block_size .* 24: the kernels take a power "
                                                "of two in 16..256"):
            attention_with_kvcache(q, pool[:, :12].repeat(1, 2, 1, 1), pool[:, :12].repeat(1, 2, 1, 1),
                                   block_table=table)

    def test_paged_torch_compile(self):
        from attn_mlir.torch import attention_with_kvcache

        @torch.compile(fullgraph=True)
        def f(q, k_pool, v_pool, lengths, table):
            out, lse = attention_with_kvcache(q, k_pool, v_pool, cache_seqlens=lengths,
                                              causal=True, return_softmax_lse=True,
                                              block_table=table)
            return out * 2.0, lse + 1.0

        case = next(c for c in PAGED_CASES if c.name == "paged_decode_bf16_p16")
        gen = torch.Generator(device="cuda").manual_seed(2)
        q, k_cache, v_cache, lengths = make_kvcache(case, gen)
        k_pool, v_pool, table = paged_pool(case, k_cache, v_cache, gen)
        out, lse = f(q, k_pool, v_pool, lengths, table)
        ref, ref_lse = kvcache_reference(case, q, k_cache, v_cache, lengths)
        self.assertLess(((out.double() / 2 - ref).norm() / ref.norm()).item(), TOL["bf16"])
        check_lse(self, case.name + " (compiled)", "bf16", lse - 1.0, ref_lse, ref_lse.shape)

    def test_kvcache_splits(self):
        # The decode kernels of num_splits=0 split the keys (a combine
        # epilogue kernel); num_splits=1 never does; both agree.
        import attn_mlir.torch as at
        from attn_mlir.compiler import compile
        from attn_mlir.manifest import Manifest

        for case in KVCACHE_CASES:
            sig, split_programs = kvcache_signature_for(case)
            m = Manifest.load(compile(sig, chip=at._chip(torch.device("cuda")),
                                      split_programs=split_programs).manifest_path)
            splits = case.num_splits == 0 and case.tq <= 16
            self.assertEqual(bool(m.epilogue), splits, case.name)
        split = next(c for c in KVCACHE_CASES if c.name == "decode_bf16_b3_tk5000")
        never = next(c for c in KVCACHE_CASES if c.name == "decode_bf16_b3_tk5000_never_split")
        a, b = self.check_kvcache(split)[-1], self.check_kvcache(never)[-1]
        rel = ((a.double() - b.double()).norm() / b.double().norm()).item()
        print(f"split vs never split: rel_l2 {rel:.2e}")
        self.assertLess(rel, TOL["bf16"])

    def test_kvcache_torch_compile(self):
        from attn_mlir.torch import attention_with_kvcache

        @torch.compile(fullgraph=True)
        def f(q, k_cache, v_cache, lengths):
            out, lse = attention_with_kvcache(q, k_cache, v_cache, cache_seqlens=lengths,
                                              causal=True, return_softmax_lse=True)
            return out * 2.0, lse + 1.0

        case = next(c for c in KVCACHE_CASES if c.name == "decode_bf16_b4_tk8k")
        q, k_cache, v_cache, lengths = make_kvcache(case, torch.Generator(device="cuda").manual_seed(2))
        out, lse = f(q, k_cache, v_cache, lengths)
        ref, ref_lse = kvcache_reference(case, q, k_cache, v_cache, lengths)
        self.assertLess(((out.double() / 2 - ref).norm() / ref.norm()).item(), TOL["bf16"])
        check_lse(self, case.name + " (compiled)", "bf16", lse - 1.0, ref_lse, ref_lse.shape)

    def test_kvcache_empty_and_strided(self):
        from attn_mlir.torch import attention_with_kvcache

        case = next(c for c in KVCACHE_CASES if c.name == "decode_f16_b8_tk1k")
        q, k_cache, v_cache, _ = make_kvcache(case, torch.Generator(device="cuda").manual_seed(4))
        # Every cache empty: zeros and -inf, as a tensor or an int.
        for lengths in (torch.zeros(case.b, dtype=torch.int32, device="cuda"), 0):
            out, lse = attention_with_kvcache(q, k_cache, v_cache, cache_seqlens=lengths,
                                              return_softmax_lse=True)
            self.assertTrue((out == 0).all() and (lse == -math.inf).all())
        # Lengths past the cache are clamped to it.
        lengths = torch.full((case.b,), 10 * case.tk, dtype=torch.int32, device="cuda")
        whole = attention_with_kvcache(q, k_cache, v_cache)
        clamped = attention_with_kvcache(q, k_cache, v_cache, cache_seqlens=lengths)
        self.assertLess(((clamped.double() - whole.double()).norm()
                         / whole.double().norm()).item(), 1e-3)
        # A cache of larger capacity sliced (strided views), the query a view too.
        big_k = torch.zeros(case.b, case.tk + 64, case.hkv, case.d, dtype=q.dtype, device="cuda")
        big_v = torch.zeros_like(big_k)
        big_k[:, :case.tk], big_v[:, :case.tk] = k_cache, v_cache
        out = attention_with_kvcache(q, big_k, big_v, cache_seqlens=case.tk)
        self.assertLess(((out.double() - whole.double()).norm() / whole.double().norm()).item(),
                        1e-3)

    def test_attention_kv_lengths(self):
        # attention(..., kv_lengths=) in the (B, H, T, D) layout: the same
        # semantics (a dynamic Tq, no split).
        from attn_mlir.torch import attention

        case = next(c for c in KVCACHE_CASES if c.name == "spec_decode_f16_tq4_window")
        case = case._replace(window=(-1, -1))
        q, k_cache, v_cache, lengths = make_kvcache(case, torch.Generator(device="cuda").manual_seed(6))
        out, lse = attention(q.transpose(1, 2), k_cache.transpose(1, 2), v_cache.transpose(1, 2),
                             causal="bottom_right", kv_lengths=lengths, return_lse=True)
        ref, ref_lse = kvcache_reference(case, q, k_cache, v_cache, lengths)
        rel = ((out.transpose(1, 2).double() - ref).norm() / ref.norm()).item()
        print(f"attention(kv_lengths=): rel_l2 {rel:.2e}")
        self.assertLess(rel, TOL["f16"])
        check_lse(self, "attention(kv_lengths=)", "f16", lse, ref_lse, ref_lse.shape)
        with self.assertRaisesRegex(TypeError, r"kv_lengths: expected int32"):
            attention(q.transpose(1, 2), k_cache.transpose(1, 2), v_cache.transpose(1, 2),
                      kv_lengths=lengths.long())

    def check_varlen(self, case, lse):
        from attn_mlir.torch import attention_varlen
        gen = torch.Generator(device="cuda").manual_seed(7)
        q, k, v, cu_q, cu_k = make_varlen(case, gen)
        lengths_k = case.lengths_k or case.lengths_q
        result = attention_varlen(q, k, v, cu_q, cu_k, max(case.lengths_q), max(lengths_k),
                                  causal=case.causal, window_size=case.window,
                                  softcap=case.softcap, return_softmax_lse=lse)
        out, out_lse = result if lse else (result, None)
        ref, ref_lse = varlen_reference(case, q, k, v, cu_q, cu_k)
        self.assertEqual(out.shape, (q.shape[0], case.hq, case.dv))
        rel = ((out.double() - ref).norm() / ref.norm()).item()
        self.assertLess(rel, TOL[case.dtype], case.name)
        # Rows without keys and rows of no sequence are exactly zero.
        self.assertTrue((out[(ref_lse == -math.inf).transpose(0, 1)] == 0).all(), case.name)
        if lse:
            self.assertEqual(out_lse.shape, (case.hq, q.shape[0]))
            finite = ref_lse.isfinite()
            self.assertTrue((out_lse[~finite] == -math.inf).all(), case.name)
            err = ((out_lse.double() - ref_lse).abs() / (1 + ref_lse.abs()))[finite].max().item()
            self.assertLess(err, LSE_TOL[case.dtype], case.name)

    def test_varlen_cases(self):
        for case in VARLEN_CASES:
            for lse in (False, True) if case.lse else (False,):
                with self.subTest(case=case.name, lse=lse):
                    self.check_varlen(case, lse)

    def test_varlen_torch_compile_and_errors(self):
        from attn_mlir.torch import attention_varlen
        case = next(c for c in VARLEN_CASES if c.name == "prefill_bf16_causal")
        gen = torch.Generator(device="cuda").manual_seed(3)
        q, k, v, cu_q, cu_k = make_varlen(case, gen)
        m = max(case.lengths_q)
        eager = attention_varlen(q, k, v, cu_q, cu_k, m, m, causal=True)
        compiled = torch.compile(lambda *a: attention_varlen(*a, m, m, causal=True),
                                 fullgraph=True)(q, k, v, cu_q, cu_k)
        self.assertTrue(torch.equal(eager, compiled))
        bad = cu_q.clone()
        bad[2] = bad[1] - 1
        with self.assertRaisesRegex(ValueError, r"cu_seqlens_q\[2\] = 999 is below 1000 "
                                                r"\(cu_seqlens_q\[1\]\): the offsets must not "
                                                "decrease"):
            attention_varlen(q, k, v, bad, cu_k, m, m)
        past = cu_k.clone()
        past[-1] = k.shape[0] + 1
        with self.assertRaisesRegex(ValueError, r"cu_seqlens_k\[6\] = \d+ is past the packed "
                                                r"length \d+"):
            attention_varlen(q, k, v, cu_q, past, m, m)
        with self.assertRaisesRegex(ValueError, r"cu_seqlens_q: sequence 3 has 2047 tokens, more "
                                                r"than max_seqlen \(1000\)"):
            attention_varlen(q, k, v, cu_q, cu_k, 1000, m)
        with self.assertRaisesRegex(TypeError, r"cu_seqlens_q: expected int32"):
            attention_varlen(q, k, v, cu_q.long(), cu_k, m, m)
        with self.assertRaisesRegex(ValueError, r"cu_seqlens_k: 3 offsets, but cu_seqlens_q "
                                                r"has 7"):
            attention_varlen(q, k, v, cu_q, cu_k[:3], m, m)
        with self.assertRaisesRegex(ValueError, r"q: expected rank 3 \(total, H, D\)"):
            attention_varlen(q[None], k, v, cu_q, cu_k, m, m)
        with self.assertRaisesRegex(NotImplementedError, r"attention_varlen: window_size=\(16, "
                                                         r"-1\) without causal"):
            attention_varlen(q, k, v, cu_q, cu_k, m, m, window_size=(16, -1))

    def test_kvcache_append(self):
        # k=, v=: the new keys land at each batch's length (a contiguous cache
        # and a pool of pages in random order), and the attention sees them.
        from attn_mlir.torch import attention_with_kvcache
        gen = torch.Generator(device="cuda").manual_seed(11)
        b, tq, hq, hkv, d, tk, page = 3, 2, 8, 2, 64, 300, 64
        new = lambda *shape: torch.randn(*shape, device="cuda", dtype=torch.bfloat16,  # noqa: E731
                                         generator=gen)
        q, k, v = new(b, tq, hq, d), new(b, tq, hkv, d), new(b, tq, hkv, d)
        kc, vc = new(b, tk, hkv, d), new(b, tk, hkv, d)
        lengths = torch.tensor([0, 17, 298], dtype=torch.int32, device="cuda")
        pages = (tk + page - 1) // page
        table = torch.randperm(b * pages, device="cuda", generator=gen).to(torch.int32).view(b, pages)
        pool_k = kc.new_zeros(b * pages, page, hkv, d)
        pool_v = vc.new_zeros(b * pages, page, hkv, d)
        pool_k[table.long()] = torch.cat([kc, kc.new_zeros(b, pages * page - tk, hkv, d)], 1) \
            .view(b, pages, page, hkv, d)
        pool_v[table.long()] = torch.cat([vc, vc.new_zeros(b, pages * page - tk, hkv, d)], 1) \
            .view(b, pages, page, hkv, d)
        want_k, want_v = kc.clone(), vc.clone()
        for i, n in enumerate(lengths.tolist()):
            want_k[i, n:n + tq], want_v[i, n:n + tq] = k[i], v[i]
        out = attention_with_kvcache(q, kc, vc, cache_seqlens=lengths, k=k, v=v, causal=True)
        self.assertTrue(torch.equal(kc, want_k) and torch.equal(vc, want_v))
        ref = attention_with_kvcache(q, want_k, want_v, cache_seqlens=lengths + tq, causal=True)
        self.assertTrue(torch.equal(out, ref))
        paged = attention_with_kvcache(q, pool_k, pool_v, cache_seqlens=lengths, k=k, v=v,
                                       causal=True, block_table=table)
        logical = pool_k[table.long()].view(b, pages * page, hkv, d)[:, :tk]
        self.assertTrue(torch.equal(logical, want_k))
        torch.testing.assert_close(paged, out, atol=2e-2, rtol=2e-2)
        # An int length appends at the same key of every batch.
        kc2 = want_k.clone()
        attention_with_kvcache(q, kc2, want_v.clone(), cache_seqlens=5, k=k, v=v)
        self.assertTrue(torch.equal(kc2[:, 5:5 + tq], k))
        with self.assertRaisesRegex(ValueError, "past the cache's 300"):
            attention_with_kvcache(q, kc, vc, cache_seqlens=299, k=k, v=v)
        with self.assertRaisesRegex(ValueError, "cache_seqlens is required"):
            attention_with_kvcache(q, kc, vc, k=k, v=v)
        with self.assertRaisesRegex(ValueError, "both or neither"):
            attention_with_kvcache(q, kc, vc, cache_seqlens=lengths, k=k)
        with self.assertRaisesRegex(ValueError, r"v: expected shape \(B, Tnew, 2, 64\)"):
            attention_with_kvcache(q, kc, vc, cache_seqlens=lengths, k=k, v=v[:, :, :1])

    def test_kvcache_errors(self):
        from attn_mlir.torch import attention_with_kvcache
        q = torch.randn(2, 3, 4, 64, device="cuda", dtype=torch.float16)
        kc = torch.randn(2, 100, 2, 64, device="cuda", dtype=torch.float16)
        lengths = torch.tensor([5, 100], dtype=torch.int32, device="cuda")
        for name in ("cache_batch_idx", "rotary_cos", "alibi_slopes"):
            with self.assertRaisesRegex(NotImplementedError, f"{name}= is not supported"):
                attention_with_kvcache(q, kc, kc, cache_seqlens=lengths, **{name: lengths})
        with self.assertRaisesRegex(NotImplementedError, "num_splits=8"):
            attention_with_kvcache(q, kc, kc, num_splits=8)
        with self.assertRaisesRegex(NotImplementedError, r"window_size=\(16, -1\) without causal"):
            attention_with_kvcache(q, kc, kc, window_size=(16, -1))
        with self.assertRaisesRegex(TypeError, r"cache_seqlens: expected int32 \(torch.int32\), "
                                               "got torch.int64"):
            attention_with_kvcache(q, kc, kc, cache_seqlens=lengths.long())
        with self.assertRaisesRegex(ValueError, r"cache_seqlens: expected shape \(2,\)"):
            attention_with_kvcache(q, kc, kc, cache_seqlens=lengths[:1])
        with self.assertRaisesRegex(ValueError, "cache_seqlens: expected q's device"):
            attention_with_kvcache(q, kc, kc, cache_seqlens=lengths.cpu())
        with self.assertRaisesRegex(ValueError, "cache_seqlens: expected a contiguous tensor"):
            attention_with_kvcache(q, kc, kc, cache_seqlens=torch.stack([lengths, lengths], 1)[:, 0])
        with self.assertRaisesRegex(ValueError, "cache_seqlens: 101 keys in a cache of 100"):
            attention_with_kvcache(q, kc, kc, cache_seqlens=101)
        with self.assertRaisesRegex(TypeError, "FlashAttention's fourth positional argument is k"):
            attention_with_kvcache(q, kc, kc, [3, 4])
        with self.assertRaisesRegex(ValueError, r"k_cache: expected rank 4 \(B, T, H, D\)"):
            attention_with_kvcache(q, kc[0], kc)
        with self.assertRaisesRegex(TypeError, "v_cache: expected the dtype of q"):
            attention_with_kvcache(q, kc, kc.float())
        with self.assertRaisesRegex(ValueError, r"q: heads \(4\) must be a multiple of k_cache's "
                                                r"heads \(3\)"):
            attention_with_kvcache(q, kc[:, :, :1].expand(2, 100, 3, 64), kc[:, :, :1].expand(2, 100, 3, 64))


if __name__ == "__main__":
    unittest.main(verbosity=2)
