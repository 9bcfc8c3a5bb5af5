"""Pure-Python tests of attn_mlir.manifest (no GPU, no torch)."""

import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from attn_mlir.manifest import Manifest, ManifestError, evaluate  # noqa: E402

SIZES = dict(B=2, Hq=32, Hkv=8, Tq=1000, Tk=77, D=128, Dv=64)


def manifest_data(**overrides):
    data = {
        "format": "attn-mlir-manifest", "version": 1, "kernel": "f_kernel", "ptx": "f.ptx",
        "chip": "sm_90a", "function": "f", "element_type": "bf16",
        "query": {"shape": [-1, 32, -1, 128]}, "key": {"shape": [-1, 8, -1, 128]},
        "value": {"shape": [-1, 8, -1, 64]}, "output": {"shape": [-1, 32, -1, 64]},
        "mask": None, "attributes": {"scale": 0.125, "causal": "top_left", "precision": None},
        "config": {"block_m": 64, "block_n": 64, "num_warps": 4, "num_stages": 2},
        "block": [128, 1, 1], "grid": [{"ceil_div": ["Tq", 64]}, {"mul": ["B", "Hq"]}, 1],
        "shared_memory_bytes": 27648,
        "params": [{"kind": "memref", "operand": n, "rank": 4}
                   for n in ("query", "key", "value", "output")],
    }
    data.update(overrides)
    return data


class GridTest(unittest.TestCase):
    def test_expressions(self):
        self.assertEqual(evaluate(7, SIZES), 7)
        self.assertEqual(evaluate("Tq", SIZES), 1000)
        self.assertEqual(evaluate({"ceil_div": ["Tq", 64]}, SIZES), 16)
        self.assertEqual(evaluate({"mul": ["B", "Hq"]}, SIZES), 64)
        self.assertEqual(evaluate({"max": [{"add": ["Tk", 1]}, {"min": ["D", "Dv"]}]}, SIZES), 78)

    def test_bad_expressions(self):
        for bad in ("T", {"ceil_div": ["Tq"]}, {"pow": [2, 3]}, [1], True, {"mul": [1, 2], "add": [1, 2]}):
            with self.assertRaises(ManifestError, msg=repr(bad)):
                evaluate(bad, SIZES)

    def test_grid_for(self):
        m = Manifest(manifest_data())
        self.assertEqual(m.grid_for(SIZES), (16, 64, 1))


class ManifestTest(unittest.TestCase):
    def test_load_and_ptx_path(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "f.json")
            with open(path, "w") as f:
                json.dump(manifest_data(), f)
            m = Manifest.load(path)
            self.assertEqual(m.kernel, "f_kernel")
            self.assertEqual(m.ptx_path, os.path.join(d, "f.ptx"))
            self.assertEqual(m.block, (128, 1, 1))
            self.assertEqual(m.shared_memory_bytes, 27648)

    def test_not_a_manifest(self):
        with self.assertRaises(ManifestError):
            Manifest(manifest_data(format="something-else"))
        with self.assertRaises(ManifestError):
            Manifest(manifest_data(version=2))

    def test_check_shapes(self):
        m = Manifest(manifest_data())
        sizes = m.check_shapes(dict(query=(2, 32, 1000, 128), key=(2, 8, 77, 128), value=(2, 8, 77, 64)))
        self.assertEqual(sizes, SIZES)
        with self.assertRaisesRegex(ValueError, r"key: shape \(2, 4, 77, 128\) does not match the kernel's \('\?', 8, '\?', 128\)"):
            m.check_shapes(dict(query=(2, 32, 1000, 128), key=(2, 4, 77, 128), value=(2, 8, 77, 64)))
        with self.assertRaisesRegex(ValueError, "query"):
            m.check_shapes(dict(query=(2, 32, 1000), key=(2, 8, 77, 128), value=(2, 8, 77, 64)))


if __name__ == "__main__":
    unittest.main()
