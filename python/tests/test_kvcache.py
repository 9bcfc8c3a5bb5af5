"""attn_mlir.kvcache (FlashAttention's flash_attn_with_kvcache conventions
mapped onto attn.attention) without torch or a GPU: the window and causal
mapping against FlashAttention's rule, key by key; the refused arguments;
the decode signature and its MLIR; and, with the built attn-translate, the
kernels it compiles (split-KV: a version 5 manifest with the combine as an
epilogue kernel, the kv_lengths operand) read by attn_mlir.manifest and
planned by attn_mlir.runtime."""

import itertools
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
from attn_mlir import kvcache, runtime  # noqa: E402
from attn_mlir.compiler import compile, find_attn_translate  # noqa: E402
from attn_mlir.manifest import Manifest  # noqa: E402
from test_runtime_plan import FakeTensor  # noqa: E402


def fa_keeps(causal, window, tq, tk_cache, length):
    """The keys each query row keeps in FlashAttention (flash_api.cpp's
    mha_fwd_kvcache): a bound as long as the cache is none, causal is a
    right bound of 0, the window aligned to the bottom right of the batch's
    `length` keys."""
    left, right = window
    if left >= tk_cache:
        left = -1
    if right >= tk_cache:
        right = -1
    if causal:
        right = 0
    off = length - tq
    return [[j for j in range(length) if (left < 0 or j >= i + off - left)
             and (right < 0 or j <= i + off + right)] for i in range(tq)]


def op_keeps(causal, window, tq, tk, length):
    """The keys each query row keeps in attn.attention with kv_lengths
    (AttnOps.td): the batch's count stands for Tk, also in the bottom_right
    causal and window offset; the window is shifted only under
    bottom_right."""
    n = max(0, min(length, tk))
    off = n - tq if causal == "bottom_right" else 0
    keeps = []
    for i in range(tq):
        row = []
        for j in range(n):
            if causal and j > i + off:
                continue
            if window is not None:
                left, right = window
                if left >= 0 and j < i + off - left:
                    continue
                if right >= 0 and j > i + off + right:
                    continue
            row.append(j)
        keeps.append(row)
    return keeps


class OptionsTest(unittest.TestCase):
    def test_windows_keep_what_flash_attention_keeps(self):
        # Every window, causal or not, query lengths 1..5, caches of 1..7
        # keys, every length: a mapped window keeps exactly FlashAttention's
        # keys; a refused one is a window without causal, on several rows,
        # that reaches past the diagonal.
        mapped = refused = 0
        for tq, tk, causal in itertools.product(range(1, 6), range(1, 8), (False, True)):
            for window in itertools.product(range(-1, tk + 2), repeat=2):
                try:
                    op_causal, op_window, _, _ = kvcache.options(causal, window, 0.0, None, tq, tk)
                except NotImplementedError as e:
                    self.assertFalse(causal)
                    self.assertGreater(tq, 1)
                    self.assertIn(f"window_size={window} without causal for {tq} query rows",
                                  str(e))
                    refused += 1
                    continue
                mapped += 1
                for length in range(tk + 1):
                    self.assertEqual(op_keeps(op_causal, op_window, tq, tk, length),
                                     fa_keeps(causal, window, tq, tk, length),
                                     (tq, tk, causal, window, length))
        print(f"windows: {mapped} mapped, {refused} refused", file=sys.stderr)
        self.assertGreater(mapped, 2 * refused)

    def test_options(self):
        self.assertEqual(kvcache.options(False, (-1, -1), 0.0, None, 1, 100),
                         (None, None, None, None))
        self.assertEqual(kvcache.options(True, (-1, -1), 0.0, None, 1, 100),
                         ("bottom_right", None, None, None))
        # Mistral's sliding window in decode; a softcap; a scale.
        self.assertEqual(kvcache.options(True, (4096, 0), 30.0, 0.125, 4, 10000),
                         ("bottom_right", (4096, 0), 30.0, 0.125))
        # One query row: a window without causal is the same (the diagonal is the last key).
        self.assertEqual(kvcache.options(False, (64, -1), 0.0, None, 1, 1000),
                         ("bottom_right", (64, 0), None, None))
        # A left bound as long as the cache is none (FlashAttention's rule).
        self.assertEqual(kvcache.options(True, (1000, 0), 0.0, None, 3, 1000),
                         ("bottom_right", None, None, None))
        for bad, error, message in (
                (dict(causal=1), TypeError, "causal: expected a bool"),
                (dict(window_size=(-2, 0)), ValueError, "window_size: expected"),
                (dict(window_size=(3,)), ValueError, "window_size: expected"),
                (dict(softcap=-1.0), ValueError, "softcap: expected a finite number >= 0"),
                (dict(softcap=float("inf")), ValueError, "softcap"),
                (dict(softmax_scale=0.0), ValueError, "softmax_scale: expected None"),
                (dict(softmax_scale=True), ValueError, "softmax_scale")):
            args = dict(causal=False, window_size=(-1, -1), softcap=0.0, softmax_scale=None)
            args.update(bad)
            with self.subTest(bad), self.assertRaisesRegex(error, message):
                kvcache.options(args["causal"], args["window_size"], args["softcap"],
                                args["softmax_scale"], 2, 100)

    def test_unsupported_arguments(self):
        self.assertEqual(kvcache.check_unsupported(), kvcache.SPLIT_PROGRAMS)
        self.assertEqual(kvcache.check_unsupported(num_splits=1), 0)
        for name in ("rotary_cos", "rotary_sin", "cache_batch_idx", "cache_leftpad",
                     "alibi_slopes"):
            with self.subTest(name), self.assertRaisesRegex(
                    NotImplementedError, f"^attention_with_kvcache: {name}= is not supported"):
                kvcache.check_unsupported(**{name: object()})
        # A paged cache is supported (check_block_table), and so is appending keys.
        self.assertEqual(kvcache.check_unsupported(block_table=[0]), kvcache.SPLIT_PROGRAMS)
        self.assertEqual(kvcache.check_unsupported(k=object(), v=object()), kvcache.SPLIT_PROGRAMS)

    def test_block_table(self):
        # The entries a batch uses (its first ceil(n_b / page)) must name
        # pages of the pool; the others are never read.
        kvcache.check_block_table([[3, 0, 5], [1, 77, 2]], [40, 16], 16, 6)
        kvcache.check_block_table([[3, 0, 5], [1, 2, -1]], [48, 0], 16, 6)
        for rows, lengths, message in (
                ([[3, 0, 5], [1, 77, 2]], [40, 17], r"block_table\[1, 1\] = 77 is not a page "
                                                    r"of the pool \(0..5: k_cache has 6 blocks\)"),
                ([[3, 0, 6]], None, r"block_table\[0, 2\] = 6"),
                ([[-1, 0, 1]], [1], r"block_table\[0, 0\] = -1"),
                ([[0, 1, 9]], [500], r"block_table\[0, 2\] = 9")):
            with self.subTest(message), self.assertRaisesRegex(ValueError, "^" + message):
                kvcache.check_block_table(rows, lengths, 16, 6)
        for page in (16, 32, 64, 128, 256):
            kvcache.check_page_size(page)
        for page in (8, 24, 48, 512):
            with self.subTest(page), self.assertRaisesRegex(ValueError, "a power of two in "
                                                                        "16..256"):
                kvcache.check_page_size(page)
        with self.assertRaisesRegex(NotImplementedError, "num_splits=4 is not supported"):
            kvcache.check_unsupported(num_splits=4)
        with self.assertRaisesRegex(TypeError, "rotary_interleaved: expected a bool"):
            kvcache.check_unsupported(rotary_interleaved=None)


class SignatureTest(unittest.TestCase):
    def test_decode_signature(self):
        sig = kvcache.signature("bf16", (4, 1, 32, 128), (4, 4096, 8, 128), (4, 4096, 8, 128),
                                causal="bottom_right", lse=True, kv_lengths=True)
        self.assertEqual((sig.query, sig.key, sig.value),
                         ((None, 32, 1, 128), (None, 8, None, 128), (None, 8, None, 128)))
        text = sig.mlir("decode")
        self.assertIn("func.func @decode(%q: tensor<?x32x1x128xbf16>, %k: tensor<?x8x?x128xbf16>, "
                      "%v: tensor<?x8x?x128xbf16>, %lens: tensor<?xi32>) -> "
                      "(tensor<?x32x1x128xbf16>, tensor<?x32x1xf32>) {", text)
        self.assertIn("  %o, %lse = attn.attention %q, %k, %v kv_lengths(%lens : tensor<?xi32>) "
                      "{causal = #attn.causal<bottom_right>} : ", text)
        # Up to 16 query rows Tq is static (speculative decode); beyond, dynamic.
        self.assertEqual(kvcache.signature("f16", (1, 16, 8, 64), (1, 9, 2, 64),
                                           (1, 9, 2, 64)).query, (None, 8, 16, 64))
        self.assertEqual(kvcache.signature("f16", (1, 17, 8, 64), (1, 9, 2, 64),
                                           (1, 9, 2, 64)).query, (None, 8, None, 64))
        # Another head dim for the values.
        self.assertEqual(kvcache.signature("f32", (2, 3, 4, 64), (2, 9, 2, 64),
                                           (2, 9, 2, 32)).value, (None, 2, None, 32))
        with self.assertRaisesRegex(ValueError, "dtype"):
            kvcache.signature("f64", (1, 1, 1, 16), (1, 1, 1, 16), (1, 1, 1, 16))


@unittest.skipUnless(find_attn_translate(required=False), "needs the built attn-translate")
class CompiledTest(unittest.TestCase):
    """The kernels attention_with_kvcache compiles, read and planned as the
    GPU would launch them."""

    @classmethod
    def setUpClass(cls):
        cls.cache = tempfile.TemporaryDirectory()

    @classmethod
    def tearDownClass(cls):
        cls.cache.cleanup()

    def compile(self, sig, **options):
        return Manifest.load(compile(sig, cache_dir=self.cache.name, **options).manifest_path)

    def test_split_decode_with_lengths(self):
        sig = kvcache.signature("bf16", (1, 1, 32, 128), (1, 8192, 8, 128), (1, 8192, 8, 128),
                                causal="bottom_right", lse=True, kv_lengths=True)
        m = self.compile(sig, split_programs=kvcache.SPLIT_PROGRAMS)
        self.assertEqual(m.version, 5)
        self.assertEqual(m.kv_lengths_shape, [-1])
        self.assertEqual(m.lse_shape, [-1, 32, 1])
        self.assertEqual([k["kernel"] for k in m.epilogue], ["attention_combine"])
        self.assertEqual(set(m.workspaces), {"split_output", "split_lse"})
        # The programs (S, Hkv, B), each taking the 4 query heads of its KV
        # head as rows (GQA decode packing), and the combine (Tq, Hq, B): S
        # from the launch's sizes, so one kernel serves every batch and cache
        # length.
        for b, tk in ((1, 8192), (1, 1000), (8, 32768), (64, 4096)):
            q = FakeTensor((b, 32, 1, 128))
            k, v = FakeTensor((b, 8, tk, 128)), FakeTensor((b, 8, tk, 128))
            kernel = runtime.Kernel.__new__(runtime.Kernel)
            kernel.manifest = m
            plan = kernel._plan(q, k, v, None, None,
                                kv_lengths=FakeTensor((b,), dtype="torch.int32"))
            block_n = m.config["block_n"]
            splits = min(-(-tk // (4 * block_n)), -(-264 // (b * 8)))
            self.assertEqual(plan.grid, (splits, 8, b), (b, tk))
            self.assertEqual(plan.epilogue[0].grid, (1, 32, b))
            self.assertEqual(plan.workspaces, (splits * b * 32 * 128 * 4, splits * b * 32 * 4))
            # The main kernel reads the lengths; the combine writes the output and the lse.
            operands = {runtime._OPERAND_NAMES.get(i, i) for _, i in plan.pointers}
            self.assertIn(runtime._operand_index(m, "kv_lengths"), operands)
            combine = {runtime._OPERAND_NAMES.get(i, i) for _, i in plan.epilogue[0].pointers}
            self.assertTrue({"output", runtime._operand_index(m, "lse")} <= combine)
        print(f"split decode: grid {m.grid}, epilogue {m.epilogue[0]['kernel']}", file=sys.stderr)

    def test_never_split_and_prefill(self):
        # num_splits=1: one kernel, no epilogue (version 5 for its kv_lengths).
        sig = kvcache.signature("f16", (2, 4, 8, 64), (2, 1000, 2, 64), (2, 1000, 2, 64),
                                causal="bottom_right", kv_lengths=True)
        m = self.compile(sig, split_programs=0)
        self.assertEqual((m.version, m.epilogue, m.kv_lengths_shape), (5, [], [-1]))
        # A prefill (Tq > 16, dynamic) does not split whatever split_programs says.
        sig = kvcache.signature("f16", (2, 100, 8, 64), (2, 1000, 2, 64), (2, 1000, 2, 64),
                                causal="bottom_right", kv_lengths=True)
        m = self.compile(sig, split_programs=kvcache.SPLIT_PROGRAMS)
        self.assertEqual((m.query_shape[2], m.epilogue), (-1, []))
        # Without lengths (cache_seqlens an int: a view of the cache), version 4 or lower.
        sig = kvcache.signature("f16", (2, 1, 8, 64), (2, 1000, 2, 64), (2, 1000, 2, 64))
        m = self.compile(sig, split_programs=0)
        self.assertLess(m.version, 5)
        self.assertIsNone(m.kv_lengths_shape)

    def test_paged_decode(self):
        # A paged cache: (num_blocks, page, Hkv, D) pools, the page static,
        # the table after the lengths; version 7, split over P * page keys.
        sig = kvcache.signature("bf16", (2, 1, 32, 128), (50, 64, 8, 128), (50, 64, 8, 128),
                                causal="bottom_right", lse=True, kv_lengths=True,
                                block_table=True)
        self.assertEqual((sig.key, sig.value), ((None, 8, 64, 128), (None, 8, 64, 128)))
        self.assertIn("attn.attention %q, %k, %v block_table(%bt : tensor<?x?xi32>) "
                      "kv_lengths(%lens : tensor<?xi32>)", sig.mlir())
        m = self.compile(sig, split_programs=kvcache.SPLIT_PROGRAMS)
        self.assertEqual((m.version, m.block_table_shape, m.page_size), (7, [-1, -1], 64))
        self.assertTrue(m.epilogue)
        sizes = m.check_shapes(dict(query=(2, 32, 1, 128), key=(50, 8, 64, 128),
                                    value=(50, 8, 64, 128), kv_lengths=(2,),
                                    block_table=(2, 40)))
        self.assertEqual(sizes["Tk"], 2560)

    def test_bad_split_programs(self):
        sig = kvcache.signature("f16", (2, 1, 8, 64), (2, 1000, 2, 64), (2, 1000, 2, 64))
        for bad in (-2, 1.5, True, "264"):
            with self.subTest(bad), self.assertRaisesRegex(ValueError, "split_programs: expected an "
                                                                       "integer >= -1"):
                compile(sig, cache_dir=self.cache.name, split_programs=bad)
        # Another split aim is another cache entry.
        a = compile(sig, cache_dir=self.cache.name, split_programs=0)
        b = compile(sig, cache_dir=self.cache.name, split_programs=264)
        self.assertNotEqual(a.directory, b.directory)


if __name__ == "__main__":
    unittest.main(verbosity=2)
