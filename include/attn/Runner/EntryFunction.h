//===- EntryFunction.h - The function attn-run executes ---------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// attn-run executes one func.func made of a single `attn.attention` whose
// operands are the function's arguments and whose results (the output, and
// the log-sum-exp of SPEC.md section 1.2 when the op has it) the function
// returns, in order (arith.constant ops may appear too); the function's other
// arguments are the tensors its score_mod and mask_mod regions read. This
// file selects that function in a module, checks its shape, and records
// which argument feeds which operand of the attention op.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNNER_ENTRYFUNCTION_H
#define ATTN_RUNNER_ENTRYFUNCTION_H

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "attn/Runtime/HostTensor.h"
#include "attn/Runtime/Reference.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
namespace attn {
namespace runner {

/// The operands of attn.attention, in the op's order.
enum class OperandRole {
  Query = 0,
  Key = 1,
  Value = 2,
  Mask = 3,
  KvLengths = 4,
  CuSeqlensQ = 5,
  CuSeqlensK = 6,
  BlockTable = 7
};
constexpr unsigned kNumOperandRoles = 8;

/// For each role (indexed by OperandRole): the function argument that feeds
/// it, or -1 for an absent optional operand.
using RoleArguments = std::array<int, kNumOperandRoles>;

/// Returns "q", "k", "v", "mask", "kv_lengths", "cu_seqlens_q",
/// "cu_seqlens_k" or "block_table".
StringRef getRoleLabel(OperandRole role);

/// Maps f32, f16, bf16 and i1 to the runtime's element types.
std::optional<::attn::runtime::ElementType> getRuntimeType(Type type);

/// The selected entry function and what attn-run needs to know about it.
struct EntryFunction {
  func::FuncOp func;
  AttentionOp attention;
  /// For each role (indexed by OperandRole): the function argument that
  /// feeds it, or -1 for an absent optional operand.
  RoleArguments roleArguments = {-1, -1, -1, -1, -1, -1, -1, -1};
  /// Per argument: the regions that read it ("score_mod", "mask_mod",
  /// "score_mod/mask_mod"), or empty.
  std::vector<std::string> regionReaders;
  /// AttentionOp::getCapturedTensors as function arguments (-1: a tensor
  /// the function computes): the kernel's capture0, capture1, ...
  std::vector<int> captureArguments;

  StringRef getName() { return func.getSymName(); }
  unsigned getNumArguments() { return func.getNumArguments(); }
  RankedTensorType getArgumentType(unsigned index);
  /// The output's type (the op's first result).
  RankedTensorType getResultType();
  /// Whether the op has the log-sum-exp result, and its type (f32
  /// B x Hq x Tq).
  bool hasLse();
  RankedTensorType getLseType();
  bool hasMask() const { return roleArguments[3] >= 0; }
  bool hasKvLengths() const { return roleArguments[4] >= 0; }
  bool hasCuSeqlens() const { return roleArguments[5] >= 0; }
  bool hasBlockTable() const { return roleArguments[7] >= 0; }

  /// A short name for argument `index`: "q", "k", "v", "mask", the regions
  /// that read it ("score_mod"), or e.g. "q/k/v" when one argument feeds
  /// several operands.
  std::string getArgumentLabel(unsigned index) const;

  /// The op's scale (its attribute or 1/sqrt(D)), causal kind and whether
  /// f32 inputs use tf32 matmuls (the default) rather than IEEE f32.
  double getScale();
  ::attn::runtime::CausalMode getCausal();
  bool usesTF32();
};

/// Selects the entry function of `module`: the function named `name`, or
/// the only func.func when `name` is empty. Fails with a one-line message
/// when there is no such function, when several exist and no name is given,
/// or when the function is not made of exactly one attn.attention whose
/// operands are the function's arguments and whose results it returns, in
/// order.
llvm::Expected<EntryFunction> selectEntryFunction(ModuleOp module,
                                                  StringRef name);

} // namespace runner
} // namespace attn
} // namespace mlir

#endif // ATTN_RUNNER_ENTRYFUNCTION_H
