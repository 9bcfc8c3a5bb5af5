//===- Options.h - the options of --convert-attn-to-nvvm --------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
// The options of the GPU conversion are declared once, in
// Conversion/Passes.td. Its generated struct, ConvertAttnToNVVMOptions, is
// what every C++ caller passes: the pipelines (AttnToNVVMOptions::convert),
// the in-process compiler (PTXOptions::nvvm), the runner
// (CompileOptions::nvvm) and the conversion itself (distributeProgram).
// Text, from a tool's command line or a textual pipeline, is read by the
// pass's own option parser (parseConvertAttnToNVVMOptions), so a new option
// needs its declaration and no other.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_ATTNTONVVM_OPTIONS_H
#define ATTN_CONVERSION_ATTNTONVVM_OPTIONS_H

#include "mlir/Pass/Pass.h"

namespace mlir {
namespace attn {

#define GEN_PASS_DECL_CONVERTATTNTONVVM
#include "attn/Conversion/Passes.h.inc"

/// Reads `text`, options of --convert-attn-to-nvvm as the pass takes them
/// ("tensor-copies=none warp-specialize"), over `options` and checks their
/// values. On failure, reports the problem through `emitError` and leaves
/// `options` as it was.
LogicalResult
parseConvertAttnToNVVMOptions(StringRef text, ConvertAttnToNVVMOptions &options,
                              function_ref<void(const Twine &)> emitError);

/// Reads command-line arguments a tool does not know itself
/// (`--tensor-copies=none`, `--warp-specialize`: its cl::Sink) as options
/// of --convert-attn-to-nvvm over `options`. On failure, reports the
/// argument and the problem through `emitError`.
LogicalResult
parseConvertAttnToNVVMArguments(ArrayRef<std::string> args,
                                ConvertAttnToNVVMOptions &options,
                                function_ref<void(const Twine &)> emitError);

/// --convert-attn-to-nvvm's options with their defaults, as the pass prints
/// them (`convert-attn-to-nvvm{tensor-copies=auto ...}`), for a tool's help.
std::string describeConvertAttnToNVVMOptions();

} // namespace attn
} // namespace mlir

#endif // ATTN_CONVERSION_ATTNTONVVM_OPTIONS_H
