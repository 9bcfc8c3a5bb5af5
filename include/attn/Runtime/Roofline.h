//===- Roofline.h - Peak rates, FLOPs and bytes of attention ----*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// The roofline of SPEC.md section 2, shared by `attn-run --bench`, the
// explain report (Explain.h) and, formula for formula, the Python package
// (python/attn_mlir/explain.py): peak dense tensor FLOP/s per chip and
// dtype, the FLOPs and the bytes one attention forward must move, and the
// floor they give. Standard C++17 only (no CUDA, no LLVM), so that it is
// built and unit-tested on machines without cuda.h.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_ROOFLINE_H
#define ATTN_RUNTIME_ROOFLINE_H

#include "attn/Runtime/HostTensor.h"
#include "attn/Runtime/Manifest.h"

#include <cstdint>
#include <string>

namespace attn {
namespace runtime {

/// Splits "sm_90a" into 9, 0 and 'a' ("sm_100f" into 10, 0, 'f'; "sm_80"
/// into 8, 0, '\0'). Returns false if `chip` is not of that form.
bool parseChipName(const std::string &chip, int &major, int &minor,
                   char &suffix);

/// Dense peak TFLOP/s (1e12 FLOP/s) of the tensor cores (or FMA units for
/// f32 with PrecisionMode::IEEE) for `chip` ("sm_90", "sm_90a", "sm_80", ...)
/// and the input type: sm_90/sm_90a (H100/H200 SXM) bf16/f16 989.4, tf32
/// 494.7, fp32 66.9; sm_80 (A100) 312, 156, 19.5. `deviceName` refines
/// sm_90 ("H100 PCIe": 756.5, 378.0, 51.2; "H100 NVL": 835.5, 417.5, 60.0).
/// For f32 inputs PrecisionMode::Default means tf32. Unknown chips give 0
/// and `note` says so; otherwise `note` names the entry used.
double getPeakTflops(const std::string &chip, const std::string &deviceName,
                     ElementType type, PrecisionMode precision,
                     std::string &note);

/// FLOPs of one attention forward, as FlashAttention counts them (SPEC.md
/// section 2): 2 * B * Hq * Tq * Tk * (D + Dv), halved for causal when
/// Tq == Tk.
double getAttentionFlops(const ProblemSizes &sizes, CausalMode causal);

/// Bytes one forward must move at least: Q, K, V and O once each, plus the
/// mask (maskElements elements of maskType; 0 for none).
double getAttentionBytes(const ProblemSizes &sizes, ElementType type,
                         int64_t maskElements = 0,
                         ElementType maskType = ElementType::F32);

/// The roofline floor in milliseconds: the larger of flops / peak and
/// bytes / bandwidth. A non-positive peak or bandwidth drops that term (0 if
/// both are dropped).
double rooflineFloorMs(double flops, double bytes, double peakTflops,
                       double bandwidthBytesPerSecond);

} // namespace runtime
} // namespace attn

#endif // ATTN_RUNTIME_ROOFLINE_H
