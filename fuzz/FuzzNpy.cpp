//===- FuzzNpy.cpp - libFuzzer target: .npy images --------------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
// attn-fuzz-npy: arbitrary bytes through parseNpy. A tensor it accepts must
// hold exactly the bytes its shape and type need, and serialize and parse
// back to the same tensor.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/Npy.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

using namespace attn::runtime;

static constexpr size_t kMaxInputBytes = 1 << 20;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > kMaxInputBytes)
    return -1;
  HostTensor tensor;
  std::string error;
  if (!parseNpy(data, size, "fuzz.npy", tensor, error))
    return 0;
  if (tensor.data.size() != tensor.getNumBytes())
    abort();
  std::vector<uint8_t> image = serializeNpy(tensor);
  HostTensor again;
  if (!parseNpy(image.data(), image.size(), "again.npy", again, error) ||
      again.type != tensor.type || again.shape != tensor.shape ||
      again.data != tensor.data)
    abort();
  return 0;
}
