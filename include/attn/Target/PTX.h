//===- PTX.h - attn.attention to PTX and a launch manifest ------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
// The in-process compiler behind `attn-translate --attn-to-ptx` and
// `attn-run --target=cuda`: one function holding one attn.attention becomes
// PTX text plus a launch manifest (docs/Manifest.md) that anything able to
// call the CUDA driver can launch.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TARGET_PTX_H
#define ATTN_TARGET_PTX_H

#include "attn/Conversion/AttnToNVVM/Options.h"
#include "attn/Dialect/Attn/Transforms/Transforms.h"
#include "attn/Runtime/Manifest.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <string>

namespace mlir {
namespace attn {

struct PTXOptions {
  /// CUDA chip, e.g. sm_80, sm_90a.
  std::string chip = "sm_90a";
  /// PTX ISA features for the NVPTX backend (getPTXFeatures picks them per
  /// chip; `--attn-to-nvvm`'s kDefaultPTXFeatures).
  std::string features = "+ptx80";
  /// LLVM optimization level of the device code.
  int optLevel = 3;
  /// Kernel config overrides (0 keeps the default of selectKernelConfig).
  KernelConfigOverrides overrides;
  /// --attn-tile's split-KV for a static Tq of one query block: the
  /// programs the key splits aim for (0: none; -1: the target's default,
  /// getDefaultSplitPrograms). A split kernel's manifest has the combine
  /// kernel as its epilogue kernel (version 5).
  int64_t splitPrograms = -1;
  /// --attn-pipeline's scores-ahead: the next key block's Q K^T on wgmma,
  /// in flight across this block's softmax and P V: "auto" (f32 programs
  /// that can run on wgmma, and 16-bit ones at head dim 128), "tf32" (the
  /// f32 ones), "all" or "none".
  std::string scoresAhead = "auto";
  /// Classify a mask tensor's blocks once per launch (a prologue kernel and
  /// a workspace in the manifest).
  bool maskBlockMap = true;
  /// --convert-attn-to-nvvm's options (a kernel with tensor copies has a
  /// version 3 manifest).
  ConvertAttnToNVVMOptions nvvm;
};

struct KernelArtifact {
  /// PTX text of a module with one `.entry` (manifest.kernel).
  std::string ptx;
  /// The launch manifest; `manifest.ptx` is `<function>.ptx`, for the
  /// writer to replace with the PTX file's name.
  ::attn::runtime::Manifest manifest;
};

/// Checks `chip` (`sm_XY` with an optional 'a' or 'f' suffix, sm_80 or
/// newer: the kernels use mma.sync on 16-bit floats and cp.async) and
/// returns the PTX ISA features to compile it with: PTXOptions' default (PTX
/// 8.0) up to sm_9x, else none, which lets LLVM choose the chip's minimum
/// (8.6 for sm_100a, 8.7 for sm_120a). LLVM aborts, rather than reporting an
/// error, on a chip without those instructions or on a PTX ISA older than
/// the chip needs, so every tool checks its chip here first.
llvm::Expected<std::string> getPTXFeatures(StringRef chip);

/// Compiles function `funcName` of `module` (which must consist of one
/// attn.attention and a return, as attn-run requires) for `options.chip`.
/// `module` is not modified. Errors are reported as diagnostics on the
/// module's context.
FailureOr<KernelArtifact> compileToPTX(ModuleOp module, StringRef funcName,
                                       const PTXOptions &options);

} // namespace attn
} // namespace mlir

#endif // ATTN_TARGET_PTX_H
