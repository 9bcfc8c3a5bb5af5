//===- MemRefDescriptor.h - Strided memref descriptors ----------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// The C ABI of a ranked memref in code lowered to LLVM (see
// attn/Pipelines/Pipelines.h):
//
//   struct { T *allocated; T *aligned; int64_t offset;
//            int64_t sizes[R]; int64_t strides[R]; }
//
// `_mlir_ciface_F(Desc *result, Desc *arg0, ...)` takes pointers to such
// structs; the result buffer is allocated with malloc by the compiled code.
// A function of several results (the output and the log-sum-exp) takes a
// pointer to the struct of their descriptors, in result order
// (ResultDescriptors).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNNER_MEMREFDESCRIPTOR_H
#define ATTN_RUNNER_MEMREFDESCRIPTOR_H

#include "attn/Runtime/HostTensor.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <cstdint>

namespace mlir {
namespace attn {
namespace runner {

/// A memref descriptor of any rank, stored as 64-bit words so that its
/// address can be passed to compiled code.
class MemRefDescriptor {
public:
  /// Describes `data` (not owned) with the row-major strides of `shape`.
  MemRefDescriptor(void *data, llvm::ArrayRef<int64_t> shape);
  /// An all-zero descriptor of rank `rank`, for a result to be filled.
  explicit MemRefDescriptor(unsigned rank);

  unsigned getRank() const { return rank; }
  /// The address to pass to compiled code.
  void *getAddress() { return words.data(); }

  void *getAllocated() const;
  void *getAligned() const;
  int64_t getOffset() const { return words[2]; }
  llvm::ArrayRef<int64_t> getSizes() const;
  llvm::ArrayRef<int64_t> getStrides() const;

  /// Sets every field to zero.
  void clear();
  /// Sets every field from `fields` (3 + 2 * rank words).
  void assign(llvm::ArrayRef<int64_t> fields);

private:
  unsigned rank;
  llvm::SmallVector<int64_t, 11> words;
};

/// What `_mlir_ciface_F` writes its results to: the descriptor of its one
/// result, or the struct of the descriptors of its results, in order. Every
/// field is 8 bytes, so the struct has no padding: the descriptors follow
/// one another.
class ResultDescriptors {
public:
  /// The results' ranks, in result order.
  explicit ResultDescriptors(llvm::ArrayRef<unsigned> ranks);

  unsigned size() const { return ranks.size(); }
  /// The address to pass to compiled code.
  void *getAddress() { return words.data(); }
  /// A copy of result `index`'s descriptor.
  MemRefDescriptor get(unsigned index) const;
  /// Sets every field to zero.
  void clear();

private:
  llvm::SmallVector<unsigned, 2> ranks, offsets;
  llvm::SmallVector<int64_t, 20> words;
};

/// Copies the elements `descriptor` points to into `tensor`, whose type and
/// shape are set and whose data is allocated. Fails without copying when
/// the descriptor's sizes differ from the shape or its pointer is null.
llvm::Error copyFromDescriptor(const MemRefDescriptor &descriptor,
                               ::attn::runtime::HostTensor &tensor);

} // namespace runner
} // namespace attn
} // namespace mlir

#endif // ATTN_RUNNER_MEMREFDESCRIPTOR_H
