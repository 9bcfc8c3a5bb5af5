//===- SoftFloat.cpp - 16-bit float conversions for JIT code --------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/Runner/SoftFloat.h"

#include "attn/Runtime/HostTensor.h"

#include <cstdint>
#include <cstring>

using namespace mlir::attn::runner;

namespace rt = ::attn::runtime;

// The 16-bit values travel in floating-point registers (x86-64 psABI and
// AAPCS64), which the C++ types _Float16 and __bf16 express exactly.
#if defined(__FLT16_MAX__) && (defined(__x86_64__) || defined(__aarch64__))
#define ATTN_HAVE_FLOAT16 1
#endif
#if ((defined(__clang__) && __clang_major__ >= 17) ||                          \
     (!defined(__clang__) && defined(__GNUC__) && __GNUC__ >= 13)) &&          \
    (defined(__x86_64__) || defined(__aarch64__))
#define ATTN_HAVE_BFLOAT16 1
#endif

#ifdef ATTN_HAVE_FLOAT16
/// f32 -> f16 (compiler-rt's __truncsfhf2).
static _Float16 truncSfHf2(float value) {
  uint16_t bits = rt::floatToHalf(value);
  _Float16 result;
  std::memcpy(&result, &bits, sizeof(bits));
  return result;
}

/// f16 -> f32 (compiler-rt's __extendhfsf2).
static float extendHfSf2(_Float16 value) {
  uint16_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return rt::halfToFloat(bits);
}
#endif

#ifdef ATTN_HAVE_BFLOAT16
/// f32 -> bf16 (compiler-rt's __truncsfbf2).
static __bf16 truncSfBf2(float value) {
  uint16_t bits = rt::floatToBF16(value);
  __bf16 result;
  std::memcpy(&result, &bits, sizeof(bits));
  return result;
}

/// bf16 -> f32 (compiler-rt's __extendbfsf2; LLVM usually inlines it).
static float extendBfSf2(__bf16 value) {
  uint16_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return rt::bf16ToFloat(bits);
}
#endif

llvm::ArrayRef<RuntimeSymbol> mlir::attn::runner::getSoftFloatSymbols() {
  static const RuntimeSymbol symbols[] = {
#ifdef ATTN_HAVE_FLOAT16
      {"__truncsfhf2", reinterpret_cast<void *>(&truncSfHf2)},
      {"__extendhfsf2", reinterpret_cast<void *>(&extendHfSf2)},
#endif
#ifdef ATTN_HAVE_BFLOAT16
      {"__truncsfbf2", reinterpret_cast<void *>(&truncSfBf2)},
      {"__extendbfsf2", reinterpret_cast<void *>(&extendBfSf2)},
#endif
      {nullptr, nullptr}};
  // The sentinel keeps the array non-empty when no type is available.
  return llvm::ArrayRef<RuntimeSymbol>(symbols, std::size(symbols) - 1);
}
