"""The explain report's arithmetic (pure Python: no GPU, no torch).

test_shared_cases.py checks that attn_mlir.explain and lib/Runtime/Explain.cpp
report alike on the cases of shared_cases.json."""

import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from attn_mlir import explain as ex  # noqa: E402
from attn_mlir.facts import CU  # noqa: E402


def make_device():
    return ex.Device(name="Fake H200", arch="sm_90", multiprocessors=132, clock_khz=1980000,
                     bandwidth_bytes_per_s=4.8e12, peak_tflops=494.7,
                     peak_note="H100/H200 SXM dense tf32 tensor cores: 494.7 TFLOP/s",
                     max_threads_per_sm=2048, max_blocks_per_sm=32, registers_per_sm=65536,
                     shared_bytes_per_sm=233472)


def make_seed_facts():
    """The seed workload: f32 (tf32), B=32, H=96, T=512, D=128, the additive
    (1, 1, T, T) f32 mask, timed at 5.28 ms."""
    kernel = ex.Kernel(name="seed_mask_kernel", threads_per_block=128, grid_blocks=8 * 32 * 96,
                       registers=168, dynamic_shared_bytes=65536, active_blocks_per_sm=3,
                       block_m=64, block_n=64, num_warps=4, num_stages=2,
                       tensor_cores=ex.TensorCores("sass", 512, "cuobjdump -sass"))
    operands = [ex.Operand(n, (32, 96, 512, 128), (96 * 512 * 128, 512 * 128, 128, 1), 4,
                           0x7f0000000000) for n in ("q", "k", "v", "o")]
    operands.append(ex.Operand("mask", (1, 1, 512, 512), (0, 0, 512, 1), 4, 0x7f1000000000))
    return ex.Facts(ex.Sizes(32, 96, 96, 512, 512, 128, 128), "f32", tf32=True,
                    mask_elements=512 * 512, mask_dtype="f32", median_ms=5.28,
                    device=make_device(), kernel=kernel, operands=operands)


# The seed facts' shared_memory_reads (ExplainTest.cpp's kSeedShared): 4 warps
# x 64 keys x (128 + 128) x 4 bytes read, 64 KiB written; 2 * 64 * 64 * 256
# FLOPs at 494.7 TFLOP/s over 132 SMs at 1.98 GHz.
SEED_SHARED = ("each warp reads all of K and V from shared memory: 256.0 KiB read and 64.0 KiB "
               "written per program and key block, 2560 cycles at 128 B per cycle and SM against "
               "1108 cycles of its FLOPs at the peak")

# The seed's 64x32 programs at T=256 visit 2, 4, 6 and 8 key blocks of 32
# (ExplainTest.cpp's kSeedShort).
SEED_SHORT = ("160 keys per program on average (5.0 key blocks of 32), under 256: what a program "
              "costs besides its key blocks (its first loads landing, the epilogue, the next "
              "launch; about 112 keys' worth on the H200) is about 41% of the time")


class ArithmeticTest(unittest.TestCase):
    def test_seed_workload(self):
        r = ex.compute(make_seed_facts())
        flops = 4.0 * 32 * 96 * 512 * 512 * 128
        nbytes = 4.0 * 32 * 96 * 512 * 128 * 4 + 512.0 * 512 * 4
        self.assertEqual(r.flops, flops)
        self.assertEqual(r.bytes, nbytes)
        self.assertAlmostEqual(r.flop_floor_ms, flops / 494.7e12 * 1e3, places=12)
        self.assertAlmostEqual(r.hbm_floor_ms, nbytes / 4.8e12 * 1e3, places=12)
        self.assertEqual(r.floor_ms, r.flop_floor_ms)
        self.assertEqual(r.bound, "compute")
        self.assertAlmostEqual(r.fraction_of_floor, 0.15785, places=5)
        self.assertAlmostEqual(r.tflops, 78.09, places=2)
        self.assertEqual((r.blocks_per_sm, r.occupancy_source, r.warps_per_sm, r.max_warps_per_sm),
                         (3, "driver", 12, 64))
        self.assertEqual(r.occupancy, 12 / 64)
        self.assertAlmostEqual(r.waves, 24576 / (132 * 3))
        self.assertEqual(r.causes, [("shared_memory_reads", SEED_SHARED)])

    def test_causal_halves_flops_only_when_square(self):
        f = make_seed_facts()
        f.causal, f.mask_elements = "top_left", 0
        self.assertEqual(ex.compute(f).flops, 2.0 * 32 * 96 * 512 * 512 * 128)
        f.sizes.Tk = 1024
        self.assertEqual(ex.compute(f).flops, 4.0 * 32 * 96 * 512 * 1024 * 128)

    def test_estimated_occupancy(self):
        d, k = make_device(), ex.Kernel(threads_per_block=128, registers=168)
        self.assertEqual(ex.estimate_blocks_per_sm(d, k), 3)
        k.dynamic_shared_bytes = 102400
        self.assertEqual(ex.estimate_blocks_per_sm(d, k), 2)
        k.registers, k.dynamic_shared_bytes = 32, 0
        self.assertEqual(ex.estimate_blocks_per_sm(d, k), 16)
        k.threads_per_block, k.registers = 256, 255
        self.assertEqual(ex.estimate_blocks_per_sm(d, k), 1)
        k.threads_per_block, k.registers = 1024, 32
        self.assertEqual(ex.estimate_blocks_per_sm(d, k), 2)
        f = make_seed_facts()
        f.kernel.active_blocks_per_sm = -1
        r = ex.compute(f)
        self.assertEqual((r.occupancy_source, r.blocks_per_sm), ("estimate", 3))

    def test_low_occupancy_thresholds(self):
        f = make_seed_facts()
        f.kernel.active_blocks_per_sm = 2  # 8 warps: at both thresholds
        self.assertEqual(ex.compute(f).cause_names, ["shared_memory_reads"])
        f.kernel.active_blocks_per_sm, f.kernel.threads_per_block = 1, 256
        self.assertEqual(ex.compute(f).causes,
                         [("low_occupancy", "1 blocks, 8 warps per SM (under 2 blocks or 8 warps)"),
                          ("shared_memory_reads", SEED_SHARED)])
        f.kernel.active_blocks_per_sm, f.kernel.threads_per_block = 3, 64
        self.assertEqual(ex.compute(f).cause_names, ["low_occupancy", "shared_memory_reads"])

    def test_uncoalesced(self):
        ops = [ex.Operand("q", (2, 8, 100, 64), (100 * 8 * 64, 64, 8 * 64, 1), 2),
               ex.Operand("k", (2, 8, 100, 64), (8 * 100 * 64, 100 * 64, 1, 100), 2),
               ex.Operand("v", (2, 8, 100, 36), (8 * 100 * 36, 100 * 36, 36, 1), 2),
               ex.Operand("o", (2, 8, 100, 64), (8 * 100 * 64, 100 * 64, 64, 1), 2, 8),
               ex.Operand("mask", (1, 1, 100, 100), (0, 0, 100, 1), 1),
               ex.Operand("ok_mask", (100, 96), (96, 1), 1, 256)]
        self.assertEqual(ex.find_uncoalesced(ops),
                         ["k (innermost stride 100)", "v (row pitch 72 bytes)",
                          "o (base address not 16-byte aligned)", "mask (row pitch 100 bytes)"])
        f = make_seed_facts()
        f.operands[1].strides = (96 * 512 * 128, 128, 96 * 128, 1)
        self.assertEqual(ex.compute(f).cause_names, ["shared_memory_reads"])  # strided is fine
        f.operands[1].strides = (96 * 512 * 130, 512 * 130, 130, 1)
        self.assertEqual(ex.compute(f).causes, [("uncoalesced", "k (row pitch 520 bytes)"),
                                                ("shared_memory_reads", SEED_SHARED)])

    def test_spills_and_tensor_cores(self):
        f = make_seed_facts()
        f.kernel.local_bytes = 48
        f.kernel.tensor_cores = ex.TensorCores("ptx", 0, "cuobjdump not found")
        self.assertEqual(ex.compute(f).causes, [
            ("spills", "48 bytes of local memory per thread (168 registers)"),
            ("no_tensor_cores", "no mma.sync/wgmma in the PTX (cuobjdump not found)")])
        f.tf32 = False
        self.assertEqual(ex.compute(f).cause_names, ["spills"])
        f.tf32, f.kernel.tensor_cores = True, ex.TensorCores()
        self.assertEqual(ex.compute(f).cause_names, ["spills"])

    def test_shared_memory_reads_model(self):
        f = make_seed_facts()
        # wgmma: one warpgroup reads K and V once, 64 + 64 KiB = 1024 cycles
        # against 1108: no cause.
        f.kernel.tensor_cores = ex.TensorCores("sass", 512, "cuobjdump -sass", 512)
        self.assertEqual(ex.compute(f).causes, [])
        # bf16, 128x32, 4 warps of mma.sync at the f16/bf16 peak: 64 KiB read,
        # 16 written (640 cycles) against 2 * 128 * 32 * 256 FLOPs (554).
        f = make_seed_facts()
        f.dtype, f.tf32 = "bf16", False
        f.device.peak_tflops = 989.4
        f.kernel.block_m, f.kernel.block_n = 128, 32
        self.assertEqual(ex.compute(f).causes, [(
            "shared_memory_reads",
            "each warp reads all of K and V from shared memory: 64.0 KiB read and 16.0 KiB "
            "written per program and key block, 640 cycles at 128 B per cycle and SM against "
            "554 cycles of its FLOPs at the peak")])
        # Without the config or the evidence, no model.
        f.kernel.block_n = 0
        self.assertEqual(ex.compute(f).causes, [])

    def test_short_programs(self):
        f = make_seed_facts()
        f.causal, f.mask_elements = "top_left", 0
        f.sizes.Tq = f.sizes.Tk = 256
        f.kernel.block_n = 32
        causes = ex.compute(f).causes
        self.assertEqual([c[0] for c in causes], ["shared_memory_reads", "short_programs"])
        self.assertEqual(causes[-1][1], SEED_SHORT)
        # The seed's mask tensor through a block map: 12 of 32 blocks removed,
        # the same 5 key blocks per program.
        f.causal, f.mask_blocks = None, (12, 12, 0, 8)
        self.assertEqual(ex.compute(f).causes[-1][1], SEED_SHORT)
        # T=512: 2, 4, ..., 16 blocks, 288 keys on average.
        f.mask_blocks, f.causal = (), "top_left"
        f.sizes.Tq = f.sizes.Tk = 512
        self.assertEqual([c[0] for c in ex.compute(f).causes], ["shared_memory_reads"])
        # Bottom-right with Tq = 1024 > Tk = 64: only the last query block sees
        # keys (2 blocks), the others none.
        f.causal, f.sizes.Tq, f.sizes.Tk = "bottom_right", 1024, 64
        self.assertEqual(ex.compute(f).causes[-1][1], (
            "4 keys per program on average (0.1 key blocks of 32), under 256: what a program "
            "costs besides its key blocks (its first loads landing, the epilogue, the next "
            "launch; about 112 keys' worth on the H200) is about 97% of the time"))
        # Without the config, no model.
        f.kernel.block_m = 0
        self.assertEqual(ex.compute(f).causes, [])

    def test_count_tensor_core_instructions(self):
        sass = ("        /*0310*/  HMMA.16816.F32.BF16 R8, R4, R12, R8 ;\n"
                "        /*0320*/  HGMMA.64x64x16.F32 R24, gdesc[UR4] ;\n"
                "        /*0330*/  FFMA R1, R2, R3, R4 ;  // XHMMA no\n")
        self.assertEqual(ex.count_tensor_core_instructions(sass, sass=True), 2)
        ptx = ("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f1}, {%r1}, {%r2}, {%f1};\n"
               "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16\n"
               "// ldmatrix, not an mma: xmma.sync\n")
        self.assertEqual(ex.count_tensor_core_instructions(ptx, sass=False), 2)
        self.assertEqual(ex.count_tensor_core_instructions("add.f32 %f1, %f2, %f3;", False), 0)

    def test_lines_and_json(self):
        f = make_seed_facts()
        f.kernel.local_bytes = 8
        r = ex.compute(f)
        lines = r.lines()
        self.assertIn("explain: flops=4.123e+11", lines)
        self.assertIn("explain: fraction_of_floor=0.158", lines)
        self.assertIn("explain: config=block_m=64 block_n=64 num_warps=4 num_stages=2", lines)
        self.assertIn("explain: occupancy=3 blocks/SM, 12/64 warps/SM = 0.188 (driver)", lines)
        self.assertIn("explain: tensor_cores=yes (512 HMMA/HGMMA in the SASS; cuobjdump -sass)",
                      lines)
        self.assertIn("explain: problem=B=32 Hq=96 Hkv=96 Tq=512 Tk=512 D=128 Dv=128 f32 tf32 "
                      "causal=none mask=f32[262144]", lines)
        self.assertEqual(lines[-1], "explain: causes=spills,shared_memory_reads")
        self.assertEqual(r.text().count("\n"), len(lines))
        data = json.loads(json.dumps(ex.to_json(r)))
        self.assertEqual(data["causes"], ["spills", "shared_memory_reads"])
        self.assertEqual(data["occupancy_blocks_per_sm"], 3)
        self.assertEqual(data["registers"], 168)
        self.assertEqual(data["flops"], r.flops)

    def test_mask_blocks(self):
        """The block map's classes as explain counts them (countMaskBlocks),
        and the line and JSON member they give (ExplainTest.MaskBlocks)."""
        counts = ex.count_mask_blocks(bytes([0, 0, 1, 3, 2, 1, 1, 3, 7]))
        self.assertEqual(counts, (2, 3, 2, 2))  # 7 is not a class: mixed
        self.assertEqual(ex.count_mask_blocks(b""), (0, 0, 0, 0))
        f = ex.Facts(ex.Sizes(1, 1, 1, 128, 128, 64, 64), "f32", True, None, 128 * 128, "f32",
                     1.0, make_device(), ex.Kernel())
        r = ex.compute(f)
        self.assertFalse(any("mask_blocks" in line for line in r.lines()))
        self.assertNotIn("mask_blocks", ex.to_json(r))
        f.mask_blocks = counts
        r = ex.compute(f)
        lines = r.lines()
        i = lines.index("explain: mask_blocks=2 removed, 3 zero, 2 triangular, 2 mixed (of 9)")
        self.assertTrue(lines[i - 1].startswith("explain: problem="))
        self.assertTrue(lines[i + 1].startswith("explain: flops="))
        self.assertEqual(ex.to_json(r)["mask_blocks"],
                         dict(removed=2, zero=3, mixed=2, triangular=2))

    def test_causal_rows(self):
        """The map rows with a triangular mask's classes, by the programs'
        test (countCausalRows), and the line and JSON member they give
        (ExplainTest.CausalRows)."""
        # The seed's causal mask tensor at T=512, 64x32 blocks.
        seed = [1 if kb < 2 * i else 3 if kb < 2 * i + 2 else 0
                for i in range(8) for kb in range(16)]

        def count(data, tq, tk, causal, offset):
            return ex.count_causal_rows(bytes(data), tq, tk, 64, 32, causal, offset)

        self.assertEqual(count(seed, 512, 512, False, 0), (8, 8))
        self.assertEqual(count(seed, 512, 512, True, 0), (8, 8))
        broken = list(seed)
        broken[3 * 16 + 1] = 2   # a mixed block before the diagonal
        broken[0 * 16 + 1] = 1   # a zero-term block after a triangular one
        broken[5 * 16 + 0] = 0   # a removed first block
        broken[6 * 16 + 13] = 0  # a removed diagonal block
        self.assertEqual(count(broken, 512, 512, False, 0), (4, 8))
        self.assertEqual(count([1, 1, 3, 3], 64, 128, True, 64), (1, 1))
        self.assertEqual(count([1, 3, 3, 3], 64, 128, True, 64), (0, 1))
        self.assertEqual(count([3, 3, 0, 0, 1, 1, 3, 3], 100, 100, False, 0), (2, 2))
        self.assertEqual(count(seed, 0, 512, False, 0), (0, 0))
        f = ex.Facts(ex.Sizes(1, 1, 1, 512, 512, 64, 64), "f32", True, None, 512 * 512, "f32",
                     1.0, make_device(), ex.Kernel(), mask_blocks=ex.count_mask_blocks(broken))
        self.assertFalse(any("causal_rows" in line for line in ex.compute(f).lines()))
        f.causal_rows = count(broken, 512, 512, False, 0)
        r = ex.compute(f)
        lines = r.lines()
        i = lines.index("explain: causal_rows=4 of 8 map rows have a triangular mask's classes "
                        "(their programs run as causal ones)")
        self.assertTrue(lines[i - 1].startswith("explain: mask_blocks="))
        self.assertTrue(lines[i + 1].startswith("explain: flops="))
        self.assertEqual(ex.to_json(r)["causal_rows"], dict(causal=4, rows=8))

    def test_peak_table(self):
        self.assertEqual(ex.peak_tflops("sm_90a", "NVIDIA H200", "bf16")[0], 989.4)
        self.assertEqual(ex.peak_tflops("sm_90", "NVIDIA H100 PCIe", "f32", tf32=True)[0], 378.0)
        self.assertEqual(ex.peak_tflops("sm_90", "NVIDIA H100 NVL", "f32", tf32=False)[0], 60.0)
        self.assertEqual(ex.peak_tflops("sm_80", "NVIDIA A100", "f16"),
                         (312.0, "A100 dense f16/bf16 tensor cores: 312.0 TFLOP/s"))
        value, note = ex.peak_tflops("sm_89", "NVIDIA L4", "f16")
        self.assertEqual(value, 0.0)
        self.assertEqual(note, "no peak FLOP/s known for sm_89 (NVIDIA L4); the floor counts bytes only")
        self.assertIsNone(ex.parse_chip("sm_9"))
        self.assertEqual(ex.parse_chip("sm_100f"), (10, 0, "f"))

    def test_tensor_core_evidence_without_cuobjdump(self):
        # This machine may have ptxas but no cuobjdump: the PTX is the evidence.
        if ex.find_cuda_tool("cuobjdump") and ex.find_cuda_tool("ptxas"):
            self.skipTest("cuobjdump present: the SASS path runs on the GPU machine")
        tc = ex.find_tensor_cores("mma.sync.aligned.m16n8k16 x;\n", "sm_90a")
        self.assertEqual((tc.source, tc.count), ("ptx", 1))
        self.assertRegex(tc.detail, "^(ptxas|cuobjdump) not found$")


class FakeTensor:
    """What gather reads of a torch.Tensor."""

    def __init__(self, shape, dtype="torch.bfloat16", strides=None, address=1 << 40):
        self.shape, self.dtype, self.address = tuple(shape), dtype, address
        if strides is None:
            strides, step = [], 1
            for n in reversed(shape):
                strides.insert(0, step)
                step *= n
        self._strides = tuple(strides)
        self.device = type("Device", (), {"index": 0})()

    def stride(self):
        return self._strides

    def element_size(self):
        return {"torch.bfloat16": 2, "torch.float32": 4, "torch.bool": 1}[self.dtype]

    def data_ptr(self):
        return self.address


class FakeKernel:
    """What gather reads of an attn_mlir.runtime.Kernel, without a GPU."""

    def __init__(self, manifest):
        self.manifest = manifest

    def function_attribute(self, attribute):
        from attn_mlir import runtime
        return {CU["CU_FUNC_ATTRIBUTE_NUM_REGS"]: 168,
                CU["CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES"]: 0,
                CU["CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES"]: 0,
                CU["CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK"]: 384}[attribute]

    def max_active_blocks_per_sm(self):
        return 2


class FakeBytes:
    """What gather reads of a workspace buffer (a uint8 torch.Tensor)."""

    def __init__(self, data):
        self.data = list(data)

    def numel(self):
        return len(self.data)

    def __getitem__(self, index):
        return FakeBytes(self.data[index])

    def cpu(self):
        return self

    def tolist(self):
        return list(self.data)


class FakeMapKernel(FakeKernel):
    """A FakeKernel whose calls wrote a block map (the runtime's workspace
    buffer, grown past what a call needs)."""

    def __init__(self, manifest, held):
        super().__init__(manifest)
        self.held = held

    def workspace(self, name, device, stream=None):
        assert name == "mask_block_map" and device.index == 0
        return self.held


class GatherTest(unittest.TestCase):
    """gather's plumbing with the driver calls replaced (the GPU test,
    test_torch_gpu.py, runs the real ones)."""

    def gather(self, make_kernel, data):
        """gather() of make_kernel(manifest of `data`) on the shapes below,
        with the driver calls replaced."""
        from attn_mlir import runtime
        from attn_mlir.manifest import Manifest

        attrs = {CU["CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR"]: 9,
                 CU["CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR"]: 0,
                 CU["CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT"]: 132,
                 CU["CU_DEVICE_ATTRIBUTE_CLOCK_RATE"]: 1980000,
                 CU["CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE"]: 2619000,
                 CU["CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH"]: 6144,
                 CU["CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR"]: 2048,
                 CU["CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR"]: 32,
                 CU["CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR"]: 65536,
                 CU["CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR"]: 233472}
        saved = runtime.device_attribute, runtime.device_name, ex.find_cuda_tool
        runtime.device_attribute = lambda ordinal, a: attrs[a]
        runtime.device_name = lambda ordinal: "NVIDIA H200"
        ex.find_cuda_tool = lambda tool: None
        try:
            with tempfile.TemporaryDirectory() as d:
                with open(os.path.join(d, "f.ptx"), "w") as f:
                    f.write("mma.sync.aligned.m16n8k16 a;\nmma.sync.aligned.m16n8k16 b;\n")
                m = Manifest(data, d)
                q = FakeTensor((2, 32, 1000, 128))
                k = FakeTensor((2, 8, 77, 128))
                v = FakeTensor((2, 8, 77, 64))
                mask = FakeTensor((1, 1, 1000, 77), "torch.bool")
                out = FakeTensor((2, 32, 1000, 64), address=(1 << 40) + 8)
                return ex.gather(make_kernel(m), q, k, v, mask, out, median_ms=0.5)
        finally:
            runtime.device_attribute, runtime.device_name, ex.find_cuda_tool = saved

    def test_gather(self):
        from test_manifest import manifest_data

        facts = self.gather(FakeKernel, manifest_data())
        self.assertEqual(facts.sizes, ex.Sizes(2, 32, 8, 1000, 77, 128, 64))
        self.assertEqual((facts.dtype, facts.tf32, facts.causal), ("bf16", False, "top_left"))
        self.assertEqual((facts.mask_elements, facts.mask_dtype), (77000, "i1"))
        self.assertEqual(facts.device.arch, "sm_90")
        self.assertEqual(facts.device.peak_tflops, 989.4)
        self.assertAlmostEqual(facts.device.bandwidth_bytes_per_s, 2 * 2619000e3 * 6144 / 8)
        k_ = facts.kernel
        self.assertEqual((k_.threads_per_block, k_.grid_blocks, k_.registers, k_.dynamic_shared_bytes),
                         (128, 16 * 64, 168, 27648))
        self.assertEqual((k_.block_m, k_.block_n, k_.num_warps, k_.num_stages), (64, 64, 4, 2))
        self.assertEqual((k_.tensor_cores.source, k_.tensor_cores.count), ("ptx", 2))
        self.assertEqual(k_.tensor_cores.detail, "ptxas not found")
        self.assertEqual([o.name for o in facts.operands], ["q", "k", "v", "mask", "o"])
        self.assertEqual(facts.operands[3].strides, (0, 0, 77, 1))  # broadcast dims
        r = ex.compute(facts)
        self.assertEqual(r.blocks_per_sm, 2)
        self.assertEqual(r.causes[0], ("uncoalesced", "mask (row pitch 77 bytes), "
                                                      "o (base address not 16-byte aligned)"))
        # Two mma.sync in the PTX, no wgmma: 4 warps read K and V (D = Dv = 96).
        # Tk = 77: the first query block sees 1 key block of 64, the 15 others
        # 2 (124 keys on average).
        self.assertEqual(r.cause_names, ["uncoalesced", "shared_memory_reads", "short_programs"])
        self.assertTrue(r.causes[2][1].startswith("124 keys per program on average (1.9 key "
                                                  "blocks of 64), under 256"), r.causes[2][1])
        self.assertIn("each warp reads all of K and V from shared memory: 96.0 KiB read",
                      r.causes[1][1])
        self.assertEqual(facts.mask_blocks, ())

    def test_gather_mask_blocks(self):
        """With a block map, the classes of the bytes a call of these sizes
        wrote (1 x 1 x 8 x 2 = 16; the buffer holds more)."""
        from test_manifest import manifest_v2_data

        held = FakeBytes([0] * 5 + [1] * 6 + [3] * 4 + [2] + [2] * 4)
        facts = self.gather(lambda m: FakeMapKernel(m, held), manifest_v2_data())
        self.assertEqual(facts.mask_blocks, (5, 6, 1, 4))
        # bf16 programs have no causal rows; f32 ones with two stages count
        # them over the map's rows of the config's blocks (64 x 64: 8 rows of
        # 2 classes, top-left causal): only [1, 3] is a triangular row.
        self.assertEqual(facts.causal_rows, ())
        facts = self.gather(lambda m: FakeMapKernel(m, held), manifest_v2_data(element_type="f32"))
        self.assertEqual(facts.causal_rows, (1, 8))
        with self.assertRaisesRegex(RuntimeError, "no launch of these sizes wrote"):
            self.gather(lambda m: FakeMapKernel(m, FakeBytes([0] * 15)), manifest_v2_data())
        with self.assertRaisesRegex(RuntimeError, "no launch of these sizes wrote"):
            self.gather(lambda m: FakeMapKernel(m, None), manifest_v2_data())


if __name__ == "__main__":
    unittest.main()
