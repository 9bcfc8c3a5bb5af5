//===- CudaLaunchTest.cpp - Tests of the CUDA launch helpers --------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// Where cuda.h was found: the CUDA launch helpers that need no GPU,
// CudaDevice::open, which must fail cleanly on a machine without a CUDA
// driver or device, and, on a machine with a GPU, a version 2 kernel whose
// prologue kernel writes a workspace that the main kernel reads, and a
// version 5 one whose epilogue kernel reads what the main kernel wrote.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/Manifest.h"

#ifdef ATTN_HAS_CUDA_DRIVER
#include "attn/Runtime/CudaDriver.h"
#include "attn/Runtime/CudaLaunch.h"
#include "attn/Runtime/Explain.h"
#include "attn/Runtime/RunReport.h"
#endif

#include "ManifestTestHelpers.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

using namespace attn::runtime;
using namespace attn::runtime::unittest;

namespace {

#ifdef ATTN_HAS_CUDA_DRIVER

//===----------------------------------------------------------------------===//
// CUDA launch helpers (no GPU needed)
//===----------------------------------------------------------------------===//

TEST(CudaLaunchTest, PrepareLaunch) {
  Manifest manifest = makeExampleManifest();
  ProblemSizes sizes = makeSizes(2, 32, 8, 1000, 300, 128, 128);
  std::map<std::string, TensorArg> operands = {
      {"query", makeContiguousTensorArg(0x1000, {2, 32, 1000, 128})},
      {"key", makeContiguousTensorArg(0x2000, {2, 8, 300, 128})},
      {"value", makeContiguousTensorArg(0x3000, {2, 8, 300, 128})},
      {"output", makeContiguousTensorArg(0x4000, {2, 32, 1000, 128})}};
  LaunchConfig config;
  std::string error;
  ASSERT_TRUE(prepareLaunch(manifest, operands, sizes, config, error)) << error;
  EXPECT_EQ(config.grid[0], 8u);
  EXPECT_EQ(config.grid[1], 64u);
  EXPECT_EQ(config.grid[2], 1u);
  EXPECT_EQ(config.block[0], 128u);
  EXPECT_EQ(config.block[1], 1u);
  EXPECT_EQ(config.sharedMemoryBytes, 49152u);
  EXPECT_EQ(config.params.size(), 45u);
}

TEST(CudaLaunchTest, PrepareLaunchWithPrologue) {
  Manifest manifest = makeExampleV2Manifest();
  ProblemSizes sizes = makeSizes(2, 32, 8, 1000, 300, 128, 128);
  std::map<std::string, TensorArg> operands = {
      {"query", makeContiguousTensorArg(0x1000, {2, 32, 1000, 128})},
      {"key", makeContiguousTensorArg(0x2000, {2, 8, 300, 128})},
      {"value", makeContiguousTensorArg(0x3000, {2, 8, 300, 128})},
      {"mask", makeContiguousTensorArg(0x4000, {1, 1, 1000, 300})},
      {"output", makeContiguousTensorArg(0x5000, {2, 32, 1000, 128})}};
  LaunchConfig config;
  std::string error;
  EXPECT_FALSE(prepareLaunch(manifest, operands, sizes, config, error));
  EXPECT_EQ(error, "missing workspace 'mask_block_map'");
  operands["mask_block_map"].devicePtr = 0x6000;
  ASSERT_TRUE(prepareLaunch(manifest, operands, sizes, config, error)) << error;
  EXPECT_EQ(config.grid[0], 8u);
  EXPECT_EQ(config.params.size(), 67u);
  ASSERT_EQ(config.prologue.size(), 1u);
  const LaunchConfig &prologue = config.prologue[0];
  EXPECT_EQ(prologue.grid[0], 5u); // ceil(300 / 64)
  EXPECT_EQ(prologue.grid[1], 8u); // ceil(1000 / 128)
  EXPECT_EQ(prologue.grid[2], 1u);
  EXPECT_EQ(prologue.block[0], 128u);
  EXPECT_EQ(prologue.sharedMemoryBytes, 0u);
  ASSERT_EQ(prologue.params.size(), 24u);
  EXPECT_EQ(prologue.params.getName(11), "mask_block_map.allocated");
  EXPECT_EQ(prologue.params.getValue(11), 0x6000u);

  // A version 1 manifest has no prologue launches.
  operands.erase("mask");
  operands.erase("mask_block_map");
  ASSERT_TRUE(
      prepareLaunch(makeExampleManifest(), operands, sizes, config, error))
      << error;
  EXPECT_TRUE(config.prologue.empty());
}

TEST(CudaLaunchTest, PrepareLaunchWithEpilogue) {
  // The split decode kernel, then its combine kernel (version 5).
  Manifest manifest = makeExampleV5Manifest();
  ProblemSizes sizes = makeSizes(2, 8, 2, 3, 1000, 64, 64);
  std::map<std::string, TensorArg> operands = {
      {"query", makeContiguousTensorArg(0x10000, {2, 8, 3, 64})},
      {"key", makeContiguousTensorArg(0x20000, {2, 2, 1000, 64})},
      {"value", makeContiguousTensorArg(0x30000, {2, 2, 1000, 64})},
      {"output", makeContiguousTensorArg(0x40000, {2, 8, 3, 64})},
      {"lse", makeContiguousTensorArg(0x50000, {2, 8, 3})},
      {"kv_lengths", makeContiguousTensorArg(0x60000, {2})},
      {"split_output", makeContiguousTensorArg(0x70000, {})}};
  LaunchConfig config;
  std::string error;
  EXPECT_FALSE(prepareLaunch(manifest, operands, sizes, config, error));
  EXPECT_EQ(error, "missing workspace 'split_lse'");
  operands["split_lse"].devicePtr = 0x80000;
  ASSERT_TRUE(prepareLaunch(manifest, operands, sizes, config, error)) << error;
  // S = min(ceil(1000 / 256), ceil(264 / 16)) = 4 programs per (b, h).
  EXPECT_EQ(config.grid[0], 4u);
  EXPECT_EQ(config.grid[1], 8u);
  EXPECT_EQ(config.grid[2], 2u);
  EXPECT_TRUE(config.prologue.empty());
  ASSERT_EQ(config.epilogue.size(), 1u);
  const LaunchConfig &combine = config.epilogue[0];
  EXPECT_EQ(combine.grid[0], 3u);
  EXPECT_EQ(combine.grid[1], 8u);
  EXPECT_EQ(combine.grid[2], 2u);
  EXPECT_EQ(combine.block[0], 128u);
  EXPECT_EQ(combine.params.size(), manifest.epilogue[0].getNumParamSlots());
  EXPECT_EQ(combine.params.getName(31), "output.allocated");
  // getLaunch finds each step's launch.
  std::vector<LaunchStep> steps = manifest.getLaunchOrder();
  EXPECT_EQ(config.getLaunch(steps[0]), &config);
  EXPECT_EQ(config.getLaunch(steps[1]), &config.epilogue[0]);

  // An epilogue kernel's errors name it.
  manifest.epilogue[0].grid[1] = GridExpr::constant(70000);
  EXPECT_FALSE(prepareLaunch(manifest, operands, sizes, config, error));
  EXPECT_EQ(error, "epilogue kernel 'decode_combine': grid.y = 70000 = 70000 "
                   "is out of range (1 .. 65535) for B=2 Hq=8 Hkv=2 Tq=3 "
                   "Tk=1000 D=64 Dv=64");
}

const char *const kPtx = R"(//
// Generated by LLVM NVPTX Back-End
//
.version 8.7
.target sm_90a
.address_size 64

	// .globl	attn_fwd_f // -- .entry fake(
.extern .shared .align 16 .b8 __dynamic_shmem__0[];

.visible .entry other_kernel()
{
	ret;
}

.visible .entry attn_fwd_f(
	.param .u64 .ptr .global .align 16 attn_fwd_f_param_0,
	.param .u64 attn_fwd_f_param_1, /* a comment, with a comma */
	.param .s64 attn_fwd_f_param_2,
	.param .align 8 .b8 attn_fwd_f_param_3[16],
	.param .u32 attn_fwd_f_param_4
)
.maxntid 128, 1, 1
{
	ret;
}
)";

TEST(CudaLaunchTest, PtxEntryParams) {
  std::vector<unsigned> bytes;
  std::string error;
  ASSERT_TRUE(getPtxEntryParamBytes(kPtx, "attn_fwd_f", bytes, error)) << error;
  EXPECT_EQ(bytes, (std::vector<unsigned>{8, 8, 8, 16, 4}));
  ASSERT_TRUE(getPtxEntryParamBytes(kPtx, "other_kernel", bytes, error))
      << error;
  EXPECT_TRUE(bytes.empty());
  EXPECT_FALSE(getPtxEntryParamBytes(kPtx, "fake", bytes, error));
  EXPECT_EQ(error,
            "the PTX has no entry 'fake' (entries: other_kernel, attn_fwd_f)");
  EXPECT_FALSE(getPtxEntryParamBytes("", "k", bytes, error));
  EXPECT_EQ(error, "the PTX has no entry 'k' (it has no .entry at all)");
}

TEST(CudaLaunchTest, Chips) {
  int major, minor;
  char suffix;
  ASSERT_TRUE(parseChipName("sm_90a", major, minor, suffix));
  EXPECT_EQ(major, 9);
  EXPECT_EQ(minor, 0);
  EXPECT_EQ(suffix, 'a');
  ASSERT_TRUE(parseChipName("sm_100f", major, minor, suffix));
  EXPECT_EQ(major, 10);
  EXPECT_EQ(suffix, 'f');
  ASSERT_TRUE(parseChipName("sm_86", major, minor, suffix));
  EXPECT_EQ(major, 8);
  EXPECT_EQ(minor, 6);
  EXPECT_EQ(suffix, '\0');
  EXPECT_FALSE(parseChipName("sm_9", major, minor, suffix));
  EXPECT_FALSE(parseChipName("compute_90", major, minor, suffix));
  EXPECT_FALSE(parseChipName("sm_90ab", major, minor, suffix));

  EXPECT_TRUE(isChipCompatible("sm_90a", 9, 0));
  EXPECT_FALSE(isChipCompatible("sm_90a", 10, 0));
  EXPECT_TRUE(isChipCompatible("sm_80", 9, 0));
  EXPECT_FALSE(isChipCompatible("sm_90", 8, 6));
  EXPECT_TRUE(isChipCompatible("sm_100f", 10, 3));
  EXPECT_FALSE(isChipCompatible("sm_100f", 12, 0));
  EXPECT_TRUE(isChipCompatible("gfx942", 9, 0)); // Unknown: the driver decides.
}

TEST(CudaLaunchTest, InputCopies) {
  const uint64_t l2 = 60ull << 20, lots = 100ull << 30;
  // A set larger than twice the L2: no copies.
  EXPECT_EQ(chooseNumInputCopies(200ull << 20, l2, lots, 64), 1u);
  EXPECT_EQ(chooseNumInputCopies(120ull << 20, l2, lots, 64), 1u);
  // 16 MiB sets: 8 of them cover 2 * 60 MiB.
  EXPECT_EQ(chooseNumInputCopies(16ull << 20, l2, lots, 64), 8u);
  // Capped by memory (2 extra copies fit) and by maxCopies.
  EXPECT_EQ(chooseNumInputCopies(16ull << 20, l2, 40ull << 20, 64), 3u);
  EXPECT_EQ(chooseNumInputCopies(1024, l2, lots, 64), 64u);
  EXPECT_EQ(chooseNumInputCopies(0, l2, lots, 64), 1u);
  EXPECT_EQ(chooseNumInputCopies(1024, l2, 0, 64), 1u);

  int64_t first, end;
  getTensorByteSpan(makeContiguousTensorArg(0x1000, {2, 3, 4}), 2, first, end);
  EXPECT_EQ(first, 0);
  EXPECT_EQ(end, 48);
  TensorArg view;
  view.sizes = {2, 3};
  view.strides = {-10, 0};
  view.offset = 10;
  getTensorByteSpan(view, 4, first, end);
  EXPECT_EQ(first, 0);
  EXPECT_EQ(end, 44);

  EXPECT_EQ(getMedian({3.0, 1.0, 2.0}), 2.0);
  EXPECT_EQ(getMedian({4.0, 1.0, 2.0, 3.0}), 2.5);
  EXPECT_EQ(getMedian({}), 0.0);
}

TEST(CudaLaunchTest, Roofline) {
  std::string note;
  EXPECT_DOUBLE_EQ(getPeakTflops("sm_90a", "NVIDIA H200", ElementType::BF16,
                                 PrecisionMode::Default, note),
                   989.4);
  EXPECT_EQ(note, "H100/H200 SXM dense f16/bf16 tensor cores: 989.4 TFLOP/s");
  EXPECT_DOUBLE_EQ(getPeakTflops("sm_90", "NVIDIA H100 80GB HBM3",
                                 ElementType::F32, PrecisionMode::Default,
                                 note),
                   494.7);
  EXPECT_DOUBLE_EQ(
      getPeakTflops("sm_90", "", ElementType::F32, PrecisionMode::IEEE, note),
      66.9);
  EXPECT_DOUBLE_EQ(getPeakTflops("sm_90", "NVIDIA H100 PCIe", ElementType::F16,
                                 PrecisionMode::Default, note),
                   756.5);
  EXPECT_DOUBLE_EQ(getPeakTflops("sm_80", "NVIDIA A100-SXM4-80GB",
                                 ElementType::F32, PrecisionMode::TF32, note),
                   156.0);
  EXPECT_DOUBLE_EQ(
      getPeakTflops("sm_80", "", ElementType::F32, PrecisionMode::IEEE, note),
      19.5);
  EXPECT_EQ(getPeakTflops("sm_86", "NVIDIA RTX A6000", ElementType::BF16,
                          PrecisionMode::Default, note),
            0.0);
  EXPECT_EQ(note, "no peak FLOP/s known for sm_86 (NVIDIA RTX A6000); the "
                  "floor counts bytes only");

  // The seed workload of DESIGN.md: fp32, B32 H96 T512 D128.
  ProblemSizes sizes = makeSizes(32, 96, 96, 512, 512, 128, 128);
  EXPECT_DOUBLE_EQ(getAttentionFlops(sizes, CausalMode::None),
                   4.0 * 32 * 96 * 512 * 512 * 128);
  EXPECT_DOUBLE_EQ(getAttentionFlops(sizes, CausalMode::TopLeft),
                   2.0 * 32 * 96 * 512 * 512 * 128);
  ProblemSizes uneven = sizes;
  uneven.Tk = 1024;
  EXPECT_DOUBLE_EQ(getAttentionFlops(uneven, CausalMode::BottomRight),
                   4.0 * 32 * 96 * 512 * 1024 * 128);
  double bytes = getAttentionBytes(sizes, ElementType::F32);
  EXPECT_DOUBLE_EQ(bytes, 4.0 * 32 * 96 * 512 * 128 * 4);
  EXPECT_DOUBLE_EQ(
      getAttentionBytes(sizes, ElementType::F32, 512 * 512, ElementType::I1),
      bytes + 512 * 512);
  // Causal: the HBM floor at 4.2 TB/s, about 0.77 ms, is above the tf32
  // floor, about 0.42 ms.
  double floorMs = rooflineFloorMs(
      getAttentionFlops(sizes, CausalMode::TopLeft), bytes, 494.7, 4.2e12);
  EXPECT_NEAR(floorMs, bytes / 4.2e12 * 1e3, 1e-12);
  EXPECT_NEAR(floorMs, 0.767, 0.001);
  EXPECT_DOUBLE_EQ(rooflineFloorMs(1e12, 0, 1.0, 0), 1000.0);
  EXPECT_DOUBLE_EQ(rooflineFloorMs(1e12, 1e9, 0, 1e12), 1.0);
  EXPECT_EQ(rooflineFloorMs(1e12, 1e9, 0, 0), 0.0);
}

//===----------------------------------------------------------------------===//
// CudaDevice::open: clean errors without a driver or device
//===----------------------------------------------------------------------===//

TEST(CudaDeviceTest, OpenFailsCleanlyOrDescribesTheDevice) {
  CudaDevice device;
  std::string error;
  if (!CudaDevice::open(0, device, error)) {
    // A machine without a GPU: one of the documented messages, and the same
    // one again on a second attempt.
    EXPECT_FALSE(device.isOpen());
    EXPECT_TRUE(error == "no CUDA driver found (libcuda.so.1 could not be "
                         "loaded)" ||
                error == "no CUDA driver found (libcuda.so.1 is the CUDA "
                         "toolkit's stub library)" ||
                error == "no CUDA device present")
        << error;
    std::string again;
    EXPECT_FALSE(CudaDevice::open(0, device, again));
    EXPECT_EQ(again, error);
    std::string loadError;
    EXPECT_EQ(loadCudaDriver(loadError), nullptr);
    EXPECT_EQ(loadError, error);
    return;
  }
  // A machine with a GPU.
  EXPECT_TRUE(device.isOpen());
  EXPECT_FALSE(device.getName().empty());
  EXPECT_GE(device.getComputeCapabilityMajor(), 3);
  EXPECT_GT(device.getMultiprocessorCount(), 0);
  EXPECT_GT(device.getL2CacheBytes(), 0);
  EXPECT_GT(device.getMemoryBandwidthBytesPerSecond(), 1e10);
  EXPECT_GT(device.getTotalMemoryBytes(), 0u);
  CudaDevice missing;
  EXPECT_FALSE(CudaDevice::open(1 << 20, missing, error));
  EXPECT_EQ(error.substr(0, 28), "CUDA device 1048576 not pres");
}

//===----------------------------------------------------------------------===//
// A version 2 kernel on a GPU (skipped without one)
//===----------------------------------------------------------------------===//

/// `.param .u64 NAME_param_I` for I in [0, count).
std::string getPtxParams(const std::string &name, unsigned count) {
  std::string text;
  for (unsigned i = 0; i < count; ++i)
    text += std::string(i ? ",\n" : "") + "  .param .u64 " + name + "_param_" +
            std::to_string(i);
  return text;
}

/// fill_map (the prologue) writes byte i + 1 to element i of its rank-2
/// workspace; read_map (the main kernel) writes element i of the workspace
/// to output element i as f32, then the workspace's sizes, strides and
/// offset. Its params: query, key, value, output (11 each), the workspace.
std::string getWorkspacePtx() {
  return R"(.version 7.0
.target sm_80
.address_size 64

.visible .entry fill_map(
)" + getPtxParams("fill_map", 8) +
         R"(
)
{
  .reg .pred %p<2>;
  .reg .b16 %rs<2>;
  .reg .b32 %r<3>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [fill_map_param_1];
  ld.param.u64 %rd2, [fill_map_param_3];
  ld.param.u64 %rd3, [fill_map_param_4];
  mul.lo.s64 %rd4, %rd2, %rd3;
  mov.u32 %r1, %tid.x;
  cvt.u64.u32 %rd5, %r1;
  setp.ge.s64 %p1, %rd5, %rd4;
  @%p1 bra DONE;
  cvta.to.global.u64 %rd6, %rd1;
  add.s64 %rd7, %rd6, %rd5;
  add.u32 %r2, %r1, 1;
  cvt.u16.u32 %rs1, %r2;
  st.global.u8 [%rd7], %rs1;
DONE:
  ret;
}

.visible .entry read_map(
)" + getPtxParams("read_map", 51) +
         R"(
)
{
  .reg .pred %p<3>;
  .reg .b16 %rs<2>;
  .reg .b32 %r<2>;
  .reg .f32 %f<2>;
  .reg .b64 %rd<16>;
  ld.param.u64 %rd1, [read_map_param_34];
  ld.param.u64 %rd2, [read_map_param_45];
  ld.param.u64 %rd3, [read_map_param_47];
  ld.param.u64 %rd4, [read_map_param_48];
  cvta.to.global.u64 %rd5, %rd1;
  cvta.to.global.u64 %rd6, %rd2;
  mul.lo.s64 %rd7, %rd3, %rd4;
  mov.u32 %r1, %tid.x;
  cvt.u64.u32 %rd8, %r1;
  setp.ge.s64 %p1, %rd8, %rd7;
  @%p1 bra META;
  add.s64 %rd9, %rd6, %rd8;
  ld.global.u8 %rs1, [%rd9];
  cvt.rn.f32.u16 %f1, %rs1;
  shl.b64 %rd10, %rd8, 2;
  add.s64 %rd11, %rd5, %rd10;
  st.global.f32 [%rd11], %f1;
META:
  setp.ne.u32 %p2, %r1, 0;
  @%p2 bra DONE;
  shl.b64 %rd10, %rd7, 2;
  add.s64 %rd11, %rd5, %rd10;
  cvt.rn.f32.s64 %f1, %rd3;
  st.global.f32 [%rd11], %f1;
  cvt.rn.f32.s64 %f1, %rd4;
  st.global.f32 [%rd11+4], %f1;
  ld.param.u64 %rd12, [read_map_param_49];
  cvt.rn.f32.s64 %f1, %rd12;
  st.global.f32 [%rd11+8], %f1;
  ld.param.u64 %rd13, [read_map_param_50];
  cvt.rn.f32.s64 %f1, %rd13;
  st.global.f32 [%rd11+12], %f1;
  ld.param.u64 %rd14, [read_map_param_46];
  cvt.rn.f32.s64 %f1, %rd14;
  st.global.f32 [%rd11+16], %f1;
DONE:
  ret;
}
)";
}

/// The manifest of getWorkspacePtx: f32 operands 1x1xTqx16 (Tk = 8), a map
/// of ceil(Tq / 4) x ceil(Tk / 2) bytes.
Manifest makeWorkspaceManifest() {
  Manifest manifest;
  manifest.kernel = "read_map";
  manifest.ptx = "map.ptx";
  manifest.chip = "sm_80";
  manifest.elementType = ElementType::F32;
  manifest.query.shape = manifest.output.shape = {1, 1, -1, 16};
  manifest.key.shape = manifest.value.shape = {1, 1, 8, 16};
  manifest.block[0] = 32;
  for (const char *operand : {"query", "key", "value", "output"})
    manifest.params.push_back(KernelParam::memref(operand, 4));
  manifest.params.push_back(KernelParam::workspace("map", 2));
  WorkspaceSpec map;
  map.name = "map";
  map.shape = {GridExpr::ceilDiv(GridExpr::size("Tq"), GridExpr::constant(4)),
               GridExpr::ceilDiv(GridExpr::size("Tk"), GridExpr::constant(2))};
  manifest.workspaces.push_back(map);
  PrologueKernel fill;
  fill.kernel = "fill_map";
  fill.block[0] = 32;
  fill.params = {KernelParam::workspace("map", 2), KernelParam::size("Tq")};
  manifest.prologue.push_back(fill);
  return manifest;
}

TEST(CudaWorkspaceTest, PrologueWritesWhatTheMainKernelReads) {
  CudaDevice device;
  std::string error;
  if (!CudaDevice::open(0, device, error))
    GTEST_SKIP() << error;
  Manifest manifest = makeWorkspaceManifest();
  ASSERT_TRUE(verifyManifest(manifest, error)) << error;
  ManifestKernel kernel;
  ASSERT_TRUE(
      ManifestKernel::load(device, manifest, getWorkspacePtx(), kernel, error))
      << error;
  ASSERT_EQ(kernel.getKernels().size(), 2u);
  EXPECT_EQ(kernel.getKernels()[1].getName(), "fill_map");
  EXPECT_EQ(kernel.getWorkspaceCapacity("map"), 0u);

  DeviceBuffer inputs, output;
  ASSERT_TRUE(device.allocate(16 * 16 * 4, inputs, error)) << error;
  ASSERT_TRUE(device.allocate(16 * 16 * 4, output, error)) << error;
  for (int64_t tq : {8, 16, 4}) {
    std::map<std::string, TensorArg> operands = {
        {"query", makeContiguousTensorArg(inputs.get(), {1, 1, tq, 16})},
        {"key", makeContiguousTensorArg(inputs.get(), {1, 1, 8, 16})},
        {"value", makeContiguousTensorArg(inputs.get(), {1, 1, 8, 16})},
        {"output", makeContiguousTensorArg(output.get(), {1, 1, tq, 16})}};
    ProblemSizes sizes = makeSizes(1, 1, 1, tq, 8, 16, 16);
    ASSERT_TRUE(output.fill(0, error)) << error;
    ASSERT_TRUE(kernel.launch(operands, sizes, nullptr, error)) << error;
    ASSERT_TRUE(device.synchronize(error)) << error;
    std::vector<float> values(16 * 16);
    ASSERT_TRUE(output.copyToHost(values.data(), values.size() * 4, error));
    int64_t rows = (tq + 3) / 4, count = rows * 4;
    for (int64_t i = 0; i < count; ++i)
      EXPECT_EQ(values[i], float(i + 1)) << "Tq=" << tq << " element " << i;
    // sizes, strides, offset.
    EXPECT_EQ(values[count], float(rows));
    EXPECT_EQ(values[count + 1], 4.0f);
    EXPECT_EQ(values[count + 2], 4.0f);
    EXPECT_EQ(values[count + 3], 1.0f);
    EXPECT_EQ(values[count + 4], 0.0f);
  }
  // 8, then 16 bytes; 4 fit in the 16.
  EXPECT_EQ(kernel.getWorkspaceCapacity("map"), 16u);

  // benchmark() launches the prologue too.
  std::map<std::string, TensorArg> operands = {
      {"query", makeContiguousTensorArg(inputs.get(), {1, 1, 16, 16})},
      {"key", makeContiguousTensorArg(inputs.get(), {1, 1, 8, 16})},
      {"value", makeContiguousTensorArg(inputs.get(), {1, 1, 8, 16})},
      {"output", makeContiguousTensorArg(output.get(), {1, 1, 16, 16})}};
  ProblemSizes sizes = makeSizes(1, 1, 1, 16, 8, 16, 16);
  BenchmarkOptions options;
  options.warmupIterations = 1;
  options.iterations = 3;
  std::vector<double> timesMs;
  ASSERT_TRUE(benchmark(kernel, operands, sizes, options, timesMs, error))
      << error;
  EXPECT_EQ(timesMs.size(), 3u);

  // A workspace the caller passes is used instead of the kernel's.
  DeviceBuffer own;
  ASSERT_TRUE(device.allocate(16, own, error)) << error;
  ASSERT_TRUE(own.fill(0, error)) << error;
  operands["map"].devicePtr = own.get();
  ASSERT_TRUE(kernel.launch(operands, sizes, nullptr, error)) << error;
  ASSERT_TRUE(device.synchronize(error)) << error;
  unsigned char bytes[16];
  ASSERT_TRUE(own.copyToHost(bytes, 16, error)) << error;
  for (int i = 0; i < 16; ++i)
    EXPECT_EQ(bytes[i], i + 1);

  // A prologue entry whose parameters disagree with the PTX.
  manifest.prologue[0].params.pop_back();
  ManifestKernel bad;
  EXPECT_FALSE(
      ManifestKernel::load(device, manifest, getWorkspacePtx(), bad, error));
  EXPECT_EQ(error, "the PTX entry 'fill_map' takes 8 parameters but the "
                   "manifest's prologue[0].params expand to 7");
}

TEST(CudaWorkspaceTest, EpilogueReadsWhatTheMainKernelWrote) {
  CudaDevice device;
  std::string error;
  if (!CudaDevice::open(0, device, error))
    GTEST_SKIP() << error;
  // fill_map as the main kernel, read_map after it as an epilogue kernel
  // (version 5), which alone passes the operands.
  Manifest manifest = makeWorkspaceManifest();
  EpilogueKernel read = manifest;
  read.kernel = "read_map";
  manifest.epilogue.push_back(read);
  static_cast<KernelLaunch &>(manifest) = manifest.prologue[0];
  manifest.prologue.clear();
  ASSERT_TRUE(verifyManifest(manifest, error)) << error;
  EXPECT_EQ(manifest.getVersion(), 5);
  ManifestKernel kernel;
  ASSERT_TRUE(
      ManifestKernel::load(device, manifest, getWorkspacePtx(), kernel, error))
      << error;
  ASSERT_EQ(kernel.getKernels().size(), 2u);
  EXPECT_EQ(kernel.getKernel().getName(), "fill_map");
  EXPECT_EQ(kernel.getKernels()[1].getName(), "read_map");

  DeviceBuffer inputs, output, map;
  ASSERT_TRUE(device.allocate(16 * 16 * 4, inputs, error)) << error;
  ASSERT_TRUE(device.allocate(16 * 16 * 4, output, error)) << error;
  ASSERT_TRUE(device.allocate(16, map, error)) << error;
  std::map<std::string, TensorArg> operands = {
      {"query", makeContiguousTensorArg(inputs.get(), {1, 1, 16, 16})},
      {"key", makeContiguousTensorArg(inputs.get(), {1, 1, 8, 16})},
      {"value", makeContiguousTensorArg(inputs.get(), {1, 1, 8, 16})},
      {"output", makeContiguousTensorArg(output.get(), {1, 1, 16, 16})}};
  operands["map"].devicePtr = map.get();
  ProblemSizes sizes = makeSizes(1, 1, 1, 16, 8, 16, 16);
  // A zero map and output: an epilogue run before the main kernel would
  // leave zeros.
  ASSERT_TRUE(map.fill(0, error)) << error;
  ASSERT_TRUE(output.fill(0, error)) << error;
  ASSERT_TRUE(kernel.launch(operands, sizes, nullptr, error)) << error;
  ASSERT_TRUE(device.synchronize(error)) << error;
  std::vector<float> values(16 * 16);
  ASSERT_TRUE(output.copyToHost(values.data(), values.size() * 4, error));
  for (int64_t i = 0; i < 16; ++i)
    EXPECT_EQ(values[i], float(i + 1)) << "element " << i;

  // benchmark() launches the epilogue too.
  BenchmarkOptions options;
  options.warmupIterations = 1;
  options.iterations = 3;
  std::vector<double> timesMs;
  ASSERT_TRUE(benchmark(kernel, operands, sizes, options, timesMs, error))
      << error;
  EXPECT_EQ(timesMs.size(), 3u);

  // An epilogue entry whose parameters disagree with the PTX.
  manifest.epilogue[0].params.pop_back();
  ManifestKernel bad;
  EXPECT_FALSE(
      ManifestKernel::load(device, manifest, getWorkspacePtx(), bad, error));
  EXPECT_EQ(error, "the PTX entry 'read_map' takes 51 parameters but the "
                   "manifest's epilogue[0].params expand to 44");
}

#endif // ATTN_HAS_CUDA_DRIVER

} // namespace
