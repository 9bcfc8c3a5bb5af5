//===- EntryFunction.cpp - The function attn-run executes -----------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/Runner/EntryFunction.h"

#include "attn/Runner/Diagnostics.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::runner;

namespace rt = ::attn::runtime;

/// The sentence every "this is not a supported function" error ends with.
static constexpr const char *kSupported =
    "attn-run executes functions made of one attn.attention";

/// Appends `name` to a '/'-separated label.
static void appendLabel(std::string &label, StringRef name) {
  if (!label.empty())
    label += "/";
  label += name.str();
}

StringRef mlir::attn::runner::getRoleLabel(OperandRole role) {
  switch (role) {
  case OperandRole::Query:
    return "q";
  case OperandRole::Key:
    return "k";
  case OperandRole::Value:
    return "v";
  case OperandRole::Mask:
    return "mask";
  case OperandRole::KvLengths:
    return "kv_lengths";
  case OperandRole::CuSeqlensQ:
    return "cu_seqlens_q";
  case OperandRole::CuSeqlensK:
    return "cu_seqlens_k";
  case OperandRole::BlockTable:
    return "block_table";
  }
  return "?";
}

std::optional<rt::ElementType> mlir::attn::runner::getRuntimeType(Type type) {
  if (type.isF32())
    return rt::ElementType::F32;
  if (type.isF16())
    return rt::ElementType::F16;
  if (type.isBF16())
    return rt::ElementType::BF16;
  if (type.isInteger(1))
    return rt::ElementType::I1;
  if (type.isInteger(32))
    return rt::ElementType::I32;
  if (type.isInteger(64))
    return rt::ElementType::I64;
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// EntryFunction
//===----------------------------------------------------------------------===//

RankedTensorType EntryFunction::getArgumentType(unsigned index) {
  return cast<RankedTensorType>(func.getArgument(index).getType());
}

RankedTensorType EntryFunction::getResultType() {
  return attention.getOutput().getType();
}

bool EntryFunction::hasLse() { return attention->getNumResults() > 1; }

RankedTensorType EntryFunction::getLseType() {
  return hasLse() ? cast<RankedTensorType>(attention->getResult(1).getType())
                  : RankedTensorType();
}

std::string EntryFunction::getArgumentLabel(unsigned index) const {
  std::string label;
  for (unsigned role = 0; role < kNumOperandRoles; ++role)
    if (roleArguments[role] == static_cast<int>(index))
      appendLabel(label, getRoleLabel(static_cast<OperandRole>(role)));
  if (index < regionReaders.size() && !regionReaders[index].empty())
    appendLabel(label, regionReaders[index]);
  return label;
}

double EntryFunction::getScale() { return attention.getScaleValue(); }

rt::CausalMode EntryFunction::getCausal() {
  std::optional<CausalKind> kind = attention.getCausalKind();
  if (!kind)
    return rt::CausalMode::None;
  return *kind == CausalKind::TopLeft ? rt::CausalMode::TopLeft
                                      : rt::CausalMode::BottomRight;
}

bool EntryFunction::usesTF32() {
  return attention.getElementType().isF32() && !attention.isIEEEPrecision();
}

//===----------------------------------------------------------------------===//
// Selection and checks
//===----------------------------------------------------------------------===//

/// Returns "a, b, c".
static std::string joinNames(ArrayRef<func::FuncOp> funcs) {
  std::string names;
  for (func::FuncOp func : funcs) {
    if (!names.empty())
      names += ", ";
    names += func.getSymName().str();
  }
  return names;
}

/// Checks that `func` is made of one attn.attention (plus arith.constant)
/// that takes the function's arguments and whose result is returned, and
/// records which argument feeds which operand.
static llvm::Expected<EntryFunction> analyzeFunction(func::FuncOp func) {
  StringRef name = func.getSymName();
  if (func.isExternal())
    return makeError("function '" + name + "' is a declaration without a body");
  if (!func.getBody().hasOneBlock())
    return makeError("function '" + name + "' has several blocks; " +
                     kSupported);

  AttentionOp attention;
  unsigned numAttention = 0;
  func::ReturnOp returnOp;
  for (Operation &op : func.getBody().front()) {
    if (auto attentionOp = dyn_cast<AttentionOp>(op)) {
      attention = attentionOp;
      ++numAttention;
    } else if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      returnOp = ret;
    } else if (!isa<arith::ConstantOp>(op)) {
      return makeError("function '" + name + "' contains unsupported op '" +
                       op.getName().getStringRef() + "'; " + kSupported);
    }
  }
  if (numAttention == 0)
    return makeError("function '" + name + "' contains no attn.attention; " +
                     kSupported);
  if (numAttention > 1)
    return makeError("function '" + name + "' contains " + Twine(numAttention) +
                     " attn.attention ops; " + kSupported);
  if (!returnOp ||
      !llvm::equal(returnOp.getOperands(), attention->getResults()))
    return makeError(
        "function '" + name +
        (attention->getNumResults() == 1
             ? "' must return the result of its attn.attention and nothing "
               "else"
             : "' must return the results of its attn.attention (the output "
               "and the log-sum-exp), in that order, and nothing else"));

  EntryFunction entry;
  entry.func = func;
  entry.attention = attention;
  for (BlockArgument arg : func.getArguments())
    if (!isa<RankedTensorType>(arg.getType()))
      return makeError("argument #" + Twine(arg.getArgNumber()) + " of '" +
                       name +
                       "' is not a ranked tensor; attn-run passes "
                       "tensors only");
  SmallVector<bool> used(func.getNumArguments(), false);
  // The arguments the regions read (tensors, through tensor.extract).
  entry.regionReaders.resize(func.getNumArguments());
  for (const std::pair<Region *, StringRef> &regionReader :
       {std::pair<Region *, StringRef>{&attention.getScoreMod(), "score_mod"},
        {&attention.getMaskMod(), "mask_mod"}}) {
    StringRef reader = regionReader.second;
    regionReader.first->walk([&](Operation *op) {
      for (Value operand : op->getOperands()) {
        auto arg = dyn_cast<BlockArgument>(operand);
        if (!arg || arg.getOwner() != &func.getBody().front() ||
            StringRef(entry.regionReaders[arg.getArgNumber()])
                .ends_with(reader))
          continue;
        appendLabel(entry.regionReaders[arg.getArgNumber()], reader);
        used[arg.getArgNumber()] = true;
      }
    });
  }
  for (Value tensor : attention.getCapturedTensors()) {
    auto arg = dyn_cast<BlockArgument>(tensor);
    entry.captureArguments.push_back(
        arg && arg.getOwner() == &func.getBody().front() ? arg.getArgNumber()
                                                         : -1);
  }
  // The operands by role (query, key, value, then the optional mask and
  // kv_lengths).
  std::pair<OperandRole, Value> operands[] = {
      {OperandRole::Query, attention.getQuery()},
      {OperandRole::Key, attention.getKey()},
      {OperandRole::Value, attention.getValue()},
      {OperandRole::Mask, attention.getMask()},
      {OperandRole::KvLengths, attention.getKvLengths()},
      {OperandRole::CuSeqlensQ, attention.getCuSeqlensQ()},
      {OperandRole::CuSeqlensK, attention.getCuSeqlensK()},
      {OperandRole::BlockTable, attention.getBlockTable()}};
  for (auto [role, value] : operands) {
    if (!value)
      continue;
    auto arg = dyn_cast<BlockArgument>(value);
    if (!arg || arg.getOwner() != &func.getBody().front())
      return makeError("operand '" + getRoleLabel(role) +
                       "' of the attn.attention in '" + name +
                       "' is not a function argument; attn-run passes q, k, "
                       "v, the mask, kv_lengths, cu_seqlens and block_table "
                       "as arguments");
    entry.roleArguments[static_cast<unsigned>(role)] = arg.getArgNumber();
    used[arg.getArgNumber()] = true;
  }
  for (auto [index, isUsed] : llvm::enumerate(used)) {
    if (!isUsed)
      return makeError("argument #" + Twine(index) + " of '" + name +
                       "' is not an operand of its attn.attention; " +
                       kSupported);
  }
  return entry;
}

llvm::Expected<EntryFunction>
mlir::attn::runner::selectEntryFunction(ModuleOp module, StringRef name) {
  SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
  if (funcs.empty())
    return makeError("the module contains no func.func");

  if (name.empty()) {
    if (funcs.size() > 1)
      return makeError("several functions; choose one with -e: " +
                       joinNames(funcs));
    return analyzeFunction(funcs.front());
  }
  for (func::FuncOp func : funcs)
    if (func.getSymName() == name)
      return analyzeFunction(func);
  return makeError("no function '" + name +
                   "' in the module (functions: " + joinNames(funcs) + ")");
}
