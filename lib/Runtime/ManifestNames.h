//===- ManifestNames.h - Names of launch manifests --------------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// The names that verifyManifest (ManifestVerify.cpp) and parseManifest
// (ManifestParse.cpp) both check: size names, operand names and the limits
// of workspaces and tensor maps. Private to lib/Runtime.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_RUNTIME_MANIFESTNAMES_H
#define ATTN_LIB_RUNTIME_MANIFESTNAMES_H

#include "attn/Runtime/Manifest.h"

#include <string>
#include <string_view>

namespace attn {
namespace runtime {
namespace detail {

/// Whether `name` is one of getSizeNames().
inline bool isSizeName(std::string_view name) {
  for (const std::string &known : getSizeNames())
    if (known == name)
      return true;
  return false;
}

/// "B, Hq, Hkv, Tq, Tk, D, Dv".
inline std::string getSizeNameList() {
  std::string list;
  for (const std::string &name : getSizeNames())
    list += (list.empty() ? "" : ", ") + name;
  return list;
}

/// The operands a memref param may pass; no workspace may take these names.
inline bool isMemRefOperandName(std::string_view name) {
  return name == "query" || name == "key" || name == "value" ||
         name == "mask" || name == "output";
}

/// The operands a tensor_map param may describe (version 3).
inline bool isTensorMapOperandName(std::string_view name) {
  return name == "query" || name == "key" || name == "value" ||
         name == "output";
}

/// Whether `swizzle` is a valid KernelParam::swizzle (0, 32, 64 or 128).
inline bool isTensorMapSwizzle(int64_t swizzle) {
  return swizzle == 0 || swizzle == 32 || swizzle == 64 || swizzle == 128;
}

/// The largest entry of a tensor map's box (TMA moves at most 256 elements
/// per dimension).
constexpr int64_t kMaxTensorMapBox = 256;

/// Whether `bytes` is a valid WorkspaceSpec::elementBytes (1, 2, 4 or 8).
inline bool isWorkspaceElementBytes(int64_t bytes) {
  return bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8;
}

/// The largest rank of a workspace (and of a memref param).
constexpr int64_t kMaxRank = 8;

} // namespace detail
} // namespace runtime
} // namespace attn

#endif // ATTN_LIB_RUNTIME_MANIFESTNAMES_H
