//===- InitAll.h - register everything attn-mlir provides -------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
// The one entry point that tools, the Python package and other compilers call
// to make the attn dialect and every attn pass and pipeline available.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_INITALL_H
#define ATTN_INITALL_H

namespace mlir {
class DialectRegistry;

namespace attn {

/// Adds the attn dialect and the dialects its passes create to `registry`.
void registerAttnDialect(DialectRegistry &registry);

/// Registers every attn pass (`--attn-*`, `--convert-attn-*`) and the named
/// pipelines with the global pass registry. Safe to call more than once.
void registerAllPasses();

} // namespace attn
} // namespace mlir

#endif // ATTN_INITALL_H
