//===- Explain.h - Why a kernel runs at the speed it does -------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// The explain report of `attn-run --bench --explain` (docs/Explain.md): for
// one timed kernel on one device, the FLOPs and bytes of the problem, the
// FLOP and HBM floors, the measured median and the fraction of the floor it
// reaches, the kernel's registers, shared memory, local memory (spills) and
// occupancy, the kernel config, and which known causes of slowness apply:
//
//   spills           local memory per thread > 0 (spilled registers or a
//                    stack frame: every access goes through L1/L2/HBM)
//   low_occupancy    fewer than kLowOccupancyBlocks blocks or fewer than
//                    kLowOccupancyWarps warps resident per SM
//   uncoalesced      an operand whose innermost stride is not 1, whose row
//                    pitch (stride of dim -2, in bytes) is not a multiple of
//                    kCoalescedAlignmentBytes, or whose base address is not
//                    aligned to it: 16-byte vector loads are impossible
//   no_tensor_cores  f16/bf16, or f32 with tf32, but no HMMA/HGMMA in the
//                    SASS (cuobjdump), or, without cuobjdump, no
//                    mma.sync/wgmma in the PTX
//   shared_memory_reads
//                    a model of one program and key block: the shared
//                    memory the MMAs' K and V operands take (every warp
//                    reads all of them with mma.sync, every warpgroup with
//                    wgmma, plus the copy that writes them) at
//                    kSharedBytesPerCycle per SM takes longer than the
//                    block's FLOPs at the tensor-core peak
//   short_programs   a program visits fewer than kShortProgramKeys keys on
//                    average (its live key blocks x block_n, by the causal
//                    bounds or the mask block map): its own cost (its first
//                    loads landing, the epilogue, the next launch), about
//                    kProgramCostKeys keys' worth, is a large share
//
// The arithmetic here takes plain facts (ExplainFacts) and needs no CUDA:
// the CUDA runner (CudaRunner.h, gatherExplainFacts) fills them from the
// driver (cuDeviceGetAttribute, cuFuncGetAttribute,
// cuOccupancyMaxActiveBlocksPerMultiprocessor) and the launch. The Python
// package (python/attn_mlir/explain.py) implements the same formulas and
// thresholds; the two must agree (both are unit-tested on the same cases).
// Standard C++17 only.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_EXPLAIN_H
#define ATTN_RUNTIME_EXPLAIN_H

#include "attn/Runtime/Json.h"
#include "attn/Runtime/Roofline.h"

#include <cstdint>
#include <string>
#include <vector>

namespace attn {
namespace runtime {

/// Fewer resident blocks per SM than this is low occupancy: one block per SM
/// cannot overlap its barriers, prologue and epilogue with another block.
constexpr int kLowOccupancyBlocks = 2;
/// Fewer resident warps per SM than this is low occupancy: under two warps
/// per scheduler (an SM has four) leave memory and MMA latency exposed.
constexpr int kLowOccupancyWarps = 8;
/// Rows (and base addresses) must be aligned to this many bytes for 16-byte
/// vector loads.
constexpr int64_t kCoalescedAlignmentBytes = 16;
/// Shared-memory bandwidth of an SM, bytes per cycle (sm_80 and sm_90).
constexpr double kSharedBytesPerCycle = 128.0;
/// Fewer keys per program on average than this is short programs: their
/// own cost is then over 30% of the time (kProgramCostKeys).
constexpr int64_t kShortProgramKeys = 256;
/// What a program costs besides its key blocks, in keys' worth of them: the
/// H200 fit of the seed's `causal` kernel (64x32 programs, tf32, head dim
/// 128; docs/GPU.md, "Where the seed kernel's time goes") puts it at 3.5
/// key blocks of 32.
constexpr double kProgramCostKeys = 112.0;

/// The device, as the driver reports it.
struct ExplainDevice {
  /// E.g. "NVIDIA H200" and "sm_90".
  std::string name;
  std::string arch;
  int multiprocessors = 0;
  int clockKHz = 0;
  /// Peak DRAM bandwidth, bytes/s (CudaDevice's estimate).
  double bandwidthBytesPerSecond = 0.0;
  /// Dense peak of the kernel's dtype and precision (getPeakTflops), and the
  /// table entry it came from.
  double peakTflops = 0.0;
  std::string peakNote;
  /// Per-SM limits (CU_DEVICE_ATTRIBUTE_MAX_*_PER_MULTIPROCESSOR).
  int maxThreadsPerSM = 0;
  int maxBlocksPerSM = 0;
  int registersPerSM = 0;
  int sharedBytesPerSM = 0;
};

/// Where the tensor-core evidence comes from.
enum class TensorCoreSource { None, Sass, Ptx };

/// Whether the kernel's code uses tensor cores.
struct TensorCoreEvidence {
  TensorCoreSource source = TensorCoreSource::None;
  /// Instructions found: HMMA/HGMMA in SASS, mma.sync/wgmma in PTX.
  int count = 0;
  /// How the evidence was gathered, e.g. "cuobjdump -sass" or "ptx
  /// (cuobjdump not found)".
  std::string detail;
  /// Of `count`, warpgroup MMAs (HGMMA, wgmma.mma_async).
  int warpgroupCount = 0;
};

/// The compiled kernel and its launch.
struct ExplainKernel {
  std::string name;
  int threadsPerBlock = 0;
  int64_t gridBlocks = 0;
  /// cuFuncGetAttribute: NUM_REGS, LOCAL_SIZE_BYTES, SHARED_SIZE_BYTES,
  /// MAX_THREADS_PER_BLOCK; dynamic shared memory from the manifest.
  int registers = 0;
  int localBytes = 0;
  int staticSharedBytes = 0;
  int dynamicSharedBytes = 0;
  int maxThreadsPerBlock = 0;
  /// cuOccupancyMaxActiveBlocksPerMultiprocessor; -1 when unknown (the
  /// report then estimates it, estimateBlocksPerSM).
  int activeBlocksPerSM = -1;
  /// The manifest's config.
  int64_t blockM = 0, blockN = 0, numWarps = 0, numStages = 0;
  TensorCoreEvidence tensorCores;
};

/// One operand as launched: sizes and strides in elements.
struct ExplainOperand {
  std::string name;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  int64_t elementBytes = 0;
  uint64_t address = 0;
};

/// Everything the report is computed from.
struct ExplainFacts {
  ProblemSizes sizes;
  ElementType type = ElementType::F32;
  /// f32 inputs: tf32 tensor cores (true) or IEEE FMA (false).
  bool tf32 = false;
  CausalMode causal = CausalMode::None;
  /// Elements of the mask tensor as given (broadcast dims count once); 0 for
  /// none.
  int64_t maskElements = 0;
  ElementType maskType = ElementType::F32;
  /// With a mask block map (`--attn-mask-block-map`), how many of its
  /// blocks the last launch classified as each class, indexed by the class
  /// byte (removed, zero terms, mixed, triangular); empty without a map.
  std::vector<int64_t> maskBlocks;
  /// For kernels whose programs run a causal program's loops on a map row
  /// with a triangular mask's classes (f32 inputs, two or more stages): how
  /// many of the map's rows have them, and how many rows it has
  /// (countCausalRows); empty otherwise.
  std::vector<int64_t> causalRows;
  double medianMs = 0.0;
  ExplainDevice device;
  ExplainKernel kernel;
  std::vector<ExplainOperand> operands;
};

/// One cause that applies, with the numbers behind it.
struct ExplainCause {
  /// "spills", "low_occupancy", "uncoalesced", "no_tensor_cores",
  /// "shared_memory_reads", "short_programs".
  std::string name;
  std::string detail;
};

/// The report.
struct ExplainReport {
  double flops = 0.0;
  double bytes = 0.0;
  double flopFloorMs = 0.0;
  double memoryFloorMs = 0.0;
  double floorMs = 0.0;
  double medianMs = 0.0;
  /// floorMs / medianMs: 1 is the roofline.
  double fractionOfFloor = 0.0;
  double tflops = 0.0;
  /// bytes / median, bytes/s.
  double bytesPerSecond = 0.0;
  /// "compute" or "memory": the larger floor.
  std::string bound;
  int blocksPerSM = 0;
  /// "driver" or "estimate".
  std::string occupancySource;
  int warpsPerSM = 0;
  int maxWarpsPerSM = 0;
  /// warpsPerSM / maxWarpsPerSM.
  double occupancy = 0.0;
  /// gridBlocks / (multiprocessors * blocksPerSM).
  double waves = 0.0;
  std::vector<ExplainCause> causes;
};

/// Resident blocks per SM from the limits: threads, blocks, registers
/// (allocated per warp in units of 256) and shared memory (1 KiB reserved
/// per block). 0 when the kernel does not fit.
int estimateBlocksPerSM(const ExplainDevice &device,
                        const ExplainKernel &kernel);

/// Counts tensor-core instructions: HMMA and HGMMA opcodes in `cuobjdump
/// -sass` text (sass), mma.sync and wgmma.mma_async in PTX (!sass).
int countTensorCoreInstructions(const std::string &text, bool sass);

/// `tool` on PATH, else in $CUDA_HOME/bin or /usr/local/cuda/bin; empty
/// when none is executable.
std::string findCudaTool(const std::string &tool);

/// Whether `ptx` uses tensor cores: with ptxas and cuobjdump (findCudaTool),
/// from the SASS of `ptxas -arch=<chip>` (`cuobjdump -sass`); otherwise, or
/// when they fail, from the PTX, with `detail` saying why.
TensorCoreEvidence findTensorCores(const std::string &ptx,
                                   const std::string &chip);

/// The operands that cannot be read with 16-byte vector loads, each as
/// "q (row pitch 200 bytes)".
std::vector<std::string>
findUncoalesced(const std::vector<ExplainOperand> &ops);

/// The class counts of a block map's bytes (ExplainFacts::maskBlocks):
/// classes 0-3; a byte outside them is counted as mixed.
std::vector<int64_t> countMaskBlocks(const uint8_t *map, size_t bytes);

/// Of a block map's rows (`bytes` in rows of ceil(tk / blockN) classes,
/// one per query block of each mask slice): how many have exactly the
/// classes of a triangular mask, key j seen from row i when j <= i +
/// offset (the causal offset with `causal`, else 0), by the test the
/// programs make (`--attn-online-softmax`, buildCausalRowCheck, over the
/// row's first causal-visible blocks): {those rows, all rows}.
std::vector<int64_t> countCausalRows(const uint8_t *map, size_t bytes,
                                     int64_t tq, int64_t tk, int64_t blockM,
                                     int64_t blockN, bool causal,
                                     int64_t offset);

/// Computes the report.
ExplainReport computeExplain(const ExplainFacts &facts);

/// The report as lines "explain: key=value", each ending in '\n'; the last
/// is "explain: causes=a,b" or "explain: causes=none".
std::string formatExplainLines(const ExplainFacts &facts,
                               const ExplainReport &report);

/// The report as a JSON object (the "explain" member of attn-run --json).
JsonValue explainToJson(const ExplainFacts &facts, const ExplainReport &report);

} // namespace runtime
} // namespace attn

#endif // ATTN_RUNTIME_EXPLAIN_H
