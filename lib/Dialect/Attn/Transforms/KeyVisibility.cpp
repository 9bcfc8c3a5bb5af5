//===- KeyVisibility.cpp - which keys a query row sees ---------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
// The block IR of SPEC.md section 1's masking: the key tail, the causal
// diagonal, the window and the user mask, shared by the scores of
// `--attn-online-softmax` and the block classes of `--attn-mask-block-map`.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"

#include <limits>

#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::attn;

Value KeyVisibility::buildVisible(OpBuilder &b, Location loc, Value i, Value j,
                                  Value *bias) const {
  // Key tail and causal diagonal: j < Tk and j <= i + off, as one compare
  // against the row's limit, j < min(Tk, i + off + 1), which is hoisted out of
  // the key loop with the row (one ISETP and FSEL a score on the diagonal
  // blocks, not two and an AND).
  // A window's right side joins the same compare when there is no causal
  // limit (under causal it cannot see further); its left side is one more
  // compare against the row's first key, i + off - L.
  Value limit = keyLen;
  if (causalOffset) {
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    Value last = arith::AddIOp::create(
        b, loc, i, b.createOrFold<arith::AddIOp>(loc, causalOffset, one));
    limit = arith::MinSIOp::create(b, loc, keyLen, last);
  } else if (windowRight >= 0) {
    Value after = arith::ConstantIndexOp::create(b, loc, windowRight + 1);
    Value last = arith::AddIOp::create(
        b, loc, i, b.createOrFold<arith::AddIOp>(loc, windowOffset, after));
    limit = arith::MinSIOp::create(b, loc, keyLen, last);
  }
  Value keep =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, j, limit);
  if (windowLeft >= 0) {
    Value left = arith::ConstantIndexOp::create(b, loc, windowLeft);
    Value first = arith::AddIOp::create(
        b, loc, i, b.createOrFold<arith::SubIOp>(loc, windowOffset, left));
    keep = arith::AndIOp::create(
        b, loc, keep,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, j, first));
  }
  if (!mask && !maskMod)
    return keep;
  // Clamp so that padded rows and tail keys read inside the mask.
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value ic = arith::MinSIOp::create(
      b, loc, i, arith::SubIOp::create(b, loc, queryLen, one));
  Value jc = arith::MinSIOp::create(b, loc, j,
                                    arith::SubIOp::create(b, loc, keyLen, one));
  if (maskMod)
    keep = arith::AndIOp::create(
        b, loc, keep, inlineModifier(b, *maskMod, {batch, head, ic, jc}));
  if (!mask)
    return keep;
  Value full[] = {batch, head, ic, jc};
  SmallVector<Value> indices;
  int64_t rank = maskSizes.size();
  for (int64_t d = 0; d < rank; ++d) {
    Value isOne = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                        maskSizes[d], one);
    indices.push_back(
        arith::SelectOp::create(b, loc, isOne, zero, full[4 - rank + d]));
  }
  Value m = memref::LoadOp::create(b, loc, mask, indices);
  if (m.getType().isInteger(1))
    return arith::AndIOp::create(b, loc, keep, m);
  // -inf removes the key outright (SPEC: the sum runs over the keys that are
  // not masked out), so a NaN score of a removed key cannot reach its row.
  Type f32 = b.getF32Type();
  Value value = m.getType() == f32
                    ? m
                    : arith::ExtFOp::create(b, loc, f32, m).getResult();
  Value negInf = arith::ConstantOp::create(
      b, loc, b.getF32FloatAttr(-std::numeric_limits<double>::infinity()));
  if (bias)
    *bias = value;
  return arith::AndIOp::create(
      b, loc, keep,
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, value, negInf));
}

Value KeyVisibility::buildTerm(OpBuilder &b, Location loc, Value i,
                               Value j) const {
  Value bias;
  Value keep = buildVisible(b, loc, i, j, &bias);
  Value add = bias ? arith::MulFOp::create(
                         b, loc, bias,
                         arith::ConstantOp::create(
                             b, loc, b.getF32FloatAttr(1.4426950408889634)))
                         .getResult()
                   : arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0))
                         .getResult();
  Value negInf = arith::ConstantOp::create(
      b, loc, b.getF32FloatAttr(-std::numeric_limits<double>::infinity()));
  return arith::SelectOp::create(b, loc, keep, add, negInf);
}

Value mlir::attn::inlineModifier(OpBuilder &b, Region &region,
                                 ValueRange args) {
  Block &block = region.front();
  IRMapping mapping;
  mapping.map(block.getArguments(), args);
  for (Operation &inner : block.without_terminator())
    b.clone(inner, mapping);
  return mapping.lookup(cast<YieldOp>(block.getTerminator()).getValue());
}

Value mlir::attn::buildCausalOffset(OpBuilder &b, Location loc,
                                    BlockAttentionOp op, Value queryLen,
                                    Value keyLen) {
  std::optional<CausalKind> causal = op.getCausal();
  if (!causal)
    return Value();
  if (*causal == CausalKind::TopLeft)
    return arith::ConstantIndexOp::create(b, loc, 0);
  return arith::SubIOp::create(b, loc, keyLen, queryLen);
}
