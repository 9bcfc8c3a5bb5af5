"""Pure-Python tests of the tensor maps of attn_mlir.runtime (version 3
manifests): the arguments of cuTensorMapEncodeTiled and their errors (the
messages of the C++ getTensorMapEncoding), the call through a fake driver,
the plan's tensor map slots, and the per-stream device copies a call fills
in. No GPU, no torch."""

import ctypes
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
from attn_mlir import runtime  # noqa: E402
from attn_mlir.manifest import Manifest  # noqa: E402
from test_manifest import KEY_MAP, manifest_v3_data  # noqa: E402
from test_runtime_plan import FakeDevice, FakeTensor  # noqa: E402

# The key of (B, H, T, D) = (2, 3, 100, 128) in f32, stored as a (B, T, H, D)
# tensor and viewed as (B, H, T, D) by permuting its strides, starting 64
# elements (256 bytes) into its buffer.
POINTER = 0x7F0000100000
SHAPE = (2, 3, 100, 128)
STRIDES = (100 * 3 * 128, 128, 3 * 128, 1)


def encoding_error(param=KEY_MAP, element_type="f32", address=POINTER, shape=SHAPE,
                   strides=STRIDES, offset=64):
    try:
        runtime.tensor_map_encoding(param, element_type, address, shape, strides, offset)
    except ValueError as e:
        return str(e)
    raise AssertionError("no error")


class EncodingTest(unittest.TestCase):
    def test_permuted_operand(self):
        e = runtime.tensor_map_encoding(KEY_MAP, "f32", POINTER, SHAPE, STRIDES, offset=64)
        self.assertEqual(e.data_type, 7)  # CU_TENSOR_MAP_DATA_TYPE_FLOAT32
        self.assertEqual(e.rank, 4)
        self.assertEqual(e.global_address, POINTER + 256)
        # Innermost first: D, T, H, B; strides in bytes without D's.
        self.assertEqual(e.global_dim, (128, 100, 3, 2))
        self.assertEqual(e.global_strides, (3 * 128 * 4, 128 * 4, 100 * 3 * 128 * 4))
        self.assertEqual(e.box_dim, (32, 64, 1, 1))
        self.assertEqual(e.element_strides, (1, 1, 1, 1))
        self.assertEqual((e.interleave, e.swizzle, e.l2_promotion, e.oob_fill), (0, 3, 2, 0))
        self.assertEqual(runtime.describe_tensor_map(e),
                         "FLOAT32, rank 4, address 0x7f0000100100, dims [128, 100, 3, 2], strides "
                         "[1536, 512, 153600] bytes, box [32, 64, 1, 1], element strides "
                         "[1, 1, 1, 1], interleave NONE, swizzle 128B, L2 promotion 128B, OOB "
                         "fill NONE")
        # 2-byte types and the other swizzles.
        param = dict(KEY_MAP, operand="value", box=[1, 2, 16, 32], swizzle=64)
        dense = runtime.torch_dense_strides((2, 8, 300, 64))
        e = runtime.tensor_map_encoding(param, "bf16", 0x10000, (2, 8, 300, 64), dense)
        self.assertEqual((e.data_type, e.swizzle, e.global_address), (9, 2, 0x10000))
        self.assertEqual(e.global_strides, (64 * 2, 300 * 64 * 2, 8 * 300 * 64 * 2))
        self.assertEqual(e.box_dim, (32, 16, 2, 1))
        e = runtime.tensor_map_encoding(dict(param, swizzle=32), "f16", 0x10000, (2, 8, 300, 64), dense)
        self.assertEqual((e.data_type, e.swizzle), (6, 1))
        e = runtime.tensor_map_encoding(dict(param, swizzle=0), "f16", 0x10000, (2, 8, 300, 64), dense)
        self.assertEqual(e.swizzle, 0)

    def test_errors(self):
        strides = list(STRIDES)
        strides[1] = 101
        self.assertEqual(encoding_error(strides=strides), "tensor map of 'key': stride[1] = 101 "
                         "elements (404 bytes) is not a multiple of 16 bytes")
        strides[1] = 100
        self.assertEqual(encoding_error(element_type="bf16", strides=strides),
                         "tensor map of 'key': stride[1] = 100 elements (200 bytes) is not a "
                         "multiple of 16 bytes")
        self.assertEqual(encoding_error(strides=(38400, 128, 384, 2)),
                         "tensor map of 'key': stride[3] = 2 elements; the last dimension must be "
                         "contiguous (stride 1)")
        self.assertEqual(encoding_error(strides=(2**38, 128, 384, 1)),
                         "tensor map of 'key': stride[0] = 274877906944 elements (1099511627776 "
                         "bytes) is not below 2^40 bytes")
        runtime.tensor_map_encoding(KEY_MAP, "f32", POINTER, SHAPE, (2**38 - 4, 128, 384, 1))
        self.assertEqual(encoding_error(strides=(2**63 - 1, 128, 384, 1)),
                         "tensor map of 'key': stride[0] = 9223372036854775807 elements (more "
                         "than 2^62 bytes) is not below 2^40 bytes")
        self.assertEqual(encoding_error(strides=(-38400, 128, 384, 1)),
                         "tensor map of 'key': stride[0] = -38400 elements (-153600 bytes) is "
                         "negative")
        self.assertEqual(encoding_error(offset=3), "tensor map of 'key': the first element is at "
                         "0x7f000010000c (pointer 0x7f0000100000 + offset 3 elements), which is "
                         "not 16-byte aligned")
        self.assertEqual(encoding_error(offset=-4), "tensor map of 'key': offset -4 is negative")
        self.assertEqual(encoding_error(shape=(2, 3, 0, 128)),
                         "tensor map of 'key': size[2] = 0 is out of range (1 .. 2^32)")
        self.assertEqual(encoding_error(shape=(2, 3, 2**32 + 1, 128)),
                         "tensor map of 'key': size[2] = 4294967297 is out of range (1 .. 2^32)")
        self.assertEqual(encoding_error(element_type="i1"), "tensor map of 'key': element type "
                         "'i1' has no tensor map data type (expected f32, f16 or bf16)")
        self.assertEqual(encoding_error(dict(KEY_MAP, box=[1, 64, 32])),
                         "tensor map of 'key': the box has 3 entries but the operand has rank 4")
        self.assertEqual(encoding_error(dict(KEY_MAP, box=[1, 1, 257, 32])),
                         "tensor map of 'key': box[2] is 257 (expected 1 .. 256)")
        self.assertEqual(encoding_error(dict(KEY_MAP, swizzle=96)),
                         "tensor map of 'key': swizzle 96 (expected 0, 32, 64 or 128)")
        self.assertEqual(encoding_error(dict(KEY_MAP, box=[1] * 6), shape=(1,) * 6, strides=(1,) * 6),
                         "tensor map of 'key': rank 6 (a tensor map has 1 .. 5 dimensions)")
        self.assertEqual(encoding_error(strides=STRIDES[:3]),
                         "tensor map of 'key': the operand has 4 sizes and 3 strides")
        self.assertEqual(encoding_error({"kind": "memref", "operand": "key", "rank": 4}),
                         "tensor map of 'key': the param is not of kind tensor_map")


class FakeDriver:
    """libcuda with a cuTensorMapEncodeTiled that records its arguments."""

    def __init__(self, result=0):
        self.calls = []
        self.result = result
        # A function, whose argtypes the runtime sets, as on a ctypes one.
        self.cuTensorMapEncodeTiled = lambda *args: self._encode(*args)

    def _encode(self, address, data_type, rank, global_address, dims, strides,
                               box, element_strides, interleave, swizzle, l2_promotion, oob_fill):
        self.calls.append(dict(
            aligned=address % 64 == 0, data_type=data_type, rank=rank,
            global_address=global_address, dims=list(dims)[:rank],
            strides=list(strides)[:rank - 1], box=list(box)[:rank],
            element_strides=list(element_strides)[:rank],
            rest=(interleave, swizzle, l2_promotion, oob_fill)))
        ctypes.memmove(address, bytes(range(128)), 128)
        return self.result

    def cuGetErrorString(self, result, name):
        name._obj.value = b"invalid argument"
        return 0


class WithoutEncode:
    """libcuda before CUDA 12."""


class EncodeThroughDriverTest(unittest.TestCase):
    def setUp(self):
        self.saved = (runtime._cuda, runtime._encode_fn)
        runtime._encode_fn = None

    def tearDown(self):
        runtime._cuda, runtime._encode_fn = self.saved

    def test_encode(self):
        e = runtime.tensor_map_encoding(KEY_MAP, "f32", POINTER, SHAPE, STRIDES, offset=64)
        runtime._cuda = WithoutEncode()
        with self.assertRaisesRegex(RuntimeError, r"^the CUDA driver has no cuTensorMapEncodeTiled "
                                                  r"\(CUDA 12 or newer is needed\)$"):
            runtime.encode_tensor_map(e)
        runtime._cuda = driver = FakeDriver()
        self.assertEqual(runtime.encode_tensor_map(e), bytes(range(128)))
        self.assertEqual(driver.calls, [dict(
            aligned=True, data_type=7, rank=4, global_address=POINTER + 256,
            dims=[128, 100, 3, 2], strides=[1536, 512, 153600], box=[32, 64, 1, 1],
            element_strides=[1, 1, 1, 1], rest=(0, 3, 2, 0))])
        driver.result = 1
        with self.assertRaises(RuntimeError) as caught:
            runtime.encode_tensor_map(e)
        self.assertEqual(str(caught.exception), "cuTensorMapEncodeTiled failed: invalid argument (1) "
                         f"({runtime.describe_tensor_map(e)})")


def kernel_v3(**overrides):
    k = runtime.Kernel.__new__(runtime.Kernel)  # no driver: only the plan
    k.manifest = Manifest(manifest_v3_data(**overrides))
    k._tensor_maps, k._tensor_map_pointers, k._epoch = {}, {}, 0
    k._function, k._prologue = "main", []
    return k


def operands():
    q = FakeTensor((2, 32, 1000, 128), dtype="torch.float32")
    # K as a (B, T, H, D) tensor viewed as (B, H, T, D).
    k = FakeTensor((2, 8, 77, 128), strides=(77 * 8 * 128, 128, 8 * 128, 1), dtype="torch.float32")
    v = FakeTensor((2, 8, 77, 64), dtype="torch.float32")
    return q, k, v


class PlanTest(unittest.TestCase):
    def test_slots(self):
        plan = kernel_v3()._plan(*operands(), None, None)
        # 4 memrefs of 11 slots, a pointer per tensor map, Tk.
        self.assertEqual(len(plan.args), 47)
        self.assertEqual(list(plan.storage)[44:], [0, 0, 77])
        self.assertEqual([(slot, operand) for slot, operand, _ in plan.tensor_maps], [(44, 1), (45, 2)])
        key = plan.tensor_maps[0][2]
        self.assertEqual(key.global_address, 0)
        self.assertEqual(key.global_dim, (128, 77, 8, 2))
        self.assertEqual(key.global_strides, (8 * 128 * 4, 128 * 4, 77 * 8 * 128 * 4))
        self.assertEqual(key.box_dim, (32, 64, 1, 1))
        # A version 1 or 2 plan has none.
        self.assertEqual(kernel_v3(version=3, params=manifest_v3_data()["params"][:4])
                         ._plan(*operands(), None, None).tensor_maps, [])

    def test_layout_errors_at_plan_time(self):
        q, k, v = operands()
        # A tensor map of the output __call__ allocates is of the dense output.
        params = manifest_v3_data()["params"]
        params[5] = dict(KEY_MAP, operand="output")
        plan = kernel_v3(params=params)._plan(q, k, v, None, None)
        self.assertEqual(plan.tensor_maps[1][2].global_strides, (64 * 4, 1000 * 64 * 4,
                                                                  32 * 1000 * 64 * 4))
        # Too large a stride for TMA (the memref alone would take it).
        big = FakeTensor(v.shape, strides=(2**38, 77 * 64, 64, 1), dtype="torch.float32")
        with self.assertRaisesRegex(ValueError, r"^tensor map of 'value': stride\[0\] = "
                                                r"274877906944 elements \(1099511627776 bytes\) is "
                                                r"not below 2\^40 bytes$"):
            kernel_v3()._plan(q, k, big, None, None)


class FakeTorch:
    """torch.empty on a fake device: buffers at 0x10000, 0x10200, ..."""

    uint8 = "uint8"

    def __init__(self):
        self.allocated = 0

    def empty(self, n, dtype=None, device=None):
        self.allocated += 1
        return Data(0x10000 + 0x200 * (self.allocated - 1))


class Data:
    def __init__(self, pointer):
        self.pointer = pointer

    def data_ptr(self):
        return self.pointer


class DeviceCopiesTest(unittest.TestCase):
    def setUp(self):
        self.saved = (runtime.encode_tensor_map, runtime._copy_to_device,
                      runtime.TENSOR_MAP_CACHE_CAPACITY)
        self.encoded, self.copies = [], []

        def encode(e):
            self.encoded.append(e.global_address)
            return e.global_address.to_bytes(8, "little") + bytes(120)

        runtime.encode_tensor_map = encode
        runtime._copy_to_device = lambda pointer, data, stream: self.copies.append(
            (pointer, int.from_bytes(data[:8], "little"), stream))

    def tearDown(self):
        (runtime.encode_tensor_map, runtime._copy_to_device,
         runtime.TENSOR_MAP_CACHE_CAPACITY) = self.saved

    def test_copied_once_per_map_and_stream(self):
        k = kernel_v3()
        plan = k._plan(*operands(), None, None)
        torch, dev = FakeTorch(), FakeDevice()
        tensors = (Data(0x100000), Data(0x200000), Data(0x300000), Data(0x400000), None)
        k._fill_tensor_maps(torch, plan, tensors, dev, 7, False)
        # Key and value: encoded at their data pointers, copied on the stream.
        self.assertEqual(self.encoded, [0x200000, 0x300000])
        self.assertEqual(self.copies, [(0x10000, 0x200000, 7), (0x10200, 0x300000, 7)])
        self.assertEqual(list(plan.storage)[44:46], [0x10000, 0x10200])
        # The same call again: nothing encoded or copied.
        k._fill_tensor_maps(torch, plan, tensors, dev, 7, False)
        self.assertEqual(len(self.encoded), 2)
        self.assertEqual(len(self.copies), 2)
        # Another key: one more map.
        moved = (tensors[0], Data(0x500000)) + tensors[2:]
        k._fill_tensor_maps(torch, plan, moved, dev, 7, False)
        self.assertEqual(self.encoded[2:], [0x500000])
        self.assertEqual(self.copies[2:], [(0x10400, 0x500000, 7)])
        self.assertEqual(list(plan.storage)[44:46], [0x10400, 0x10200])
        # Another stream gets its own copies.
        k._fill_tensor_maps(torch, plan, tensors, dev, 8, False)
        self.assertEqual([c[2] for c in self.copies[3:]], [8, 8])
        self.assertEqual(len(k._tensor_maps), 5)
        # Full: a call that would pass the capacity drops every copy before
        # it makes its own (Kernel._bind), and moves the epoch on.
        runtime.TENSOR_MAP_CACHE_CAPACITY = 6
        full = (tensors[0], Data(0x600000)) + tensors[2:]
        k._bind(torch, plan, tuple(t.data_ptr() if t else 0 for t in full), full, dev, 7, False)
        self.assertEqual(len(k._tensor_maps), 2)
        self.assertEqual(k._epoch, 1)
        self.assertEqual(self.copies[-2:], [(0x10a00, 0x600000, 7), (0x10c00, 0x300000, 7)])
        # A data pointer TMA cannot start at.
        with self.assertRaisesRegex(ValueError, r"^tensor map of 'key': the first element is at "
                                                r"0x700008, which is not 16-byte aligned$"):
            k._fill_tensor_maps(torch, plan, (tensors[0], Data(0x700008)) + tensors[2:], dev, 7,
                                False)


if __name__ == "__main__":
    unittest.main()
