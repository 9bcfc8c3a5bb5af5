//===- MemRefDescriptor.cpp - Strided memref descriptors ------------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/Runner/MemRefDescriptor.h"

#include "attn/Runner/Diagnostics.h"

#include <cassert>
#include <cstring>

using namespace mlir;
using namespace mlir::attn::runner;

namespace rt = ::attn::runtime;

static_assert(sizeof(void *) == sizeof(int64_t),
              "memref descriptors are built for 64-bit hosts");

MemRefDescriptor::MemRefDescriptor(unsigned rank)
    : rank(rank), words(3 + 2 * rank, 0) {}

MemRefDescriptor::MemRefDescriptor(void *data, ArrayRef<int64_t> shape)
    : MemRefDescriptor(shape.size()) {
  words[0] = reinterpret_cast<intptr_t>(data);
  words[1] = reinterpret_cast<intptr_t>(data);
  int64_t stride = 1;
  for (int64_t dim = static_cast<int64_t>(rank) - 1; dim >= 0; --dim) {
    words[3 + dim] = shape[dim];
    words[3 + rank + dim] = stride;
    stride *= shape[dim];
  }
}

void *MemRefDescriptor::getAllocated() const {
  return reinterpret_cast<void *>(static_cast<intptr_t>(words[0]));
}

void *MemRefDescriptor::getAligned() const {
  return reinterpret_cast<void *>(static_cast<intptr_t>(words[1]));
}

ArrayRef<int64_t> MemRefDescriptor::getSizes() const {
  return ArrayRef<int64_t>(words).slice(3, rank);
}

ArrayRef<int64_t> MemRefDescriptor::getStrides() const {
  return ArrayRef<int64_t>(words).slice(3 + rank, rank);
}

void MemRefDescriptor::clear() { std::fill(words.begin(), words.end(), 0); }

void MemRefDescriptor::assign(ArrayRef<int64_t> fields) {
  assert(fields.size() == words.size() && "a descriptor of another rank");
  std::copy(fields.begin(), fields.end(), words.begin());
}

ResultDescriptors::ResultDescriptors(ArrayRef<unsigned> ranks)
    : ranks(ranks.begin(), ranks.end()) {
  unsigned size = 0;
  for (unsigned rank : ranks) {
    offsets.push_back(size);
    size += 3 + 2 * rank;
  }
  words.assign(size, 0);
}

MemRefDescriptor ResultDescriptors::get(unsigned index) const {
  MemRefDescriptor descriptor(ranks[index]);
  descriptor.assign(
      ArrayRef<int64_t>(words).slice(offsets[index], 3 + 2 * ranks[index]));
  return descriptor;
}

void ResultDescriptors::clear() { std::fill(words.begin(), words.end(), 0); }

llvm::Error
mlir::attn::runner::copyFromDescriptor(const MemRefDescriptor &descriptor,
                                       rt::HostTensor &tensor) {
  ArrayRef<int64_t> sizes = descriptor.getSizes();
  if (sizes.size() != tensor.shape.size() ||
      !std::equal(sizes.begin(), sizes.end(), tensor.shape.begin())) {
    std::vector<int64_t> got(sizes.begin(), sizes.end());
    return makeError("the compiled function returned a result of shape " +
                     rt::formatShape(got, tensor.type) + ", expected " +
                     tensor.getShapeString());
  }
  if (!descriptor.getAligned())
    return makeError("the compiled function returned a null result buffer");

  size_t elementBytes = rt::getElementBytes(tensor.type);
  const auto *base = static_cast<const uint8_t *>(descriptor.getAligned()) +
                     descriptor.getOffset() * elementBytes;
  ArrayRef<int64_t> strides = descriptor.getStrides();
  unsigned rank = descriptor.getRank();
  int64_t numElements = tensor.getNumElements();
  if (numElements == 0)
    return llvm::Error::success();

  // Walk the elements in row-major order; rows of unit innermost stride are
  // copied at once.
  int64_t innerSize = rank ? sizes[rank - 1] : 1;
  bool contiguousRows = rank == 0 || strides[rank - 1] == 1;
  SmallVector<int64_t> index(rank, 0);
  uint8_t *out = tensor.data.data();
  for (int64_t start = 0; start < numElements; start += innerSize) {
    int64_t offset = 0;
    for (unsigned dim = 0; dim + 1 < rank; ++dim)
      offset += index[dim] * strides[dim];
    if (contiguousRows) {
      std::memcpy(out, base + offset * elementBytes, innerSize * elementBytes);
    } else {
      for (int64_t i = 0; i < innerSize; ++i)
        std::memcpy(out + i * elementBytes,
                    base + (offset + i * strides[rank - 1]) * elementBytes,
                    elementBytes);
    }
    out += innerSize * elementBytes;
    // Advance the outer index (all dimensions but the innermost).
    for (int64_t dim = static_cast<int64_t>(rank) - 2; dim >= 0; --dim) {
      if (++index[dim] < sizes[dim])
        break;
      index[dim] = 0;
    }
  }
  return llvm::Error::success();
}
