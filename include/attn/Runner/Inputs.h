//===- Inputs.h - attn-run inputs and their validation ----------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// Turns the `--input` values of attn-run into host tensors, one per argument
// of the entry function, and checks them against the function's argument
// types and the semantics of attn.attention before anything is compiled.
//
// An input is one of:
//   SHAPExTYPE   e.g. 2x32x1024x128xbf16: random data (see deriveInputSeed;
//                for kv_lengths, lengths in 0 .. Tk: makeRandomLengths; for
//                cu_seqlens, random lengths summing to Tq or Tk:
//                makeRandomSeqlens)
//   @path.npy    a numpy file (f32 '<f4', f16 '<f2', bf16 '|V2', i1 '|b1')
//   random       random data of the argument's static type
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNNER_INPUTS_H
#define ATTN_RUNNER_INPUTS_H

#include "attn/Runner/EntryFunction.h"
#include "attn/Runtime/HostTensor.h"
#include "attn/Runtime/Reference.h"
#include "attn/Runtime/RunReport.h"
#include "llvm/Support/Error.h"

#include <array>
#include <string>
#include <vector>

namespace mlir {
namespace attn {
namespace runner {

/// The seed of the random data of input `index` (see RunReport.h).
using ::attn::runtime::deriveInputSeed;

/// Builds the tensor that `spec` describes for an argument of type
/// `argType` and checks it with checkInputType (a SHAPExTYPE spec before
/// its data is allocated). `random` needs a static type.
llvm::Expected<::attn::runtime::HostTensor>
makeInputTensor(StringRef spec, RankedTensorType argType, uint64_t seed);

/// Checks that `tensor` has the rank, the static dimensions and the element
/// type of `argType`. The message names `tensor`'s shape and the type.
llvm::Error checkInputType(const ::attn::runtime::HostTensor &tensor,
                           RankedTensorType argType);

/// The validated inputs of one run.
struct RunInputs {
  /// One tensor per argument of the entry function, in argument order.
  std::vector<::attn::runtime::HostTensor> arguments;
  /// Per argument: "random" or the .npy path it was read from.
  std::vector<std::string> sources;
  /// Per role (query, key, value, mask, kv_lengths): the argument index, or
  /// -1.
  RoleArguments roleArguments = {-1, -1, -1, -1, -1, -1, -1, -1};
  double scale = 1.0;
  ::attn::runtime::CausalMode causal = ::attn::runtime::CausalMode::None;
  /// The op's window (-1: unbounded) and softcap (0: none).
  int64_t windowLeft = -1, windowRight = -1;
  double softcap = 0.0;
  /// The result: B x Hq x Tq x Dv of the query's element type.
  std::vector<int64_t> resultShape;
  ::attn::runtime::ElementType resultType = ::attn::runtime::ElementType::F32;
  /// The log-sum-exp result, f32 B x Hq x Tq; empty when the op has none.
  std::vector<int64_t> lseShape;

  /// The attention problem (without the regions, see RegionEval.h); it
  /// points into `arguments`.
  ::attn::runtime::AttentionProblem getProblem() const;
  /// Pointers to `arguments`, in argument order.
  std::vector<const ::attn::runtime::HostTensor *> getArgumentPointers() const;
  /// Zero tensors of the results, in result order: the output, then the
  /// log-sum-exp if any.
  std::vector<::attn::runtime::HostTensor> makeResults() const;
};

/// Builds and validates the inputs of `entry` from the `--input` values:
/// their number, each one against its argument type, the whole problem with
/// attn::runtime::validateProblem, and the result shapes against the
/// function's result types.
llvm::Expected<RunInputs>
prepareInputs(EntryFunction &entry, ArrayRef<std::string> specs, uint64_t seed);

} // namespace runner
} // namespace attn
} // namespace mlir

#endif // ATTN_RUNNER_INPUTS_H
