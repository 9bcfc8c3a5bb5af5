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
// as for plain programs (S = Q K^T + log2(e) * bias / c). A mask_mod of
// index arithmetic is also evaluated on each block's intervals, which says
// whether the block can be skipped or run unmasked.
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
    visibility.batch = regionBatch;
    visibility.head = op.getHead();
  }
  lastRowIndex = arith::SubIOp::create(b, loc, queryLen, one);
  lastKeyIndex = arith::SubIOp::create(b, loc, keyLen, one);
  lastValidRow = arith::MinSIOp::create(
      b, loc, arith::AddIOp::create(b, loc, row0, index(blockM - 1)),
      lastRowIndex);
  classifyMaskMod = isClassifiableMaskMod(op.getMaskMod());

  KeyBlockRange range =
      buildKeyBlockRange(b, loc, op, queryBlock, queryLen, keyLen);
  // A classified mask_mod, or a data-reading one's block map
  // (--attn-mask-block-map), says which blocks may keep a key. They lie in
  // [first, last): a scan over the bounds, so that the loops, and the
  // pipeliner's loads a block ahead, leave out the blocks outside
  // (prefix-LM: those right of the diagonal and the prefix; documents: those
  // of other documents).
  if (classifyMaskMod || (op.getBlockMap() && !op.getMask())) {
    auto scan = scf::ForOp::create(
        b, loc, range.start, range.end, one, ValueRange{range.end, range.start},
        [&](OpBuilder &nb, Location l, Value kb, ValueRange acc) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToEnd(nb.getInsertionBlock());
          Value keep = classifyMaskMod
                           ? buildModClass(
                                 arith::MulIOp::create(b, l, kb, index(blockN)))
                                 .first
                           : isLiveClass(loadBlockClass(kb));
          Value first = arith::SelectOp::create(
              b, l, keep, arith::MinSIOp::create(b, l, acc[0], kb), acc[0]);
          Value last = arith::SelectOp::create(
              b, l, keep, arith::AddIOp::create(b, l, kb, one), acc[1]);
          scf::YieldOp::create(b, l, ValueRange{first, last});
        });
    // Every bound clamped into [first, last] keeps the loops in order.
    Value first =
        arith::MaxSIOp::create(b, loc, range.start, scan.getResult(0));
    Value last = scan.getResult(1);
    for (Value *bound :
         {&range.start, &range.fullStart, &range.fullEnd, &range.end})
      *bound = arith::MinSIOp::create(
          b, loc, arith::MaxSIOp::create(b, loc, *bound, first), last);
  }
  // A mask tensor or a data-reading mask_mod can remove any key: every
  // visited block is masked (a removed one skipped: buildStep).
  if (op.getMask() || (!op.getMaskMod().empty() && !classifyMaskMod)) {
    buildKeyLoop(range.start, range.end, /*masked=*/true);
    return;
  }
  // The window's left edge: whole blocks (fullStart <= floor(Tk / bn)).
  buildKeyLoop(range.start, range.fullStart, /*masked=*/true,
               /*partial=*/false);
  buildKeyLoop(range.fullStart, range.fullEnd, /*masked=*/false);
  buildKeyLoop(range.fullEnd, range.end, /*masked=*/true);
}

//===----------------------------------------------------------------------===//
// mask_mod on intervals
//===----------------------------------------------------------------------===//
//
// Over a block, b and h are points, i runs over the program's valid rows
// [row0, lastValidRow] and j over the block's keys [col0, min(col0 + bn,
// Tk) - 1]. Each integer of the region gets a range [lo, hi] and each i1 a
// pair (may be true, may be false), computed by the ops below (index
// arithmetic on positions, which does not overflow); any other op leaves
// the mask_mod unclassified. The mask_mod drops every pair of a block when
// its result may not be true, and keeps every pair when it may not be
// false.

/// The divisor of a division the ranges support: a positive constant.
static std::optional<int64_t> positiveDivisor(Operation *op) {
  std::optional<int64_t> divisor = getConstantIntValue(op->getOperand(1));
  if (divisor && *divisor > 0)
    return divisor;
  return std::nullopt;
}

static bool isClassifiableOp(Operation *inner) {
  if (isa<YieldOp, arith::ConstantOp, arith::AddIOp, arith::SubIOp,
          arith::MulIOp, arith::MinSIOp, arith::MaxSIOp, arith::IndexCastOp,
          arith::AndIOp, arith::OrIOp, arith::XOrIOp, arith::SelectOp>(inner))
    return true;
  if (isa<arith::DivSIOp, arith::FloorDivSIOp, arith::CeilDivSIOp>(inner))
    return positiveDivisor(inner).has_value();
  if (auto cmp = dyn_cast<arith::CmpIOp>(inner))
    return llvm::is_contained(
        {arith::CmpIPredicate::eq, arith::CmpIPredicate::ne,
         arith::CmpIPredicate::slt, arith::CmpIPredicate::sle,
         arith::CmpIPredicate::sgt, arith::CmpIPredicate::sge,
         arith::CmpIPredicate::ult, arith::CmpIPredicate::ule,
         arith::CmpIPredicate::ugt, arith::CmpIPredicate::uge},
        cmp.getPredicate());
  return false;
}

bool mlir::attn::isClassifiableMaskMod(Region &region) {
  if (region.empty())
    return false;
  WalkResult result = region.walk([](Operation *inner) {
    // An i1 has a pair, not a range: i1s only where the ops take pairs
    // (and, or, xor, select, yield); no floats.
    auto isBool = [](Type t) { return t.isInteger(1); };
    bool ok = isClassifiableOp(inner) &&
              llvm::all_of(inner->getOperandTypes(),
                           [](Type t) { return t.isIntOrIndex(); });
    if (isa<arith::AndIOp, arith::OrIOp, arith::XOrIOp>(inner))
      ok = ok && isBool(inner->getResult(0).getType());
    else if (isa<arith::SelectOp>(inner))
      ok = ok && isBool(inner->getOperand(0).getType());
    else if (!isa<arith::ConstantOp, YieldOp>(inner))
      ok = ok && llvm::none_of(inner->getOperandTypes(), isBool);
    return ok ? WalkResult::advance() : WalkResult::interrupt();
  });
  return !result.wasInterrupted();
}

std::pair<Value, Value> ProgramBuilder::buildModClass(Value col0) {
  // [lo, hi] for an integer, (may be true, may be false) for an i1.
  using Range = std::pair<Value, Value>;
  using P = arith::CmpIPredicate;
  Block &block = op.getMaskMod().front();
  llvm::DenseMap<Value, Range> ranges;
  auto cmp = [&](P p, Value x, Value y) -> Value {
    return arith::CmpIOp::create(b, loc, p, x, y);
  };
  auto both = [&](Value x, Value y) -> Value {
    return arith::AndIOp::create(b, loc, x, y);
  };
  auto either = [&](Value x, Value y) -> Value {
    return arith::OrIOp::create(b, loc, x, y);
  };
  auto negate = [&](Value x) -> Value {
    return arith::XOrIOp::create(b, loc, x,
                                 arith::ConstantIntOp::create(b, loc, 1, 1));
  };
  auto minOf = [&](Value x, Value y) -> Value {
    return arith::MinSIOp::create(b, loc, x, y);
  };
  auto maxOf = [&](Value x, Value y) -> Value {
    return arith::MaxSIOp::create(b, loc, x, y);
  };
  auto get = [&](Value v) -> Range {
    auto it = ranges.find(v);
    if (it != ranges.end())
      return it->second;
    // A scalar from above the op: one value.
    if (v.getType().isInteger(1))
      return {v, negate(v)};
    return {v, v};
  };
  ranges[block.getArgument(0)] = {regionBatch, regionBatch};
  ranges[block.getArgument(1)] = {op.getHead(), op.getHead()};
  ranges[block.getArgument(2)] = {row0, lastValidRow};
  ranges[block.getArgument(3)] = {
      col0, minOf(arith::AddIOp::create(b, loc, col0, index(blockN - 1)),
                  lastKeyIndex)};

  for (Operation &inner : block.without_terminator()) {
    Value result = inner.getResult(0);
    Range x = inner.getNumOperands() > 0 ? get(inner.getOperand(0)) : Range();
    Range y = inner.getNumOperands() > 1 ? get(inner.getOperand(1)) : Range();
    Range r;
    if (auto constant = dyn_cast<arith::ConstantOp>(inner)) {
      Value c = arith::ConstantOp::create(b, loc, constant.getValue());
      r = get(c);
    } else if (isa<arith::AddIOp>(inner)) {
      r = {arith::AddIOp::create(b, loc, x.first, y.first),
           arith::AddIOp::create(b, loc, x.second, y.second)};
    } else if (isa<arith::SubIOp>(inner)) {
      r = {arith::SubIOp::create(b, loc, x.first, y.second),
           arith::SubIOp::create(b, loc, x.second, y.first)};
    } else if (isa<arith::MulIOp>(inner)) {
      Value p[] = {arith::MulIOp::create(b, loc, x.first, y.first),
                   arith::MulIOp::create(b, loc, x.first, y.second),
                   arith::MulIOp::create(b, loc, x.second, y.first),
                   arith::MulIOp::create(b, loc, x.second, y.second)};
      r = {minOf(minOf(p[0], p[1]), minOf(p[2], p[3])),
           maxOf(maxOf(p[0], p[1]), maxOf(p[2], p[3]))};
    } else if (isa<arith::DivSIOp, arith::FloorDivSIOp, arith::CeilDivSIOp>(
                   inner)) {
      // Non-decreasing in the dividend for a positive divisor.
      IRMapping lo, hi;
      lo.map(inner.getOperand(0), x.first);
      hi.map(inner.getOperand(0), x.second);
      r = {b.clone(inner, lo)->getResult(0), b.clone(inner, hi)->getResult(0)};
    } else if (isa<arith::MinSIOp>(inner)) {
      r = {minOf(x.first, y.first), minOf(x.second, y.second)};
    } else if (isa<arith::MaxSIOp>(inner)) {
      r = {maxOf(x.first, y.first), maxOf(x.second, y.second)};
    } else if (isa<arith::IndexCastOp>(inner)) {
      r = {arith::IndexCastOp::create(b, loc, result.getType(), x.first),
           arith::IndexCastOp::create(b, loc, result.getType(), x.second)};
    } else if (isa<arith::AndIOp>(inner)) {
      r = {both(x.first, y.first), either(x.second, y.second)};
    } else if (isa<arith::OrIOp>(inner)) {
      r = {either(x.first, y.first), both(x.second, y.second)};
    } else if (isa<arith::XOrIOp>(inner)) {
      r = {either(both(x.first, y.second), both(x.second, y.first)),
           either(both(x.first, y.first), both(x.second, y.second))};
    } else if (auto select = dyn_cast<arith::SelectOp>(inner)) {
      Range t = get(select.getTrueValue()), f = get(select.getFalseValue());
      if (result.getType().isInteger(1)) {
        r = {either(both(x.first, t.first), both(x.second, f.first)),
             either(both(x.first, t.second), both(x.second, f.second))};
      } else {
        // One branch's range, or the union of both.
        auto pick = [&](Value whenTrue, Value whenFalse, Value union_) {
          return arith::SelectOp::create(
              b, loc, x.first,
              arith::SelectOp::create(b, loc, x.second, union_, whenTrue),
              whenFalse);
        };
        r = {pick(t.first, f.first, minOf(t.first, f.first)),
             pick(t.second, f.second, maxOf(t.second, f.second))};
      }
    } else {
      auto compare = cast<arith::CmpIOp>(inner);
      // An unsigned compare is the signed one where both ranges are
      // non-negative; elsewhere it may be either.
      P predicate = compare.getPredicate();
      Value unsignedUnknown;
      if (predicate >= P::ult && predicate <= P::uge) {
        Value zero = arith::ConstantOp::create(
            b, loc, b.getZeroAttr(compare.getLhs().getType()));
        unsignedUnknown = negate(
            both(cmp(P::sge, x.first, zero), cmp(P::sge, y.first, zero)));
        predicate =
            static_cast<P>(static_cast<int>(predicate) -
                           static_cast<int>(P::ult) + static_cast<int>(P::slt));
      }
      switch (predicate) {
      case P::slt:
        r = {cmp(P::slt, x.first, y.second), cmp(P::sge, x.second, y.first)};
        break;
      case P::sle:
        r = {cmp(P::sle, x.first, y.second), cmp(P::sgt, x.second, y.first)};
        break;
      case P::sgt:
        r = {cmp(P::sgt, x.second, y.first), cmp(P::sle, x.first, y.second)};
        break;
      case P::sge:
        r = {cmp(P::sge, x.second, y.first), cmp(P::slt, x.first, y.second)};
        break;
      default: {
        // eq and ne: equal somewhere when the ranges overlap, unequal
        // somewhere unless both are the same single value.
        Value overlap = both(cmp(P::sle, x.first, y.second),
                             cmp(P::sle, y.first, x.second));
        Value differ = negate(both(
            both(cmp(P::eq, x.first, x.second), cmp(P::eq, y.first, y.second)),
            cmp(P::eq, x.first, y.first)));
        r = predicate == P::eq ? Range{overlap, differ}
                               : Range{differ, overlap};
        break;
      }
      }
      if (unsignedUnknown)
        r = {either(r.first, unsignedUnknown),
             either(r.second, unsignedUnknown)};
    }
    ranges[result] = r;
  }
  return get(cast<YieldOp>(block.getTerminator()).getValue());
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
  Value scaleOverCap = softcap ? f32Const(op.getScale().convertToDouble() /
                                          softcap->convertToDouble())
                               : Value();
  Region &scoreMod = op.getScoreMod(), &maskMod = op.getMaskMod();
  generic(
      ValueRange{}, ValueRange{sTile}, {map(2, {0, 1})},
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
        // softcap * tanh(scale * s / softcap) with scale / softcap as
        // one factor: no division per score.
        if (cap)
          s = arith::MulFOp::create(
              nb, l, cap,
              math::TanhOp::create(
                  nb, l, arith::MulFOp::create(nb, l, s, scaleOverCap)));
        else if (transformScores)
          s = arith::MulFOp::create(nb, l, s, scale);
        else if (!foldScale)
          s = arith::MulFOp::create(nb, l, s, f32Const(scaleLog2e));
        if (bias)
          s = arith::AddFOp::create(
              nb, l, s, arith::MulFOp::create(nb, l, bias, biasFactor));
        if (!scoreMod.empty())
          s = inlineModifier(nb, scoreMod,
                             {s, regionBatch, op.getHead(), ic, jc});
        if (transformScores)
          s = arith::MulFOp::create(nb, l, s, toExp2);
        if (masked && !maskMod.empty())
          keep = arith::AndIOp::create(
              nb, l, keep,
              inlineModifier(nb, maskMod, {regionBatch, op.getHead(), ic, jc}));
        if (masked)
          s = arith::SelectOp::create(nb, l, keep, s, negInf);
        yieldValue(nb, l, s);
      });
}
