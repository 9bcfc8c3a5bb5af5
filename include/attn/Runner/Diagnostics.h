//===- Diagnostics.h - One-line errors from MLIR diagnostics ----*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// attn-run reports every error as one line on stderr. MLIR reports parse,
// verifier and pass failures as diagnostics with source snippets; the
// collector below captures them while it lives and keeps the first error as
// `file:line:col: message`.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNNER_DIAGNOSTICS_H
#define ATTN_RUNNER_DIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/Error.h"

#include <string>

namespace mlir {
namespace attn {
namespace runner {

/// Captures every diagnostic emitted on `context` while alive (nothing is
/// printed) and remembers the first error.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(MLIRContext *context);

  /// Returns the first error as one line ("file:line:col: message"), or
  /// `fallback` when no error was emitted.
  std::string getFirstError(StringRef fallback) const;

private:
  std::string firstError;
  ScopedDiagnosticHandler handler;
};

/// Formats `loc` as "file:line:col" when it holds a file location, "" for an
/// unknown location, else as MLIR prints it.
std::string formatLocation(Location loc);

/// Creates an llvm::Error carrying `message` (one line, no prefix).
llvm::Error makeError(const Twine &message);

} // namespace runner
} // namespace attn
} // namespace mlir

#endif // ATTN_RUNNER_DIAGNOSTICS_H
