//===- Npy.h - Reading and writing numpy .npy files -------------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// The numpy .npy format for the element types of attn-run:
//
//   descr          element type   note
//   '<f4'          f32
//   '<f2'          f16
//   '|b1'          i1             numpy bool, one byte per element
//   '|V2' / '<V2'  bf16           numpy has no bfloat16: ml_dtypes arrays
//                                 are saved as a 2-byte void type; numpy.load
//                                 returns dtype 'V2', view it with
//                                 `.view(ml_dtypes.bfloat16)`
//
// Versions 1.0, 2.0 and 3.0 are read (C order, rank >= 1); the writer writes
// 1.0 (2.0 for a header that does not fit) with the data 64-byte aligned.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_NPY_H
#define ATTN_RUNTIME_NPY_H

#include "attn/Runtime/HostTensor.h"

#include <string>

namespace attn {
namespace runtime {

/// Reads the .npy file at `path` into `out`: the magic string and the header
/// first, then exactly the data bytes the header announces, once they pass
/// checkFitsInMemory, so that a device (/dev/zero), a pipe or a FIFO without
/// a writer gives an error after a few bytes. On failure returns false, sets
/// `error` to a one-line message naming the file, and leaves `out`
/// unchanged.
bool readNpy(const std::string &path, HostTensor &out, std::string &error);

/// readNpy of an image in memory; `name` is for the messages.
bool parseNpy(const uint8_t *bytes, size_t size, const std::string &name,
              HostTensor &out, std::string &error);

/// Writes `tensor` to `path` (writeWholeFile: never a partial file).
bool writeNpy(const std::string &path, const HostTensor &tensor,
              std::string &error);

/// The whole .npy image of `tensor`.
std::vector<uint8_t> serializeNpy(const HostTensor &tensor);

} // namespace runtime
} // namespace attn

#endif // ATTN_RUNTIME_NPY_H
