//===- SoftFloat.h - 16-bit float conversions for JIT code ------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// On CPUs without native f16/bf16 conversion instructions, LLVM lowers
// `fptrunc`/`fpext` between f32 and f16/bf16 to calls of compiler-runtime
// functions (`__truncsfbf2`, `__truncsfhf2`, `__extendhfsf2`). A process does
// not always provide them (libgcc 12 has no `__truncsfbf2`), so the CPU
// backend hands these implementations to the JIT. They use the conversions
// of the runtime library: round to nearest, ties to even; NaN stays NaN.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNNER_SOFTFLOAT_H
#define ATTN_RUNNER_SOFTFLOAT_H

#include "llvm/ADT/ArrayRef.h"

namespace mlir {
namespace attn {
namespace runner {

/// A function that JIT-compiled code may call by name.
struct RuntimeSymbol {
  const char *name;
  void *address;
};

/// Returns the conversion functions with the calling convention LLVM uses
/// for them on this host (the 16-bit value in a floating-point register).
/// Empty when the host compiler has no _Float16/__bf16 types to express it.
llvm::ArrayRef<RuntimeSymbol> getSoftFloatSymbols();

} // namespace runner
} // namespace attn
} // namespace mlir

#endif // ATTN_RUNNER_SOFTFLOAT_H
