//===- Explain.h - Why a kernel runs at the speed it does -------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// The roofline of SPEC.md section 2 (peak FLOP/s per chip and dtype, the
// FLOPs and bytes of one attention forward, the floor they give) and the
// explain report of `attn-run --bench --explain` (docs/Explain.md): for one
// timed kernel on one device, the floors, the fraction of the floor reached,
// registers, shared memory, spills, occupancy, the kernel config, and which
// known causes of slowness apply (spills, low_occupancy, uncoalesced,
// no_tensor_cores, shared_memory_reads, short_programs; docs/Explain.md
// defines each).
//
// The arithmetic takes plain facts (ExplainFacts) and needs no CUDA: the
// CUDA runner (CudaRunner.h) fills them from the driver. The peak table and
// the thresholds are facts.json's (Facts.h), which the Python package
// (python/attn_mlir/explain.py) reads too; python/tests/shared_cases.json
// holds the cases both must report alike.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_EXPLAIN_H
#define ATTN_RUNTIME_EXPLAIN_H

#include "attn/Runtime/Manifest.h"

#include <cstdint>
#include <string>
#include <vector>

namespace attn {
namespace runtime {

//===----------------------------------------------------------------------===//
// The roofline
//===----------------------------------------------------------------------===//

/// Splits "sm_90a" into 9, 0 and 'a' ("sm_100f" into 10, 0, 'f'; "sm_80"
/// into 8, 0, '\0'). Returns false if `chip` is not of that form.
bool parseChipName(const std::string &chip, int &major, int &minor,
                   char &suffix);

/// Dense peak TFLOP/s of the tensor cores (FMA units for f32 with
/// PrecisionMode::IEEE; Default means tf32) for `chip` and a device called
/// `deviceName`: the first entry of the facts' peak table for the chip's
/// compute capability whose name part `deviceName` contains. Unknown chips
/// give 0; `note` names the entry used, or says why there is none.
double getPeakTflops(const std::string &chip, const std::string &deviceName,
                     ElementType type, PrecisionMode precision,
                     std::string &note);

/// FLOPs of one forward as FlashAttention counts them: 2 * B * Hq * Tq * Tk
/// * (D + Dv), halved for causal when Tq == Tk.
double getAttentionFlops(const ProblemSizes &sizes, CausalMode causal);

/// Bytes one forward must move at least: Q, K, V and O once each, plus the
/// mask (maskElements elements of maskType).
double getAttentionBytes(const ProblemSizes &sizes, ElementType type,
                         int64_t maskElements = 0,
                         ElementType maskType = ElementType::F32);

/// The larger of flops / peak and bytes / bandwidth, in milliseconds; a
/// non-positive peak or bandwidth drops its term (0 if both are dropped).
double rooflineFloorMs(double flops, double bytes, double peakTflops,
                       double bandwidthBytesPerSecond);

//===----------------------------------------------------------------------===//
// The explain report
//===----------------------------------------------------------------------===//

/// The device, as the driver reports it.
struct ExplainDevice {
  /// E.g. "NVIDIA H200" and "sm_90".
  std::string name, arch;
  int multiprocessors = 0;
  int clockKHz = 0;
  /// Peak DRAM bandwidth, bytes/s (CudaDevice's estimate).
  double bandwidthBytesPerSecond = 0.0;
  /// Dense peak of the kernel's dtype and precision, and its note
  /// (getPeakTflops).
  double peakTflops = 0.0;
  std::string peakNote;
  /// Per-SM limits (CU_DEVICE_ATTRIBUTE_MAX_*_PER_MULTIPROCESSOR).
  int maxThreadsPerSM = 0, maxBlocksPerSM = 0, registersPerSM = 0,
      sharedBytesPerSM = 0;
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
  int registers = 0, localBytes = 0, staticSharedBytes = 0,
      dynamicSharedBytes = 0, maxThreadsPerBlock = 0;
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
  std::vector<int64_t> sizes, strides;
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
  /// With a mask block map, how many of its blocks the last launch put in
  /// each class, indexed by the class byte (removed, zero terms, mixed,
  /// triangular); empty without a map.
  std::vector<int64_t> maskBlocks;
  /// For kernels whose programs run a causal program's loops on a map row
  /// with a triangular mask's classes (f32 inputs, two or more stages):
  /// {those rows, all rows} (countCausalRows); empty otherwise.
  std::vector<int64_t> causalRows;
  double medianMs = 0.0;
  ExplainDevice device;
  ExplainKernel kernel;
  std::vector<ExplainOperand> operands;
};

/// One cause that applies, with the numbers behind it.
struct ExplainCause {
  std::string name, detail;
};

/// The report.
struct ExplainReport {
  double flops = 0.0, bytes = 0.0;
  double flopFloorMs = 0.0, memoryFloorMs = 0.0, floorMs = 0.0;
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
  int warpsPerSM = 0, maxWarpsPerSM = 0;
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

/// Whether `ptx` uses tensor cores: from the SASS of `ptxas -arch=<chip>`
/// (`cuobjdump -sass`) where both tools are found (findCudaTool); otherwise,
/// or when they fail, from the PTX, with `detail` saying why.
TensorCoreEvidence findTensorCores(const std::string &ptx,
                                   const std::string &chip);

/// The operands that cannot be read with 16-byte vector loads, each as
/// "q (row pitch 200 bytes)".
std::vector<std::string>
findUncoalesced(const std::vector<ExplainOperand> &ops);

/// The class counts of a block map's bytes (ExplainFacts::maskBlocks):
/// classes 0-3; a byte outside them counts as mixed.
std::vector<int64_t> countMaskBlocks(const uint8_t *map, size_t bytes);

/// Of a block map's rows (`bytes` in rows of ceil(tk / blockN) classes, one
/// per query block of each mask slice): how many have exactly the classes of
/// a triangular mask, key j seen from row i when j <= i + offset (the causal
/// offset with `causal`, else 0), by the test the programs make
/// (`--attn-online-softmax`, buildCausalRowCheck): {those rows, all rows}.
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

/// The report as one JSON object on one line, keys sorted (the "explain"
/// member of attn-run --json).
std::string explainToJson(const ExplainFacts &facts,
                          const ExplainReport &report);

} // namespace runtime
} // namespace attn

#endif // ATTN_RUNTIME_EXPLAIN_H
