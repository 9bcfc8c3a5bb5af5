//===- Explain.cpp - Why a kernel runs at the speed it does ---------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// python/attn_mlir/explain.py computes the same report from the same facts
// (Facts.h): python/tests/shared_cases.json holds cases both must report
// alike, line for line.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/Explain.h"

#include "attn/Runtime/Facts.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <regex>
#include <unistd.h>

using namespace attn::runtime;

//===----------------------------------------------------------------------===//
// The roofline
//===----------------------------------------------------------------------===//

bool attn::runtime::parseChipName(const std::string &chip, int &major,
                                  int &minor, char &suffix) {
  static const std::regex kPattern("sm_([0-9]{2,4})([af]?)");
  std::smatch match;
  if (!std::regex_match(chip, match, kPattern))
    return false;
  int number = std::stoi(match.str(1));
  major = number / 10;
  minor = number % 10;
  suffix = match.length(2) ? match.str(2)[0] : '\0';
  return true;
}

double attn::runtime::getPeakTflops(const std::string &chip,
                                    const std::string &deviceName,
                                    ElementType type, PrecisionMode precision,
                                    std::string &note) {
  int major = 0, minor = 0;
  char suffix;
  const PeakEntry *entry = nullptr;
  if (parseChipName(chip, major, minor, suffix))
    for (const PeakEntry &candidate : getFacts().peaks)
      if (!entry && candidate.major == major && candidate.minor == minor &&
          deviceName.find(candidate.deviceNameContains) != std::string::npos)
        entry = &candidate;
  if (!entry) {
    note = "no peak FLOP/s known for " + (chip.empty() ? "?" : chip) +
           (deviceName.empty() ? "" : " (" + deviceName + ")") +
           "; the floor counts bytes only";
    return 0.0;
  }
  if (!isFloatType(type)) {
    note = std::string("no peak FLOP/s for ") + getTypeName(type) + " inputs";
    return 0.0;
  }
  bool half = type != ElementType::F32, ieee = precision == PrecisionMode::IEEE;
  double tflops = half ? entry->f16 : ieee ? entry->f32 : entry->tf32;
  note = formatString("%s %s: %.1f TFLOP/s", entry->name.c_str(),
                      half   ? "dense f16/bf16 tensor cores"
                      : ieee ? "fp32 FMA"
                             : "dense tf32 tensor cores",
                      tflops);
  return tflops;
}

double attn::runtime::getAttentionFlops(const ProblemSizes &sizes,
                                        CausalMode causal) {
  double flops = 2.0 * double(sizes.B) * double(sizes.Hq) * double(sizes.Tq) *
                 double(sizes.Tk) * double(sizes.D + sizes.Dv);
  return causal != CausalMode::None && sizes.Tq == sizes.Tk ? flops / 2.0
                                                            : flops;
}

double attn::runtime::getAttentionBytes(const ProblemSizes &sizes,
                                        ElementType type, int64_t maskElements,
                                        ElementType maskType) {
  double q = double(sizes.B) * sizes.Hq * sizes.Tq * sizes.D;
  double k = double(sizes.B) * sizes.Hkv * sizes.Tk * sizes.D;
  double v = double(sizes.B) * sizes.Hkv * sizes.Tk * sizes.Dv;
  double o = double(sizes.B) * sizes.Hq * sizes.Tq * sizes.Dv;
  return (q + k + v + o) * double(getElementBytes(type)) +
         double(maskElements) * double(getElementBytes(maskType));
}

double attn::runtime::rooflineFloorMs(double flops, double bytes,
                                      double peakTflops,
                                      double bandwidthBytesPerSecond) {
  double seconds = 0.0;
  if (peakTflops > 0.0)
    seconds = flops / (peakTflops * 1e12);
  if (bandwidthBytesPerSecond > 0.0)
    seconds = std::max(seconds, bytes / bandwidthBytesPerSecond);
  return seconds * 1e3;
}

//===----------------------------------------------------------------------===//
// The explain report
//===----------------------------------------------------------------------===//

int attn::runtime::estimateBlocksPerSM(const ExplainDevice &device,
                                       const ExplainKernel &kernel) {
  if (kernel.threadsPerBlock <= 0)
    return 0;
  int warpsPerBlock = (kernel.threadsPerBlock + 31) / 32;
  int blocks = device.maxBlocksPerSM > 0 ? device.maxBlocksPerSM : 32;
  if (device.maxThreadsPerSM > 0)
    blocks = std::min(blocks, device.maxThreadsPerSM / (warpsPerBlock * 32));
  if (device.registersPerSM > 0 && kernel.registers > 0) {
    // Registers are allocated per warp, in units of 256.
    int perWarp = (kernel.registers * 32 + 255) / 256 * 256;
    blocks = std::min(blocks, device.registersPerSM / perWarp / warpsPerBlock);
  }
  if (device.sharedBytesPerSM > 0) {
    // The driver reserves 1 KiB of shared memory per block (sm_80 and newer).
    int perBlock = kernel.staticSharedBytes + kernel.dynamicSharedBytes + 1024;
    blocks = std::min(blocks, device.sharedBytesPerSM / perBlock);
  }
  return std::max(blocks, 0);
}

/// Counts the occurrences of `word` in `text` that start a token (the
/// character before is not a letter, digit, '_' or '.').
static int countWord(const std::string &text, const std::string &word) {
  int count = 0;
  for (size_t pos = text.find(word); pos != std::string::npos;
       pos = text.find(word, pos + word.size())) {
    char before = pos ? text[pos - 1] : ' ';
    bool boundary = !(std::isalnum(static_cast<unsigned char>(before)) ||
                      before == '_' || before == '.');
    count += boundary;
  }
  return count;
}

int attn::runtime::countTensorCoreInstructions(const std::string &text,
                                               bool sass) {
  if (sass)
    return countWord(text, "HMMA") + countWord(text, "HGMMA");
  return countWord(text, "mma.sync") + countWord(text, "wgmma.mma_async");
}

/// `tool` on PATH, in $CUDA_HOME/bin or /usr/local/cuda/bin ("": none).
static std::string findCudaTool(const std::string &tool) {
  const char *path = std::getenv("PATH"), *home = std::getenv("CUDA_HOME");
  std::string list = std::string(path ? path : "") + ":" +
                     (home ? std::string(home) + "/bin" : "") +
                     ":/usr/local/cuda/bin";
  for (size_t start = 0, end; start < list.size(); start = end + 1) {
    end = std::min(list.find(':', start), list.size());
    std::string candidate = list.substr(start, end - start) + "/" + tool;
    if (end > start && access(candidate.c_str(), X_OK) == 0)
      return candidate;
  }
  return "";
}

/// Runs `command` (stderr joined to stdout) and returns its output; false
/// when it cannot start or exits non-zero.
static bool runCommand(const std::string &command, std::string &output) {
  output.clear();
  FILE *pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe)
    return false;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0)
    output.append(buffer, n);
  return pclose(pipe) == 0;
}

/// The first line of `text`, for a one-line detail.
static std::string firstLine(const std::string &text) {
  std::string line = text.substr(0, text.find('\n'));
  return line.empty() ? "no output" : line;
}

TensorCoreEvidence attn::runtime::findTensorCores(const std::string &ptx,
                                                  const std::string &chip) {
  TensorCoreEvidence evidence;
  evidence.source = TensorCoreSource::Ptx;
  evidence.count = countTensorCoreInstructions(ptx, /*sass=*/false);
  evidence.warpgroupCount = countWord(ptx, "wgmma.mma_async");
  std::string ptxas = findCudaTool("ptxas");
  std::string cuobjdump = findCudaTool("cuobjdump");
  if (ptxas.empty() || cuobjdump.empty()) {
    evidence.detail =
        std::string(ptxas.empty() ? "ptxas" : "cuobjdump") + " not found";
    return evidence;
  }
  char directory[] = "/tmp/attn-explain-XXXXXX";
  if (!mkdtemp(directory)) {
    evidence.detail = "cannot create a temporary directory";
    return evidence;
  }
  std::string base = directory;
  std::string ptxPath = base + "/kernel.ptx",
              cubinPath = base + "/kernel.cubin";
  std::ofstream(ptxPath, std::ios::binary) << ptx;
  std::string output;
  if (!runCommand("'" + ptxas + "' -arch=" + chip + " -o '" + cubinPath +
                      "' '" + ptxPath + "'",
                  output)) {
    evidence.detail = "ptxas failed (" + firstLine(output) + ")";
  } else if (!runCommand("'" + cuobjdump + "' -sass '" + cubinPath + "'",
                         output)) {
    evidence.detail = "cuobjdump -sass failed (" + firstLine(output) + ")";
  } else {
    evidence.source = TensorCoreSource::Sass;
    evidence.count = countTensorCoreInstructions(output, /*sass=*/true);
    evidence.warpgroupCount = countWord(output, "HGMMA");
    evidence.detail = "cuobjdump -sass of ptxas -arch=" + chip;
  }
  std::remove(ptxPath.c_str());
  std::remove(cubinPath.c_str());
  rmdir(directory);
  return evidence;
}

std::vector<std::string>
attn::runtime::findUncoalesced(const std::vector<ExplainOperand> &operands) {
  std::vector<std::string> found;
  int64_t alignment = getFacts().coalescedAlignmentBytes;
  for (const ExplainOperand &op : operands) {
    size_t rank = op.sizes.size();
    if (rank == 0 || op.strides.size() != rank)
      continue;
    std::string why;
    if (op.strides[rank - 1] != 1 && op.sizes[rank - 1] > 1) {
      why = "innermost stride " + std::to_string(op.strides[rank - 1]);
    } else if (rank >= 2 && op.sizes[rank - 2] > 1 &&
               op.strides[rank - 2] != 0 &&
               op.strides[rank - 2] * op.elementBytes % alignment != 0) {
      why = "row pitch " +
            std::to_string(op.strides[rank - 2] * op.elementBytes) + " bytes";
    } else if (op.address % alignment != 0) {
      why = "base address not 16-byte aligned";
    }
    if (!why.empty())
      found.push_back(op.name + " (" + why + ")");
  }
  return found;
}

/// Whether the dtype and precision should run on tensor cores.
static bool expectsTensorCores(const ExplainFacts &facts) {
  return facts.type == ElementType::F16 || facts.type == ElementType::BF16 ||
         (facts.type == ElementType::F32 && facts.tf32);
}

/// The shared_memory_reads cause (Explain.h): per program and key block,
/// the bytes the MMAs read of K and V in shared memory (each of
/// `readers` reads all of both tiles) and the copy writes, at
/// the facts' shared bytes per cycle, against the block's FLOPs at the peak.
static std::optional<ExplainCause>
modelSharedMemoryReads(const ExplainFacts &facts) {
  const ExplainDevice &device = facts.device;
  const ExplainKernel &kernel = facts.kernel;
  const TensorCoreEvidence &tc = kernel.tensorCores;
  if (!expectsTensorCores(facts) || tc.count == 0 || kernel.blockM <= 0 ||
      kernel.blockN <= 0 || kernel.numWarps <= 0 ||
      device.multiprocessors <= 0 || device.clockKHz <= 0 ||
      device.peakTflops <= 0.0)
    return std::nullopt;
  bool warpgroups = tc.warpgroupCount > 0;
  int64_t readers =
      warpgroups ? std::max<int64_t>(1, kernel.numWarps / 4) : kernel.numWarps;
  double tile = double(kernel.blockN) * double(facts.sizes.D + facts.sizes.Dv) *
                double(getElementBytes(facts.type));
  double read = double(readers) * tile, written = tile;
  double bytesPerCycle = getFacts().sharedBytesPerCycle;
  double sharedCycles = (read + written) / bytesPerCycle;
  double flops = 2.0 * double(kernel.blockM) * double(kernel.blockN) *
                 double(facts.sizes.D + facts.sizes.Dv);
  double flopsPerCycle =
      device.peakTflops * 1e12 /
      (double(device.multiprocessors) * double(device.clockKHz) * 1e3);
  double tensorCycles = flops / flopsPerCycle;
  if (sharedCycles <= tensorCycles)
    return std::nullopt;
  return ExplainCause{
      "shared_memory_reads",
      formatString("%s reads all of K and V from shared memory: %.1f KiB read "
                   "and %.1f KiB written per program and key block, %" PRId64
                   " cycles at %g B per cycle and SM against %" PRId64
                   " cycles of its FLOPs at the peak",
                   warpgroups ? "each warpgroup" : "each warp", read / 1024,
                   written / 1024, int64_t(sharedCycles + 0.5), bytesPerCycle,
                   int64_t(tensorCycles + 0.5))};
}

/// The short_programs cause (Explain.h): the keys a program visits on
/// average (whole key blocks: all of them, those under the causal bound of
/// its last row, or those its mask block map row does not remove), against
/// the facts' short program keys, and the share a program's own cost takes.
static std::optional<ExplainCause>
modelShortPrograms(const ExplainFacts &facts) {
  const ProblemSizes &s = facts.sizes;
  int64_t blockM = facts.kernel.blockM, blockN = facts.kernel.blockN;
  if (blockM <= 0 || blockN <= 0 || s.Tq <= 0 || s.Tk <= 0)
    return std::nullopt;
  int64_t queryBlocks = (s.Tq + blockM - 1) / blockM;
  int64_t keyBlocks = (s.Tk + blockN - 1) / blockN;
  double blocks = double(keyBlocks);
  if (facts.maskBlocks.size() == 4) {
    int64_t total = 0;
    for (int64_t n : facts.maskBlocks)
      total += n;
    if (total <= 0)
      return std::nullopt;
    blocks =
        double(keyBlocks) * double(total - facts.maskBlocks[0]) / double(total);
  } else if (facts.causal != CausalMode::None) {
    int64_t offset = facts.causal == CausalMode::BottomRight ? s.Tk - s.Tq : 0;
    int64_t visited = 0;
    for (int64_t x = 0; x < queryBlocks; ++x) {
      int64_t lastRow = std::min((x + 1) * blockM, s.Tq) - 1;
      int64_t keys = std::clamp<int64_t>(lastRow + offset + 1, 0, s.Tk);
      visited += (keys + blockN - 1) / blockN;
    }
    blocks = double(visited) / double(queryBlocks);
  }
  double keys = blocks * double(blockN);
  int64_t shortKeys = getFacts().shortProgramKeys;
  double costKeys = getFacts().programCostKeys;
  if (keys >= double(shortKeys))
    return std::nullopt;
  double share = costKeys / (costKeys + keys);
  return ExplainCause{
      "short_programs",
      formatString("%" PRId64 " keys per program on average (%.1f key blocks "
                   "of %" PRId64 "), under %" PRId64 ": what a program costs "
                   "besides its key blocks (its first loads landing, the "
                   "epilogue, the next launch; about %" PRId64 " keys' worth "
                   "on the H200) is about %" PRId64 "%% of the time",
                   int64_t(keys + 0.5), blocks, blockN, shortKeys,
                   int64_t(costKeys), int64_t(share * 100 + 0.5))};
}

ExplainReport attn::runtime::computeExplain(const ExplainFacts &facts) {
  ExplainReport report;
  const ExplainDevice &device = facts.device;
  const ExplainKernel &kernel = facts.kernel;
  report.flops = getAttentionFlops(facts.sizes, facts.causal);
  report.bytes = getAttentionBytes(facts.sizes, facts.type, facts.maskElements,
                                   facts.maskType);
  report.flopFloorMs = rooflineFloorMs(report.flops, 0.0, device.peakTflops, 0);
  report.memoryFloorMs =
      rooflineFloorMs(0.0, report.bytes, 0.0, device.bandwidthBytesPerSecond);
  report.floorMs = std::max(report.flopFloorMs, report.memoryFloorMs);
  report.bound =
      report.flopFloorMs >= report.memoryFloorMs ? "compute" : "memory";
  report.medianMs = facts.medianMs;
  if (facts.medianMs > 0.0) {
    report.fractionOfFloor = report.floorMs / facts.medianMs;
    report.tflops = report.flops / (facts.medianMs * 1e-3) / 1e12;
    report.bytesPerSecond = report.bytes / (facts.medianMs * 1e-3);
  }

  // Occupancy.
  if (kernel.activeBlocksPerSM >= 0) {
    report.blocksPerSM = kernel.activeBlocksPerSM;
    report.occupancySource = "driver";
  } else {
    report.blocksPerSM = estimateBlocksPerSM(device, kernel);
    report.occupancySource = "estimate";
  }
  int warpsPerBlock = (kernel.threadsPerBlock + 31) / 32;
  report.warpsPerSM = report.blocksPerSM * warpsPerBlock;
  report.maxWarpsPerSM = device.maxThreadsPerSM / 32;
  if (report.maxWarpsPerSM > 0)
    report.occupancy = double(report.warpsPerSM) / report.maxWarpsPerSM;
  if (device.multiprocessors > 0 && report.blocksPerSM > 0)
    report.waves = double(kernel.gridBlocks) /
                   (double(device.multiprocessors) * report.blocksPerSM);

  // Causes.
  if (kernel.localBytes > 0)
    report.causes.push_back(
        {"spills", formatString("%d bytes of local memory per thread (%d "
                                "registers)",
                                kernel.localBytes, kernel.registers)});
  const Facts &limits = getFacts();
  if (report.blocksPerSM < limits.lowOccupancyBlocks ||
      report.warpsPerSM < limits.lowOccupancyWarps)
    report.causes.push_back(
        {"low_occupancy",
         formatString("%d blocks, %d warps per SM (under %" PRId64
                      " blocks or %" PRId64 " warps)",
                      report.blocksPerSM, report.warpsPerSM,
                      limits.lowOccupancyBlocks, limits.lowOccupancyWarps)});
  std::vector<std::string> uncoalesced = findUncoalesced(facts.operands);
  if (!uncoalesced.empty()) {
    std::string detail;
    for (const std::string &item : uncoalesced)
      detail += (detail.empty() ? "" : ", ") + item;
    report.causes.push_back({"uncoalesced", detail});
  }
  const TensorCoreEvidence &tc = kernel.tensorCores;
  if (expectsTensorCores(facts) && tc.source != TensorCoreSource::None &&
      tc.count == 0)
    report.causes.push_back(
        {"no_tensor_cores", std::string(tc.source == TensorCoreSource::Sass
                                            ? "no HMMA/HGMMA in the SASS"
                                            : "no mma.sync/wgmma in the PTX") +
                                " (" + tc.detail + ")"});
  if (std::optional<ExplainCause> cause = modelSharedMemoryReads(facts))
    report.causes.push_back(*cause);
  if (std::optional<ExplainCause> cause = modelShortPrograms(facts))
    report.causes.push_back(*cause);
  return report;
}

/// The key/value pairs of the report, in print order.
static std::vector<std::pair<std::string, std::string>>
getExplainPairs(const ExplainFacts &facts, const ExplainReport &report) {
  const ExplainDevice &device = facts.device;
  const ExplainKernel &kernel = facts.kernel;
  const TensorCoreEvidence &tc = kernel.tensorCores;
  const ProblemSizes &s = facts.sizes;
  const char *precision = facts.type != ElementType::F32 ? ""
                          : facts.tf32                   ? " tf32"
                                                         : " ieee";
  std::string mask =
      facts.maskElements
          ? formatString("%s[%" PRId64 "]", getTypeName(facts.maskType),
                         facts.maskElements)
          : "none";
  std::string causes;
  for (const ExplainCause &cause : report.causes)
    causes += (causes.empty() ? "" : ",") + cause.name;
  std::vector<std::pair<std::string, std::string>> pairs = {
      {"device", formatString("%s (%s, %d SMs, %d MHz, %.2f TB/s, %.1f "
                              "TFLOP/s peak: %s)",
                              device.name.c_str(), device.arch.c_str(),
                              device.multiprocessors, device.clockKHz / 1000,
                              device.bandwidthBytesPerSecond * 1e-12,
                              device.peakTflops, device.peakNote.c_str())},
      {"problem",
       s.toString() + " " + getTypeName(facts.type) + precision + " causal=" +
           (facts.causal == CausalMode::None ? "none"
                                             : getCausalName(facts.causal)) +
           " mask=" + mask},
      {"flops", formatString("%.4g", report.flops)},
      {"bytes", formatString("%.4g", report.bytes)},
      {"flop_floor_ms", formatString("%.4g", report.flopFloorMs)},
      {"hbm_floor_ms", formatString("%.4g", report.memoryFloorMs)},
      {"floor_ms",
       formatString("%.4g (%s bound)", report.floorMs, report.bound.c_str())},
      {"median_ms", formatString("%.4g", report.medianMs)},
      {"fraction_of_floor", formatString("%.3f", report.fractionOfFloor)},
      {"tflops", formatString("%.1f", report.tflops)},
      {"hbm_gbps", formatString("%.0f", report.bytesPerSecond * 1e-9)},
      {"config", formatString("block_m=%" PRId64 " block_n=%" PRId64
                              " num_warps=%" PRId64 " num_stages=%" PRId64,
                              kernel.blockM, kernel.blockN, kernel.numWarps,
                              kernel.numStages)},
      {"launch",
       formatString("grid=%" PRId64 " blocks x %d threads, "
                    "waves=%.2f",
                    kernel.gridBlocks, kernel.threadsPerBlock, report.waves)},
      {"registers", std::to_string(kernel.registers)},
      {"shared_bytes",
       formatString("%d static + %d dynamic", kernel.staticSharedBytes,
                    kernel.dynamicSharedBytes)},
      {"local_bytes", std::to_string(kernel.localBytes)},
      {"occupancy",
       formatString("%d blocks/SM, %d/%d warps/SM = %.3f (%s)",
                    report.blocksPerSM, report.warpsPerSM, report.maxWarpsPerSM,
                    report.occupancy, report.occupancySource.c_str())},
      {"tensor_cores",
       tc.source == TensorCoreSource::None
           ? "unknown"
           : formatString("%s (%d %s; %s)", tc.count ? "yes" : "no", tc.count,
                          tc.source == TensorCoreSource::Sass
                              ? "HMMA/HGMMA in the SASS"
                              : "mma.sync/wgmma in the PTX",
                          tc.detail.c_str())},
  };
  if (facts.maskBlocks.size() == 4) {
    // After "problem": how the block map sorted the mask's blocks.
    const std::vector<int64_t> &n = facts.maskBlocks;
    pairs.insert(
        pairs.begin() + 2,
        {"mask_blocks",
         formatString("%" PRId64 " removed, %" PRId64 " zero, %" PRId64
                      " triangular, %" PRId64 " mixed (of %" PRId64 ")",
                      n[0], n[1], n[3], n[2], n[0] + n[1] + n[2] + n[3])});
    if (facts.causalRows.size() == 2)
      pairs.insert(pairs.begin() + 3,
                   {"causal_rows",
                    formatString("%" PRId64 " of %" PRId64
                                 " map rows have a triangular mask's classes "
                                 "(their programs run as causal ones)",
                                 facts.causalRows[0], facts.causalRows[1])});
  }
  for (const ExplainCause &cause : report.causes)
    pairs.push_back({"cause." + cause.name, cause.detail});
  pairs.push_back({"causes", causes.empty() ? "none" : causes});
  return pairs;
}

std::vector<int64_t> attn::runtime::countMaskBlocks(const uint8_t *map,
                                                    size_t bytes) {
  std::vector<int64_t> counts(4, 0);
  for (size_t i = 0; i < bytes; ++i)
    ++counts[map[i] < 4 ? map[i] : 2];
  return counts;
}

/// floor(a / b) for b > 0.
static int64_t floorDiv(int64_t a, int64_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

std::vector<int64_t> attn::runtime::countCausalRows(const uint8_t *map,
                                                    size_t bytes, int64_t tq,
                                                    int64_t tk, int64_t blockM,
                                                    int64_t blockN, bool causal,
                                                    int64_t offset) {
  if (tq <= 0 || tk <= 0 || blockM <= 0 || blockN <= 0)
    return {0, 0};
  int64_t nj = (tk + blockN - 1) / blockN, ni = (tq + blockM - 1) / blockM;
  int64_t rows = static_cast<int64_t>(bytes) / nj, shaped = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t *row = map + r * nj;
    int64_t row0 = (r % ni) * blockM;
    int64_t lastRow = row0 + std::min(blockM, tq - row0) - 1;
    // The blocks the program visits: up to the diagonal with causal.
    int64_t visit =
        std::clamp<int64_t>(floorDiv(lastRow + offset, blockN) + 1, 0, nj);
    int64_t count = causal ? visit : nj;
    // The scan (buildLiveRange).
    int64_t first = count, last = 0, zeroEnd = count, triangular = 0;
    for (int64_t kb = 0; kb < count; ++kb) {
      uint8_t cls = row[kb];
      if (cls != 0) {
        first = std::min(first, kb);
        last = kb + 1;
      }
      if (first <= kb && zeroEnd == count && cls != 1)
        zeroEnd = kb;
      triangular += cls == 3;
    }
    // The triangular mask's classes (buildCausalRowCheck).
    int64_t below = std::max<int64_t>(floorDiv(row0 + offset + 1, blockN), 0);
    below = std::min({below, tk / blockN, visit});
    shaped += first == 0 && last == visit && zeroEnd == below &&
              triangular == last - zeroEnd && visit > 0;
  }
  return {shaped, rows};
}

std::string attn::runtime::formatExplainLines(const ExplainFacts &facts,
                                              const ExplainReport &report) {
  std::string text;
  for (const auto &[key, value] : getExplainPairs(facts, report))
    text += "explain: " + key + "=" + value + "\n";
  return text;
}

std::string attn::runtime::explainToJson(const ExplainFacts &facts,
                                         const ExplainReport &report) {
  const ExplainKernel &kernel = facts.kernel;
  const ExplainDevice &device = facts.device;
  // Integral numbers as integers, as JSON readers expect of counts.
  auto number = [](double value) {
    return value == std::trunc(value) && std::abs(value) < 0x1p53
               ? nlohmann::json(int64_t(value))
               : nlohmann::json(value);
  };
  // nlohmann::json keeps its keys sorted.
  nlohmann::json object = {
      {"bound", report.bound},
      {"bytes", number(report.bytes)},
      {"causes", nlohmann::json::array()},
      {"cause_details", nlohmann::json::object()},
      {"config",
       {{"block_m", kernel.blockM},
        {"block_n", kernel.blockN},
        {"num_stages", kernel.numStages},
        {"num_warps", kernel.numWarps}}},
      {"device",
       {{"arch", device.arch},
        {"bandwidth_bytes_per_s", number(device.bandwidthBytesPerSecond)},
        {"clock_khz", device.clockKHz},
        {"multiprocessors", device.multiprocessors},
        {"name", device.name},
        {"peak_note", device.peakNote},
        {"peak_tflops", number(device.peakTflops)}}},
      {"dynamic_shared_bytes", kernel.dynamicSharedBytes},
      {"flop_floor_ms", number(report.flopFloorMs)},
      {"floor_ms", number(report.floorMs)},
      {"flops", number(report.flops)},
      {"fraction_of_floor", number(report.fractionOfFloor)},
      {"grid_blocks", kernel.gridBlocks},
      {"hbm_floor_ms", number(report.memoryFloorMs)},
      {"local_bytes", kernel.localBytes},
      {"max_warps_per_sm", report.maxWarpsPerSM},
      {"median_ms", number(report.medianMs)},
      {"occupancy", number(report.occupancy)},
      {"occupancy_blocks_per_sm", report.blocksPerSM},
      {"occupancy_source", report.occupancySource},
      {"registers", kernel.registers},
      {"static_shared_bytes", kernel.staticSharedBytes},
      {"tensor_core_instructions", kernel.tensorCores.count},
      {"tensor_core_source",
       kernel.tensorCores.source == TensorCoreSource::Sass  ? "sass"
       : kernel.tensorCores.source == TensorCoreSource::Ptx ? "ptx"
                                                            : "none"},
      {"tensor_core_detail", kernel.tensorCores.detail},
      {"tflops", number(report.tflops)},
      {"threads_per_block", kernel.threadsPerBlock},
      {"warps_per_sm", report.warpsPerSM},
      {"waves", number(report.waves)},
  };
  for (const ExplainCause &cause : report.causes) {
    object["causes"].push_back(cause.name);
    object["cause_details"][cause.name] = cause.detail;
  }
  const std::vector<int64_t> &n = facts.maskBlocks;
  if (n.size() == 4)
    object["mask_blocks"] = {{"mixed", n[2]},
                             {"removed", n[0]},
                             {"triangular", n[3]},
                             {"zero", n[1]}};
  if (facts.causalRows.size() == 2)
    object["causal_rows"] = {{"causal", facts.causalRows[0]},
                             {"rows", facts.causalRows[1]}};
  return object.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}
