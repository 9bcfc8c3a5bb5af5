//===- Roofline.cpp - Peak rates, FLOPs and bytes of attention ------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/Roofline.h"

#include <algorithm>
#include <cstdio>

using namespace attn::runtime;

bool attn::runtime::parseChipName(const std::string &chip, int &major,
                                  int &minor, char &suffix) {
  if (chip.compare(0, 3, "sm_") != 0)
    return false;
  size_t pos = 3;
  int number = 0;
  size_t digits = 0;
  while (pos < chip.size() && chip[pos] >= '0' && chip[pos] <= '9' &&
         digits < 4) {
    number = number * 10 + (chip[pos] - '0');
    ++pos;
    ++digits;
  }
  if (digits < 2)
    return false;
  suffix = '\0';
  if (pos < chip.size()) {
    if (pos + 1 != chip.size() || (chip[pos] != 'a' && chip[pos] != 'f'))
      return false;
    suffix = chip[pos];
  }
  major = number / 10;
  minor = number % 10;
  return true;
}

namespace {
/// Dense peak TFLOP/s of one chip.
struct PeakEntry {
  const char *description;
  double halfTflops; // f16 and bf16 tensor cores
  double tf32Tflops;
  double fp32Tflops; // FMA units
};
} // namespace

static const PeakEntry kH100Sxm = {"H100/H200 SXM", 989.4, 494.7, 66.9};
static const PeakEntry kH100Pcie = {"H100 PCIe", 756.5, 378.0, 51.2};
static const PeakEntry kH100Nvl = {"H100 NVL", 835.5, 417.5, 60.0};
static const PeakEntry kA100 = {"A100", 312.0, 156.0, 19.5};

double attn::runtime::getPeakTflops(const std::string &chip,
                                    const std::string &deviceName,
                                    ElementType type, PrecisionMode precision,
                                    std::string &note) {
  int major = 0, minor = 0;
  char suffix = '\0';
  const PeakEntry *entry = nullptr;
  if (parseChipName(chip, major, minor, suffix)) {
    if (major == 9 && minor == 0) {
      if (deviceName.find("PCIe") != std::string::npos)
        entry = &kH100Pcie;
      else if (deviceName.find("NVL") != std::string::npos)
        entry = &kH100Nvl;
      else
        entry = &kH100Sxm;
    } else if (major == 8 && minor == 0) {
      entry = &kA100;
    }
  }
  if (!entry) {
    note = "no peak FLOP/s known for " + (chip.empty() ? "?" : chip) +
           (deviceName.empty() ? "" : " (" + deviceName + ")") +
           "; the floor counts bytes only";
    return 0.0;
  }
  double tflops = 0.0;
  const char *what = "";
  switch (type) {
  case ElementType::F16:
  case ElementType::BF16:
    tflops = entry->halfTflops;
    what = "dense f16/bf16 tensor cores";
    break;
  case ElementType::F32:
    if (precision == PrecisionMode::IEEE) {
      tflops = entry->fp32Tflops;
      what = "fp32 FMA";
    } else {
      tflops = entry->tf32Tflops;
      what = "dense tf32 tensor cores";
    }
    break;
  case ElementType::I1:
  case ElementType::I32:
  case ElementType::I64:
    note = std::string("no peak FLOP/s for ") + getTypeName(type) + " inputs";
    return 0.0;
  }
  char buffer[160];
  std::snprintf(buffer, sizeof(buffer), "%s %s: %.1f TFLOP/s",
                entry->description, what, tflops);
  note = buffer;
  return tflops;
}

double attn::runtime::getAttentionFlops(const ProblemSizes &sizes,
                                        CausalMode causal) {
  double flops = 2.0 * double(sizes.B) * double(sizes.Hq) * double(sizes.Tq) *
                 double(sizes.Tk) * double(sizes.D + sizes.Dv);
  if (causal != CausalMode::None && sizes.Tq == sizes.Tk)
    flops /= 2.0;
  return flops;
}

double attn::runtime::getAttentionBytes(const ProblemSizes &sizes,
                                        ElementType type, int64_t maskElements,
                                        ElementType maskType) {
  double elementBytes = double(getElementBytes(type));
  double q = double(sizes.B) * sizes.Hq * sizes.Tq * sizes.D;
  double k = double(sizes.B) * sizes.Hkv * sizes.Tk * sizes.D;
  double v = double(sizes.B) * sizes.Hkv * sizes.Tk * sizes.Dv;
  double o = double(sizes.B) * sizes.Hq * sizes.Tq * sizes.Dv;
  return (q + k + v + o) * elementBytes +
         double(maskElements) * double(getElementBytes(maskType));
}

double attn::runtime::rooflineFloorMs(double flops, double bytes,
                                      double peakTflops,
                                      double bandwidthBytesPerSecond) {
  double floorSeconds = 0.0;
  if (peakTflops > 0.0)
    floorSeconds = std::max(floorSeconds, flops / (peakTflops * 1e12));
  if (bandwidthBytesPerSecond > 0.0)
    floorSeconds = std::max(floorSeconds, bytes / bandwidthBytesPerSecond);
  return floorSeconds * 1e3;
}
