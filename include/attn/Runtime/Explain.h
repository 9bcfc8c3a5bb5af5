//===- Explain.h - Why a kernel runs at the speed it does -------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// The roofline of SPEC.md section 2 and the explain report of `attn-run
// --bench --explain` (docs/Explain.md): for one timed kernel, the floors and
// the fraction reached, registers, shared memory, spills, occupancy, and
// the known causes of slowness that apply. The arithmetic takes plain facts
// (CudaRunner.h gathers them from the driver); the peak table and the
// thresholds are facts.json's, which python/attn_mlir/explain.py reads too
// (python/tests/shared_cases.json: cases both must report alike).
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

/// "sm_90a" -> 9, 0, 'a'; "sm_80" -> 8, 0, '\0'; false for other forms.
bool parseChipName(const std::string &chip, int &major, int &minor,
                   char &suffix);

/// Dense peak TFLOP/s (FMA for f32 with IEEE precision) of the first facts
/// entry for the chip whose name part `deviceName` contains; 0 for unknown
/// chips. `note` names the entry, or says why there is none.
double getPeakTflops(const std::string &chip, const std::string &deviceName,
                     ElementType type, PrecisionMode precision,
                     std::string &note);

/// 2 * B * Hq * Tq * Tk * (D + Dv), halved for causal when Tq == Tk.
double getAttentionFlops(const ProblemSizes &sizes, CausalMode causal);

/// Q, K, V, O and the mask, each moved once.
double getAttentionBytes(const ProblemSizes &sizes, ElementType type,
                         int64_t maskElements = 0,
                         ElementType maskType = ElementType::F32);

/// max(flops / peak, bytes / bandwidth) in ms, without non-positive rates.
double rooflineFloorMs(double flops, double bytes, double peakTflops,
                       double bandwidthBytesPerSecond);

//===----------------------------------------------------------------------===//
// The explain report
//===----------------------------------------------------------------------===//

/// The device, as the driver reports it; the peak is getPeakTflops'.
struct ExplainDevice {
  std::string name, arch; // "NVIDIA H200", "sm_90"
  int multiprocessors = 0, clockKHz = 0;
  double bandwidthBytesPerSecond = 0.0, peakTflops = 0.0;
  std::string peakNote;
  int maxThreadsPerSM = 0, maxBlocksPerSM = 0, registersPerSM = 0,
      sharedBytesPerSM = 0;
};

/// Where the tensor-core evidence comes from.
enum class TensorCoreSource { None, Sass, Ptx };

/// Tensor-core instructions in the kernel: HMMA/HGMMA in SASS, mma.sync/
/// wgmma in PTX; of them, warpgroup ones; how they were found.
struct TensorCoreEvidence {
  TensorCoreSource source = TensorCoreSource::None;
  int count = 0;
  std::string detail;
  int warpgroupCount = 0;
};

/// The compiled kernel and its launch.
struct ExplainKernel {
  std::string name;
  int threadsPerBlock = 0;
  int64_t gridBlocks = 0;
  int registers = 0, localBytes = 0, staticSharedBytes = 0,
      dynamicSharedBytes = 0;
  /// The driver's occupancy; -1: estimateBlocksPerSM.
  int activeBlocksPerSM = -1;
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
  bool tf32 = false; // f32 inputs: tf32 tensor cores or IEEE FMA
  CausalMode causal = CausalMode::None;
  /// Elements of the mask as given (0: none).
  int64_t maskElements = 0;
  ElementType maskType = ElementType::F32;
  /// countMaskBlocks of the last launch's mask block map (empty: no map).
  std::vector<int64_t> maskBlocks;
  /// countCausalRows where programs run a causal program's loops on rows
  /// with a triangular mask's classes (f32, two or more stages).
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

/// The report (docs/Explain.md).
struct ExplainReport {
  double flops = 0.0, bytes = 0.0;
  double flopFloorMs = 0.0, memoryFloorMs = 0.0, floorMs = 0.0;
  double medianMs = 0.0, fractionOfFloor = 0.0, tflops = 0.0;
  double bytesPerSecond = 0.0;
  std::string bound;           // "compute" or "memory"
  std::string occupancySource; // "driver" or "estimate"
  int blocksPerSM = 0, warpsPerSM = 0, maxWarpsPerSM = 0;
  double occupancy = 0.0, waves = 0.0;
  std::vector<ExplainCause> causes;
};

/// Resident blocks per SM from the limits (0: the kernel does not fit).
int estimateBlocksPerSM(const ExplainDevice &device,
                        const ExplainKernel &kernel);

/// HMMA and HGMMA in SASS, mma.sync and wgmma.mma_async in PTX.
int countTensorCoreInstructions(const std::string &text, bool sass);

/// From the SASS of `ptxas -arch=<chip>` (`cuobjdump -sass`), else from the
/// PTX, with `detail` saying why.
TensorCoreEvidence findTensorCores(const std::string &ptx,
                                   const std::string &chip);

/// The operands 16-byte vector loads cannot read: "q (row pitch 200 bytes)".
std::vector<std::string>
findUncoalesced(const std::vector<ExplainOperand> &ops);

/// The class counts of a block map (0-3; other bytes count as mixed, 2).
std::vector<int64_t> countMaskBlocks(const uint8_t *map, size_t bytes);

/// {rows with exactly a triangular mask's classes (j <= i + offset) by the
/// programs' test (buildCausalRowCheck), all rows} of a block map, rows of
/// ceil(tk / blockN) classes.
std::vector<int64_t> countCausalRows(const uint8_t *map, size_t bytes,
                                     int64_t tq, int64_t tk, int64_t blockM,
                                     int64_t blockN, bool causal,
                                     int64_t offset);

/// Computes the report.
ExplainReport computeExplain(const ExplainFacts &facts);

/// "explain: key=value" lines; the last is "explain: causes=a,b" (or none).
std::string formatExplainLines(const ExplainFacts &facts,
                               const ExplainReport &report);

/// The "explain" member of attn-run --json (one line, keys sorted).
std::string explainToJson(const ExplainFacts &facts,
                          const ExplainReport &report);

} // namespace runtime
} // namespace attn

#endif // ATTN_RUNTIME_EXPLAIN_H
