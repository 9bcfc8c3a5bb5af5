//===- Backend.cpp - Targets that compile and run attention ---------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/Runner/Backend.h"

#include "attn/Runner/Diagnostics.h"
#include "attn/Runtime/ManifestRun.h"

#include <chrono>

using namespace mlir;
using namespace mlir::attn::runner;

namespace rt = ::attn::runtime;

Backend::~Backend() = default;

llvm::Expected<std::vector<double>>
Backend::time(const std::vector<const rt::HostTensor *> &arguments,
              std::vector<rt::HostTensor> &results, unsigned warmup,
              unsigned iterations) {
  for (unsigned i = 0; i < warmup; ++i)
    if (llvm::Error error = run(arguments, results))
      return std::move(error);
  std::vector<double> times;
  for (unsigned i = 0; i < iterations; ++i) {
    auto start = std::chrono::steady_clock::now();
    if (llvm::Error error = run(arguments, results))
      return std::move(error);
    auto stop = std::chrono::steady_clock::now();
    times.push_back(
        std::chrono::duration<double, std::milli>(stop - start).count());
  }
  return times;
}

llvm::Expected<rt::ExplainFacts>
Backend::explain(const std::vector<const rt::HostTensor *> &arguments,
                 const rt::HostTensor &result, double medianMs,
                 bool tf32) const {
  (void)arguments, (void)result, (void)medianMs, (void)tf32;
  return makeError(rt::kExplainNeedsCuda);
}

llvm::Expected<std::unique_ptr<Backend>>
mlir::attn::runner::createBackend(StringRef target) {
  if (target == "cpu")
    return createCPUBackend();
  if (target == "cuda")
    return createCUDABackend();
  return makeError("unknown --target '" + target + "' (expected cpu or cuda)");
}
