"""attn_mlir.torch.attention on a GPU against float64 SDPA: odd shapes,
GQA, masks with -inf and fully masked rows, strided (B, T, H, D) views,
inside and outside torch.compile; the variants (windows, softcaps,
FlexAttention-style score_mod / mask_mod callables with captured tensors)
against a float64 reference that calls the same callables on broadcast
index tensors. Skips without torch or a GPU. On a GPU machine without the
compiler, set ATTN_MLIR_CACHE_DIR to a cache filled by precompile.py.
The LSE cases (return_lse=True) check the log-sum-exp too, against the
float64 logsumexp of the same scores. The serving forms
(attention_with_kvcache, attention_varlen) are test_torch_serving_gpu.py's."""

import math
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

try:
    import torch
    HAVE_GPU = torch.cuda.is_available()
except ImportError:  # pragma: no cover
    HAVE_GPU = False

from gpu_cases import (CASES, LSE_CASES, LSE_VARIANT_CASES, VARIANT_CASES,  # noqa: E402
                       capture_shape, variant_options)

TOL = {"f32": 2e-3, "f16": 2e-3, "bf16": 1e-2}
# The log-sum-exp's, relative to 1 + |lse| (docs/Testing.md; f32 is tf32).
LSE_TOL = {"f32": 2e-3, "f16": 1e-3, "bf16": 8e-3}


def make(case, gen):
    name, dtype, b, hq, hkv, tq, tk, d, dv, causal, mask_kind, strided = case
    dt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[dtype]
    rnd = lambda *s: (torch.rand(*s, generator=gen, device="cuda") * 2 - 1).to(dt)  # noqa: E731
    if strided:  # (B, T, H, D) storage viewed as (B, H, T, D)
        q, k, v = (rnd(b, t, h, dd).transpose(1, 2) for t, h, dd in ((tq, hq, d), (tk, hkv, d), (tk, hkv, dv)))
    else:
        q, k, v = rnd(b, hq, tq, d), rnd(b, hkv, tk, d), rnd(b, hkv, tk, dv)
    mask = None
    if mask_kind == "float4":
        mask = torch.rand(1, 1, tq, tk, generator=gen, device="cuda") * 2 - 1
        mask[torch.rand(1, 1, tq, tk, generator=gen, device="cuda") < 0.2] = -math.inf
        mask[0, 0, 0, :] = -math.inf  # a fully masked row
        mask = mask.to(dt)
    elif mask_kind == "bool2":
        mask = torch.rand(tq, tk, generator=gen, device="cuda") < 0.7
        mask[3, :] = False
    return q, k, v, mask


def reference(case, q, k, v, mask, lse=False):
    """O in float64, and with `lse` (O, LSE): the LSE the logsumexp of the
    same final scores, -inf for a row without keys."""
    name, dtype, b, hq, hkv, tq, tk, d, dv, causal, mask_kind, strided = case
    g = hq // hkv
    qd, kd, vd = q.double(), k.double().repeat_interleave(g, 1), v.double().repeat_interleave(g, 1)
    keep = torch.ones(tq, tk, dtype=torch.bool, device="cuda")
    if causal:
        off = 0 if causal is True or causal == "top_left" else tk - tq
        keep = torch.arange(tk, device="cuda")[None] <= torch.arange(tq, device="cuda")[:, None] + off
    s = qd @ kd.transpose(-1, -2) / math.sqrt(d)
    keep = keep.expand(s.shape)
    if mask is not None:
        m = mask if mask.dim() == 4 else mask[None, None]
        if mask.dtype == torch.bool:
            keep = keep & m
        else:
            keep = keep & (m != -math.inf)
            s = s + m.double().masked_fill(m == -math.inf, 0)
    s = s.masked_fill(~keep, -math.inf)
    empty = ~keep.any(-1, keepdim=True)
    p = torch.exp(s - s.amax(-1, keepdim=True).masked_fill(empty, 0))
    out = ((p @ vd) / p.sum(-1, keepdim=True)).masked_fill(empty, 0)
    return (out, torch.logsumexp(s, -1)) if lse else out


def make_variant(case, gen, device="cuda"):
    """q, k, v and the captured tensors of a variant case: ALiBi slopes
    2^(-8 i / Hq), sorted document ids in [0, 4), prefix lengths in
    [1, T), per-document weights."""
    dt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[case.dtype]
    rnd = lambda *s: (torch.rand(*s, generator=gen, device=device) * 2 - 1).to(dt)  # noqa: E731
    q = rnd(case.b, case.hq, case.tq, case.d)
    k, v = rnd(case.b, case.hkv, case.tk, case.d), rnd(case.b, case.hkv, case.tk, case.dv)
    captures = {}
    for name, (dtype, shape) in case.captures.items():
        shape, dtype = capture_shape(case, shape), getattr(torch, dtype)
        if name == "slopes":
            t = 2.0 ** (-8.0 * torch.arange(1, shape[0] + 1, device=device) / shape[0])
        elif name == "doc":
            t = torch.randint(0, 4, shape, generator=gen, device=device).sort(-1).values
        elif name == "prefix":
            t = torch.randint(1, max(case.tq, case.tk), shape, generator=gen, device=device)
        else:
            t = torch.tensor([0.5, -1.0, 2.0, 0.25], device=device)
        captures[name] = t.to(dtype)
    return q, k, v, captures


def variant_reference(case, q, k, v, options, lse=False):
    """SPEC section 1.1 in float64; the callables of `options` are called on
    broadcast index tensors (b, h, q_idx, kv_idx of shapes (B,1,1,1),
    (1,Hq,1,1), (1,1,Tq,1), (1,1,1,Tk)), as FlexAttention's reference calls
    them."""
    g = case.hq // case.hkv
    qd, kd, vd = q.double(), k.double().repeat_interleave(g, 1), v.double().repeat_interleave(g, 1)
    s = qd @ kd.transpose(-1, -2) / math.sqrt(case.d)
    if case.softcap:
        s = case.softcap * torch.tanh(s / case.softcap)
    dev = q.device
    b = torch.arange(case.b, device=dev)[:, None, None, None]
    h = torch.arange(case.hq, device=dev)[None, :, None, None]
    i = torch.arange(case.tq, device=dev)[None, None, :, None]
    j = torch.arange(case.tk, device=dev)[None, None, None, :]
    if options.get("score_mod"):
        s = torch.as_tensor(options["score_mod"](s, b, h, i, j), dtype=torch.float64, device=dev)
        s = s.broadcast_to(qd.shape[:3] + (case.tk,))
    keep = torch.ones(s.shape, dtype=torch.bool, device=dev)
    off = case.tk - case.tq if case.causal == "bottom_right" else 0
    if case.causal:
        keep &= j <= i + off
    if case.window:
        left, right = case.window
        if left >= 0:
            keep &= j >= i + off - left
        if right >= 0:
            keep &= j <= i + off + right
    if options.get("mask_mod"):
        keep &= torch.as_tensor(options["mask_mod"](b, h, i, j), device=dev)
    keep &= s != -math.inf  # a kept key whose final score is -inf is masked
    s = s.masked_fill(~keep, -math.inf)
    empty = ~keep.any(-1, keepdim=True)
    p = torch.exp(s - s.amax(-1, keepdim=True).masked_fill(empty, 0))
    out = ((p @ vd) / p.sum(-1, keepdim=True)).masked_fill(empty, 0)
    return (out, torch.logsumexp(s, -1)) if lse else out


def check_lse(test, name, dtype, lse, ref, shape):
    """The log-sum-exp against float64: float32 of `shape`, -inf exactly
    where the reference is (rows without keys), the others within
    LSE_TOL * (1 + |ref|)."""
    test.assertEqual(lse.dtype, torch.float32, name)
    test.assertEqual(tuple(lse.shape), tuple(shape), name)
    empty = ref == -math.inf
    test.assertTrue(torch.equal(lse == -math.inf, empty), name)
    kept = lse.double()[~empty]
    test.assertTrue(torch.isfinite(kept).all(), name)
    err = ((kept - ref[~empty]).abs() / (1 + ref[~empty].abs())).max().item() if kept.numel() else 0.0
    print(f"{name}: lse_max_err {err:.2e} ({int(empty.sum())} rows without keys)")
    test.assertLessEqual(err, LSE_TOL[dtype], name)


def variant(name):
    return next(c for c in VARIANT_CASES if c.name == name)


@unittest.skipUnless(HAVE_GPU, "needs PyTorch with a CUDA GPU")
class TorchAttentionTest(unittest.TestCase):
    def check(self, case, fn):
        import attn_mlir.torch as at  # noqa: F401

        gen = torch.Generator(device="cuda").manual_seed(7)
        q, k, v, mask = make(case, gen)
        out = fn(q, k, v, mask, case[9])
        torch.cuda.synchronize()
        ref = reference(case, q, k, v, mask)
        self.assertTrue(torch.isfinite(out).all(), case[0])
        rel = ((out.double() - ref).norm() / ref.norm()).item()
        print(f"{case[0]}: rel_l2 {rel:.2e}")
        self.assertLess(rel, TOL[case[1]], case[0])

    def test_cases(self):
        from attn_mlir.torch import attention
        for case in CASES:
            with self.subTest(case=case[0]):
                self.check(case, lambda q, k, v, m, c: attention(q, k, v, mask=m, causal=c))

    def test_lse_cases(self):
        from attn_mlir.torch import attention
        for case in CASES:
            if case[0] not in LSE_CASES:
                continue
            with self.subTest(case=case[0]):
                gen = torch.Generator(device="cuda").manual_seed(7)
                q, k, v, mask = make(case, gen)
                out, lse = attention(q, k, v, mask=mask, causal=case[9], return_lse=True)
                torch.cuda.synchronize()
                ref, ref_lse = reference(case, q, k, v, mask, lse=True)
                rel = ((out.double() - ref).norm() / ref.norm()).item()
                self.assertLess(rel, TOL[case[1]], case[0])
                check_lse(self, case[0], case[1], lse, ref_lse, q.shape[:3])
                # The output is the one return_lse=False gives.
                self.assertTrue(torch.equal(out, attention(q, k, v, mask=mask, causal=case[9])))

    def test_lse_torch_compile(self):
        from attn_mlir.torch import attention

        @torch.compile(fullgraph=True)
        def f(q, k, v, m, c):
            out, lse = attention(q, k, v, mask=m, causal=c, return_lse=True)
            return out * 2.0, lse + 1.0

        case = next(c for c in CASES if c[0] == "bool_mask_bottom_right")
        gen = torch.Generator(device="cuda").manual_seed(7)
        q, k, v, mask = make(case, gen)
        out, lse = f(q, k, v, mask, case[9])
        ref, ref_lse = reference(case, q, k, v, mask, lse=True)
        self.assertLess(((out.double() / 2 - ref).norm() / ref.norm()).item(), TOL[case[1]])
        check_lse(self, case[0], case[1], lse - 1.0, ref_lse, q.shape[:3])

    def test_kernel_memo(self):
        # After a signature's first call, calls go straight to the loaded
        # kernel: the compile cache is not consulted again; another
        # signature (here: causal) resolves on its own.
        import attn_mlir.torch as at

        case = CASES[0]
        gen = torch.Generator(device="cuda").manual_seed(3)
        q, k, v, mask = make(case, gen)
        first = at.attention(q, k, v, mask=mask, causal=case[9])
        real_compile = at._compile

        def no_compile(*args, **kwargs):
            raise AssertionError("compile cache consulted for a resolved signature")

        at._compile = no_compile
        try:
            again = at.attention(q, k, v, mask=mask, causal=case[9])
        finally:
            at._compile = real_compile
        torch.cuda.synchronize()
        self.assertTrue(torch.equal(first, again))
        other = CASES[1]
        q2, k2, v2, mask2 = make(other, gen)
        at.attention(q2, k2, v2, mask=mask2, causal=other[9])
        device = q.device.index or 0
        key = (at._signature(q, k, v, mask, "top_left" if case[9] else None, None), device)
        key2 = (at._signature(q2, k2, v2, mask2, "top_left" if other[9] else None, None), device)
        self.assertIsNot(at._resolved[key], at._resolved[key2])

    def test_torch_compile(self):
        from attn_mlir.torch import attention

        @torch.compile(fullgraph=True)
        def f(q, k, v, m, c):
            return attention(q, k, v, mask=m, causal=c) * 2.0

        case = CASES[0]
        self.check(case, lambda q, k, v, m, c: f(q, k, v, m, c) / 2.0)

    def check_variant(self, case, fn=None, seed=11):
        """Runs the case through attention (or `fn(q, k, v, options)`) and
        compares with variant_reference over float64 copies of the float
        captures."""
        from attn_mlir.torch import attention

        gen = torch.Generator(device="cuda").manual_seed(seed)
        q, k, v, captures = make_variant(case, gen)
        options = variant_options(case, captures, torch)
        out = fn(q, k, v, options) if fn else attention(q, k, v, **options)
        torch.cuda.synchronize()
        wide = {n: t.double() if t.is_floating_point() else t for n, t in captures.items()}
        ref = variant_reference(case, q, k, v, variant_options(case, wide, torch))
        self.assertTrue(torch.isfinite(out).all(), case.name)
        rel = ((out.double() - ref).norm() / ref.norm()).item()
        print(f"{case.name}: rel_l2 {rel:.2e}")
        self.assertLess(rel, TOL[case.dtype], case.name)
        return out, ref

    def test_variants(self):
        for case in VARIANT_CASES:
            with self.subTest(case=case.name):
                self.check_variant(case)
        # Rows whose every key is removed (a -inf score) are zero.
        out, _ = self.check_variant(variant("empty_rows_f32"))
        self.assertTrue((out[:, :, 3] == 0).all() and (out[:, :, 10] == 0).all())
        self.assertTrue((out[:, :, 4] != 0).any())

    def test_lse_variants(self):
        from attn_mlir.torch import attention
        for case in VARIANT_CASES:
            if case.name not in LSE_VARIANT_CASES:
                continue
            with self.subTest(case=case.name):
                gen = torch.Generator(device="cuda").manual_seed(11)
                q, k, v, captures = make_variant(case, gen)
                options = variant_options(case, captures, torch)
                out, lse = attention(q, k, v, return_lse=True, **options)
                torch.cuda.synchronize()
                wide = {n: t.double() if t.is_floating_point() else t for n, t in captures.items()}
                ref, ref_lse = variant_reference(case, q, k, v, variant_options(case, wide, torch),
                                                 lse=True)
                rel = ((out.double() - ref).norm() / ref.norm()).item()
                self.assertLess(rel, TOL[case.dtype], case.name)
                check_lse(self, case.name, case.dtype, lse, ref_lse, q.shape[:3])
        # empty_rows_f32: rows q % 7 == 3 have no key: -inf.
        case = next(c for c in VARIANT_CASES if c.name == "empty_rows_f32")
        q, k, v, captures = make_variant(case, torch.Generator(device="cuda").manual_seed(1))
        _, lse = attention(q, k, v, return_lse=True, **variant_options(case, captures, torch))
        self.assertTrue((lse[:, :, 3] == -math.inf).all() and (lse[:, :, 4] > -math.inf).all())

    def test_variant_memo(self):
        # Another B, T and other capture contents and sizes: the same
        # signature, so the kernel resolved before (no compile cache
        # consulted), reading this call's captures.
        import attn_mlir.torch as at

        case = variant("combination_bf16")
        self.check_variant(case)
        real_compile = at._compile

        def no_compile(*args, **kwargs):
            raise AssertionError("compile cache consulted for a resolved signature")

        at._compile = no_compile
        try:
            self.check_variant(case._replace(b=3, tq=90, tk=150), seed=5)
        finally:
            at._compile = real_compile

    def test_variant_torch_compile(self):
        from attn_mlir.torch import attention

        # window and softcap: the custom op, one graph.
        case = variant("window_softcap_causal_bf16")

        @torch.compile(fullgraph=True)
        def f(q, k, v):
            return attention(q, k, v, causal=True, window=(32, 0), softcap=2.0) * 2.0

        self.check_variant(case, lambda q, k, v, o: f(q, k, v) / 2.0)

        # A score_mod: a graph break around the call.
        def run(q, k, v, options):
            score_mod = options["score_mod"]

            @torch.compile
            def g(q, k, v):
                return attention(q, k, v, causal=True, score_mod=score_mod) * 2.0

            return g(q, k, v) / 2.0

        self.check_variant(variant("alibi_causal_gqa_f16"), run)

    def test_variant_errors(self):
        from attn_mlir.torch import alibi, attention, document
        q = torch.randn(1, 2, 8, 64, device="cuda", dtype=torch.float16)
        slopes = torch.ones(2, device="cuda")
        with self.assertRaisesRegex(ValueError, r"capture 0 \(the f32 tensor of shape \(2,\)\): "
                                    "expected q's device"):
            attention(q, q, q, score_mod=alibi(slopes.cpu()))
        with self.assertRaisesRegex(ValueError, "a captured float64 tensor"):
            attention(q, q, q, score_mod=alibi(slopes.double()))
        doc = torch.zeros(1, 16, 2, dtype=torch.int32, device="cuda")[..., 0]
        with self.assertRaisesRegex(ValueError, "capture 0 .*: the last dimension must be contiguous"):
            attention(q, q, q, mask_mod=document(doc))
        with self.assertRaisesRegex(ValueError, "capture 0 .*: the kernel reads it, but it is empty"):
            attention(q, q, q, mask_mod=document(doc[:, :0].contiguous()))
        with self.assertRaisesRegex(ValueError, "window: expected"):
            attention(q, q, q, window=(3,))
        with self.assertRaisesRegex(ValueError, "softcap: expected a finite positive number"):
            attention(q, q, q, softcap=-1.0)
        with self.assertRaisesRegex(TypeError, "mask_mod: expected a callable"):
            attention(q, q, q, mask_mod="causal")
        with self.assertRaisesRegex(TypeError, "torch.cumsum is not supported"):
            attention(q, q, q, score_mod=lambda s, b, h, qi, kv: torch.cumsum(s, 0))
        with self.assertRaisesRegex(TypeError, "Python `if`"):
            attention(q, q, q, mask_mod=lambda b, h, qi, kv: qi >= kv if qi > 3 else True)
        with self.assertRaisesRegex(TypeError, "used whole"):
            attention(q, q, q, score_mod=lambda s, b, h, qi, kv: s + slopes)

    def test_explain(self):
        from attn_mlir.torch import explain
        # The signature of the strided_bf16_causal case (precompile.py).
        q, k, v = (torch.randn(4, 4, 1024, 128, device="cuda", dtype=torch.bfloat16)
                   for _ in range(3))
        report = explain(q, k, v, causal=True)
        print(report.text(), end="")
        self.assertEqual(report.flops, 2.0 * 4 * 4 * 1024 * 1024 * 256 / 2)
        self.assertEqual(report.bytes, 4 * 4 * 4 * 1024 * 128 * 2)
        self.assertGreater(report.median_ms, 0)
        self.assertGreater(report.fraction_of_floor, 0)
        self.assertLessEqual(report.fraction_of_floor, 1.0)
        self.assertEqual(report.occupancy_source, "driver")
        self.assertGreater(report.facts.kernel.registers, 0)
        self.assertGreater(report.facts.kernel.tensor_cores.count, 0)
        self.assertNotIn("uncoalesced", report.cause_names)
        self.assertTrue(report.lines()[-1].startswith("explain: causes="))
        # A view whose rows are 264 bytes apart is uncoalesced (explained
        # with a given time: not launched).
        qs = torch.randn(4, 4, 1024, 132, device="cuda", dtype=torch.bfloat16)[..., :128]
        report = explain(qs, k, v, causal=True, median_ms=1.0)
        self.assertIn("uncoalesced", report.cause_names)
        self.assertEqual(report.facts.mask_blocks, ())
        # A causal mask tensor (the seed's, 0 / -inf; the signature of the
        # f32_float_mask case): its block map, read back after the timed
        # calls, has as many removed blocks as zero-term ones, and the
        # triangular ones across the diagonal.
        qf, kf, vf = (torch.randn(1, 2, 1024, 64, device="cuda") for _ in range(3))
        tri = torch.ones(1024, 1024, device="cuda", dtype=torch.bool).tril()
        mask = torch.zeros(1, 1, 1024, 1024, device="cuda")
        mask = mask.masked_fill(~tri, float("-inf"))
        report = explain(qf, kf, vf, mask=mask)
        print(report.text(), end="")
        n = report.facts.mask_blocks
        self.assertEqual(sum(n), (1024 // report.facts.kernel.block_m)
                         * (1024 // report.facts.kernel.block_n))
        self.assertEqual(n[2], 0)  # no mixed block
        self.assertGreater(n[3], 0)
        self.assertEqual(n[0], n[1])  # as many removed blocks as zero-term ones
        self.assertIn("explain: mask_blocks=", report.text())

    def test_bad_arguments(self):
        from attn_mlir.torch import attention
        q = torch.randn(1, 2, 8, 64, device="cuda", dtype=torch.float16)
        with self.assertRaisesRegex(TypeError, "k: expected the dtype of q"):
            attention(q, q.float(), q)
        with self.assertRaisesRegex(ValueError, "q: expected a CUDA tensor"):
            attention(q.cpu(), q, q)
        with self.assertRaisesRegex(ValueError, "v: the last dimension must be contiguous"):
            attention(q, q, q.transpose(2, 3))
        with self.assertRaisesRegex(ValueError, "mask: dim 1 is 5"):
            attention(q, q, q, mask=torch.zeros(8, 5, device="cuda", dtype=torch.bool))
        with self.assertRaisesRegex(ValueError, "scale"):
            attention(q, q, q, scale=-1.0)
        with self.assertRaisesRegex(TypeError, "return_lse: expected a bool"):
            attention(q, q, q, return_lse="yes")


if __name__ == "__main__":
    unittest.main(verbosity=2)
