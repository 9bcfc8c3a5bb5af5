"""attn_mlir.mods without torch: the ready-made modifiers and hand-written
ones traced to region IR (checked as text), each compiled for sm_90a
through attn_mlir.compile (attn-translate: the IR verifies and lowers; the
manifest lists the captures in the trace's order) and run on the host by
`attn-run --target=cpu --check`, whose output is compared with a float64
numpy reference that calls the same Python callables on broadcast index
arrays (so a trace that computes something else fails); the errors of
unsupported constructs. Needs attn-translate (ATTN_TRANSLATE) and attn-run
(ATTN_RUN, or next to attn-translate), and numpy.

Captured tensors are NumpyTensor and torch functions come from T: both do
what torch does for the tracer (hand a traced argument to its
`__torch_function__`) and compute with numpy otherwise."""

import math
import os
import subprocess
import sys
import tempfile
import unittest
import zlib

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from attn_mlir import mods  # noqa: E402
from attn_mlir.compiler import Signature, compile, find_attn_translate  # noqa: E402
from attn_mlir.mods import TensorSpec  # noqa: E402


def _torch_function_of(values):
    for x in values:
        handler = getattr(type(x), "__torch_function__", None)
        if handler is not None:
            return handler
    return None


class NumpyTensor:
    """A captured tensor: numpy data, indexed as a torch.Tensor is (an index
    with `__torch_function__` gets the call)."""

    def __init__(self, array):
        self.array = np.asarray(array)
        self.shape, self.dtype = self.array.shape, self.array.dtype

    def __getitem__(self, index):
        handler = _torch_function_of(index if isinstance(index, tuple) else (index,))
        if handler is not None:
            return handler(NumpyTensor.__getitem__, (), (self, index), {})
        return self.array[index]


def _numpy_erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x)


_NUMPY = dict(
    where=np.where, abs=np.abs, exp=np.exp, exp2=np.exp2, log=np.log, log2=np.log2,
    sqrt=np.sqrt, rsqrt=lambda x: 1 / np.sqrt(x), tanh=np.tanh, sin=np.sin, cos=np.cos,
    erf=_numpy_erf, floor=np.floor, ceil=np.ceil, sigmoid=lambda x: 1 / (1 + np.exp(-x)),
    minimum=np.minimum, maximum=np.maximum,
    clamp=lambda x, min=None, max=None: np.clip(x, min, max),
    logical_and=np.logical_and, logical_or=np.logical_or, logical_not=np.logical_not,
    remainder=np.remainder, floor_divide=np.floor_divide, cumsum=np.cumsum)


class _Torch:
    """torch's functions as the tracer meets them."""

    def __getattr__(self, name):
        def fn(*args, **kwargs):
            handler = _torch_function_of((*args, *kwargs.values()))
            if handler is not None:
                return handler(fn, (), args, kwargs)
            return _NUMPY[name](*args, **kwargs)
        fn.__name__ = name
        return fn


T = _Torch()


def attn_run_path():
    explicit = os.environ.get("ATTN_RUN")
    if explicit:
        return explicit
    return os.path.join(os.path.dirname(find_attn_translate()), "attn-run")


def reference(q, k, v, scale, causal=None, window=None, softcap=None, score_mod=None,
              mask_mod=None):
    """SPEC section 1.1 in float64, the modifiers called on broadcast index
    arrays (as FlexAttention's reference calls them)."""
    b_, hq, tq, _ = q.shape
    hkv, tk = k.shape[1], k.shape[2]
    kd = np.repeat(k.astype(np.float64), hq // hkv, axis=1)
    vd = np.repeat(v.astype(np.float64), hq // hkv, axis=1)
    s = scale * (q.astype(np.float64) @ kd.transpose(0, 1, 3, 2))
    if softcap:
        s = softcap * np.tanh(s / softcap)
    b = np.arange(b_)[:, None, None, None]
    h = np.arange(hq)[None, :, None, None]
    i = np.arange(tq)[None, None, :, None]
    j = np.arange(tk)[None, None, None, :]
    if score_mod:
        s = np.broadcast_to(score_mod(s, b, h, i, j), s.shape).astype(np.float64)
    keep = np.ones(s.shape, dtype=bool)
    off = tk - tq if causal == "bottom_right" else 0
    if causal:
        keep &= j <= i + off
    if window:
        if window[0] >= 0:
            keep &= j >= i + off - window[0]
        if window[1] >= 0:
            keep &= j <= i + off + window[1]
    if mask_mod:
        keep &= np.broadcast_to(mask_mod(b, h, i, j), s.shape)
    keep &= s != -np.inf
    s = np.where(keep, s, -np.inf)
    empty = ~keep.any(-1, keepdims=True)
    p = np.exp(s - np.where(empty, 0, s.max(-1, keepdims=True)))
    return np.where(empty, 0, (p @ vd) / np.where(empty, 1, p.sum(-1, keepdims=True)))


# The shapes of the host runs: GQA, Tq != Tk.
B, HQ, HKV, TQ, TK, D = 2, 4, 2, 37, 53, 16
RNG = np.random.default_rng(5)
SLOPES = NumpyTensor((2.0 ** -np.arange(1, HQ + 1)).astype(np.float32))
DOC = NumpyTensor(np.sort(RNG.integers(0, 4, size=(B, TK)), axis=1).astype(np.int32))
DOC64 = NumpyTensor(np.repeat(np.arange(6, dtype=np.int64), 9)[:TK])
PREFIX = NumpyTensor(np.array([5, 30], dtype=np.int32))
WEIGHTS = NumpyTensor(np.array([0.5, -1.0, 2.0, 0.25], dtype=np.float32))


def branchy(score, b, h, q_idx, kv_idx):
    return T.where(score > 0, 2 * T.tanh(score), score * (1 + h / 4))


def floor_semantics(b, h, q_idx, kv_idx):
    # Negative dividends and divisors: Python's (and torch's) floor rules.
    return (((q_idx - kv_idx) % 5 != 1) & ((kv_idx - q_idx) // 7 != -1)
            & ((q_idx - 20) % (2 * kv_idx - 53) != 0) & ((q_idx + 3) // (kv_idx - 60) != -1))


def every_function(score, b, h, q_idx, kv_idx):
    x = T.clamp(score, min=-2.0, max=3.0) + 0.1 * T.sigmoid(score) - 0.01 * abs(q_idx - kv_idx) ** 0.5
    x = x + T.maximum(score, T.exp(-abs(score))) - T.minimum(score, 0.5) * T.erf(score)
    x = x + 0.1 * (T.log(1 + abs(score)) + T.log2(2 + score * score) + T.sqrt(abs(score)))
    x = x + 0.1 * (T.rsqrt(1 + score * score) + T.exp2(-abs(score)) + T.sin(score) * T.cos(score))
    x = x + 0.01 * (T.floor(3 * score) - T.ceil(2 * score)) + T.floor(q_idx) * 0.001
    return x + T.where(T.logical_and(q_idx > kv_idx, T.logical_not(h == 1)), 0.25, -0.25)


def mixed_ints(score, b, h, q_idx, kv_idx):
    # A capture indexed by a value read from another, i32 mixed with index.
    return score + WEIGHTS[DOC[b, kv_idx]] + (DOC[b, q_idx] + q_idx - kv_idx) * 0.01


def same_document_or_near(b, h, q_idx, kv_idx):
    return (DOC[b, q_idx] == DOC[b, kv_idx]) | (abs(q_idx - kv_idx) <= 2)


def booleans(score, b, h, q_idx, kv_idx):
    return score + (q_idx > kv_idx) * 0.5 - ((q_idx >> 2) == (kv_idx >> 2)) * 0.25


def bool_mask(b, h, q_idx, kv_idx):
    return ~(q_idx == kv_idx) ^ (h == 1) | ((q_idx << 1) <= kv_idx)


def neg_inf_rows(score, b, h, q_idx, kv_idx):
    return T.where(q_idx % 7 == 3, -math.inf, score)


# name: (dtype, Signature options, score_mod, mask_mod).
CASES = {
    "alibi": ("f32", {}, mods.alibi(SLOPES), None),
    "document": ("f32", {}, None, mods.document(DOC)),
    "document_packed_i64": ("f32", dict(causal="top_left"), None, mods.document(DOC64)),
    "prefix_lm": ("f32", {}, None, mods.prefix_lm(7)),
    "prefix_lm_per_batch": ("f32", {}, None, mods.prefix_lm(PREFIX)),
    "window_mask_mod": ("f32", {}, None, mods.sliding_window(8, 2, as_mask_mod=True)),
    "window_softcap_bottom_right": ("f32", dict(causal="bottom_right",
                                                window=mods.sliding_window(12), softcap=0.7),
                                    mods.alibi(SLOPES), None),
    "and_or_masks": ("f32", {}, None, mods.or_masks(mods.and_masks(mods.causal_mask,
                                                                   mods.document(DOC)),
                                                    mods.prefix_lm(3))),
    "branchy": ("f32", {}, branchy, None),
    "floor_semantics": ("f32", {}, None, floor_semantics),
    "every_function": ("f32", {}, every_function, None),
    "mixed_ints": ("f32", {}, mixed_ints, same_document_or_near),
    "booleans": ("f32", {}, booleans, bool_mask),
    "neg_inf_rows": ("f32", dict(window=(-1, 20)), neg_inf_rows, None),
    "f16_softcap_document": ("f16", dict(causal="top_left", softcap=5.0),
                             mods.alibi(SLOPES), mods.document(DOC)),
}


def signature(dtype, options, traced):
    extra = dict(precision="ieee") if dtype == "f32" else {}
    return Signature(dtype, (None, HQ, None, D), (None, HKV, None, D), (None, HKV, None, D),
                     **options, **extra, **traced.signature_fields())


class TraceTest(unittest.TestCase):
    def test_alibi_text(self):
        traced = mods.trace(mods.alibi(TensorSpec("float32", (8,))))
        self.assertEqual(traced.capture_types, (("f32", 1),))
        self.assertEqual(traced.score_mod, (
            "  ^bb0(%score: f32, %b: index, %h: index, %q_idx: index, %kv_idx: index):\n"
            "    %t0 = tensor.extract %cap0[%h] : tensor<?xf32>\n"
            "    %t1 = arith.subi %kv_idx, %q_idx : index\n"
            "    %t2 = arith.index_cast %t1 : index to i64\n"
            "    %t3 = arith.sitofp %t2 : i64 to f32\n"
            "    %t4 = arith.mulf %t0, %t3 : f32\n"
            "    %t5 = arith.addf %score, %t4 : f32\n"
            "    attn.yield %t5 : f32\n"))

    def test_document_text(self):
        doc = TensorSpec("int32", (2, 100))
        traced = mods.trace(mask_mod=mods.and_masks(mods.causal_mask, mods.document(doc)))
        self.assertIsNone(traced.score_mod)
        self.assertEqual(traced.captures, (doc,))
        body = traced.mask_mod
        self.assertIn("^bb0(%b: index, %h: index, %q_idx: index, %kv_idx: index):", body)
        self.assertIn("%t0 = arith.cmpi sge, %q_idx, %kv_idx : index", body)
        self.assertIn("%t1 = tensor.extract %cap0[%b, %q_idx] : tensor<?x?xi32>", body)
        self.assertIn("%t2 = tensor.extract %cap0[%b, %kv_idx] : tensor<?x?xi32>", body)
        self.assertIn("%t3 = arith.cmpi eq, %t1, %t2 : i32", body)
        self.assertIn("%t4 = arith.andi %t0, %t3 : i1", body)  # and_masks' True folds
        self.assertIn("attn.yield %t4 : i1", body)
        # Any size of the captures: one text (one kernel, one cache entry).
        other = mods.trace(mask_mod=mods.and_masks(mods.causal_mask,
                                                   mods.document(TensorSpec("int32", (7, 3)))))
        self.assertEqual(other.mask_mod, body)

    def test_prefix_and_window(self):
        self.assertEqual(mods.sliding_window(128), (128, 0))
        self.assertEqual(mods.sliding_window(-1, 4), (-1, 4))
        body = mods.trace(mask_mod=mods.prefix_lm(16)).mask_mod
        self.assertIn("arith.cmpi sle, %kv_idx, %q_idx : index", body)
        self.assertIn("arith.constant 16 : index", body)
        self.assertIn("arith.ori", body)
        per_batch = mods.trace(mask_mod=mods.prefix_lm(TensorSpec("int64", (4,))))
        self.assertIn("tensor.extract %cap0[%b] : tensor<?xi64>", per_batch.mask_mod)
        self.assertIn("arith.index_cast %t0 : i64 to index", per_batch.mask_mod)
        body = mods.trace(mask_mod=mods.sliding_window(8, 2, as_mask_mod=True)).mask_mod
        self.assertIn("arith.subi %q_idx, %kv_idx : index", body)
        self.assertIn("arith.constant 8 : index", body)
        self.assertIn("arith.constant 2 : index", body)

    def test_floor_division_and_modulo(self):
        # Python's floor rules: a remainder with the divisor's sign.
        body = mods.trace(mask_mod=lambda b, h, q, kv: (q - kv) % 5 == (q - kv) // 3).mask_mod
        self.assertIn("arith.remsi", body)
        self.assertIn("arith.floordivsi", body)
        self.assertIn("arith.select", body)
        body = mods.trace(lambda s, b, h, q, kv: s % 2.5 + s // 0.5).score_mod
        self.assertIn("math.floor", body)

    def test_captures_in_kernel_order(self):
        # The score_mod's captures in order of first use, then the
        # mask_mod's new ones; each once; the ones only dead ops read, none.
        a, b_, c, dead = (TensorSpec("float32", (4,)), TensorSpec("int32", (2, 9)),
                          TensorSpec("int64", (9,)), TensorSpec("float32", (3,)))

        def score_mod(score, b, h, q, kv):
            unused = dead[h] * 2  # noqa: F841
            return score + a[h] * c[kv]

        def mask_mod(b, h, q, kv):
            return (b_[b, q] == b_[b, kv]) & (c[q] >= a[h])
        traced = mods.trace(score_mod, mask_mod)
        self.assertEqual(traced.captures, (a, c, b_))
        self.assertEqual(traced.capture_types, (("f32", 1), ("i64", 1), ("i32", 2)))
        self.assertIn("tensor.extract %cap1[%kv_idx] : tensor<?xi64>", traced.score_mod)
        self.assertIn("tensor.extract %cap2[%b, %q_idx] : tensor<?x?xi32>", traced.mask_mod)
        self.assertNotIn("mulf %t0", traced.score_mod)
        # A mod that reads nothing it returns has no ops and no captures.
        identity = mods.trace(lambda score, b, h, q, kv: (dead[h], score)[1])
        self.assertEqual(identity.captures, ())
        self.assertNotIn("tensor.extract", identity.score_mod)
        self.assertIn("attn.yield %score : f32", identity.score_mod)

    def test_constants(self):
        body = mods.trace(lambda s, b, h, q, kv: T.where(q >= kv, s * 0.1, -math.inf)
                          + 1e39 + 1e-5).score_mod
        self.assertIn("arith.constant 0xFF800000 : f32", body)
        self.assertIn("arith.constant 0x7F800000 : f32", body)
        self.assertIn("arith.constant 1.0e-05 : f32", body)
        self.assertIn("arith.constant 0.1 : f32", body)
        # A constant folded where the condition is a Python bool; a mask of
        # a Python bool.
        self.assertIn("attn.yield %score", mods.trace(lambda s, b, h, q, kv: T.where(True, s, 0.0)).score_mod)
        self.assertIn("arith.constant true", mods.trace(mask_mod=lambda b, h, q, kv: True).mask_mod)

    def test_signature_text(self):
        traced = mods.trace(mods.alibi(TensorSpec("float32", (4,))),
                            mods.document(TensorSpec("int64", (1, 8))))
        text = signature("f16", dict(causal="bottom_right", window=(64, 0), softcap=30.0),
                         traced).mlir("f")
        self.assertIn("%v: tensor<?x2x?x16xf16>, %cap0: tensor<?xf32>, %cap1: tensor<?x?xi64>) ->",
                      text)
        self.assertIn("{causal = #attn.causal<bottom_right>, window = #attn.window<left = 64, "
                      "right = 0>, softcap = 30.0 : f32} score_mod {\n  ^bb0(%score: f32", text)
        self.assertIn("attn.yield %t5 : f32\n  } mask_mod {\n  ^bb0(%b: index", text)
        self.assertIn("attn.yield %t2 : i1\n  } : tensor<?x4x?x16xf16>", text)
        for bad in (dict(window=(64,)), dict(window=(-2, 0)), dict(window=[1, 2]),
                    dict(softcap=0.0), dict(softcap=math.inf), dict(score_mod="%x = foo"),
                    dict(captures=(("f64", 1),)), dict(captures=(("f32", 0),))):
            with self.assertRaisesRegex(ValueError, next(iter(bad)), msg=repr(bad)):
                Signature("f16", (1, 1, 1, 16), (1, 1, 1, 16), (1, 1, 1, 16), **bad)


class ErrorTest(unittest.TestCase):
    SLOPES = TensorSpec("float32", (4,))
    DOC = TensorSpec("int32", (2, 64))

    def assertTraceError(self, cls, pattern, score_mod=None, mask_mod=None):
        with self.assertRaisesRegex(cls, pattern):
            mods.trace(score_mod, mask_mod)

    def test_python_control_flow(self):
        def with_if(score, b, h, q, kv):
            if q >= kv:
                return score
            return -math.inf
        self.assertTraceError(TypeError, r"score_mod .*with_if: %t0 is traced: Python `if`, `and`",
                              with_if)
        self.assertTraceError(TypeError, "Python `if`", mask_mod=lambda b, h, q, kv: q >= kv and h == 0)
        self.assertTraceError(TypeError, "chained", mask_mod=lambda b, h, q, kv: 0 <= q - kv < 8)

    def test_python_numbers(self):
        self.assertTraceError(TypeError, "%score is traced, not a Python number",
                              lambda s, b, h, q, kv: math.exp(s))
        self.assertTraceError(TypeError, "not a Python number", lambda s, b, h, q, kv: s + float(q))
        self.assertTraceError(TypeError, "not a Python number",
                              mask_mod=lambda b, h, q, kv: [True, False][h])

    def test_data_dependent_shapes(self):
        self.assertTraceError(TypeError, r"index 1 of the int32 tensor of shape \(2, 64\) is a slice: "
                              "slices, .* data-dependent shape",
                              mask_mod=lambda b, h, q, kv: self.DOC[b, :q] == 0)
        self.assertTraceError(ValueError, r"indexed with 1 value\(s\): index every dimension \(rank 2",
                              mask_mod=lambda b, h, q, kv: self.DOC[b] == 0)
        self.assertTraceError(TypeError, r"\.shape of a traced value is not supported",
                              lambda s, b, h, q, kv: s + s.shape[0])
        self.assertTraceError(ValueError, "constant -1, out of range",
                              mask_mod=lambda b, h, q, kv: self.DOC[b, -1] == 0)
        self.assertTraceError(TypeError, "index 0 .* is a value of type f32",
                              lambda s, b, h, q, kv: self.SLOPES[s])
        self.assertTraceError(TypeError, "a traced scalar: it cannot be indexed",
                              lambda s, b, h, q, kv: s[0])

    def test_capture_types(self):
        self.assertTraceError(ValueError, r"a captured float64 tensor \(convert it: t.float\(\)\): "
                              "captures must be int32, int64 or float32",
                              mods.alibi(TensorSpec("float64", (4,))))
        self.assertTraceError(ValueError, "a captured bool tensor",
                              mask_mod=lambda b, h, q, kv: TensorSpec("bool", (4,))[q])
        self.assertTraceError(TypeError, r"the float32 tensor of shape \(4,\) is used whole",
                              lambda s, b, h, q, kv: s + self.SLOPES)
        self.assertTraceError(TypeError, "is used whole",
                              lambda s, b, h, q, kv: T.where(q > kv, s, self.SLOPES))

    def test_unknown_functions(self):
        self.assertTraceError(TypeError, r"torch.cumsum is not supported in a region \(supported: "
                              "operators and abs, add, ", lambda s, b, h, q, kv: T.cumsum(s))
        self.assertTraceError(TypeError, r"\.softmax of a traced value is not supported",
                              lambda s, b, h, q, kv: s.softmax(0))
        self.assertTraceError(TypeError, r"torch.clamp: unsupported arguments",
                              lambda s, b, h, q, kv: T.clamp(s, mn=0.0))
        self.assertTraceError(TypeError, "the condition must be a boolean .* got f32",
                              lambda s, b, h, q, kv: T.where(s, s, 0.0))
        self.assertTraceError(ValueError, "rounding_mode 'trunc'",
                              lambda s, b, h, q, kv: T.div(s, 2, rounding_mode="trunc"))

    def test_operators(self):
        self.assertTraceError(TypeError, "negation", mask_mod=lambda b, h, q, kv: -(q > kv))
        self.assertTraceError(TypeError, "~ of a float", lambda s, b, h, q, kv: ~s)
        self.assertTraceError(TypeError, "and is not supported on floats",
                              lambda s, b, h, q, kv: s & 1)
        self.assertTraceError(TypeError, "an integer power needs a constant exponent",
                              mask_mod=lambda b, h, q, kv: q ** kv == 1)
        self.assertTraceError(ValueError, "the constant 4294967296 does not fit i32",
                              mask_mod=lambda b, h, q, kv: self.DOC[b, q] == 2 ** 32)

    def test_results(self):
        self.assertTraceError(TypeError, "mask_mod .*: expected a boolean .* got index",
                              mask_mod=lambda b, h, q, kv: q - kv)
        self.assertTraceError(TypeError, "score_mod .*: expected the new score .* got NoneType",
                              lambda s, b, h, q, kv: None)
        self.assertTraceError(TypeError, "mask_mod: expected a callable, got str", mask_mod="causal")
        leaked = []

        def keep(s, b, h, q, kv):
            leaked.append(q)
            return s
        self.assertTraceError(ValueError, "cannot go from one region",
                              keep, lambda b, h, q, kv: leaked[0] >= kv)

    def test_helper_arguments(self):
        with self.assertRaisesRegex(ValueError, "left: expected an integer >= -1"):
            mods.sliding_window(-2)
        with self.assertRaisesRegex(ValueError, "prefix_lm: expected an int >= 0 or a tensor"):
            mods.prefix_lm(2.5)
        with self.assertRaisesRegex(ValueError, "alibi: expected a rank-1 tensor"):
            mods.alibi(TensorSpec("float32", (2, 4)))
        with self.assertRaisesRegex(ValueError, "document: expected a rank-1 or rank-2 tensor"):
            mods.document(3)


class CompileAndRunTest(unittest.TestCase):
    """Each case of CASES: compiled for sm_90a, run on the host with
    --check, its output against the numpy reference of the callables."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.attn_run = attn_run_path()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def run_case(self, name):
        dtype, options, score_mod, mask_mod = CASES[name]
        traced = mods.trace(score_mod, mask_mod)
        sig = signature(dtype, options, traced)
        # The GPU compile: the IR verifies and lowers; the manifest's
        # captures are the trace's, in its order, of any size.
        artifact = compile(sig, cache_dir=os.path.join(self.tmp.name, "cache"))
        manifest = artifact.manifest().data
        self.assertEqual([(c["element_type"], len(c["shape"])) for c in manifest.get("captures", [])],
                         list(traced.capture_types))
        self.assertTrue(all(d == -1 for c in manifest.get("captures", []) for d in c["shape"]))
        attributes = manifest["attributes"]
        self.assertEqual(attributes.get("score_mod", False), score_mod is not None)
        self.assertEqual(attributes.get("mask_mod", False), mask_mod is not None)
        if "window" in options:
            self.assertEqual(attributes["window"], dict(left=options["window"][0],
                                                        right=options["window"][1]))
        # The host run: q, k, v, then the captures in the trace's order.
        work = os.path.join(self.tmp.name, name)
        os.makedirs(work, exist_ok=True)
        source = os.path.join(work, "f.mlir")
        with open(source, "w") as f:
            f.write(sig.mlir())
        rng = np.random.default_rng(zlib.crc32(name.encode()))
        npdtype = np.float32 if dtype == "f32" else np.float16
        inputs = [(rng.random(shape) * 2 - 1).astype(npdtype)
                  for shape in ((B, HQ, TQ, D), (B, HKV, TK, D), (B, HKV, TK, D))]
        inputs += [t.array for t in traced.captures]
        args = []
        for i, array in enumerate(inputs):
            path = os.path.join(work, f"in{i}.npy")
            np.save(path, array)
            args.append(f"--input=@{path}")
        out = os.path.join(work, "o.npy")
        proc = subprocess.run([self.attn_run, source, "--target=cpu", "--check",
                               f"--output=@{out}", *args], capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn("check: PASS", proc.stdout)
        ref = reference(*inputs[:3], 1 / math.sqrt(D), causal=options.get("causal"),
                        window=options.get("window"), softcap=options.get("softcap"),
                        score_mod=score_mod, mask_mod=mask_mod)
        o = np.load(out).astype(np.float64)
        rel = np.linalg.norm(o - ref) / np.linalg.norm(ref)
        print(f"host {name}: rel_l2 {rel:.1e} captures {len(traced.captures)}", flush=True)
        self.assertLess(rel, 1e-5 if dtype == "f32" else 2e-3, name)
        return o, ref

    def test_cases(self):
        for name in CASES:
            with self.subTest(case=name):
                self.run_case(name)

    def test_empty_rows_are_zero(self):
        o, ref = self.run_case("neg_inf_rows")
        self.assertTrue((o[:, :, 3] == 0).all() and (o[:, :, 10] == 0).all())
        self.assertTrue((o[:, :, 4] != 0).any())


if __name__ == "__main__":
    unittest.main(verbosity=2)
