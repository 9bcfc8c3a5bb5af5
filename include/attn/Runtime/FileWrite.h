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

/// Writes `size` bytes to `path`. A new or regular file is written into a
/// temporary file beside it (`PATH.tmp.PID`) that is renamed over it once
/// complete. A symbolic link is written through: the temporary file goes
/// beside the link's target, which it replaces. An existing file that is not
/// regular (a device such as /dev/null, a FIFO) is written in place, as a
/// shell's `>` would. On failure, `error` is `cannot write 'PATH': REASON`
/// and no temporary file is left.
bool writeWholeFile(const std::string &path, const void *data, size_t size,
                    std::string &error);

/// Reads the whole file at `path` into `out`. On failure returns false with
/// the reason in `error` (e.g. "No such file or directory").
bool readWholeFile(const std::string &path, std::string &out,
                   std::string &error);

/// Whether `path` names something other than a regular file or a symbolic
/// link to one (a directory, a device, a FIFO). A path that does not exist
/// is not special.
bool isSpecialFile(const std::string &path);

} // namespace runtime
} // namespace attn

#endif // ATTN_RUNTIME_FILEWRITE_H
