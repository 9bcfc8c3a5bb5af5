//===- ProgramVariants.cpp - variants in a program's expansion --*- C++ -*-===//
//
// Part of the attn-mlir project.
//
// The parts of `--attn-online-softmax`'s expansion for the variants of
// SPEC.md section 1.1 (window, softcap, score_mod, mask_mod): the key loops
// over the blocks that buildKeyBlockRange derives, and the scores with the
// regions inlined per element:
//
//   s = scale * (Q K^T)[i, j]
//   s = softcap * tanh(s / softcap)                 (softcap)
//   s = s + bias                                    (float mask)
//   s = score_mod(s, b, h, i, j)                    (score_mod)
//   S = log2(e) * s, or -inf where the key tail, causal, the window, the
//       mask or mask_mod removes the key           (masked blocks)
//
// Without a softcap or a score_mod the scale stays folded into the exponent
// as for plain programs (S = Q K^T + log2(e) * bias / c).
//
//===----------------------------------------------------------------------===//

#include "ProgramBuilder.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/IRMapping.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::detail;

void ProgramBuilder::buildVariantLoops() {
  Value zero = index(0), one = index(1);
  if (op.getCausal())
    causalOffset = buildCausalOffset(b, loc, op, queryLen, keyLen);
  visibility.queryLen = queryLen;
  visibility.keyLen = keyLen;
  visibility.causalOffset = causalOffset;
  if (WindowAttr window = op.getWindowAttr()) {
    visibility.windowOffset = causalOffset ? causalOffset : zero;
    visibility.windowLeft = window.getLeft();
    visibility.windowRight = window.getRight();
  }
  if (Value mask = op.getMask()) {
    visibility.mask = mask;
    for (int64_t d = 0, e = cast<MemRefType>(mask.getType()).getRank(); d < e;
         ++d)
      visibility.maskSizes.push_back(dim(mask, d));
    visibility.batch = op.getBatch();
    visibility.head = op.getHead();
  }
  lastRowIndex = arith::SubIOp::create(b, loc, queryLen, one);
  lastKeyIndex = arith::SubIOp::create(b, loc, keyLen, one);

  KeyBlockRange range = buildKeyBlockRange(b, loc, op, queryLen, keyLen);
  // A mask tensor or a mask_mod can remove any key: every visited block is
  // masked.
  if (op.getMask() || !op.getMaskMod().empty()) {
    buildKeyLoop(range.start, range.end, /*masked=*/true);
    return;
  }
  buildKeyLoop(range.start, range.fullStart, /*masked=*/true);
  buildKeyLoop(range.fullStart, range.fullEnd, /*masked=*/false);
  buildKeyLoop(range.fullEnd, range.end, /*masked=*/true);
}

Value ProgramBuilder::inlineModifier(OpBuilder &nb, Region &region,
                                     ValueRange args) {
  Block &block = region.front();
  IRMapping mapping;
  mapping.map(block.getArguments(), args);
  for (Operation &inner : block.without_terminator())
    nb.clone(inner, mapping);
  return mapping.lookup(cast<YieldOp>(block.getTerminator()).getValue());
}

void ProgramBuilder::buildVariantScores(Value col0, bool masked) {
  if (!masked && !transformScores) {
    // Nothing to apply: the plain scores of a block that needs no mask.
    buildScoreScaleAndMasks(col0, /*masked=*/false);
    return;
  }
  constexpr double log2e = 1.4426950408889634;
  Value negInf = f32Const(-std::numeric_limits<double>::infinity());
  Value scale = f32Const(op.getScale().convertToDouble());
  Value toExp2 = f32Const(foldScale ? 1.0 : log2e);
  // With the scale folded, a bias b is added as log2(e) * b / c.
  Value biasFactor = f32Const(foldScale ? log2e / scaleLog2e : 1.0);
  std::optional<APFloat> softcap = op.getSoftcap();
  Value cap = softcap ? f32Const(softcap->convertToDouble()) : Value();
  Region &scoreMod = op.getScoreMod(), &maskMod = op.getMaskMod();
  generic(ValueRange{}, ValueRange{sTile}, {map(2, {0, 1})},
          {IteratorType::parallel, IteratorType::parallel},
          [&](OpBuilder &nb, Location l, ValueRange args) {
            auto [i, j] = position(nb, l, col0);
            Value s = args[0], bias, keep;
            if (masked)
              keep = visibility.buildVisible(nb, l, i, j, &bias);
            // The regions see rows and keys inside Tq and Tk.
            Value ic, jc;
            if (!scoreMod.empty() || !maskMod.empty()) {
              ic = arith::MinSIOp::create(nb, l, i, lastRowIndex);
              jc = arith::MinSIOp::create(nb, l, j, lastKeyIndex);
            }
            if (transformScores)
              s = arith::MulFOp::create(nb, l, s, scale);
            else if (!foldScale)
              s = arith::MulFOp::create(nb, l, s, f32Const(scaleLog2e));
            if (cap)
              s = arith::MulFOp::create(
                  nb, l, cap,
                  math::TanhOp::create(nb, l,
                                       arith::DivFOp::create(nb, l, s, cap)));
            if (bias)
              s = arith::AddFOp::create(
                  nb, l, s, arith::MulFOp::create(nb, l, bias, biasFactor));
            if (!scoreMod.empty())
              s = inlineModifier(nb, scoreMod,
                                 {s, op.getBatch(), op.getHead(), ic, jc});
            if (transformScores)
              s = arith::MulFOp::create(nb, l, s, toExp2);
            if (!maskMod.empty())
              keep = arith::AndIOp::create(
                  nb, l, keep,
                  inlineModifier(nb, maskMod,
                                 {op.getBatch(), op.getHead(), ic, jc}));
            if (masked)
              s = arith::SelectOp::create(nb, l, keep, s, negInf);
            yieldValue(nb, l, s);
          });
}
