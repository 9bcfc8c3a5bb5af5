//===- ExplainTest.cpp - The explain report's arithmetic ------------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// The arithmetic of Explain.h; SharedCasesTest.cpp checks that the C++ and
// the Python reports agree line for line.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/Explain.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace attn::runtime;

namespace {

/// An H200-like device (the numbers the driver reports for one).
ExplainDevice makeDevice() {
  ExplainDevice device;
  device.name = "Fake H200";
  device.arch = "sm_90";
  device.multiprocessors = 132;
  device.clockKHz = 1980000;
  device.bandwidthBytesPerSecond = 4.8e12;
  device.peakTflops = 494.7; // tf32
  device.peakNote = "H100/H200 SXM dense tf32 tensor cores: 494.7 TFLOP/s";
  device.maxThreadsPerSM = 2048;
  device.maxBlocksPerSM = 32;
  device.registersPerSM = 65536;
  device.sharedBytesPerSM = 233472;
  return device;
}

/// The seed workload: f32 (tf32), B=32, H=96, T=512, D=128, the additive
/// (1, 1, T, T) f32 mask, timed at 5.28 ms.
ExplainFacts makeSeedFacts() {
  ExplainFacts facts;
  facts.sizes.B = 32;
  facts.sizes.Hq = facts.sizes.Hkv = 96;
  facts.sizes.Tq = facts.sizes.Tk = 512;
  facts.sizes.D = facts.sizes.Dv = 128;
  facts.type = ElementType::F32;
  facts.tf32 = true;
  facts.maskElements = 512 * 512;
  facts.maskType = ElementType::F32;
  facts.medianMs = 5.28;
  facts.device = makeDevice();
  ExplainKernel &kernel = facts.kernel;
  kernel.name = "seed_mask_kernel";
  kernel.threadsPerBlock = 128;
  kernel.gridBlocks = 8 * 32 * 96;
  kernel.registers = 168;
  kernel.staticSharedBytes = 0;
  kernel.dynamicSharedBytes = 65536;
  kernel.activeBlocksPerSM = 3;
  kernel.blockM = 64;
  kernel.blockN = 64;
  kernel.numWarps = 4;
  kernel.numStages = 2;
  kernel.tensorCores = {TensorCoreSource::Sass, 512, "cuobjdump -sass"};
  for (const char *name : {"q", "k", "v", "o"})
    facts.operands.push_back({name,
                              {32, 96, 512, 128},
                              {96 * 512 * 128, 512 * 128, 128, 1},
                              4,
                              0x7f0000000000});
  facts.operands.push_back(
      {"mask", {1, 1, 512, 512}, {0, 0, 512, 1}, 4, 0x7f1000000000});
  return facts;
}

/// The seed facts' shared_memory_reads (test_explain.py's SEED_SHARED): 4
/// warps x 64 keys x (128 + 128) x 4 bytes read, 64 KiB written; 2 * 64 * 64
/// * 256 FLOPs at 494.7 TFLOP/s over 132 SMs at 1.98 GHz.
constexpr const char *kSeedShared =
    "each warp reads all of K and V from shared memory: 256.0 KiB read and "
    "64.0 KiB written per program and key block, 2560 cycles at 128 B per "
    "cycle and SM against 1108 cycles of its FLOPs at the peak";

std::vector<std::string> causeNames(const ExplainReport &report) {
  std::vector<std::string> names;
  for (const ExplainCause &cause : report.causes)
    names.push_back(cause.name);
  return names;
}

using Names = std::vector<std::string>;

TEST(ExplainTest, SeedWorkloadArithmetic) {
  ExplainFacts facts = makeSeedFacts();
  ExplainReport report = computeExplain(facts);
  double flops = 4.0 * 32 * 96 * 512 * 512 * 128;
  double bytes = 4.0 * 32 * 96 * 512 * 128 * 4 + 512.0 * 512 * 4;
  EXPECT_DOUBLE_EQ(report.flops, flops);
  EXPECT_DOUBLE_EQ(report.bytes, bytes);
  EXPECT_DOUBLE_EQ(report.flopFloorMs, flops / 494.7e12 * 1e3);
  EXPECT_DOUBLE_EQ(report.memoryFloorMs, bytes / 4.8e12 * 1e3);
  EXPECT_DOUBLE_EQ(report.floorMs, report.flopFloorMs);
  EXPECT_EQ(report.bound, "compute");
  EXPECT_DOUBLE_EQ(report.fractionOfFloor, report.floorMs / 5.28);
  EXPECT_NEAR(report.fractionOfFloor, 0.15785, 1e-5);
  EXPECT_NEAR(report.tflops, 78.09, 0.01);
  EXPECT_EQ(report.blocksPerSM, 3);
  EXPECT_EQ(report.occupancySource, "driver");
  EXPECT_EQ(report.warpsPerSM, 12);
  EXPECT_EQ(report.maxWarpsPerSM, 64);
  EXPECT_DOUBLE_EQ(report.occupancy, 12.0 / 64);
  EXPECT_DOUBLE_EQ(report.waves, 24576.0 / (132 * 3));
  ASSERT_EQ(report.causes.size(), 1u);
  EXPECT_EQ(report.causes[0].name, "shared_memory_reads");
  EXPECT_EQ(report.causes[0].detail, kSeedShared);
}

TEST(ExplainTest, CausalHalvesFlopsOnlyWhenSquare) {
  ExplainFacts facts = makeSeedFacts();
  facts.causal = CausalMode::TopLeft;
  facts.maskElements = 0;
  EXPECT_DOUBLE_EQ(computeExplain(facts).flops,
                   2.0 * 32 * 96 * 512 * 512 * 128);
  facts.sizes.Tk = 1024;
  EXPECT_DOUBLE_EQ(computeExplain(facts).flops,
                   4.0 * 32 * 96 * 512 * 1024 * 128);
}

TEST(ExplainTest, EstimatedOccupancy) {
  ExplainDevice device = makeDevice();
  ExplainKernel kernel;
  kernel.threadsPerBlock = 128;
  // 168 registers: 168 * 32 = 5376 per warp, 12 warps fit, 3 blocks of 4.
  kernel.registers = 168;
  EXPECT_EQ(estimateBlocksPerSM(device, kernel), 3);
  // Shared memory: 100 KiB + 1 KiB reserved per block: 2 blocks.
  kernel.dynamicSharedBytes = 102400;
  EXPECT_EQ(estimateBlocksPerSM(device, kernel), 2);
  // Few registers: the 32-blocks and 2048-threads limits (16 blocks).
  kernel.registers = 32;
  kernel.dynamicSharedBytes = 0;
  EXPECT_EQ(estimateBlocksPerSM(device, kernel), 16);
  // 255 registers at 256 threads: 8192 per warp, 8 warps, 1 block.
  kernel.threadsPerBlock = 256;
  kernel.registers = 255;
  kernel.dynamicSharedBytes = 0;
  EXPECT_EQ(estimateBlocksPerSM(device, kernel), 1);
  // Threads: 1024-thread blocks with few registers: 2 blocks.
  kernel.threadsPerBlock = 1024;
  kernel.registers = 32;
  EXPECT_EQ(estimateBlocksPerSM(device, kernel), 2);

  ExplainFacts facts = makeSeedFacts();
  facts.kernel.activeBlocksPerSM = -1;
  ExplainReport report = computeExplain(facts);
  EXPECT_EQ(report.occupancySource, "estimate");
  EXPECT_EQ(report.blocksPerSM, 3);
}

TEST(ExplainTest, LowOccupancyThresholds) {
  ExplainFacts facts = makeSeedFacts();
  // 2 blocks x 4 warps = 8 warps: at both thresholds, not low.
  facts.kernel.activeBlocksPerSM = 2;
  EXPECT_EQ(causeNames(computeExplain(facts)), Names{"shared_memory_reads"});
  // 1 block of 8 warps: one block is low.
  facts.kernel.activeBlocksPerSM = 1;
  facts.kernel.threadsPerBlock = 256;
  ExplainReport report = computeExplain(facts);
  ASSERT_EQ(report.causes.size(), 2u);
  EXPECT_EQ(report.causes[1].name, "shared_memory_reads");
  EXPECT_EQ(report.causes[0].name, "low_occupancy");
  EXPECT_EQ(report.causes[0].detail,
            "1 blocks, 8 warps per SM (under 2 blocks or 8 warps)");
  // 3 blocks of 2 warps = 6 warps: too few warps.
  facts.kernel.activeBlocksPerSM = 3;
  facts.kernel.threadsPerBlock = 64;
  EXPECT_EQ(computeExplain(facts).causes.at(0).name, "low_occupancy");
}

TEST(ExplainTest, UncoalescedOperands) {
  std::vector<ExplainOperand> operands = {
      // (B, T, H, D) storage viewed as (B, H, T, D): row pitch H*D*2 bytes.
      {"q", {2, 8, 100, 64}, {100 * 8 * 64, 64, 8 * 64, 1}, 2, 0},
      {"k", {2, 8, 100, 64}, {8 * 100 * 64, 100 * 64, 1, 100}, 2, 0},
      {"v", {2, 8, 100, 36}, {8 * 100 * 36, 100 * 36, 36, 1}, 2, 0},
      {"o", {2, 8, 100, 64}, {8 * 100 * 64, 100 * 64, 64, 1}, 2, 8},
      {"mask", {1, 1, 100, 100}, {0, 0, 100, 1}, 1, 0},
      {"ok_mask", {100, 96}, {96, 1}, 1, 256}};
  std::vector<std::string> found = findUncoalesced(operands);
  ASSERT_EQ(found.size(), 4u);
  EXPECT_EQ(found[0], "k (innermost stride 100)");
  EXPECT_EQ(found[1], "v (row pitch 72 bytes)");
  EXPECT_EQ(found[2], "o (base address not 16-byte aligned)");
  EXPECT_EQ(found[3], "mask (row pitch 100 bytes)");

  ExplainFacts facts = makeSeedFacts();
  facts.operands[1].strides = {96 * 512 * 128, 128, 96 * 128, 1};
  // A strided view is fine.
  EXPECT_EQ(causeNames(computeExplain(facts)), Names{"shared_memory_reads"});
  facts.operands[1].strides = {96 * 512 * 130, 512 * 130, 130, 1};
  ExplainReport report = computeExplain(facts);
  ASSERT_EQ(report.causes.size(), 2u);
  EXPECT_EQ(report.causes[1].name, "shared_memory_reads");
  EXPECT_EQ(report.causes[0].name, "uncoalesced");
  EXPECT_EQ(report.causes[0].detail, "k (row pitch 520 bytes)");
}

TEST(ExplainTest, SpillsAndTensorCores) {
  ExplainFacts facts = makeSeedFacts();
  facts.kernel.localBytes = 48;
  facts.kernel.tensorCores = {TensorCoreSource::Ptx, 0, "cuobjdump not found"};
  ExplainReport report = computeExplain(facts);
  ASSERT_EQ(report.causes.size(), 2u);
  EXPECT_EQ(report.causes[0].name, "spills");
  EXPECT_EQ(report.causes[0].detail,
            "48 bytes of local memory per thread (168 registers)");
  EXPECT_EQ(report.causes[1].name, "no_tensor_cores");
  EXPECT_EQ(report.causes[1].detail,
            "no mma.sync/wgmma in the PTX (cuobjdump not found)");
  // IEEE f32 is not expected on tensor cores; no evidence is no cause.
  facts.tf32 = false;
  EXPECT_EQ(computeExplain(facts).causes.size(), 1u);
  facts.tf32 = true;
  facts.kernel.tensorCores = {};
  EXPECT_EQ(computeExplain(facts).causes.size(), 1u);
}

TEST(ExplainTest, SharedMemoryReadsModel) {
  // wgmma: one warpgroup reads K and V once, 64 + 64 KiB = 1024 cycles
  // against 1108: no cause.
  ExplainFacts facts = makeSeedFacts();
  facts.kernel.tensorCores = {TensorCoreSource::Sass, 512, "cuobjdump -sass",
                              512};
  EXPECT_TRUE(computeExplain(facts).causes.empty());
  // bf16, 128x32, 4 warps of mma.sync at the f16/bf16 peak: 64 KiB read, 16
  // written (640 cycles) against 2 * 128 * 32 * 256 FLOPs (554).
  facts = makeSeedFacts();
  facts.type = ElementType::BF16;
  facts.tf32 = false;
  facts.device.peakTflops = 989.4;
  facts.kernel.blockM = 128;
  facts.kernel.blockN = 32;
  ExplainReport report = computeExplain(facts);
  ASSERT_EQ(report.causes.size(), 1u);
  EXPECT_EQ(report.causes[0].name, "shared_memory_reads");
  EXPECT_EQ(report.causes[0].detail,
            "each warp reads all of K and V from shared memory: 64.0 KiB read "
            "and 16.0 KiB written per program and key block, 640 cycles at "
            "128 B per cycle and SM against 554 cycles of its FLOPs at the "
            "peak");
  // Without the config or the evidence, no model.
  facts.kernel.blockN = 0;
  EXPECT_TRUE(computeExplain(facts).causes.empty());
}

/// The seed's 64x32 programs at T=256 visit 2, 4, 6 and 8 key blocks of 32
/// (test_explain.py's SEED_SHORT).
constexpr const char *kSeedShort =
    "160 keys per program on average (5.0 key blocks of 32), under 256: what "
    "a program costs besides its key blocks (its first loads landing, the "
    "epilogue, the next launch; about 112 keys' worth on the H200) is about "
    "41% of the time";

TEST(ExplainTest, ShortPrograms) {
  ExplainFacts facts = makeSeedFacts();
  facts.causal = CausalMode::TopLeft;
  facts.maskElements = 0;
  facts.sizes.Tq = facts.sizes.Tk = 256;
  facts.kernel.blockN = 32;
  ExplainReport report = computeExplain(facts);
  EXPECT_EQ(causeNames(report),
            (Names{"shared_memory_reads", "short_programs"}));
  EXPECT_EQ(report.causes.back().detail, kSeedShort);
  // The seed's mask tensor through a block map: 12 of 32 blocks removed, the
  // same 5 key blocks per program.
  facts.causal = CausalMode::None;
  facts.maskBlocks = {12, 12, 0, 8};
  EXPECT_EQ(computeExplain(facts).causes.back().detail, kSeedShort);
  // T=512: 2, 4, ..., 16 blocks, 288 keys on average.
  facts.maskBlocks.clear();
  facts.causal = CausalMode::TopLeft;
  facts.sizes.Tq = facts.sizes.Tk = 512;
  EXPECT_EQ(causeNames(computeExplain(facts)), (Names{"shared_memory_reads"}));
  // Bottom-right with Tq = 1024 > Tk = 64: only the last query block sees
  // keys (2 blocks), the others none.
  facts.causal = CausalMode::BottomRight;
  facts.sizes.Tq = 1024;
  facts.sizes.Tk = 64;
  EXPECT_EQ(computeExplain(facts).causes.back().detail,
            "4 keys per program on average (0.1 key blocks of 32), under 256: "
            "what a program costs besides its key blocks (its first loads "
            "landing, the epilogue, the next launch; about 112 keys' worth on "
            "the H200) is about 97% of the time");
  // Without the config, no model.
  facts.kernel.blockM = 0;
  EXPECT_EQ(causeNames(computeExplain(facts)), Names{});
}

TEST(ExplainTest, CountTensorCoreInstructions) {
  std::string sass = "        /*0310*/  HMMA.16816.F32.BF16 R8, R4, R12, R8 ;\n"
                     "        /*0320*/  HGMMA.64x64x16.F32 R24, gdesc[UR4] ;\n"
                     "        /*0330*/  FFMA R1, R2, R3, R4 ;  // XHMMA no\n";
  EXPECT_EQ(countTensorCoreInstructions(sass, /*sass=*/true), 2);
  std::string ptx = "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                    "{%f1}, {%r1}, {%r2}, {%f1};\n"
                    "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16\n"
                    "// ldmatrix, not an mma: xmma.sync\n";
  EXPECT_EQ(countTensorCoreInstructions(ptx, /*sass=*/false), 2);
  EXPECT_EQ(countTensorCoreInstructions("add.f32 %f1, %f2, %f3;", false), 0);
}

TEST(ExplainTest, LinesAndJson) {
  ExplainFacts facts = makeSeedFacts();
  facts.kernel.localBytes = 8;
  ExplainReport report = computeExplain(facts);
  std::string text = formatExplainLines(facts, report);
  EXPECT_NE(text.find("explain: flops=4.123e+11\n"), std::string::npos) << text;
  EXPECT_NE(text.find("explain: fraction_of_floor=0.158\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("explain: config=block_m=64 block_n=64 num_warps=4 "
                      "num_stages=2\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("explain: occupancy=3 blocks/SM, 12/64 warps/SM = "
                      "0.188 (driver)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("explain: tensor_cores=yes (512 HMMA/HGMMA in the "
                      "SASS; cuobjdump -sass)\n"),
            std::string::npos)
      << text;
  // The causes line is last.
  std::string last = "explain: causes=spills,shared_memory_reads\n";
  ASSERT_GE(text.size(), last.size());
  EXPECT_EQ(text.substr(text.size() - last.size()), last);

  std::string json = explainToJson(facts, report);
  EXPECT_NE(json.find("\"causes\":[\"spills\",\"shared_memory_reads\"]"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"occupancy_blocks_per_sm\":3"), std::string::npos);
  EXPECT_NE(json.find("\"registers\":168"), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(json)["flops"].get<double>(), report.flops);
}

/// The facts of a one-head f32 problem of T queries and keys under a
/// (T, T) mask, timed at 1 ms.
static ExplainFacts maskedFacts(int64_t t) {
  ExplainFacts facts;
  facts.sizes.B = facts.sizes.Hq = facts.sizes.Hkv = 1;
  facts.sizes.Tq = facts.sizes.Tk = t;
  facts.sizes.D = facts.sizes.Dv = 64;
  facts.maskElements = t * t;
  facts.medianMs = 1.0;
  facts.device = makeDevice();
  return facts;
}

/// The report's JSON object, parsed back.
static nlohmann::json parsedExplainJson(const ExplainFacts &facts,
                                        const ExplainReport &report) {
  return nlohmann::json::parse(explainToJson(facts, report));
}

/// The block map's classes as explain counts them, and the line and JSON
/// member they give.
TEST(ExplainTest, MaskBlocks) {
  const uint8_t map[] = {0, 0, 1, 3, 2, 1, 1, 3, 7};
  std::vector<int64_t> counts = countMaskBlocks(map, sizeof(map));
  // Classes 0-3; an unknown byte (7) counts as mixed.
  EXPECT_EQ(counts, (std::vector<int64_t>{2, 3, 2, 2}));
  EXPECT_EQ(countMaskBlocks(map, 0), (std::vector<int64_t>{0, 0, 0, 0}));

  ExplainFacts facts = maskedFacts(128);
  ExplainReport report = computeExplain(facts);
  // No map: no line, no member.
  EXPECT_EQ(formatExplainLines(facts, report).find("mask_blocks"),
            std::string::npos);
  EXPECT_EQ(explainToJson(facts, report).find("mask_blocks"),
            std::string::npos);
  facts.maskBlocks = counts;
  std::string text = formatExplainLines(facts, report);
  EXPECT_NE(text.find("\nexplain: mask_blocks=2 removed, 3 zero, 2 triangular, "
                      "2 mixed (of 9)\nexplain: flops="),
            std::string::npos)
      << text;
  EXPECT_EQ(
      parsedExplainJson(facts, report)["mask_blocks"],
      nlohmann::json(
          {{"removed", 2}, {"zero", 3}, {"mixed", 2}, {"triangular", 2}}));
}

/// The map of the seed's causal mask tensor (T=512, 64x32 blocks): row i has
/// zero-term blocks before 2i, triangular ones at 2i and 2i + 1, removed
/// ones after.
static std::vector<uint8_t> seedCausalMap() {
  std::vector<uint8_t> map(8 * 16, 0);
  for (int i = 0; i < 8; ++i)
    for (int kb = 0; kb < 16; ++kb)
      map[i * 16 + kb] = kb < 2 * i ? 1 : kb < 2 * i + 2 ? 3 : 0;
  return map;
}

/// The map rows with a triangular mask's classes, by the programs' test, and
/// the line and JSON member they give.
TEST(ExplainTest, CausalRows) {
  std::vector<uint8_t> map = seedCausalMap();
  auto count = [](const std::vector<uint8_t> &m, int64_t tq, int64_t tk,
                  bool causal, int64_t offset) {
    return countCausalRows(m.data(), m.size(), tq, tk, 64, 32, causal, offset);
  };
  EXPECT_EQ(count(map, 512, 512, false, 0), (std::vector<int64_t>{8, 8}));
  // With causal (top-left) the programs scan up to the diagonal only.
  EXPECT_EQ(count(map, 512, 512, true, 0), (std::vector<int64_t>{8, 8}));
  // A mixed block before the diagonal (row 3), a zero-term block after a
  // triangular one (row 0: the count of triangular blocks is short), a
  // removed first block (row 5) and a removed diagonal block (row 6): each
  // row runs the map's loops.
  map[3 * 16 + 1] = 2;
  map[0 * 16 + 1] = 1;
  map[5 * 16 + 0] = 0;
  map[6 * 16 + 13] = 0;
  EXPECT_EQ(count(map, 512, 512, false, 0), (std::vector<int64_t>{4, 8}));
  // Bottom-right causal, Tq = 64 < Tk = 128: the diagonal at offset 64 puts
  // blocks 2 and 3 across it.
  EXPECT_EQ(count({1, 1, 3, 3}, 64, 128, true, 64),
            (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(count({1, 3, 3, 3}, 64, 128, true, 64),
            (std::vector<int64_t>{0, 1}));
  // T = 100: the last query block (rows 64-99) ends in a key tail, a
  // triangular block (96-99).
  EXPECT_EQ(count({3, 3, 0, 0, 1, 1, 3, 3}, 100, 100, false, 0),
            (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(countCausalRows(map.data(), map.size(), 0, 512, 64, 32, false, 0),
            (std::vector<int64_t>{0, 0}));

  ExplainFacts facts = maskedFacts(512);
  facts.maskBlocks = countMaskBlocks(map.data(), map.size());
  ExplainReport report = computeExplain(facts);
  EXPECT_EQ(formatExplainLines(facts, report).find("causal_rows"),
            std::string::npos);
  facts.causalRows = count(map, 512, 512, false, 0);
  std::string text = formatExplainLines(facts, report);
  EXPECT_NE(text.find(" mixed (of 128)\nexplain: causal_rows=4 of 8 map rows "
                      "have a triangular mask's classes (their programs run as "
                      "causal ones)\nexplain: flops="),
            std::string::npos)
      << text;
  EXPECT_EQ(parsedExplainJson(facts, report)["causal_rows"],
            nlohmann::json({{"causal", 4}, {"rows", 8}}));
}

} // namespace
