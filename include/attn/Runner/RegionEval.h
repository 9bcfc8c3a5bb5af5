//===- RegionEval.h - score_mod / mask_mod on the host ----------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// The `score_mod` and `mask_mod` regions of the entry function's
// attn.attention, evaluated by a small interpreter over their ops for the
// float64 reference of `attn-run --check` (SPEC.md section 1.1: the regions
// as written, independent of the kernel path). Floats are doubles (float
// casts change nothing), integers keep their width, `tensor.extract` reads
// the function's argument tensors (or constants), and `scf.if` runs the
// branch its condition picks.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNNER_REGIONEVAL_H
#define ATTN_RUNNER_REGIONEVAL_H

#include "attn/Runner/EntryFunction.h"
#include "attn/Runtime/HostTensor.h"
#include "attn/Runtime/Reference.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir {
namespace attn {
namespace runner {

class RegionProgram;

/// The regions of one attention op, compiled for evaluation.
class Modifiers {
public:
  /// Compiles the regions of `entry`'s op; fails naming the first op the
  /// interpreter cannot evaluate.
  static llvm::Expected<std::shared_ptr<Modifiers>>
  compile(EntryFunction &entry);
  ~Modifiers();

  /// Sets problem.scoreMod and problem.maskMod (for the regions the op has)
  /// to evaluate over `arguments`, the function's argument tensors, which
  /// must outlive the problem's use. Not thread-safe: the reference calls
  /// them from one thread.
  void bind(const std::vector<::attn::runtime::HostTensor> &arguments,
            ::attn::runtime::AttentionProblem &problem);

  /// The first problem met while evaluating (an element read outside its
  /// tensor), or an empty string.
  const std::string &getError() const { return error; }

private:
  std::unique_ptr<RegionProgram> scoreMod, maskMod;
  std::string error;
};

} // namespace runner
} // namespace attn
} // namespace mlir

#endif // ATTN_RUNNER_REGIONEVAL_H
