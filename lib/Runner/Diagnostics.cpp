//===- Diagnostics.cpp - One-line errors from MLIR diagnostics ------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/Runner/Diagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::attn::runner;

std::string mlir::attn::runner::formatLocation(Location loc) {
  if (isa<UnknownLoc>(loc))
    return "";
  if (auto fileLoc = loc->findInstanceOf<FileLineColLoc>())
    return (fileLoc.getFilename().getValue() + ":" + Twine(fileLoc.getLine()) +
            ":" + Twine(fileLoc.getColumn()))
        .str();
  std::string text;
  llvm::raw_string_ostream os(text);
  os << loc;
  return text;
}

llvm::Error mlir::attn::runner::makeError(const Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

DiagnosticCollector::DiagnosticCollector(MLIRContext *context)
    : handler(context, [this](Diagnostic &diag) {
        if (diag.getSeverity() == DiagnosticSeverity::Error &&
            firstError.empty()) {
          std::string message = diag.str();
          std::replace(message.begin(), message.end(), '\n', ' ');
          std::string where = formatLocation(diag.getLocation());
          firstError = where.empty() ? message : where + ": " + message;
        }
        return success();
      }) {}

std::string DiagnosticCollector::getFirstError(StringRef fallback) const {
  return firstError.empty() ? fallback.str() : firstError;
}
