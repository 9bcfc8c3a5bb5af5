//===- FileWrite.h - Whole-file reads and writes -------------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// How attn-run and attn-translate read inputs and write their outputs (.npy
// results, PTX, cubins, launch manifests): a reader never sees a partial
// file, a failure leaves nothing behind, and a path the user gave is written
// where it points. Standard C++17 and POSIX only, for the runner-only build.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_FILEWRITE_H
#define ATTN_RUNTIME_FILEWRITE_H

#include <cstddef>
#include <string>

namespace attn {
namespace runtime {

/// Writes `size` bytes to `path`: a new or regular file through a temporary
/// file beside it (`PATH.tmp.PID`) renamed over it when complete; a symbolic
/// link through to its target; a device or a FIFO in place, as a shell's `>`
/// would. On failure, `error` is `cannot write 'PATH': REASON` and no
/// temporary file is left.
bool writeWholeFile(const std::string &path, const void *data, size_t size,
                    std::string &error);

/// On failure, `error` is the reason, e.g. "No such file or directory".
bool readWholeFile(const std::string &path, std::string &out,
                   std::string &error);

/// Whether `path` exists and is no regular file (nor a link to one).
bool isSpecialFile(const std::string &path);

} // namespace runtime
} // namespace attn

#endif // ATTN_RUNTIME_FILEWRITE_H
