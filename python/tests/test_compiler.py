"""attn_mlir.compile: function text, the cache, concurrency (needs the
built attn-translate: ATTN_TRANSLATE or build/bin; no GPU, no torch)."""

import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from attn_mlir.compiler import CompileError, Signature, compile  # noqa: E402

SIG = Signature("bf16", (None, 8, None, 64), (None, 2, None, 64), (None, 2, None, 64),
                causal="top_left")


def _compile_in_subprocess(cache):
    code = ("import sys; sys.path.insert(0, %r); from attn_mlir.compiler import compile, Signature; "
            "a = compile(Signature('bf16', (None, 8, None, 64), (None, 2, None, 64), (None, 2, None, 64), "
            "causal='top_left'), cache_dir=%r); print(a.directory)"
            % (os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."), cache))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


class SignatureTest(unittest.TestCase):
    def test_mlir_text(self):
        text = SIG.mlir("f")
        self.assertIn("func.func @f(%q: tensor<?x8x?x64xbf16>, %k: tensor<?x2x?x64xbf16>", text)
        self.assertIn("{causal = #attn.causal<top_left>}", text)
        self.assertIn("-> tensor<?x8x?x64xbf16>", text)
        masked = Signature("f32", (2, 4, 17, 32), (2, 4, 9, 32), (2, 4, 9, 16), mask_dtype="i1",
                           mask=(17, 9), scale=0.5, precision="ieee")
        text = masked.mlir()
        self.assertIn("mask(%m) {scale = 0.5 : f32, precision = #attn.precision<ieee>}", text)
        self.assertIn("tensor<17x9xi1>", text)
        self.assertIn("-> tensor<2x4x17x16xf32>", text)

    def test_lse_text(self):
        # Two results, the output then the f32 (B, Hq, Tq) log-sum-exp.
        lse = Signature("bf16", (None, 8, None, 64), (None, 2, None, 64), (None, 2, None, 64),
                        causal="top_left", lse=True)
        text = lse.mlir("f")
        self.assertIn(") -> (tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>) {", text)
        self.assertIn("  %o, %lse = attn.attention %q, %k, %v {causal = #attn.causal<top_left>} : "
                      "tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16> -> "
                      "tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>\n", text)
        self.assertIn("  return %o, %lse : tensor<?x8x?x64xbf16>, tensor<?x8x?xf32>\n", text)
        static = Signature("f16", (2, 4, 17, 32), (2, 4, 9, 32), (2, 4, 9, 16), lse=True)
        self.assertIn("-> (tensor<2x4x17x16xf16>, tensor<2x4x17xf32>)", static.mlir())
        # Another function, so another cache entry.
        self.assertNotEqual(lse.mlir(), SIG.mlir())
        self.assertNotIn("lse", SIG.mlir())
        with self.assertRaisesRegex(ValueError, "lse: expected a bool, got 1"):
            Signature("f16", (1, 1, 1, 16), (1, 1, 1, 16), (1, 1, 1, 16), lse=1)

    def test_kv_lengths_text(self):
        # The i32 (B) key counts after q, k, v and the mask, before the captures.
        sig = Signature("f16", (None, 8, 3, 64), (None, 2, None, 64), (None, 2, None, 64),
                        mask_dtype="i1", mask=(None, None), kv_lengths=True,
                        causal="bottom_right")
        text = sig.mlir("f")
        self.assertIn("func.func @f(%q: tensor<?x8x3x64xf16>, %k: tensor<?x2x?x64xf16>, "
                      "%v: tensor<?x2x?x64xf16>, %m: tensor<?x?xi1>, %lens: tensor<?xi32>) -> "
                      "tensor<?x8x3x64xf16> {", text)
        self.assertIn("attn.attention %q, %k, %v mask(%m) kv_lengths(%lens : tensor<?xi32>) "
                      "{causal = #attn.causal<bottom_right>} : ", text)
        static = Signature("f32", (2, 4, 1, 16), (2, 4, 9, 16), (2, 4, 9, 16), kv_lengths=True)
        self.assertIn("%lens: tensor<2xi32>", static.mlir())
        self.assertNotIn("kv_lengths", SIG.mlir())
        with self.assertRaisesRegex(ValueError, "kv_lengths: expected a bool, got 1"):
            Signature("f16", (1, 1, 1, 16), (1, 1, 1, 16), (1, 1, 1, 16), kv_lengths=1)

    def test_cu_seqlens_text(self):
        # Packed sequences: batch 1, the two i32 offset vectors after q, k
        # and v, before the captures; the function compiles (manifest
        # version 6).
        sig = Signature("bf16", (1, 8, None, 64), (1, 2, None, 64), (1, 2, None, 64),
                        cu_seqlens=True, causal="bottom_right", lse=True)
        text = sig.mlir("f")
        self.assertIn("func.func @f(%q: tensor<1x8x?x64xbf16>, %k: tensor<1x2x?x64xbf16>, "
                      "%v: tensor<1x2x?x64xbf16>, %cuq: tensor<?xi32>, %cuk: tensor<?xi32>) -> "
                      "(tensor<1x8x?x64xbf16>, tensor<1x8x?xf32>) {", text)
        self.assertIn("attn.attention %q, %k, %v cu_seqlens(%cuq, %cuk : tensor<?xi32>, "
                      "tensor<?xi32>) {causal = #attn.causal<bottom_right>} : ", text)
        self.assertNotIn("cu_seqlens", SIG.mlir())
        with tempfile.TemporaryDirectory() as cache:
            manifest = compile(sig, cache_dir=cache).manifest()
        self.assertEqual(manifest.version, 6)
        self.assertEqual(manifest.cu_seqlens_shapes, ([-1], [-1]))
        with self.assertRaisesRegex(ValueError, "cu_seqlens: expected a bool, got 1"):
            Signature("f16", (1, 1, 1, 16), (1, 1, 1, 16), (1, 1, 1, 16), cu_seqlens=1)
        with self.assertRaisesRegex(ValueError, r"query: batch None, expected 1 with cu_seqlens"):
            Signature("f16", (None, 1, 1, 16), (1, 1, 1, 16), (1, 1, 1, 16), cu_seqlens=True)
        with self.assertRaisesRegex(ValueError, "cu_seqlens: packed sequences take no mask"):
            Signature("f16", (1, 1, 1, 16), (1, 1, 1, 16), (1, 1, 1, 16), cu_seqlens=True,
                      kv_lengths=True)

    def test_block_table_text(self):
        # A paged cache: pools with a static page, the i32 (B, P) table
        # after the lengths, printed before kv_lengths.
        sig = Signature("f16", (None, 8, 1, 64), (None, 2, 16, 64), (None, 2, 16, 64),
                        kv_lengths=True, block_table=True)
        text = sig.mlir("f")
        self.assertIn("func.func @f(%q: tensor<?x8x1x64xf16>, %k: tensor<?x2x16x64xf16>, "
                      "%v: tensor<?x2x16x64xf16>, %lens: tensor<?xi32>, %bt: tensor<?x?xi32>)",
                      text)
        self.assertIn("attn.attention %q, %k, %v block_table(%bt : tensor<?x?xi32>) "
                      "kv_lengths(%lens : tensor<?xi32>)", text)
        self.assertNotIn("block_table", SIG.mlir())
        with self.assertRaisesRegex(ValueError, "block_table: expected a bool, got 1"):
            Signature("f16", (1, 1, 1, 16), (1, 1, 16, 16), (1, 1, 16, 16), block_table=1)
        with self.assertRaisesRegex(ValueError, r"key: the page size .* must be static"):
            Signature("f16", (1, 1, 1, 16), (1, 1, None, 16), (1, 1, None, 16), block_table=True)
        with self.assertRaisesRegex(ValueError, "block_table: a paged cache takes no cu_seqlens"):
            Signature("f16", (1, 1, 1, 16), (1, 1, 16, 16), (1, 1, 16, 16), block_table=True,
                      cu_seqlens=True)

    def test_bad_signatures(self):
        with self.assertRaisesRegex(ValueError, "dtype"):
            Signature("f64", (1, 1, 1, 16), (1, 1, 1, 16), (1, 1, 1, 16))
        with self.assertRaisesRegex(ValueError, "query: expected a rank-4"):
            Signature("f16", (1, 1, 16), (1, 1, 1, 16), (1, 1, 1, 16))
        with self.assertRaisesRegex(ValueError, "key: the head dim"):
            Signature("f16", (1, 1, 1, 16), (1, 1, 1, None), (1, 1, 1, 16))
        with self.assertRaisesRegex(ValueError, "causal"):
            Signature("f16", (1, 1, 1, 16), (1, 1, 1, 16), (1, 1, 1, 16), causal="diagonal")
        with self.assertRaisesRegex(ValueError, "mask: give both"):
            Signature("f16", (1, 1, 1, 16), (1, 1, 1, 16), (1, 1, 1, 16), mask=(1, 1))
        with self.assertRaisesRegex(ValueError, r"key: dim 1 must be None \(dynamic\) or an integer >= 1, got 0"):
            Signature("f32", (1, 4, 8, 16), (1, 0, 8, 16), (1, 0, 8, 16))
        with self.assertRaisesRegex(ValueError, "query: dim 3 must be None .* got True"):
            Signature("f32", (1, 4, 8, True), (1, 4, 8, 16), (1, 4, 8, 16))
        for scale in (float("nan"), float("inf"), 0.0, -1.0, "0.5", True):
            with self.assertRaisesRegex(ValueError, "scale: expected a finite positive number",
                                        msg=repr(scale)):
                Signature("f16", (1, 1, 1, 16), (1, 1, 1, 16), (1, 1, 1, 16), scale=scale)

    def test_scale_literals(self):
        # repr gives '1e-05', which MLIR does not parse as a float: the
        # function text writes '1.0e-05'; the value round-trips as an f32.
        for scale, literal in ((1e-5, "1.0e-05"), (1e16, "1.0e+16"), (3e38, "3.0e+38"),
                               (0.125, "0.125"), (2.5e-10, "2.5e-10")):
            sig = Signature("f16", (1, 1, 1, 16), (1, 1, 1, 16), (1, 1, 1, 16), scale=scale)
            self.assertIn(f"scale = {literal} : f32", sig.mlir())

    def test_known_chips_match_the_compiler(self):
        # The dialect's verifier and this package read the same list
        # (facts.json); attn-translate names it when refusing a chip.
        import re
        from attn_mlir.compiler import KNOWN_CHIPS, find_attn_translate
        proc = subprocess.run([find_attn_translate(), "--attn-to-ptx", "--chip=sm_99", "-"],
                              input=SIG.mlir(), capture_output=True, text=True)
        listed = re.search(r"it knows ([^)]*)\)", proc.stderr)
        self.assertIsNotNone(listed, proc.stderr)
        self.assertEqual(tuple(listed.group(1).split(", ")), KNOWN_CHIPS)

    def test_bad_compile_arguments(self):
        with tempfile.TemporaryDirectory() as cache:
            for kwargs, message in ((dict(chip="90a"), "chip: expected sm_XY"),
                                    (dict(chip="sm_90ab"), "chip: expected sm_XY"),
                                    (dict(chip="sm_90f"), "chip: expected one of the chips"),
                                    (dict(chip="sm_999"), "chip: expected one of the chips"),
                                    (dict(block_m=-64), "block_m: expected an integer >= 0"),
                                    (dict(block_n=32.0), "block_n: expected an integer"),
                                    (dict(num_warps=True), "num_warps: expected an integer"),
                                    (dict(tensor_copies=1), "tensor_copies: expected 'auto'"),
                                    (dict(tensor_copies="all"), "tensor_copies: expected"),
                                    (dict(tensor_copies=False), "tensor_copies: expected")):
                with self.assertRaisesRegex(ValueError, message, msg=repr(kwargs)):
                    compile(SIG, cache_dir=cache, **kwargs)
            self.assertEqual(os.listdir(cache), [])  # validated before anything is written


class CompileTest(unittest.TestCase):
    def test_cold_then_cached(self):
        with tempfile.TemporaryDirectory() as cache:
            t0 = time.perf_counter()
            cold = compile(SIG, cache_dir=cache)
            cold_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            warm = compile(SIG, cache_dir=cache)
            warm_s = time.perf_counter() - t0
            self.assertFalse(cold.cached)
            self.assertTrue(warm.cached)
            self.assertEqual(cold.directory, warm.directory)
            with open(warm.manifest_path) as f:
                manifest = json.load(f)
            self.assertEqual(manifest["attributes"]["causal"], "top_left")
            self.assertEqual(manifest["ptx"], "kernel.ptx")
            with open(warm.ptx_path) as f:
                self.assertIn(".entry attention_kernel(", f.read())
            self.assertLess(warm_s, 0.05)
            print(f"compile: cold {cold_s * 1e3:.0f} ms, cached {warm_s * 1e3:.2f} ms",
                  file=sys.stderr, flush=True)
            # A different signature is a different entry.
            other = compile(Signature("f16", (None, 8, None, 64), (None, 8, None, 64),
                                      (None, 8, None, 64)), cache_dir=cache)
            self.assertNotEqual(other.directory, cold.directory)

    def test_tensor_copies(self):
        # tf32 Q, K and V by TMA tensor copies, the default ("auto"): Q's
        # and K's tensor maps (128-byte atoms, 128-byte swizzle) and V's
        # (padded rows, no swizzle) as the last parameters of a version 3 manifest;
        # "none" is the plain one.
        sig = Signature("f32", (None, 4, None, 128), (None, 4, None, 128),
                        (None, 4, None, 128), causal="top_left")
        with tempfile.TemporaryDirectory() as cache:
            auto = compile(sig, cache_dir=cache)
            with open(auto.manifest_path) as f:
                manifest = json.load(f)
            self.assertEqual(manifest["version"], 3)
            self.assertEqual(manifest["params"][-3:], [
                {"kind": "tensor_map", "operand": "query", "box": [1, 1, 64, 32], "swizzle": 128},
                {"kind": "tensor_map", "operand": "key", "box": [1, 1, 32, 32], "swizzle": 128},
                {"kind": "tensor_map", "operand": "value", "box": [1, 1, 32, 132], "swizzle": 0}])
            with open(auto.ptx_path) as f:
                auto_ptx = f.read()
            self.assertIn("cp.async.bulk.tensor", auto_ptx)
            none = compile(sig, cache_dir=cache, tensor_copies="none")
            with open(none.manifest_path) as f:
                self.assertEqual(json.load(f)["version"], 1)
            with open(none.ptx_path) as f:
                self.assertNotIn("cp.async.bulk.tensor", f.read())

    def test_wgmma_16bit(self):
        # 16-bit kernels for sm_90a run both products on wgmma.
        sig = Signature("bf16", (None, 4, None, 128), (None, 2, None, 128),
                        (None, 2, None, 128), causal="top_left")
        with tempfile.TemporaryDirectory() as cache:
            with open(compile(sig, cache_dir=cache).ptx_path) as f:
                ptx = f.read()
            self.assertIn("wgmma.mma_async", ptx)
            self.assertNotIn("mma.sync.aligned", ptx)

    def test_tensor_copies_16bit_by_default(self):
        # "auto", the default, loads K and V of a 16-bit wgmma kernel by
        # tensor copies: two tensor maps, head dim 128 as two 128-byte atoms.
        sig = Signature("bf16", (None, 4, None, 128), (None, 2, None, 128),
                        (None, 2, None, 128), causal="top_left")
        with tempfile.TemporaryDirectory() as cache:
            auto = compile(sig, cache_dir=cache)
            with open(auto.manifest_path) as f:
                manifest = json.load(f)
            self.assertEqual(manifest["version"], 3)
            maps = [p for p in manifest["params"] if p["kind"] == "tensor_map"]
            self.assertEqual(sorted(p["operand"] for p in maps), ["key", "value"])
            for p in maps:
                self.assertEqual(p["box"], [1, 1, 64, 64])
                self.assertEqual(p["swizzle"], 128)
            with open(auto.ptx_path) as f:
                self.assertIn("cp.async.bulk.tensor.4d", f.read())
            none = compile(sig, cache_dir=cache, tensor_copies="none")
            self.assertNotEqual(none.directory, auto.directory)
            with open(none.manifest_path) as f:
                self.assertEqual(json.load(f)["version"], 1)  # no mask, no tensor map
            with open(none.ptx_path) as f:
                self.assertNotIn("cp.async.bulk.tensor", f.read())

    def test_concurrent_processes_share_one_entry(self):
        with tempfile.TemporaryDirectory() as cache:
            with concurrent.futures.ThreadPoolExecutor(4) as pool:
                dirs = list(pool.map(_compile_in_subprocess, [cache] * 4))
            self.assertEqual(len(set(dirs)), 1)
            entries = [e for e in os.listdir(cache)]
            self.assertEqual(entries, [os.path.basename(dirs[0])])  # no temp dirs left

    def test_another_compiler_recompiles(self):
        translate = os.environ.get("ATTN_TRANSLATE") or os.path.join(
            os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "bin", "attn-translate")
        with tempfile.TemporaryDirectory() as cache:
            first = compile(SIG, cache_dir=cache, attn_translate=translate)
            self.assertFalse(first.cached)
            with open(os.path.join(first.directory, "compiler.txt")) as f:
                self.assertIn(os.path.realpath(translate), f.read())
            # A different attn-translate (a rebuilt one): the entry is stale.
            wrapper = os.path.join(cache, "other-attn-translate")
            with open(wrapper, "w") as f:
                f.write(f"#!/bin/sh\nexec '{os.path.realpath(translate)}' \"$@\"\n")
            os.chmod(wrapper, 0o755)
            again = compile(SIG, cache_dir=cache, attn_translate=wrapper)
            self.assertFalse(again.cached)
            self.assertEqual(again.directory, first.directory)
            with open(os.path.join(again.directory, "compiler.txt")) as f:
                self.assertIn("other-attn-translate", f.read())
            self.assertTrue(compile(SIG, cache_dir=cache, attn_translate=wrapper).cached)
            # No compiler at all (a GPU machine): the entry is used as it is.
            self.assertTrue(compile(SIG, cache_dir=cache,
                                    attn_translate="/nonexistent/attn-translate").cached)
            with self.assertRaisesRegex(CompileError, "attn-translate not found at /nonexistent"):
                compile(Signature("f16", (None, 2, None, 64), (None, 2, None, 64),
                                  (None, 2, None, 64)), cache_dir=cache,
                        attn_translate="/nonexistent/attn-translate")
            self.assertEqual(sorted(os.listdir(cache)),
                             sorted([os.path.basename(first.directory), "other-attn-translate"]))

    def test_small_scale_compiles(self):
        sig = Signature("f16", (None, 2, None, 64), (None, 2, None, 64), (None, 2, None, 64),
                        scale=1e-5)
        with tempfile.TemporaryDirectory() as cache:
            artifact = compile(sig, cache_dir=cache)
            self.assertAlmostEqual(artifact.manifest().data["attributes"]["scale"], 1e-5,
                                   delta=1e-12)

    def test_damaged_entries(self):
        translate = os.environ.get("ATTN_TRANSLATE") or os.path.join(
            os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "bin", "attn-translate")
        with tempfile.TemporaryDirectory() as cache:
            first = compile(SIG, cache_dir=cache, attn_translate=translate)
            with open(os.path.join(first.directory, "checksums.txt")) as f:
                self.assertEqual([line.split()[1] for line in f], ["kernel.json", "kernel.ptx"])
            # A truncated PTX without a compiler: refused, naming the entry.
            with open(first.ptx_path, "r+") as f:
                f.truncate(1000)
            with self.assertRaisesRegex(CompileError, "the cache entry .* is damaged "
                                        r"\(a file does not match checksums.txt\)"):
                compile(SIG, cache_dir=cache, attn_translate="/nonexistent/attn-translate")
            # With a compiler: compiled again, in place.
            again = compile(SIG, cache_dir=cache, attn_translate=translate)
            self.assertFalse(again.cached)
            with open(again.ptx_path) as f:
                self.assertIn(".entry attention_kernel(", f.read())
            # A missing or empty manifest, an entry that is a file: the same.
            os.remove(again.manifest_path)
            self.assertFalse(compile(SIG, cache_dir=cache, attn_translate=translate).cached)
            open(again.manifest_path, "w").close()
            self.assertFalse(compile(SIG, cache_dir=cache, attn_translate=translate).cached)
            self.assertTrue(compile(SIG, cache_dir=cache, attn_translate=translate).cached)
            # A compiler that exits 0 and writes nothing publishes nothing.
            with self.assertRaisesRegex(CompileError, "exited with 0 but did not write "
                                        "kernel.ptx and kernel.json"):
                compile(Signature("f16", (None, 2, None, 64), (None, 2, None, 64),
                                  (None, 2, None, 64)), cache_dir=cache, attn_translate="/bin/true")
            self.assertEqual(os.listdir(cache), [os.path.basename(first.directory)])

    def test_compiler_errors(self):
        bad = Signature("f16", (None, 2, None, 264), (None, 2, None, 264), (None, 2, None, 264))
        with tempfile.TemporaryDirectory() as cache:
            with self.assertRaisesRegex(CompileError, "head dim"):
                compile(bad, cache_dir=cache)
            self.assertEqual(os.listdir(cache), [])  # nothing half-written


if __name__ == "__main__":
    unittest.main()
