//===- AttnOps.cpp - attn dialect ops and verifiers -------------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/SetVector.h"

#include <cmath>
#include <cstdio>

using namespace mlir;
using namespace mlir::attn;

/// Largest head dimension (D and Dv) the compiler supports.
static constexpr int64_t kMaxHeadDim = 256;

/// Prints a dimension for a diagnostic: its size, or `?` when dynamic.
static std::string dimStr(int64_t size) {
  return ShapedType::isDynamic(size) ? "?" : std::to_string(size);
}

/// Prints a scale the way a user wrote it: `0.125`, `-2`, `nan`, `inf`.
static std::string formatScale(double s) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%g", s);
  return buffer;
}

/// Two sizes are compatible unless both are static and differ.
static bool compatible(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

/// Checks a finite positive f32 attribute (`scale`, `softcap`).
static LogicalResult verifyPositive(Operation *op, StringRef name,
                                    std::optional<APFloat> value) {
  if (!value)
    return success();
  double v = value->convertToDouble();
  if (!std::isfinite(v) || !(v > 0.0))
    return op->emitOpError()
           << "expects '" << name << "' to be a finite positive f32, got "
           << formatScale(v);
  return success();
}

//===----------------------------------------------------------------------===//
// score_mod and mask_mod regions
//===----------------------------------------------------------------------===//

static bool isScalar(Type type) {
  return isa<IntegerType, IndexType, FloatType>(type);
}

/// Verifies the `score_mod` (`isScore`) or `mask_mod` region of `op`: one
/// block with the arguments (s: f32,) b, h, i, j: index, ending in attn.yield
/// of an f32 or an i1; pure scalar ops only; values from above the op read as
/// scalars or, element by element, from tensors (`tensor.extract`, problem
/// level) or from the op's `captures` buffers (`memref.load`, block level).
static LogicalResult verifyModifier(Operation *op, Region &region, bool isScore,
                                    bool blockLevel, ValueRange captures = {}) {
  if (region.empty())
    return success();
  StringRef name = isScore ? "score_mod" : "mask_mod";
  auto error = [&]() {
    return op->emitOpError() << "expects '" << name << "' ";
  };
  if (!region.hasOneBlock())
    return error() << "to have one block, got " << region.getBlocks().size();
  Block &block = region.front();
  Builder b(op->getContext());
  SmallVector<Type> expected(4, b.getIndexType());
  if (isScore)
    expected.insert(expected.begin(), b.getF32Type());
  if (TypeRange(block.getArgumentTypes()) != TypeRange(expected)) {
    std::string got;
    llvm::raw_string_ostream os(got);
    llvm::interleaveComma(block.getArgumentTypes(), os);
    return error() << "block arguments (" << (isScore ? "s: f32, " : "")
                   << "b: index, h: index, i: index, j: index), got (" << got
                   << ")";
  }
  auto yield = dyn_cast<YieldOp>(block.back());
  if (!yield)
    return error() << "to end in attn.yield";
  Type yieldType = isScore ? Type(b.getF32Type()) : Type(b.getI1Type());
  if (yield.getValue().getType() != yieldType)
    return error() << "to yield " << yieldType << ", got "
                   << yield.getValue().getType();

  StringRef reads = blockLevel ? "memref.load" : "tensor.extract";
  WalkResult result = region.walk([&](Operation *inner) {
    bool allowed =
        isa<arith::ArithDialect, math::MathDialect>(inner->getDialect()) ||
        isa<scf::IfOp, scf::YieldOp, YieldOp>(inner) ||
        (blockLevel ? isa<memref::LoadOp>(inner)
                    : isa<tensor::ExtractOp>(inner));
    if (!allowed) {
      error() << "to hold only pure arith, math, " << reads
              << " and scf.if ops, got '" << inner->getName() << "'";
      return WalkResult::interrupt();
    }
    for (OpOperand &operand : inner->getOpOperands()) {
      Value value = operand.get();
      if (region.isAncestor(value.getParentRegion()))
        continue;
      // A value from above the op: a scalar, or the tensor or buffer that
      // the op reads an element of.
      bool isSource = operand.getOperandNumber() == 0 &&
                      isa<tensor::ExtractOp, memref::LoadOp>(inner);
      if (isScalar(value.getType()) ||
          (isSource && !blockLevel && isa<RankedTensorType>(value.getType())) ||
          (isSource && blockLevel && llvm::is_contained(captures, value)))
        continue;
      error() << "to read values defined above the op as scalars or, through "
              << reads << ", as "
              << (blockLevel ? "the op's captures" : "ranked tensors")
              << "; got " << value.getType() << " in '" << inner->getName()
              << "'";
      return WalkResult::interrupt();
    }
    for (Type type : inner->getResultTypes()) {
      if (isScalar(type))
        continue;
      error() << "to compute on scalars, got " << type << " from '"
              << inner->getName() << "'";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

double AttentionOp::getScaleValue() {
  if (std::optional<APFloat> scale = getScale())
    return scale->convertToDouble();
  return 1.0 / std::sqrt(static_cast<double>(getHeadDim()));
}

bool AttentionOp::isIEEEPrecision() {
  std::optional<PrecisionKind> precision = getPrecision();
  return precision && *precision == PrecisionKind::IEEE;
}

std::optional<CausalKind> AttentionOp::getCausalKind() { return getCausal(); }

/// Packed sequences (`cu_seqlens`): both offset vectors, of one length
/// N + 1 >= 2; batch 1 everywhere; no operand that addresses batches.
static LogicalResult verifyPackedSequences(AttentionOp op) {
  Value cuQ = op.getCuSeqlensQ(), cuK = op.getCuSeqlensK();
  if (!cuQ && !cuK)
    return success();
  if (!cuQ || !cuK)
    return op.emitOpError()
           << "expects both 'cu_seqlens_q' and 'cu_seqlens_k', or neither";
  auto qType = cast<RankedTensorType>(cuQ.getType());
  auto kType = cast<RankedTensorType>(cuK.getType());
  for (auto [name, type] :
       {std::pair{"cu_seqlens_q", qType}, {"cu_seqlens_k", kType}})
    if (type.getRank() != 1 ||
        (!ShapedType::isDynamic(type.getDimSize(0)) && type.getDimSize(0) < 2))
      return op.emitOpError()
             << "expects '" << name
             << "' of shape N + 1 (N >= 1 sequences), got " << type;
  if (!compatible(qType.getDimSize(0), kType.getDimSize(0)))
    return op.emitOpError()
           << "expects 'cu_seqlens_q' and 'cu_seqlens_k' of one length (N + "
              "1), got "
           << qType << " and " << kType;
  if (op.getMask())
    return op.emitOpError()
           << "expects no 'mask' with 'cu_seqlens' (a mask addresses batches "
              "and whole sequences; use mask_mod, whose b is the sequence)";
  if (op.getKvLengths())
    return op.emitOpError()
           << "expects no 'kv_lengths' with 'cu_seqlens' (cu_seqlens_k gives "
              "each sequence its keys)";
  SmallVector<std::pair<StringRef, Type>> batched = {
      {"query", op.getQuery().getType()},
      {"key", op.getKey().getType()},
      {"value", op.getValue().getType()},
      {"result", op.getOutput().getType()}};
  if (Value lse = op.getLse())
    batched.push_back({"log-sum-exp result", lse.getType()});
  for (auto [name, type] : batched)
    if (cast<RankedTensorType>(type).getDimSize(0) != 1)
      return op.emitOpError() << "expects '" << name
                              << "' of batch 1 (static) with 'cu_seqlens' "
                                 "(the sequences are packed along dim 2), got "
                              << type;
  return success();
}

LogicalResult AttentionOp::verify() {
  // Attributes the op does not define change nothing it computes: a
  // misspelled or unsupported one would be silently ignored.
  DictionaryAttr unknown = (*this)->getDiscardableAttrDictionary();
  if (!unknown.empty())
    return emitOpError() << "does not know attribute '"
                         << unknown.begin()->getName().getValue()
                         << "' (its attributes: scale, causal, precision, "
                            "window, softcap)";

  RankedTensorType qType = getQuery().getType();
  RankedTensorType kType = getKey().getType();
  RankedTensorType vType = getValue().getType();
  RankedTensorType oType = getOutput().getType();

  // Ranks first: everything after indexes dimensions.
  struct Named {
    StringRef name;
    RankedTensorType type;
    StringRef layout;
  };
  for (const Named &operand : {Named{"query", qType, "B x Hq x Tq x D"},
                               Named{"key", kType, "B x Hkv x Tk x D"},
                               Named{"value", vType, "B x Hkv x Tk x Dv"},
                               Named{"result", oType, "B x Hq x Tq x Dv"}}) {
    if (operand.type.getRank() != 4)
      return emitOpError() << "expects '" << operand.name << "' of rank 4 ("
                           << operand.layout << "), got " << operand.type;
  }

  // Static sizes are at least 1 (B, H and T may be dynamic instead; the
  // head dims have checks of their own below).
  for (const Named &operand : {Named{"query", qType, "B x Hq x Tq x D"},
                               Named{"key", kType, "B x Hkv x Tk x D"},
                               Named{"value", vType, "B x Hkv x Tk x Dv"},
                               Named{"result", oType, "B x Hq x Tq x Dv"}}) {
    for (int64_t i = 0; i < 3; ++i) {
      int64_t size = operand.type.getDimSize(i);
      if (!ShapedType::isDynamic(size) && size < 1)
        return emitOpError() << "expects '" << operand.name << "' dim " << i
                             << " to be >= 1 (" << operand.layout << "), got "
                             << operand.type;
    }
  }

  // One element type for Q, K, V and O.
  Type elementType = qType.getElementType();
  if (kType.getElementType() != elementType)
    return emitOpError() << "expects 'key' to have the element type of "
                            "'query' ("
                         << elementType << "), got " << kType.getElementType();
  if (vType.getElementType() != elementType)
    return emitOpError() << "expects 'value' to have the element type of "
                            "'query' ("
                         << elementType << "), got " << vType.getElementType();
  if (oType.getElementType() != elementType)
    return emitOpError() << "expects the result to have the element type of "
                            "'query' ("
                         << elementType << "), got " << oType.getElementType();

  ArrayRef<int64_t> q = qType.getShape(), k = kType.getShape(),
                    v = vType.getShape(), o = oType.getShape();

  // Head dims: static and in range.
  int64_t d = q[3], dv = v[3];
  if (ShapedType::isDynamic(d) || d < 1 || d > kMaxHeadDim)
    return emitOpError() << "expects a static head dim D in 1.." << kMaxHeadDim
                         << " in 'query' (dim 3), got " << dimStr(d);
  if (ShapedType::isDynamic(dv) || dv < 1 || dv > kMaxHeadDim)
    return emitOpError() << "expects a static head dim Dv in 1.." << kMaxHeadDim
                         << " in 'value' (dim 3), got " << dimStr(dv);
  if (k[3] != d)
    return emitOpError() << "expects 'key' dim 3 (D) to be " << d
                         << " as in 'query', got " << dimStr(k[3]);

  // A paged cache: K and V are pools of NP pages of `page` keys, the batch
  // and Tk = P * page come from the block table (B x P).
  Value table = getBlockTable();
  auto tableType =
      table ? cast<RankedTensorType>(table.getType()) : RankedTensorType();
  if (table) {
    if (getCuSeqlensQ() || getCuSeqlensK())
      return emitOpError()
             << "expects no 'cu_seqlens' with 'block_table' (packed "
                "sequences have no batch rows to give pages to)";
    if (tableType.getRank() != 2)
      return emitOpError() << "expects 'block_table' of rank 2 (B x P, the "
                              "pages of each batch), got "
                           << tableType;
    if (ShapedType::isDynamic(k[2]) || k[2] < 1)
      return emitOpError() << "expects a static page size in 'key' dim 2 with "
                              "'block_table' (NP x Hkv x page x D), got "
                           << kType;
    if (!compatible(k[0], v[0]) || v[2] != k[2])
      return emitOpError() << "expects 'value' of NP x Hkv x page x Dv "
                              "pages as 'key' ("
                           << kType << "), got " << vType;
    if (!compatible(tableType.getDimSize(0), q[0]))
      return emitOpError() << "expects 'block_table' dim 0 to match 'query' "
                              "batch ("
                           << dimStr(q[0]) << "), got " << tableType;
  }

  // Batch.
  if (table) {
    // The pool's dim 0 counts pages, not batches.
  } else if (!compatible(k[0], q[0]) || !compatible(v[0], q[0]))
    return emitOpError() << "expects 'key' and 'value' batch (dim 0) to match "
                            "'query' ("
                         << dimStr(q[0]) << "), got " << dimStr(k[0]) << " and "
                         << dimStr(v[0]);

  if (!table && !compatible(v[0], k[0]))
    return emitOpError() << "expects 'value' batch (dim 0) to match 'key' ("
                         << dimStr(k[0]) << "), got " << dimStr(v[0]);
  // The sizes shared by several operands, from the first that has them
  // static: batch B (query, key, value), Tk (key, value).
  auto known = [](std::initializer_list<int64_t> sizes) {
    for (int64_t size : sizes)
      if (!ShapedType::isDynamic(size))
        return size;
    return ShapedType::kDynamic;
  };
  int64_t batch = table ? known({q[0], tableType.getDimSize(0)})
                        : known({q[0], k[0], v[0]});
  int64_t keys = known({k[2], v[2]});
  if (table)
    keys = ShapedType::isDynamic(tableType.getDimSize(1))
               ? ShapedType::kDynamic
               : tableType.getDimSize(1) * k[2];

  // KV heads and sequence length shared by K and V.
  if (!compatible(v[1], k[1]))
    return emitOpError() << "expects 'value' heads (dim 1) to match 'key' ("
                         << dimStr(k[1]) << "), got " << dimStr(v[1]);
  if (!compatible(v[2], k[2]))
    return emitOpError() << "expects 'value' sequence length (dim 2) to match "
                            "'key' (Tk = "
                         << dimStr(k[2]) << "), got " << dimStr(v[2]);

  // GQA: Hq must be a multiple of Hkv.
  int64_t hq = known({q[1], o[1]}), hkv = known({k[1], v[1]});
  if (!ShapedType::isDynamic(hq) && !ShapedType::isDynamic(hkv) &&
      hq % hkv != 0)
    return emitOpError() << "expects 'query' heads (Hq = " << hq
                         << ") to be a multiple of 'key' heads (Hkv = " << hkv
                         << ")";

  // Result shape B x Hq x Tq x Dv.
  int64_t expected[4] = {batch, q[1], q[2], dv};
  if (ShapedType::isDynamic(o[3]))
    return emitOpError() << "expects a static head dim Dv in the result (dim "
                            "3), "
                         << dv << " as in 'value', got " << oType;
  for (int i = 0; i < 4; ++i) {
    if (!compatible(o[i], expected[i]))
      return emitOpError() << "expects the result shape to be "
                           << dimStr(expected[0]) << "x" << dimStr(expected[1])
                           << "x" << dimStr(expected[2]) << "x"
                           << dimStr(expected[3]) << " (B x Hq x Tq x Dv), got "
                           << oType;
  }

  // Per-batch key counts: B.
  if (Value lengths = getKvLengths()) {
    auto type = cast<RankedTensorType>(lengths.getType());
    if (type.getRank() != 1 || !compatible(type.getDimSize(0), batch))
      return emitOpError() << "expects 'kv_lengths' of shape " << dimStr(batch)
                           << " (B), got " << type;
  }

  if (failed(verifyPackedSequences(*this)))
    return failure();

  // The log-sum-exp: B x Hq x Tq, f32.
  if (Value lse = getLse()) {
    auto lType = cast<RankedTensorType>(lse.getType());
    int64_t rows[3] = {known({batch, o[0]}), known({q[1], o[1]}),
                       known({q[2], o[2]})};
    bool ok = lType.getRank() == 3;
    for (int64_t i = 0; ok && i < 3; ++i)
      ok = compatible(lType.getDimSize(i), rows[i]);
    if (!ok)
      return emitOpError() << "expects the log-sum-exp result shape to be "
                           << dimStr(rows[0]) << "x" << dimStr(rows[1]) << "x"
                           << dimStr(rows[2]) << " (B x Hq x Tq), got "
                           << lType;
  }

  // Mask: rank 2 (Tq x Tk) or 4 (B x Hq x Tq x Tk), each dim 1 or full.
  if (Value mask = getMask()) {
    auto mType = cast<RankedTensorType>(mask.getType());
    if (mType.getRank() != 2 && mType.getRank() != 4)
      return emitOpError() << "expects 'mask' of rank 2 (Tq x Tk) or 4 "
                              "(B x Hq x Tq x Tk), got "
                           << mType;
    int64_t full[4] = {known({batch, o[0]}), known({q[1], o[1]}),
                       known({q[2], o[2]}), keys};
    ArrayRef<int64_t> m = mType.getShape();
    int64_t offset = 4 - mType.getRank();
    for (int64_t i = 0, e = mType.getRank(); i < e; ++i) {
      int64_t target = full[offset + i];
      if (!ShapedType::isDynamic(m[i]) && m[i] < 1)
        return emitOpError()
               << "expects 'mask' dim " << i << " to be >= 1, got " << mType;
      if (m[i] == 1 || compatible(m[i], target))
        continue;
      return emitOpError() << "expects 'mask' dim " << i
                           << " to be 1 or to match " << dimStr(target)
                           << " so that it broadcasts to B x Hq x Tq x Tk ("
                           << dimStr(full[0]) << "x" << dimStr(full[1]) << "x"
                           << dimStr(full[2]) << "x" << dimStr(full[3])
                           << "), got " << mType;
    }
  }

  if (failed(verifyPositive(*this, "scale", getScale())) ||
      failed(verifyPositive(*this, "softcap", getSoftcap())))
    return failure();

  // Precision only means something for f32 inputs.
  if (getPrecision() && !elementType.isF32())
    return emitOpError() << "expects 'precision' only with f32 inputs, got "
                         << elementType << " 'query'";

  return success();
}

SmallVector<Value> AttentionOp::getCapturedTensors() {
  SetVector<Value> tensors;
  for (Region *region : {&getScoreMod(), &getMaskMod()})
    region->walk([&](tensor::ExtractOp extract) {
      Value tensor = extract.getTensor();
      if (!getOperation()->isAncestor(tensor.getParentRegion()->getParentOp()))
        tensors.insert(tensor);
    });
  return tensors.takeVector();
}

LogicalResult AttentionOp::verifyRegions() {
  if (failed(verifyModifier(*this, getScoreMod(), /*isScore=*/true,
                            /*blockLevel=*/false)))
    return failure();
  return verifyModifier(*this, getMaskMod(), /*isScore=*/false,
                        /*blockLevel=*/false);
}

//===----------------------------------------------------------------------===//
// BlockAttentionOp
//===----------------------------------------------------------------------===//

LogicalResult BlockAttentionOp::verify() {
  Type elementType = getQuery().getType().getElementType();
  struct Named {
    StringRef name;
    MemRefType type;
  };
  // A key split's output holds f32 partial results for the combine step.
  bool split = static_cast<bool>(getKeySplit());
  if (split != static_cast<bool>(getNumKeySplits()))
    return emitOpError() << "expects 'key_split' and 'num_key_splits' together";
  if (bool(getCuSeqlensQ()) != bool(getCuSeqlensK()))
    return emitOpError() << "expects 'cu_seqlens_q' and 'cu_seqlens_k' "
                            "together";
  if (getCuSeqlensQ() && (split || getKvLengths() || getMask()))
    return emitOpError() << "expects no 'key_split', 'kv_lengths' or 'mask' "
                            "with 'cu_seqlens'";
  if (getBlockTable() && getCuSeqlensQ())
    return emitOpError() << "expects no 'cu_seqlens' with 'block_table'";
  if (getBlockTable() && getKey().getType().isDynamicDim(2))
    return emitOpError() << "expects a static page size in 'key' dim 2 with "
                            "'block_table', got "
                         << getKey().getType();
  if (split && (!getLse() || !getOutput().getType().getElementType().isF32()))
    return emitOpError() << "expects an f32 'output' and an 'lse' with "
                            "'key_split' (the partial results a combine "
                            "step merges)";
  for (const Named &operand :
       {Named{"key", getKey().getType()}, Named{"value", getValue().getType()},
        Named{"output", getOutput().getType()}}) {
    if (split && operand.name == "output")
      continue;
    if (operand.type.getElementType() != elementType)
      return emitOpError() << "expects '" << operand.name
                           << "' to have the element type of 'query' ("
                           << elementType << "), got "
                           << operand.type.getElementType();
  }
  if (Value mask = getMask()) {
    auto maskType = cast<MemRefType>(mask.getType());
    if (maskType.getRank() != 2 && maskType.getRank() != 4)
      return emitOpError() << "expects 'mask' of rank 2 or 4, got " << maskType;
  } else if (getBlockMap() && getMaskMod().empty()) {
    return emitOpError() << "expects 'block_map' only with a 'mask' or a "
                            "'mask_mod'";
  }
  if (getQuery().getType().getDimSize(3) != getKey().getType().getDimSize(3))
    return emitOpError() << "expects 'query' and 'key' to share the head dim";
  if (getValue().getType().getDimSize(3) != getOutput().getType().getDimSize(3))
    return emitOpError() << "expects 'value' and 'output' to share the head "
                            "dim Dv";
  if (std::optional<uint64_t> packed = getPackedHeads()) {
    MemRefType query = getQuery().getType(), key = getKey().getType();
    int64_t p = static_cast<int64_t>(*packed);
    if (query.isDynamicDim(1) || key.isDynamicDim(1) || query.isDynamicDim(2) ||
        query.getDimSize(1) % key.getDimSize(1) != 0 ||
        (query.getDimSize(1) / key.getDimSize(1)) % p != 0)
      return emitOpError() << "expects 'packed_heads' (" << p
                           << ") to divide the static query heads of a KV "
                              "head, with a static Tq";
    if (p * query.getDimSize(2) > getConfig().getBlockM())
      return emitOpError() << "expects 'packed_heads' x Tq ("
                           << p * query.getDimSize(2)
                           << ") rows within block_m ("
                           << getConfig().getBlockM() << ")";
    if (getMask() || getCuSeqlensQ() || hasVariant())
      return emitOpError() << "expects no 'mask', 'cu_seqlens', window, "
                              "softcap or region with 'packed_heads'";
  }
  return verifyPositive(*this, "softcap", getSoftcap());
}

LogicalResult BlockAttentionOp::verifyRegions() {
  if (failed(verifyModifier(*this, getScoreMod(), /*isScore=*/true,
                            /*blockLevel=*/true, getCaptures())))
    return failure();
  return verifyModifier(*this, getMaskMod(), /*isScore=*/false,
                        /*blockLevel=*/true, getCaptures());
}

#define GET_OP_CLASSES
#include "attn/Dialect/Attn/IR/AttnOps.cpp.inc"
