"""Pure-Python tests of the launch plans of attn_mlir.runtime.Kernel (the
argument block a call fills with data pointers): no GPU, no torch."""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
from attn_mlir import runtime  # noqa: E402
from attn_mlir.manifest import Manifest  # noqa: E402
from test_manifest import manifest_data, manifest_v2_data  # noqa: E402


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
        with self.assertRaisesRegex(ValueError, "mask: the kernel needs this operand"):
            kernel(params=params)._plan(q, k, v, None, None)

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
        q = FakeTensor((2, 32, 0, 128))
        plan = kernel_v2()._plan(q, k, v, FakeTensor((1, 1, 0, 77), dtype="torch.bool"), None)
        self.assertIsNone(plan.grid)
        self.assertEqual((plan.prologue, plan.workspaces), ([], ()))


class FakeTorch:
    """torch.empty on a fake device: records the sizes it allocates."""

    uint8 = "uint8"

    def __init__(self):
        self.allocated = []

    def empty(self, n, dtype=None, device=None):
        self.allocated.append(n)
        return FakeBuffer(n)


class FakeBuffer:
    def __init__(self, n):
        self.n = n

    def numel(self):
        return self.n


class FakeDevice:
    index = 0


class WorkspaceTest(unittest.TestCase):
    def test_kept_per_stream_and_grown(self):
        k = runtime.Kernel.__new__(runtime.Kernel)
        k._workspaces = {}
        torch, dev = FakeTorch(), FakeDevice()
        first = k._workspaces_for(torch, dev, 7, False, (16,))
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


if __name__ == "__main__":
    unittest.main()
