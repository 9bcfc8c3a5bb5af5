"""Pure-Python tests of the launch plans of attn_mlir.runtime.Kernel (the
argument block a call fills with data pointers): no GPU, no torch."""

import os
import sys
import threading
import types
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
from attn_mlir import runtime  # noqa: E402
from attn_mlir.manifest import Manifest  # noqa: E402
from test_manifest import (manifest_data, manifest_kv_lengths_data, manifest_v2_data,  # noqa: E402
                           manifest_paged_data, manifest_v4_data, manifest_v5_data,
                           manifest_varlen_data)


class FakeTensor:
    """What a plan reads of a tensor: shape and strides."""

    def __init__(self, shape, strides=None, dtype="torch.bfloat16"):
        self.shape = tuple(shape)
        self._strides = tuple(strides) if strides else runtime.torch_dense_strides(shape)
        self.dtype = dtype

    def stride(self):
        return self._strides


def kernel(**overrides):
    k = runtime.Kernel.__new__(runtime.Kernel)  # no driver: only the plan
    k.manifest = Manifest(manifest_data(**overrides))
    return k


def kernel_v2(**overrides):
    k = runtime.Kernel.__new__(runtime.Kernel)
    k.manifest = Manifest(manifest_v2_data(**overrides))
    return k


def kernel_v4(**overrides):
    k = runtime.Kernel.__new__(runtime.Kernel)
    k.manifest = Manifest(manifest_v4_data(**overrides))
    return k


def kernel_v5(data):
    k = runtime.Kernel.__new__(runtime.Kernel)
    k.manifest = Manifest(data)
    return k


class PlanTest(unittest.TestCase):
    def test_dense_strides(self):
        self.assertEqual(runtime.torch_dense_strides((2, 3, 4, 5)), (60, 20, 5, 1))

    def test_descriptors_sizes_grid(self):
        q = FakeTensor((2, 32, 1000, 128))
        # K as a (B, T, H, D) tensor viewed as (B, H, T, D).
        k = FakeTensor((2, 8, 77, 128), strides=(77 * 8 * 128, 128, 8 * 128, 1))
        v = FakeTensor((2, 8, 77, 64))
        plan = kernel()._plan(q, k, v, None, None)
        self.assertEqual(plan.grid, (16, 64, 1))
        self.assertEqual(plan.out_shape, (2, 32, 1000, 64))
        # One memref descriptor per operand: allocated, aligned, offset 0,
        # sizes, strides; the pointers (slots 0, 11, 22, 33) are the call's.
        self.assertEqual(plan.pointers, [(0, 0), (11, 1), (22, 2), (33, 3)])
        values = list(plan.storage)
        self.assertEqual(values[11:22], [0, 0, 0, 2, 8, 77, 128, 77 * 8 * 128, 128, 8 * 128, 1])
        # The output __call__ allocates is dense.
        self.assertEqual(values[33:44], [0, 0, 0, 2, 32, 1000, 64, 32 * 1000 * 64, 1000 * 64, 64, 1])
        self.assertEqual(len(plan.args), 44)
        self.assertEqual(plan.args[1] - plan.args[0], 8)

    def test_sizes_and_mask(self):
        params = [{"kind": "memref", "operand": n, "rank": 4} for n in ("query", "key", "value", "mask", "output")]
        params.append({"kind": "size", "name": "Tk"})
        k = kernel(params=params, mask={"shape": [1, 1, -1, -1]})
        q, kk, v = FakeTensor((2, 32, 1000, 128)), FakeTensor((2, 8, 77, 128)), FakeTensor((2, 8, 77, 64))
        mask = FakeTensor((1, 1, 1000, 77), strides=(0, 0, 80, 1))
        out = FakeTensor((2, 32, 1000, 64))
        plan = k._plan(q, kk, v, mask, out)
        self.assertEqual([p for p in plan.pointers], [(0, 0), (11, 1), (22, 2), (33, 4), (44, 3)])
        self.assertEqual(list(plan.storage)[33 + 7:33 + 11], [0, 0, 80, 1])
        self.assertEqual(list(plan.storage)[-1], 77)

    def test_bad_operands(self):
        q, k, v = FakeTensor((2, 32, 1000, 128)), FakeTensor((2, 8, 77, 128)), FakeTensor((2, 8, 77, 64))
        with self.assertRaisesRegex(ValueError, "key: the last dimension must be contiguous"):
            kernel()._plan(q, FakeTensor(k.shape, strides=(77 * 8 * 256, 256, 8 * 256, 2)), v, None, None)
        with self.assertRaisesRegex(ValueError, r"output: shape \(2, 32, 1000, 128\), expected \(2, 32, 1000, 64\)"):
            kernel()._plan(q, k, v, None, FakeTensor((2, 32, 1000, 128)))
        # Rows of 16-byte vectors: a stride of 8 + 1 bf16 elements (18 bytes) is refused, with its name.
        with self.assertRaisesRegex(ValueError, r"value: the kernel moves 16-byte vectors: every stride but "
                                                r"the last must be a multiple of 16 bytes, got strides "
                                                r"\(4928, 616, 9, 1\) of 2-byte elements"):
            kernel()._plan(q, k, FakeTensor(v.shape, strides=(4928, 616, 9, 1)), None, None)
        with self.assertRaisesRegex(ValueError, "output: the kernel moves 16-byte vectors"):
            kernel()._plan(q, k, v, None, FakeTensor((2, 32, 1000, 64), strides=(32 * 1000 * 68, 1000 * 68, 68, 1)))
        # The element types the kernel was compiled for (bf16 here).
        with self.assertRaisesRegex(ValueError, r"key: dtype torch.float32, but the kernel was compiled for "
                                                r"bf16 \(torch.bfloat16\)"):
            kernel()._plan(q, FakeTensor(k.shape, dtype="torch.float32"), v, None, None)
        with self.assertRaisesRegex(ValueError, "output: dtype torch.float16"):
            kernel()._plan(q, k, v, None, FakeTensor((2, 32, 1000, 64), dtype="torch.float16"))
        params = [{"kind": "memref", "operand": n, "rank": 4} for n in ("query", "key", "value", "mask", "output")]
        # A mask param without the manifest's mask is refused when read.
        with self.assertRaisesRegex(ValueError, r"params\[3\]: operand 'mask' but the manifest has "
                                                "no mask"):
            kernel(params=params)

    def test_narrow_vectors(self):
        # Rows that are not whole 16-byte vectors move in the largest power of two dividing
        # them, as the compiler's getRowVectorBytes and the C++ runtime compute it.
        self.assertEqual([runtime.row_vector_bytes(n) for n in (256, 118, 120, 116, 2, 4, 236)],
                         [16, 2, 8, 4, 2, 4, 4])
        shapes = dict(query={"shape": [-1, 32, -1, 59]}, key={"shape": [-1, 8, -1, 59]},
                      value={"shape": [-1, 8, -1, 60]}, output={"shape": [-1, 32, -1, 60]})
        q, k, v = FakeTensor((2, 32, 10, 59)), FakeTensor((2, 8, 7, 59)), FakeTensor((2, 8, 7, 60))
        # bf16 rows of 118 bytes: any stride of whole elements (2-byte vectors).
        kernel(**shapes)._plan(q, FakeTensor(k.shape, strides=(7 * 8 * 61, 61, 8 * 61, 1)), v, None, None)
        # Rows of 120 bytes: 8-byte vectors, so a stride of 62 elements (124 bytes) is refused.
        with self.assertRaisesRegex(ValueError, r"value: the kernel moves 8-byte vectors: every stride "
                                                r"but the last must be a multiple of 8 bytes"):
            kernel(**shapes)._plan(q, k, FakeTensor(v.shape, strides=(7 * 8 * 62, 7 * 62, 62, 1)),
                                   None, None)

    def test_workspace_and_prologue(self):
        q, k, v = FakeTensor((2, 32, 1000, 128)), FakeTensor((2, 8, 77, 128)), FakeTensor((2, 8, 77, 64))
        mask = FakeTensor((1, 1, 1000, 77), dtype="torch.bool")
        plan = kernel_v2()._plan(q, k, v, mask, None)
        self.assertEqual(plan.grid, (16, 64, 1))
        # The map is 1 x 1 x ceil(1000 / 128) x ceil(77 / 64) bytes.
        self.assertEqual(plan.workspaces, (16,))
        # query, key, value, mask, output, then the workspace (operand 5).
        self.assertEqual(plan.pointers, [(0, 0), (11, 1), (22, 2), (33, 4), (44, 3), (55, 5)])
        values = list(plan.storage)
        self.assertEqual(values[55:66], [0, 0, 0, 1, 1, 8, 2, 16, 16, 2, 1])
        self.assertEqual(values[66], 77)
        self.assertEqual(len(plan.args), 67)
        # The prologue kernel: mask, workspace, Tq, Tk.
        self.assertEqual(len(plan.prologue), 1)
        pro = plan.prologue[0]
        self.assertEqual(pro.grid, (2, 8, 1))
        self.assertEqual(pro.block, (128, 1, 1))
        self.assertEqual(pro.shared_memory_bytes, 0)
        self.assertEqual(pro.pointers, [(0, 4), (11, 5)])
        self.assertEqual(list(pro.storage)[11:], [0, 0, 0, 1, 1, 8, 2, 16, 16, 2, 1, 1000, 77])
        # A version 1 plan has neither.
        plan = kernel()._plan(q, k, v, None, None)
        self.assertEqual((plan.prologue, plan.workspaces), ([], ()))

    def test_lse(self):
        q, k, v = FakeTensor((2, 32, 1000, 128)), FakeTensor((2, 8, 77, 128)), FakeTensor((2, 8, 77, 64))
        plan = kernel_v4()._plan(q, k, v, None, None)
        self.assertEqual(plan.lse_shape, (2, 32, 1000))
        # The lse's memref (rank 3) after the output's; the tensor after the
        # captures (operand 5 here: no workspace, no capture).
        self.assertEqual(plan.pointers, [(0, 0), (11, 1), (22, 2), (33, 3), (44, 5)])
        values = list(plan.storage)
        # The lse __call__ allocates is dense.
        self.assertEqual(values[44:53], [0, 0, 0, 2, 32, 1000, 32000, 1000, 1])
        self.assertEqual(len(plan.args), 53)
        # A given lse keeps its strides: a (B, T, H) buffer viewed as (B, H, T).
        lse = FakeTensor((2, 32, 1000), strides=(32000, 1, 32), dtype="torch.float32")
        plan = kernel_v4()._plan(q, k, v, None, None, lse=lse)
        self.assertEqual(list(plan.storage)[47:53], [2, 32, 1000, 32000, 1, 32])
        # With captures, after them.
        m = kernel_v4()
        m.manifest.data["captures"] = [{"element_type": "f32", "shape": [-1]}]
        self.assertEqual(runtime._operand_index(m.manifest, "lse"), 6)
        # A kernel without the lse has none.
        self.assertIsNone(kernel()._plan(q, k, v, None, None).lse_shape)

    def test_bad_lse(self):
        q, k, v = FakeTensor((2, 32, 1000, 128)), FakeTensor((2, 8, 77, 128)), FakeTensor((2, 8, 77, 64))
        with self.assertRaisesRegex(ValueError, r"^lse: shape \(2, 32, 999\), expected \(2, 32, "
                                                r"1000\) \(B, Hq, Tq\)$"):
            kernel_v4()._plan(q, k, v, None, None, lse=FakeTensor((2, 32, 999), dtype="torch.float32"))
        with self.assertRaisesRegex(ValueError, r"^lse: dtype torch.bfloat16, but the log-sum-exp is "
                                                r"float32$"):
            kernel_v4()._plan(q, k, v, None, None, lse=FakeTensor((2, 32, 1000)))
        with self.assertRaisesRegex(ValueError, r"^lse: the kernel writes no log-sum-exp"):
            kernel()._plan(q, k, v, None, None, lse=FakeTensor((2, 32, 1000), dtype="torch.float32"))

    def test_fill_pointers(self):
        class Data:
            def __init__(self, ptr):
                self.ptr = ptr

            def data_ptr(self):
                return self.ptr

        q, k, v = FakeTensor((2, 32, 1000, 128)), FakeTensor((2, 8, 77, 128)), FakeTensor((2, 8, 77, 64))
        plan = kernel_v2()._plan(q, k, v, FakeTensor((1, 1, 1000, 77), dtype="torch.bool"), None)
        tensors = tuple(Data(0x1000 * (i + 1)) for i in range(6))
        runtime._fill_pointers(plan.prologue[0], tensors)
        self.assertEqual(list(plan.prologue[0].storage)[:2], [0x5000, 0x5000])  # mask
        self.assertEqual(list(plan.prologue[0].storage)[11:13], [0x6000, 0x6000])  # workspace

    def test_empty_grid(self):
        q, k, v = FakeTensor((0, 32, 1000, 128)), FakeTensor((0, 8, 77, 128)), FakeTensor((0, 8, 77, 64))
        self.assertIsNone(kernel()._plan(q, k, v, None, None).grid)
        # Nothing runs, so no workspace is evaluated (Tq = 0 would fail).
        q, k, v = FakeTensor((2, 32, 0, 128)), FakeTensor((2, 8, 77, 128)), FakeTensor((2, 8, 77, 64))
        plan = kernel_v2()._plan(q, k, v, FakeTensor((1, 1, 0, 77), dtype="torch.bool"), None)
        self.assertIsNone(plan.grid)
        self.assertEqual((plan.prologue, plan.workspaces), ([], ()))


class Version5PlanTest(unittest.TestCase):
    """Epilogue kernels (split-KV's combine) and per-batch key counts."""

    def operands(self, b=1, tk=4096):
        return (FakeTensor((b, 8, 3, 64), dtype="torch.float16"),
                FakeTensor((b, 2, tk, 64), dtype="torch.float16"),
                FakeTensor((b, 2, tk, 64), dtype="torch.float16"))

    def test_epilogue(self):
        q, k, v = self.operands()
        plan = kernel_v5(manifest_v5_data())._plan(q, k, v, None, None)
        # min(ceil(4096 / 256), ceil(264 / 8)) = 16 splits of 8 heads, 1 batch.
        self.assertEqual(plan.grid, (16, 8, 1))
        self.assertEqual(plan.workspaces, (16 * 8 * 3 * 64 * 4, 16 * 8 * 3 * 4))
        self.assertEqual(plan.prologue, [])
        self.assertEqual(len(plan.epilogue), 1)
        self.assertEqual(plan.sequence, [plan] + plan.epilogue)
        # The main kernel: query, key, value, split_lse (operand 6), split_output (5).
        self.assertEqual(plan.pointers, [(0, 0), (11, 1), (22, 2), (33, 6), (44, 5)])
        values = list(plan.storage)
        self.assertEqual(values[33:44], [0, 0, 0, 16, 1, 8, 3, 24, 24, 3, 1])
        self.assertEqual(values[44:57], [0, 0, 0, 16, 1, 8, 3, 64, 1536, 1536, 192, 64, 1])
        self.assertEqual(len(plan.tensor_maps), 2)
        # The combine: grid (Tq, Hq, B); query, key, the lse (operand 7:
        # after the 2 workspaces), the output, split_output, split_lse.
        combine = plan.epilogue[0]
        self.assertEqual((combine.grid, combine.block, combine.shared_memory_bytes),
                         ((3, 8, 1), (128, 1, 1), 0))
        self.assertEqual(combine.pointers, [(0, 0), (11, 1), (22, 7), (31, 3), (42, 5), (55, 6)])
        self.assertEqual(list(combine.storage)[22:31], [0, 0, 0, 1, 8, 3, 24, 3, 1])
        self.assertEqual(plan.lse_shape, (1, 8, 3))
        # Another batch and cache length: another split count, the same kernel.
        q, k, v = self.operands(b=8, tk=1000)
        plan = kernel_v5(manifest_v5_data())._plan(q, k, v, None, None)
        self.assertEqual(plan.grid, (4, 8, 8))
        self.assertEqual(plan.epilogue[0].grid, (3, 8, 8))
        # An empty batch launches nothing and evaluates nothing (the split
        # count would divide by B * Hq = 0).
        q, k, v = self.operands(b=0)
        plan = kernel_v5(manifest_v5_data())._plan(q, k, v, None, None)
        self.assertIsNone(plan.grid)
        self.assertEqual((plan.epilogue, plan.sequence), ([], [plan]))

    def test_kv_lengths(self):
        q, k, v = FakeTensor((2, 32, 1000, 128)), FakeTensor((2, 8, 77, 128)), FakeTensor((2, 8, 77, 64))
        lengths = FakeTensor((2,), dtype="torch.int32")
        m = kernel_v5(manifest_kv_lengths_data())
        plan = m._plan(q, k, v, None, None, kv_lengths=lengths)
        # query, key, value, kv_lengths (operand 6: after the lse's 5), output.
        self.assertEqual(plan.pointers, [(0, 0), (11, 1), (22, 2), (33, 6), (38, 3)])
        self.assertEqual(list(plan.storage)[33:38], [0, 0, 0, 2, 1])
        self.assertEqual(list(plan.storage)[-1], 77)
        self.assertEqual(runtime._operand_index(m.manifest, "kv_lengths"), 6)
        # One batch: its count is read at index 0, whatever the stride.
        one = (FakeTensor((1, 32, 1000, 128)), FakeTensor((1, 8, 77, 128)), FakeTensor((1, 8, 77, 64)))
        plan = m._plan(*one, None, None, kv_lengths=FakeTensor((1,), strides=(4,), dtype="torch.int32"))
        self.assertEqual(list(plan.storage)[33:38], [0, 0, 0, 1, 1])
        for lengths, message in (
                (None, r"kv_lengths: the kernel was compiled with kv_lengths \(int32, one per "
                       r"batch\), but none was given"),
                (FakeTensor((2,), dtype="torch.int64"),
                 r"kv_lengths: dtype torch.int64, but the kernel reads int32 \(torch.int32\) key "
                 r"counts"),
                (FakeTensor((3,), dtype="torch.int32"),
                 r"kv_lengths: dimension 0 is 3 but the query's batch is 2"),
                (FakeTensor((2, 1), dtype="torch.int32"),
                 r"kv_lengths: rank 2, expected 1 \(one length per batch\)"),
                (FakeTensor((2,), strides=(2,), dtype="torch.int32"),
                 r"kv_lengths: stride 2; the kernel reads the key counts contiguously \(stride "
                 r"1\): pass kv_lengths.contiguous\(\)")):
            with self.subTest(message), self.assertRaisesRegex(ValueError, "^" + message + "$"):
                m._plan(q, k, v, None, None, kv_lengths=lengths)
        with self.assertRaisesRegex(ValueError, r"^kv_lengths: given, but the kernel was compiled "
                                                r"without kv_lengths$"):
            kernel()._plan(q, k, v, None, None, kv_lengths=FakeTensor((2,), dtype="torch.int32"))


class VarlenPlanTest(unittest.TestCase):
    def test_cu_seqlens(self):
        # (total, H, D) tensors viewed as (1, H, total, D).
        q = FakeTensor((1, 32, 1000, 128), (1000 * 32 * 128, 128, 32 * 128, 1))
        k = FakeTensor((1, 8, 900, 128), (900 * 8 * 128, 128, 8 * 128, 1))
        v = FakeTensor((1, 8, 900, 64), (900 * 8 * 64, 64, 8 * 64, 1))
        cq, ck = FakeTensor((4,), dtype="torch.int32"), FakeTensor((4,), dtype="torch.int32")
        m = kernel_v5(manifest_varlen_data())
        plan = m._plan(q, k, v, None, None, cu_seqlens=(cq, ck))
        # query, key, value, cu_seqlens_q and _k (operands 7 and 8: after the
        # lse's 5 and kv_lengths' 6), output.
        self.assertEqual(plan.pointers, [(0, 0), (11, 1), (22, 2), (33, 7), (38, 8), (43, 3)])
        self.assertEqual(list(plan.storage)[33:38], [0, 0, 0, 4, 1])
        self.assertEqual(plan.grid, (13, 32, 1))
        self.assertEqual(runtime._operand_index(m.manifest, "cu_seqlens_k"), 8)
        for offsets, message in (
                ((cq, FakeTensor((4,), dtype="torch.int64")),
                 r"cu_seqlens_k: dtype torch.int64, but the kernel reads int32 \(torch.int32\) "
                 r"offsets"),
                ((FakeTensor((4,), strides=(2,), dtype="torch.int32"), ck),
                 r"cu_seqlens_q: stride 2; the kernel reads the offsets contiguously \(stride "
                 r"1\): pass cu_seqlens_q.contiguous\(\)"),
                ((cq, FakeTensor((5,), dtype="torch.int32")),
                 r"cu_seqlens_k: dimension 0 \(N \+ 1\) is 5 but cu_seqlens_q has 4"),
                ((None, None), r"cu_seqlens: the kernel was compiled with cu_seqlens_q and "
                               r"cu_seqlens_k \(int32, N \+ 1 each\), but not both were given")):
            with self.subTest(message), self.assertRaisesRegex(ValueError, "^" + message + "$"):
                m._plan(q, k, v, None, None, cu_seqlens=offsets)


class PagedPlanTest(unittest.TestCase):
    def test_block_table(self):
        # Pools of 100 pages of 16 keys, a (3, 5) table: Tk = 80.
        q = FakeTensor((3, 32, 1000, 128))
        k = FakeTensor((100, 8, 16, 128))
        v = FakeTensor((100, 8, 16, 64))
        table = FakeTensor((3, 5), (5, 1), dtype="torch.int32")
        m = kernel_v5(manifest_paged_data())
        plan = m._plan(q, k, v, None, None, block_table=table)
        # query, key, value, block_table (operand 9: after the lse's 5,
        # kv_lengths' 6 and the cu_seqlens' 7 and 8), output.
        self.assertEqual(plan.pointers, [(0, 0), (11, 1), (22, 2), (33, 9), (40, 3)])
        self.assertEqual(list(plan.storage)[33:40], [0, 0, 0, 3, 5, 5, 1])
        self.assertEqual(runtime._operand_index(m.manifest, "block_table"), 9)
        for table, message in (
                (FakeTensor((3, 5), (5, 1), dtype="torch.int64"),
                 r"block_table: dtype torch.int64, but the kernel reads int32 \(torch.int32\) "
                 r"page ids"),
                (FakeTensor((3, 5), (1, 3), dtype="torch.int32"),
                 r"block_table: stride 3; the kernel reads the page ids contiguously \(stride "
                 r"1\): pass block_table.contiguous\(\)"),
                (FakeTensor((2, 5), (5, 1), dtype="torch.int32"),
                 r"block_table: dim 0 \(B\) is 2, but query has B = 3"),
                (None, r"block_table: the kernel was compiled with a block_table \(int32, B x "
                       r"P\), but none was given")):
            with self.subTest(message), self.assertRaisesRegex(ValueError, "^" + message + "$"):
                m._plan(q, k, v, None, None, block_table=table)


class FakeTorch:
    """torch.empty on a fake device: records the sizes it allocates."""

    uint8 = "uint8"

    def __init__(self):
        self.allocated = []

    def empty(self, n, dtype=None, device=None):
        self.allocated.append(n)
        return FakeBuffer(n)


class FakeBuffer:
    made = 0

    def __init__(self, n):
        self.n = n
        FakeBuffer.made += 1
        self.pointer = 0x900000 + 0x200 * FakeBuffer.made

    def numel(self):
        return self.n

    def data_ptr(self):
        return self.pointer


class FakeDevice:
    index = 0


class WorkspaceTest(unittest.TestCase):
    def test_kept_per_stream_and_grown(self):
        k = runtime.Kernel.__new__(runtime.Kernel)
        k._workspaces, k._epoch = {}, 0
        torch, dev = FakeTorch(), FakeDevice()
        first = k._workspaces_for(torch, dev, 7, False, (16,))
        self.assertEqual(k._epoch, 1)
        # The same stream reuses its buffer while it is large enough.
        self.assertIs(k._workspaces_for(torch, dev, 7, False, (16,)), first)
        self.assertIs(k._workspaces_for(torch, dev, 7, False, (9,)), first)
        self.assertEqual(torch.allocated, [16])
        # Another stream gets its own.
        other = k._workspaces_for(torch, dev, 8, False, (16,))
        self.assertIsNot(other, first)
        self.assertEqual(torch.allocated, [16, 16])
        # Growing at least doubles.
        grown = k._workspaces_for(torch, dev, 7, False, (20,))
        self.assertEqual(grown[0].numel(), 32)
        self.assertIs(k._workspaces_for(torch, dev, 7, False, (30,)), grown)
        self.assertEqual(torch.allocated, [16, 16, 32])
        # Each new buffer moves the epoch on (plans pointing at the old one
        # are bound again).
        self.assertEqual(k._epoch, 3)


DEVICE = FakeDevice()


class CallTensor(FakeTensor):
    """A tensor __call__ can take: shape, strides, data pointer, device."""

    def __init__(self, shape, pointer, dtype="torch.bfloat16"):
        super().__init__(shape, dtype=dtype)
        self.pointer = pointer
        self.device = DEVICE

    def data_ptr(self):
        return self.pointer


class CallTest(unittest.TestCase):
    """Kernel.__call__ with the driver and torch faked: what it writes into
    the argument blocks, and when, and what it launches."""

    def setUp(self):
        self.saved = runtime._launch, sys.modules.get("torch")
        self.launches = []

        def launch(function, gx, gy, gz, bx, by, bz, smem, stream, args, extra):
            sub = next(s for p in self.k._plans.values() for s in [p] + p.prologue
                       if s.args is args)
            self.launches.append((function, stream.value, list(sub.storage)))
            return 0

        runtime._launch = lambda: launch
        fake = types.ModuleType("torch")
        fake._C = types.SimpleNamespace(_cuda_getCurrentRawStream=lambda index: 7)
        fake.empty = FakeTorch().empty
        fake.uint8 = "uint8"
        sys.modules["torch"] = fake
        k = kernel_v2()
        k._plans, k._workspaces, k._tensor_maps, k._tensor_map_pointers = {}, {}, {}, {}
        k._epoch, k._lock, k._function, k._prologue = 0, threading.Lock(), "main", ["map"]
        self.binds = 0
        bind = k._bind

        def counted(*args):
            self.binds += 1
            return bind(*args)

        k._bind = counted
        self.k = k

    def tearDown(self):
        runtime._launch = self.saved[0]
        if self.saved[1] is None:
            del sys.modules["torch"]
        else:
            sys.modules["torch"] = self.saved[1]

    def operands(self, q=0x100000, out=0x500000, tq=1000):
        return (CallTensor((2, 32, tq, 128), q), CallTensor((2, 8, 77, 128), 0x200000),
                CallTensor((2, 8, 77, 64), 0x300000),
                CallTensor((1, 1, tq, 77), 0x400000, dtype="torch.bool"),
                CallTensor((2, 32, tq, 64), out))

    def test_bound_once_and_launched_back_to_back(self):
        q, k, v, mask, out = self.operands()
        self.assertIs(self.k(q, k, v, mask, out=out), out)
        # The map kernel, then the attention kernel, both on the current
        # stream, with every pointer written before the first launch.
        self.assertEqual([(f, s) for f, s, _ in self.launches], [("map", 7), ("main", 7)])
        main = self.launches[1][2]
        self.assertEqual([main[i] for i in (0, 11, 22, 33, 44)],
                         [0x100000, 0x200000, 0x300000, 0x400000, 0x500000])
        workspace = main[55]
        self.assertEqual(self.launches[0][2][:2], [0x400000, 0x400000])
        self.assertEqual(self.launches[0][2][11], workspace)
        self.assertEqual(self.binds, 1)
        # The launch arguments: grids, blocks and shared memory of the
        # manifest, the argument blocks as they are.
        plan = next(iter(self.k._plans.values()))
        m = self.k.manifest
        self.assertEqual(plan.launch[:9], ("main", *plan.grid, *m.block, m.shared_memory_bytes,
                                           plan.launch[8]))
        self.assertIs(plan.launch[9], plan.args)
        self.assertEqual(plan.prologue[0].launch[1:8], (2, 8, 1, 128, 1, 1, 0))
        # The same call again: nothing is written, the same blocks launched.
        self.k(q, k, v, mask, out=out)
        self.assertEqual(self.binds, 1)
        self.assertEqual(self.launches[2:], self.launches[:2])
        # Another output: bound again.
        q, k, v, mask, out = self.operands(out=0x600000)
        self.k(q, k, v, mask, out=out)
        self.assertEqual(self.binds, 2)
        self.assertEqual(self.launches[-1][2][44], 0x600000)
        # A new workspace or tensor-map copy (the epoch): bound again.
        self.k._epoch += 1
        self.k(q, k, v, mask, out=out)
        self.assertEqual(self.binds, 3)

    def test_bound_again_after_a_workspace_grows(self):
        small = self.operands()
        self.k(*small[:4], out=small[4])
        before = self.launches[-1][2][55]
        # A larger problem on the same stream grows the map's workspace...
        large = self.operands(tq=3000)
        self.k(*large[:4], out=large[4])
        grown = self.launches[-1][2][55]
        self.assertNotEqual(grown, before)
        # ... and the small problem's plan then points at the new one too.
        self.k(*small[:4], out=small[4])
        self.assertEqual(self.binds, 3)
        self.assertEqual(self.launches[-1][2][55], grown)
        self.assertEqual(self.launches[-2][2][11], grown)

    def test_misaligned_pointer_launches_nothing(self):
        q, k, v, mask, out = self.operands()
        self.k(q, k, v, mask, out=out)
        bad = self.operands(q=0x100008)
        with self.assertRaisesRegex(ValueError, r"^query: the kernel moves 16-byte vectors: its data "
                                                r"pointer must be 16-byte aligned, got 0x100008$"):
            self.k(*bad[:4], out=bad[4])
        self.assertEqual(len(self.launches), 2)
        # The plan is bound again by the next good call, whatever it held.
        self.k(q, k, v, mask, out=out)
        self.assertEqual(self.binds, 3)
        self.assertEqual(self.launches[-1][2][0], 0x100000)


class LseCallTest(unittest.TestCase):
    """Kernel.__call__ of a kernel that writes the log-sum-exp, with the
    driver and torch faked: it returns (out, lse) and passes the lse."""

    def setUp(self):
        self.saved = runtime._launch, sys.modules.get("torch")
        self.launches = []

        def launch(*args):
            plan = next(p for p in self.k._plans.values() if p.args is args[9])
            self.launches.append(list(plan.storage))
            return 0

        runtime._launch = lambda: launch
        fake = types.ModuleType("torch")
        fake._C = types.SimpleNamespace(_cuda_getCurrentRawStream=lambda index: 7)
        self.allocated = []

        def empty(shape, dtype=None, device=None):
            self.allocated.append((tuple(shape), dtype))
            return CallTensor(shape, 0x700000 + 0x100000 * len(self.allocated), dtype=dtype)

        fake.empty, fake.float32 = empty, "torch.float32"
        sys.modules["torch"] = fake
        k = kernel_v4()
        k._plans, k._workspaces, k._tensor_maps, k._tensor_map_pointers = {}, {}, {}, {}
        k._epoch, k._lock, k._function, k._prologue = 0, threading.Lock(), "main", []
        self.k = k

    def tearDown(self):
        runtime._launch = self.saved[0]
        if self.saved[1] is None:
            del sys.modules["torch"]
        else:
            sys.modules["torch"] = self.saved[1]

    def test_returns_both_results(self):
        q, k, v = (CallTensor((2, 32, 100, 128), 0x100000), CallTensor((2, 8, 77, 128), 0x200000),
                   CallTensor((2, 8, 77, 64), 0x300000))
        out = CallTensor((2, 32, 100, 64), 0x500000)
        result = self.k(q, k, v, out=out)
        self.assertIsInstance(result, tuple)
        self.assertIs(result[0], out)
        lse = result[1]
        self.assertEqual(self.allocated, [((2, 32, 100), "torch.float32")])
        self.assertEqual(lse.shape, (2, 32, 100))
        # The main kernel's block: the lse's pointer (allocated and aligned)
        # after the output's descriptor.
        block = self.launches[-1]
        self.assertEqual(len(block), 53)
        self.assertEqual(block[33], 0x500000)
        self.assertEqual(block[44:46], [lse.data_ptr(), lse.data_ptr()])
        # A given lse is written to, and returned.
        mine = CallTensor((2, 32, 100), 0x900000, dtype="torch.float32")
        self.assertEqual(self.k(q, k, v, out=out, lse=mine), (out, mine))
        self.assertEqual(self.launches[-1][44], 0x900000)
        self.assertEqual(len(self.allocated), 1)


class EpilogueCallTest(unittest.TestCase):
    """Kernel.__call__ of a split decode kernel with per-batch key counts,
    the driver and torch faked: the main kernel, then the combine, on one
    stream, sharing the workspaces; kv_lengths passed to both."""

    def setUp(self):
        self.saved = runtime._launch, sys.modules.get("torch")
        self.launches = []

        def launch(function, gx, gy, gz, bx, by, bz, smem, stream, args, extra):
            sub = next(s for p in self.k._plans.values() for s in p.sequence if s.args is args)
            self.launches.append((function, (gx, gy, gz), stream.value, list(sub.storage)))
            return 0

        runtime._launch = lambda: launch
        fake = types.ModuleType("torch")
        fake._C = types.SimpleNamespace(_cuda_getCurrentRawStream=lambda index: 7)
        allocator = FakeTorch()

        def empty(shape, dtype=None, device=None):
            if dtype == "uint8":
                return allocator.empty(shape, dtype, device)
            return CallTensor(shape, 0x700000, dtype=dtype)

        fake.empty, fake.uint8, fake.float32 = empty, "uint8", "torch.float32"
        sys.modules["torch"] = fake
        memref = lambda n, r=4: {"kind": "memref", "operand": n, "rank": r}  # noqa: E731
        data = manifest_v5_data(kv_lengths={"element_type": "i32", "shape": [-1]})
        # Without tensor maps (the fake driver encodes none); kv_lengths in both kernels.
        data["params"] = data["params"][:5] + [memref("kv_lengths", 1)]
        data["epilogue"][0]["params"].append(memref("kv_lengths", 1))
        k = kernel_v5(data)
        k._plans, k._workspaces, k._tensor_maps, k._tensor_map_pointers = {}, {}, {}, {}
        k._epoch, k._lock, k._function = 0, threading.Lock(), "main"
        k._prologue, k._epilogue = [], ["combine"]
        self.k = k

    def tearDown(self):
        runtime._launch = self.saved[0]
        if self.saved[1] is None:
            del sys.modules["torch"]
        else:
            sys.modules["torch"] = self.saved[1]

    def test_main_then_combine(self):
        q = CallTensor((2, 8, 3, 64), 0x100000, dtype="torch.float16")
        k = CallTensor((2, 2, 4096, 64), 0x200000, dtype="torch.float16")
        v = CallTensor((2, 2, 4096, 64), 0x300000, dtype="torch.float16")
        out = CallTensor((2, 8, 3, 64), 0x500000, dtype="torch.float16")
        lengths = CallTensor((2,), 0x600000, dtype="torch.int32")
        result = self.k(q, k, v, out=out, kv_lengths=lengths)
        self.assertIs(result[0], out)
        self.assertEqual([(f, g, s) for f, g, s, _ in self.launches],
                         [("main", (16, 8, 2), 7), ("combine", (3, 8, 2), 7)])
        main, combine = self.launches[0][3], self.launches[1][3]
        # The workspaces the main kernel writes are those the combine reads.
        self.assertEqual(main[33], combine[55])  # split_lse
        self.assertEqual(main[44], combine[42])  # split_output
        self.assertNotEqual(main[33], main[44])
        self.assertEqual(main[57:59], [0x600000, 0x600000])
        self.assertEqual(combine[66:68], [0x600000, 0x600000])
        self.assertEqual(combine[31], 0x500000)
        self.assertEqual(combine[22], 0x700000)  # the lse the call allocated
        # kv_lengths is required, and checked.
        with self.assertRaisesRegex(ValueError, r"^kv_lengths: the kernel was compiled with"):
            self.k(q, k, v, out=out)
        self.assertEqual(len(self.launches), 2)
        # Again with other counts (another tensor): bound again, launched in order.
        self.k(q, k, v, out=out, kv_lengths=CallTensor((2,), 0x680000, dtype="torch.int32"))
        self.assertEqual([f for f, _, _, _ in self.launches], ["main", "combine"] * 2)
        self.assertEqual(self.launches[3][3][66], 0x680000)


if __name__ == "__main__":
    unittest.main()
