"""Pure-Python tests of attn_mlir.manifest (no GPU, no torch)."""

import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from attn_mlir.manifest import Manifest, ManifestError, evaluate  # noqa: E402

SIZES = dict(B=2, Hq=32, Hkv=8, Tq=1000, Tk=77, D=128, Dv=64, N=0)


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
    """The version 2 example of docs/ManifestKernels.md (unittests' kExampleV2Text):
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
    """The version 3 example of docs/ManifestKernels.md (unittests' kExampleV3Text):
    an f32 kernel with a tensor map of key and one of value."""
    memref = lambda n: {"kind": "memref", "operand": n, "rank": 4}  # noqa: E731
    data = manifest_data(
        version=3, element_type="f32",
        params=[memref(n) for n in ("query", "key", "value", "output")]
        + [dict(KEY_MAP), dict(KEY_MAP, operand="value"), {"kind": "size", "name": "Tk"}])
    data.update(overrides)
    return data


def manifest_v4_data(**overrides):
    """The version 4 example of docs/ManifestKernels.md (unittests' kExampleV4Text):
    the version 1 example that also writes the log-sum-exp."""
    memref = lambda n, r=4: {"kind": "memref", "operand": n, "rank": r}  # noqa: E731
    data = manifest_data(
        version=4, lse={"shape": [-1, 32, -1]},
        params=[memref(n) for n in ("query", "key", "value", "output")] + [memref("lse", 3)])
    data.update(overrides)
    return data


# The split count of docs/ManifestServing.md's version 5 example (Hq = 8).
SPLITS = {"min": [{"ceil_div": ["Tk", 256]}, {"ceil_div": [264, {"mul": ["B", 8]}]}]}


def manifest_v5_data(**overrides):
    """The version 5 example of docs/ManifestServing.md: a split decode kernel
    (f16, Hq 8, Hkv 2, Tq 3, D 64) whose epilogue kernel, the combine,
    writes the output and the log-sum-exp from the two split workspaces."""
    memref = lambda n, r=4: {"kind": "memref", "operand": n, "rank": r}  # noqa: E731
    workspace = lambda n, r: {"kind": "workspace", "name": n, "rank": r}  # noqa: E731
    key_map = dict(KEY_MAP, box=[1, 1, 64, 64])
    data = {
        "format": "attn-mlir-manifest", "version": 5, "kernel": "decode_kernel",
        "ptx": "decode.ptx", "chip": "sm_90a", "function": "decode", "element_type": "f16",
        "query": {"shape": [-1, 8, 3, 64]}, "key": {"shape": [-1, 2, -1, 64]},
        "value": {"shape": [-1, 2, -1, 64]}, "output": {"shape": [-1, 8, 3, 64]},
        "lse": {"shape": [-1, 8, 3]}, "mask": None,
        "attributes": {"scale": 0.125, "causal": "bottom_right", "precision": None},
        "config": {"block_m": 64, "block_n": 64, "num_warps": 4, "num_stages": 2},
        "block": [128, 1, 1], "grid": [SPLITS, 8, "B"], "shared_memory_bytes": 42016,
        "params": [memref("query"), memref("key"), memref("value"), workspace("split_lse", 4),
                   workspace("split_output", 5), key_map, dict(key_map, operand="value")],
        "workspace": [
            {"name": "split_output", "element_bytes": 4, "shape": [SPLITS, "B", 8, 3, 64]},
            {"name": "split_lse", "element_bytes": 4, "shape": [SPLITS, "B", 8, 3]}],
        "epilogue": [{
            "kernel": "decode_combine", "block": [128, 1, 1], "grid": [3, 8, "B"],
            "shared_memory_bytes": 0,
            "params": [memref("query"), memref("key"), memref("lse", 3), memref("output"),
                       workspace("split_output", 5), workspace("split_lse", 4)]}],
    }
    data.update(overrides)
    return data


def manifest_kv_lengths_data(**overrides):
    """The version 1 example with per-batch key lengths (version 5)."""
    memref = lambda n, r=4: {"kind": "memref", "operand": n, "rank": r}  # noqa: E731
    data = manifest_data(
        version=5, kv_lengths={"element_type": "i32", "shape": [-1]},
        params=[memref(n) for n in ("query", "key", "value")] + [memref("kv_lengths", 1),
                                                                 memref("output"),
                                                                 {"kind": "size", "name": "Tk"}])
    data.update(overrides)
    return data


def manifest_varlen_data(**overrides):
    """The version 1 example with packed sequences (cu_seqlens, version 6):
    batch 1, the grid's query slots ceil_div(Tq, 128) + N + 2."""
    memref = lambda n, r=4: {"kind": "memref", "operand": n, "rank": r}  # noqa: E731
    offsets = {"element_type": "i32", "shape": [-1]}
    data = manifest_data(
        version=6, cu_seqlens_q=offsets, cu_seqlens_k=dict(offsets),
        query={"shape": [1, 32, -1, 128]}, key={"shape": [1, 8, -1, 128]},
        value={"shape": [1, 8, -1, 64]}, output={"shape": [1, 32, -1, 64]},
        grid=[{"add": [{"ceil_div": ["Tq", 128]}, {"add": ["N", 2]}]}, "Hq", "B"],
        params=[memref(n) for n in ("query", "key", "value")]
        + [memref("cu_seqlens_q", 1), memref("cu_seqlens_k", 1), memref("output")])
    data.update(overrides)
    return data


def manifest_paged_data(**overrides):
    """The version 1 example over a paged KV cache (block_table, version
    7): key and value pools of 16-key pages, a (B, P) table."""
    memref = lambda n, r=4: {"kind": "memref", "operand": n, "rank": r}  # noqa: E731
    data = manifest_data(
        version=7, block_table={"element_type": "i32", "shape": [-1, -1], "page_size": 16},
        key={"shape": [-1, 8, 16, 128]}, value={"shape": [-1, 8, 16, 64]},
        params=[memref(n) for n in ("query", "key", "value")]
        + [memref("block_table", 2), memref("output")])
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
            Manifest(manifest_data(version=8))

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
        masked = Manifest(manifest_data(
            mask={"element_type": "f32", "shape": [-1, -1]},
            params=manifest_data()["params"] + [{"kind": "memref", "operand": "mask", "rank": 2}]))
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


class Version5Test(unittest.TestCase):
    def test_epilogue(self):
        m = Manifest(manifest_v5_data())
        self.assertEqual(m.version, 5)
        self.assertEqual([k["kernel"] for k in m.epilogue], ["decode_combine"])
        self.assertEqual(m.prologue, [])
        self.assertTrue(m.has_tensor_maps)
        self.assertEqual(m.lse_shape, [-1, 8, 3])
        self.assertIsNone(m.kv_lengths_shape)
        # B = 1, Tk = 4096: min(16, ceil(264 / 8)) = 16 splits; B = 8: 5.
        sizes = dict(B=1, Hq=8, Hkv=2, Tq=3, Tk=4096, D=64, Dv=64)
        self.assertEqual(m.grid_for(sizes), (16, 8, 1))
        self.assertEqual(m.grid_for(dict(sizes, B=8)), (5, 8, 8))
        self.assertEqual(m.grid_for(dict(sizes, Tk=100)), (1, 8, 1))
        self.assertEqual(m.epilogue_grid_for(0, dict(sizes, B=8)), (3, 8, 8))
        self.assertEqual(m.workspace_shape("split_output", sizes), (16, 1, 8, 3, 64))
        self.assertEqual(m.workspace_bytes("split_lse", dict(sizes, B=8)), 5 * 8 * 8 * 3 * 4)
        # The split count divides by B * Hq: a division by 0 is named.
        with self.assertRaisesRegex(ValueError, r"^grid.x = min\(ceil_div\(Tk, 256\), "
                                    r"ceil_div\(264, mul\(B, 8\)\)\): ceil_div\(264, mul\(B, 8\)\): "
                                    r"division by 0 \(B=0 Hq=8 Hkv=2 Tq=3 Tk=4096 D=64 Dv=64\)$"):
            m.grid_for(dict(sizes, B=0))
        with self.assertRaisesRegex(ValueError, r"^workspace 'split_lse': shape\[0\] = min.*: "
                                    r"division by 0 \(B=0 "):
            m.workspace_bytes("split_lse", dict(sizes, B=0))
        with self.assertRaisesRegex(ValueError, r"^epilogue kernel 'decode_combine': grid.z = B = 0 "
                                    r"is out of range \(1 .. 65535\) for B=0 "):
            m.epilogue_grid_for(0, dict(sizes, B=0))
        # Version 5 without them reads as well.
        self.assertEqual(Manifest(manifest_data(version=5)).epilogue, [])

    def test_epilogue_errors(self):
        with self.assertRaisesRegex(ManifestError, r"^epilogue: the key 'epilogue' requires "
                                                   r"version 5 \(this manifest has version 4\)$"):
            Manifest(manifest_v5_data(version=4))
        data = manifest_v5_data()
        del data["epilogue"][0]["grid"]
        with self.assertRaisesRegex(ManifestError, r"^epilogue\[0\]: missing key 'grid'$"):
            Manifest(data)
        # A workspace only the epilogue kernel takes is passed; one nobody
        # takes is not.
        data = manifest_v5_data()
        data["params"][3] = {"kind": "size", "name": "Tk"}
        Manifest(data)
        data["epilogue"][0]["params"][5] = {"kind": "size", "name": "Tk"}
        with self.assertRaisesRegex(ManifestError, r"^workspace\[1\]: 'split_lse' is passed to no "
                                                   r"kernel"):
            Manifest(data)
        data = manifest_v5_data()
        data["epilogue"][0]["params"][4]["rank"] = 4
        with self.assertRaisesRegex(ManifestError, r"^epilogue\[0\].params\[4\]: rank 4 but "
                                                   r"workspace 'split_output' has rank 5$"):
            Manifest(data)
        # The lse is passed by the epilogue kernel: once per kernel, and by
        # some kernel.
        data = manifest_v5_data()
        data["epilogue"][0]["params"].append({"kind": "memref", "operand": "lse", "rank": 3})
        with self.assertRaisesRegex(ManifestError, r"^epilogue\[0\].params\[6\]: operand 'lse' is "
                                                   r"passed twice$"):
            Manifest(data)
        data = manifest_v5_data()
        del data["epilogue"][0]["params"][2]
        with self.assertRaisesRegex(ManifestError, r"^params: the manifest has an lse but no memref "
                                                   r"param passes it$"):
            Manifest(data)
        # A tensor map in an epilogue kernel needs its memref there.
        data = manifest_v5_data()
        data["epilogue"][0]["params"].append(dict(KEY_MAP, operand="value", box=[1, 1, 64, 64]))
        with self.assertRaisesRegex(ManifestError, r"^epilogue\[0\].params\[6\]: a tensor map of "
                                                   r"'value' but no memref param"):
            Manifest(data)

    def test_kv_lengths(self):
        m = Manifest(manifest_kv_lengths_data())
        self.assertEqual(m.kv_lengths_shape, [-1])
        self.assertIsNone(Manifest(manifest_data()).kv_lengths_shape)
        shapes = dict(query=(2, 32, 1000, 128), key=(2, 8, 77, 128), value=(2, 8, 77, 64))
        self.assertEqual(m.check_shapes(dict(shapes, kv_lengths=(2,))), SIZES)
        with self.assertRaisesRegex(ValueError, r"^kv_lengths: dimension 0 is 3 but the query's "
                                                r"batch is 2$"):
            m.check_shapes(dict(shapes, kv_lengths=(3,)))
        with self.assertRaisesRegex(ValueError, r"^kv_lengths: rank 2, expected 1 \(one length per "
                                                r"batch\)$"):
            m.check_shapes(dict(shapes, kv_lengths=(2, 1)))
        with self.assertRaisesRegex(ValueError, r"^kv_lengths: the kernel was compiled with "
                                                r"kv_lengths \(int32, one per batch\), but none "
                                                r"was given$"):
            m.check_shapes(dict(shapes, kv_lengths=None))
        with self.assertRaisesRegex(ValueError, r"^kv_lengths: given, but the kernel was compiled "
                                                r"without kv_lengths$"):
            Manifest(manifest_data()).check_shapes(dict(shapes, kv_lengths=(2,)))
        static = Manifest(manifest_kv_lengths_data(
            query={"shape": [2, 32, -1, 128]}, kv_lengths={"element_type": "i32", "shape": [2]}))
        self.assertEqual(static.kv_lengths_shape, [2])
        for bad, message in (
                (dict(version=4), r"kv_lengths: the key 'kv_lengths' requires version 5 \(this "
                                  r"manifest has version 4\)"),
                (dict(kv_lengths={"element_type": "i64", "shape": [-1]}),
                 r"kv_lengths.element_type: unknown element type 'i64' \(expected i32\)"),
                (dict(kv_lengths={"shape": [-1]}), r"kv_lengths: missing key 'element_type'"),
                (dict(kv_lengths={"element_type": "i32", "shape": [-1, 1]}),
                 r"kv_lengths.shape has rank 2 \(expected 1: B\)"),
                (dict(kv_lengths={"element_type": "i32", "shape": [0]}),
                 r"kv_lengths.shape\[0\] is 0 \(expected -1 for a dynamic size or a size >= 1\)"),
                (dict(query={"shape": [2, 32, -1, 128]},
                      kv_lengths={"element_type": "i32", "shape": [3]}),
                 r"B disagrees: query.shape\[0\] is 2 but kv_lengths.shape\[0\] is 3"),
                (dict(kv_lengths=None), r"params\[3\]: operand 'kv_lengths' but the manifest has "
                                        r"no kv_lengths"),
                (dict(params=manifest_data()["params"]),
                 r"params: the manifest has kv_lengths but no memref param passes them")):
            with self.subTest(message), self.assertRaisesRegex(ManifestError, "^" + message + "$"):
                Manifest(manifest_kv_lengths_data(**bad))
        data = manifest_kv_lengths_data()
        data["params"][3]["rank"] = 2
        with self.assertRaisesRegex(ManifestError, r"^params\[3\]: rank 2 but kv_lengths has rank 1$"):
            Manifest(data)




class Version6Test(unittest.TestCase):
    def test_cu_seqlens(self):
        m = Manifest(manifest_varlen_data())
        self.assertEqual(m.cu_seqlens_shapes, ([-1], [-1]))
        self.assertIsNone(Manifest(manifest_data()).cu_seqlens_shapes)
        shapes = dict(query=(1, 32, 1000, 128), key=(1, 8, 900, 128), value=(1, 8, 900, 64))
        sizes = m.check_shapes(dict(shapes, cu_seqlens_q=(4,), cu_seqlens_k=(4,)))
        self.assertEqual(sizes, dict(B=1, Hq=32, Hkv=8, Tq=1000, Tk=900, D=128, Dv=64, N=3))
        # ceil(1000 / 128) + 3 + 2 query slots.
        self.assertEqual(m.grid_for(sizes), (13, 32, 1))
        for given, message in (
                (dict(cu_seqlens_q=(4,), cu_seqlens_k=(5,)),
                 r"cu_seqlens_k: dimension 0 \(N \+ 1\) is 5 but cu_seqlens_q has 4"),
                (dict(cu_seqlens_q=(1,), cu_seqlens_k=(1,)),
                 r"cu_seqlens_q: shape \(1,\) does not match the kernel's \(\?,\) \(N \+ 1 >= 2 "
                 r"offsets\)"),
                (dict(cu_seqlens_q=(4,), cu_seqlens_k=None),
                 r"cu_seqlens: the kernel was compiled with cu_seqlens_q and cu_seqlens_k "
                 r"\(int32, N \+ 1 each\), but not both were given")):
            with self.subTest(message), self.assertRaisesRegex(ValueError, "^" + message + "$"):
                m.check_shapes(dict(shapes, **given))
        with self.assertRaisesRegex(ValueError, r"^cu_seqlens: given, but the kernel was compiled "
                                                r"without cu_seqlens$"):
            Manifest(manifest_data()).check_shapes(
                dict(query=(2, 32, 1000, 128), key=(2, 8, 77, 128), value=(2, 8, 77, 64),
                     cu_seqlens_q=(3,), cu_seqlens_k=(3,)))
        for bad, message in (
                (dict(version=5), r"cu_seqlens_q: the key 'cu_seqlens_q' requires version 6 "
                                  r"\(this manifest has version 5\)"),
                (dict(cu_seqlens_k=None), r"cu_seqlens_q and cu_seqlens_k go together, found "
                                          r"only cu_seqlens_q"),
                (dict(cu_seqlens_k={"element_type": "i32", "shape": [4]},
                      cu_seqlens_q={"element_type": "i32", "shape": [5]}),
                 r"N disagrees: cu_seqlens_q.shape\[0\] is 5 but cu_seqlens_k.shape\[0\] is 4"),
                (dict(cu_seqlens_q={"element_type": "i32", "shape": [-1, 1]}),
                 r"cu_seqlens_q.shape has rank 2 \(expected 1: N \+ 1\)"),
                (dict(query={"shape": [-1, 32, -1, 128]}),
                 r"query.shape\[0\] is -1 \(expected 1 with cu_seqlens\)"),
                (dict(params=manifest_varlen_data()["params"][:4]
                      + manifest_varlen_data()["params"][5:]),
                 r"params: the manifest has cu_seqlens but no memref param passes cu_seqlens_k")):
            with self.subTest(message), self.assertRaisesRegex(ManifestError, "^" + message + "$"):
                Manifest(manifest_varlen_data(**bad))


class Version7Test(unittest.TestCase):
    def test_block_table(self):
        m = Manifest(manifest_paged_data())
        self.assertEqual((m.block_table_shape, m.page_size), ([-1, -1], 16))
        self.assertIsNone(Manifest(manifest_data()).block_table_shape)
        # Tk = P * page; the pool (100 pages) is no size.
        shapes = dict(query=(3, 32, 1000, 128), key=(100, 8, 16, 128), value=(100, 8, 16, 64))
        sizes = m.check_shapes(dict(shapes, block_table=(3, 5)))
        self.assertEqual(sizes, dict(B=3, Hq=32, Hkv=8, Tq=1000, Tk=80, D=128, Dv=64, N=0))
        for given, message in (
                (dict(block_table=(2, 5)), r"block_table: dim 0 \(B\) is 2, but query has B = 3"),
                (dict(block_table=None), r"block_table: the kernel was compiled with a "
                                         r"block_table \(int32, B x P\), but none was given"),
                (dict(block_table=(3,)), r"block_table: shape \(3,\) does not match the "
                                         r"kernel's \('\?', '\?'\) \(B x P\)"),
                (dict(block_table=(3, 5), value=(99, 8, 16, 64)),
                 r"value: dim 0 \(NP\) is 99, but key has NP = 100")):
            with self.subTest(message), self.assertRaisesRegex(ValueError, "^" + message + "$"):
                m.check_shapes(dict(shapes, **given))
        with self.assertRaisesRegex(ValueError, r"^block_table: given, but the kernel was "
                                                r"compiled without a block_table$"):
            Manifest(manifest_data()).check_shapes(
                dict(query=(2, 32, 1000, 128), key=(2, 8, 77, 128), value=(2, 8, 77, 64),
                     block_table=(2, 3)))
        for bad, message in (
                (dict(version=6), r"block_table: the key 'block_table' requires version 7 "
                                  r"\(this manifest has version 6\)"),
                (dict(block_table={"element_type": "i32", "shape": [-1, -1], "page_size": 32}),
                 r"block_table.page_size is 32 \(expected key.shape\[2\], the keys of a page: "
                 r"16\)"),
                (dict(block_table={"element_type": "i32", "shape": [-1], "page_size": 16}),
                 r"block_table.shape has rank 1 \(expected 2: B x P\)"),
                (dict(params=manifest_paged_data()["params"][:3]
                      + manifest_paged_data()["params"][4:]),
                 r"params: the manifest has a block_table but no memref param passes it")):
            with self.subTest(message), self.assertRaisesRegex(ManifestError, "^" + message + "$"):
                Manifest(manifest_paged_data(**bad))


if __name__ == "__main__":
    unittest.main()
