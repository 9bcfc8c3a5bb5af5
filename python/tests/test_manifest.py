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


def manifest_v2_data(**overrides):
    """The version 2 example of docs/Manifest.md (unittests' kExampleV2Text):
    a mask whose block map a prologue kernel writes into a workspace."""
    memref = lambda n: {"kind": "memref", "operand": n, "rank": 4}  # noqa: E731
    workspace = {"kind": "workspace", "name": "mask_block_map", "rank": 4}
    data = manifest_data(
        version=2, mask={"element_type": "i1", "shape": [1, 1, -1, -1]},
        params=[memref(n) for n in ("query", "key", "value", "mask", "output")]
        + [workspace, {"kind": "size", "name": "Tk"}],
        workspace=[{"name": "mask_block_map", "element_bytes": 1,
                    "shape": [1, 1, {"ceil_div": ["Tq", 128]}, {"ceil_div": ["Tk", 64]}]}],
        prologue=[{"kernel": "f_mask_map", "block": [128, 1, 1],
                   "grid": [{"ceil_div": ["Tk", 64]}, {"ceil_div": ["Tq", 128]}, 1],
                   "shared_memory_bytes": 0,
                   "params": [memref("mask"), dict(workspace), {"kind": "size", "name": "Tq"},
                              {"kind": "size", "name": "Tk"}]}])
    data.update(overrides)
    return data


KEY_MAP = {"kind": "tensor_map", "operand": "key", "box": [1, 1, 64, 32], "swizzle": 128}


def manifest_v3_data(**overrides):
    """The version 3 example of docs/Manifest.md (unittests' kExampleV3Text):
    an f32 kernel with a tensor map of key and one of value."""
    memref = lambda n: {"kind": "memref", "operand": n, "rank": 4}  # noqa: E731
    data = manifest_data(
        version=3, element_type="f32",
        params=[memref(n) for n in ("query", "key", "value", "output")]
        + [dict(KEY_MAP), dict(KEY_MAP, operand="value"), {"kind": "size", "name": "Tk"}])
    data.update(overrides)
    return data


def manifest_v4_data(**overrides):
    """The version 4 example of docs/Manifest.md (unittests' kExampleV4Text):
    the version 1 example that also writes the log-sum-exp."""
    memref = lambda n, r=4: {"kind": "memref", "operand": n, "rank": r}  # noqa: E731
    data = manifest_data(
        version=4, lse={"shape": [-1, 32, -1]},
        params=[memref(n) for n in ("query", "key", "value", "output")] + [memref("lse", 3)])
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
        # attn-translate's grid since 0.4.8: (query blocks, Hq, B).
        m = Manifest(manifest_data(grid=[{"ceil_div": ["Tq", 64]}, "Hq", "B"]))
        self.assertEqual(m.grid_for(SIZES), (16, 32, 2))
        self.assertEqual(m.grid_for(dict(SIZES, B=65535)), (16, 32, 65535))
        with self.assertRaisesRegex(ValueError, r"^grid.z = B = 65536 is out of range "
                                    r"\(1 .. 65535\) for B=65536 Hq=32 Hkv=8 Tq=1000 "):
            m.grid_for(dict(SIZES, B=65536))
        # An empty problem (B = 0) evaluates; the runtime launches nothing.
        self.assertEqual(m.grid_for(dict(SIZES, B=0)), (16, 32, 0))


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
            Manifest(manifest_data(version=5))

    def test_check_shapes(self):
        m = Manifest(manifest_data())
        sizes = m.check_shapes(dict(query=(2, 32, 1000, 128), key=(2, 8, 77, 128), value=(2, 8, 77, 64)))
        self.assertEqual(sizes, SIZES)
        with self.assertRaisesRegex(ValueError, r"key: shape \(2, 4, 77, 128\) does not match the kernel's \('\?', 8, '\?', 128\)"):
            m.check_shapes(dict(query=(2, 32, 1000, 128), key=(2, 4, 77, 128), value=(2, 8, 77, 64)))
        with self.assertRaisesRegex(ValueError, "query"):
            m.check_shapes(dict(query=(2, 32, 1000), key=(2, 8, 77, 128), value=(2, 8, 77, 64)))
        with self.assertRaisesRegex(ValueError, r"value: dim 0 \(B\) is 3, but query has B = 2"):
            m.check_shapes(dict(query=(2, 32, 1000, 128), key=(2, 8, 77, 128), value=(3, 8, 77, 64)))
        # The mask, when the caller passes one (None: no mask).
        with self.assertRaisesRegex(ValueError, "mask: a mask was given, but the kernel was "
                                    "compiled without one"):
            m.check_shapes(dict(query=(2, 32, 1000, 128), key=(2, 8, 77, 128),
                                value=(2, 8, 77, 64), mask=(1000, 77)))
        masked = Manifest(manifest_data(mask={"element_type": "f32", "shape": [-1, -1]}))
        shapes = dict(query=(2, 32, 1000, 128), key=(2, 8, 77, 128), value=(2, 8, 77, 64))
        with self.assertRaisesRegex(ValueError, r"mask: the kernel was compiled with a mask \(f32\)"):
            masked.check_shapes(dict(shapes, mask=None))
        with self.assertRaisesRegex(ValueError, r"mask: dim 0 is 16, must be 1 or 1000 to "
                                    r"broadcast to \(B, Hq, Tq, Tk\) = \(1000, 77\)"):
            masked.check_shapes(dict(shapes, mask=(16, 16)))
        with self.assertRaisesRegex(ValueError, r"mask: shape \(1, 1, 1000, 77\) does not match"):
            masked.check_shapes(dict(shapes, mask=(1, 1, 1000, 77)))
        self.assertEqual(masked.check_shapes(dict(shapes, mask=(1000, 1))), SIZES)


class Version2Test(unittest.TestCase):
    def test_workspaces_and_prologue(self):
        m = Manifest(manifest_v2_data())
        self.assertEqual(m.version, 2)
        self.assertEqual(list(m.workspaces), ["mask_block_map"])
        self.assertEqual(m.workspace_shape("mask_block_map", SIZES), (1, 1, 8, 2))
        self.assertEqual(m.workspace_bytes("mask_block_map", SIZES), 16)
        self.assertEqual(m.prologue_grid_for(0, SIZES), (2, 8, 1))
        self.assertEqual(Manifest(manifest_data()).workspaces, {})
        self.assertEqual(Manifest(manifest_data()).prologue, [])
        # Version 2 without them is fine too.
        self.assertEqual(Manifest(manifest_data(version=2)).version, 2)

    def test_evaluation_errors(self):
        m = Manifest(manifest_v2_data())
        sizes = dict(SIZES, Tq=0)
        with self.assertRaisesRegex(ValueError, r"^workspace 'mask_block_map': shape\[2\] = "
                                    r"ceil_div\(Tq, 128\) = 0 must be >= 1 \(B=2 Hq=32 Hkv=8 Tq=0 "
                                    r"Tk=77 D=128 Dv=64\)$"):
            m.workspace_bytes("mask_block_map", sizes)
        with self.assertRaisesRegex(ValueError, r"^prologue kernel 'f_mask_map': grid.y = "
                                    r"ceil_div\(Tq, 128\) = 0 is out of range \(1 .. 65535\) for "
                                    r"B=2 Hq=32 Hkv=8 Tq=0 Tk=77 D=128 Dv=64$"):
            m.prologue_grid_for(0, sizes)


class Version3Test(unittest.TestCase):
    def with_key_map(self, **changes):
        """The version 3 example with the key's tensor map changed."""
        data = manifest_v3_data()
        data["params"][4] = dict(KEY_MAP, **changes)
        return data

    def test_tensor_maps(self):
        m = Manifest(manifest_v3_data())
        self.assertEqual(m.version, 3)
        self.assertTrue(m.has_tensor_maps)
        self.assertFalse(Manifest(manifest_data()).has_tensor_maps)
        self.assertFalse(Manifest(manifest_v2_data()).has_tensor_maps)
        # Version 3 without tensor maps is fine too.
        self.assertFalse(Manifest(manifest_data(version=3)).has_tensor_maps)
        # A tensor map of the same operand twice (two tile shapes), boxes that fit.
        data = manifest_v3_data()
        data["params"][5] = dict(KEY_MAP, box=[2, 2, 16, 64], swizzle=0)
        Manifest(data)
        for box, swizzle in (([1, 1, 256, 4], 0), ([1, 1, 8, 16], 64), ([1, 1, 8, 8], 32)):
            Manifest(self.with_key_map(box=box, swizzle=swizzle))



class Version4Test(unittest.TestCase):
    def test_lse(self):
        m = Manifest(manifest_v4_data())
        self.assertEqual(m.version, 4)
        self.assertEqual(m.lse_shape, [-1, 32, -1])
        self.assertEqual(m.grid_for(SIZES), (16, 64, 1))
        # Without it, None; version 4 without it reads as well.
        self.assertIsNone(Manifest(manifest_data()).lse_shape)
        self.assertIsNone(Manifest(manifest_data(version=4)).lse_shape)
        # The errors (shared_cases.json has more, checked against C++).
        with self.assertRaisesRegex(ManifestError, r"^lse: the key 'lse' requires version 4 "
                                                   r"\(this manifest has version 2\)$"):
            Manifest(manifest_v4_data(version=2))
        with self.assertRaisesRegex(ManifestError, r"^lse: missing key 'shape'$"):
            Manifest(manifest_v4_data(lse={}))
        with self.assertRaisesRegex(ManifestError, r"^lse.shape: expected an array, found a "
                                                   r"number$"):
            Manifest(manifest_v4_data(lse={"shape": 3}))


if __name__ == "__main__":
    unittest.main()
