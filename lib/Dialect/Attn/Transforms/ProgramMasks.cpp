//===- ProgramMasks.cpp - masks and block checks of a program ---*- C++ -*-===//
//
// Part of the attn-mlir project.
//
// The parts of `--attn-online-softmax`'s expansion that deal with masks:
// the scores' scale and masks, the block-skip checks (user mask, causal
// diagonal) and the classes of the mask block map.
//
//===----------------------------------------------------------------------===//

#include "ProgramBuilder.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::detail;

void ProgramBuilder::buildScoreScaleAndMasks(Value col0, bool masked) {
  // c = scale * log2(e), folded into one multiply (or into the exponent,
  // see foldScale); the bias of a float mask is scaled by log2(e) so that
  // exp2 of the sum is exp of the original.
  constexpr double log2e = 1.4426950408889634;
  Value c = f32Const(scaleLog2e);
  // Scales S unless the scale is folded into the exponent.
  auto scaled = [&](OpBuilder &nb, Location l, Value s) -> Value {
    return foldScale ? s : arith::MulFOp::create(nb, l, s, c).getResult();
  };
  if (!masked) {
    if (foldScale)
      return;
    generic(ValueRange{}, ValueRange{sTile}, {map(2, {0, 1})},
            {IteratorType::parallel, IteratorType::parallel},
            [&](OpBuilder &nb, Location l, ValueRange args) {
              yieldValue(nb, l, arith::MulFOp::create(nb, l, args[0], c));
            });
    return;
  }

  Value negInf = f32Const(-std::numeric_limits<double>::infinity());
  // A bias b adds log2(e) * b to c * S, or log2(e) * b / c to S.
  Value biasFactor = f32Const(foldScale ? log2e / scaleLog2e : log2e);
  if (addTile) {
    // The block check read the mask into addTile: S = c * S + add, or with
    // the scale folded S + add / c (c > 0: the exponent multiplies it by c
    // again; nothing for an i1 mask, whose add is 0), or -inf where the key
    // is removed (a NaN score of a removed key stays out).
    Value invC = f32Const(1.0 / scaleLog2e);
    generic(ValueRange{addTile}, ValueRange{sTile},
            {map(2, {0, 1}), map(2, {0, 1})},
            {IteratorType::parallel, IteratorType::parallel},
            [&](OpBuilder &nb, Location l, ValueRange args) {
              Value removed = arith::CmpFOp::create(
                  nb, l, arith::CmpFPredicate::OEQ, args[0], negInf);
              Value s = scaled(nb, l, args[1]);
              if (!foldScale)
                s = arith::AddFOp::create(nb, l, s, args[0]);
              else if (floatMask)
                s = math::FmaOp::create(nb, l, args[0], invC, s);
              yieldValue(nb, l,
                         arith::SelectOp::create(nb, l, removed, negInf, s));
            });
    return;
  }
  generic(ValueRange{}, ValueRange{sTile}, {map(2, {0, 1})},
          {IteratorType::parallel, IteratorType::parallel},
          [&](OpBuilder &nb, Location l, ValueRange args) {
            auto [i, j] = position(nb, l, col0);
            Value s = scaled(nb, l, args[0]);
            Value bias;
            Value keep = visibility.buildVisible(nb, l, i, j, &bias);
            if (bias)
              s = arith::AddFOp::create(
                  nb, l, s, arith::MulFOp::create(nb, l, bias, biasFactor));
            yieldValue(nb, l, arith::SelectOp::create(nb, l, keep, s, negInf));
          });
}

void ProgramBuilder::buildMaskTerms(Value col0) {
  // The mask read once into addTile: the term each score gets, -inf for a
  // removed key.
  generic(ValueRange{}, ValueRange{addTile}, {map(2, {0, 1})},
          {IteratorType::parallel, IteratorType::parallel},
          [&](OpBuilder &nb, Location l, ValueRange args) {
            auto [i, j] = position(nb, l, col0);
            yieldValue(nb, l, visibility.buildTerm(nb, l, i, j));
          });
}

Value ProgramBuilder::loadBlockClass(Value kb) {
  Value blockMap = op.getBlockMap();
  auto mapType = cast<MemRefType>(blockMap.getType());
  Value zero = index(0);
  Value mapBatch = mapType.getDimSize(0) == 1 ? zero : op.getBatch();
  Value mapHead = mapType.getDimSize(1) == 1 ? zero : op.getHead();
  return memref::LoadOp::create(
      b, loc, blockMap, ValueRange{mapBatch, mapHead, op.getQueryBlock(), kb});
}

Value ProgramBuilder::isLiveClass(Value cls) {
  return arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::ne, cls,
      arith::ConstantIntOp::create(
          b, loc, static_cast<int64_t>(MaskBlockClass::Removed), 8));
}

ProgramBuilder::LiveRange ProgramBuilder::buildLiveRange(Value numVisit) {
  // In 32 bits: the block count fits, and on the GPU (64-bit index) the
  // scan's compares and selects would be pairs of instructions, run by
  // every warp before the program's first K/V copy (docs/GPU.md, Mask
  // tensors: the block map).
  Type i32 = b.getI32Type();
  auto c32 = [&](int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, v, 32);
  };
  Value zero = c32(0), one = c32(1);
  Value count = arith::IndexCastOp::create(b, loc, i32, numVisit);
  auto classConst = [&](MaskBlockClass c) {
    return arith::ConstantIntOp::create(b, loc, static_cast<int64_t>(c), 8);
  };
  Value removed = classConst(MaskBlockClass::Removed);
  Value zeroTerms = classConst(MaskBlockClass::Zero);
  Value triangularTerms = classConst(MaskBlockClass::Triangular);
  auto scan = scf::ForOp::create(
      b, loc, zero, count, one, ValueRange{count, zero, count, zero},
      [&](OpBuilder &nb, Location l, Value kb, ValueRange range) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToEnd(nb.getInsertionBlock());
        Value cls = loadBlockClass(
            arith::IndexCastOp::create(b, l, b.getIndexType(), kb));
        Value live =
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, cls, removed);
        Value first = arith::SelectOp::create(
            b, l, live, arith::MinSIOp::create(b, l, range[0], kb), range[0]);
        Value last = arith::SelectOp::create(
            b, l, live, arith::AddIOp::create(b, l, kb, one), range[1]);
        // The zero run ends at the first block from `first` on that is not
        // of zero terms (removed or mixed); zeroEnd < numVisit once it has.
        Value started =
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::sle, first, kb);
        Value running = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq,
                                              range[2], count);
        Value notZero = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne,
                                              cls, zeroTerms);
        Value ends = arith::AndIOp::create(
            b, l, arith::AndIOp::create(b, l, started, running), notZero);
        Value zeroEnd = arith::SelectOp::create(b, l, ends, kb, range[2]);
        // The triangular blocks, counted.
        Value isTriangular = arith::CmpIOp::create(
            b, l, arith::CmpIPredicate::eq, cls, triangularTerms);
        Value triangular = arith::AddIOp::create(
            b, l, range[3],
            arith::ExtUIOp::create(b, l, b.getI32Type(), isTriangular));
        scf::YieldOp::create(b, l,
                             ValueRange{first, last, zeroEnd, triangular});
      });
  scan->setAttr(kBlockRowScanAttrName, b.getUnitAttr());
  auto toIndex = [&](Value v) -> Value {
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
  };
  return {toIndex(scan.getResult(0)), toIndex(scan.getResult(1)),
          toIndex(scan.getResult(2)), toIndex(scan.getResult(3))};
}

ProgramBuilder::CausalRow
ProgramBuilder::buildCausalRowCheck(const LiveRange &range, Value rows,
                                    Value numBlocks) {
  // The classes a triangular mask gives the row (its diagonal at off =
  // triOffset; padded rows read the last row): blocks whose keys the first
  // row all sees, up to floor((row0 + off + 1) / block_n), are of zero
  // terms but for the key tail; blocks with a key the last row sees, up to
  // floor((row0 + rows - 1 + off) / block_n) + 1, are live; the ones
  // between are triangular (some key removed, the others at 0).
  Value zero = index(0), one = index(1), bn = index(blockN);
  Value lastKey =
      arith::AddIOp::create(b, loc, arith::SubIOp::create(b, loc, row0, one),
                            arith::AddIOp::create(b, loc, rows, triOffset));
  Value visit = arith::AddIOp::create(
      b, loc, arith::FloorDivSIOp::create(b, loc, lastKey, bn), one);
  visit = arith::MinSIOp::create(
      b, loc, arith::MaxSIOp::create(b, loc, visit, zero), numBlocks);
  Value firstKey = arith::AddIOp::create(
      b, loc, arith::AddIOp::create(b, loc, row0, triOffset), one);
  Value below = arith::FloorDivSIOp::create(b, loc, firstKey, bn);
  below = arith::MaxSIOp::create(b, loc, below, zero);
  below = arith::MinSIOp::create(b, loc, below,
                                 arith::DivSIOp::create(b, loc, keyLen, bn));
  below = arith::MinSIOp::create(b, loc, below, visit);
  // The scan's range is that one exactly when the map's first live block
  // is 0, its last is visit - 1, its zero-term run ends at `below` and
  // every block from there to the last is triangular (blocks before the
  // run's end are of zero terms, blocks past the last removed, so the
  // count of triangular blocks says it). A row with no live block keeps
  // the map's loops.
  auto eq = [&](Value x, Value y) -> Value {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, y);
  };
  Value shaped = arith::AndIOp::create(
      b, loc,
      arith::AndIOp::create(b, loc, eq(range.first, zero),
                            eq(range.last, visit)),
      arith::AndIOp::create(
          b, loc, eq(range.zeroEnd, below),
          eq(range.triangular,
             arith::SubIOp::create(b, loc, range.last, range.zeroEnd))));
  shaped = arith::AndIOp::create(
      b, loc, shaped,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, visit, zero));
  return {shaped, below, visit};
}

Value ProgramBuilder::buildLiveCheck(Value kb, Value col0) {
  if (op.getBlockMap()) {
    // The class of the block: removed blocks are skipped; the others'
    // scores are built under the skip branch (buildMapScores).
    pendingClass = loadBlockClass(kb);
    return isLiveClass(pendingClass);
  }
  buildMaskTerms(col0);
  Value negInf = f32Const(-std::numeric_limits<double>::infinity());
  fill(liveFlag, arith::ConstantIntOp::create(b, loc, 0, 1));
  MLIRContext *ctx = b.getContext();
  generic(ValueRange{addTile}, ValueRange{liveFlag},
          {map(2, {0, 1}), AffineMap::get(2, 0, {}, ctx)},
          {IteratorType::reduction, IteratorType::reduction},
          [&](OpBuilder &nb, Location l, ValueRange args) {
            Value keep = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::UNE,
                                               args[0], negInf);
            yieldValue(nb, l, arith::OrIOp::create(nb, l, args[1], keep));
          });
  return memref::LoadOp::create(b, loc, liveFlag, ValueRange{});
}

Value ProgramBuilder::buildCausalLiveCheck(Value col0, Value flag,
                                           bool programLive) {
  fill(flag, arith::ConstantIntOp::create(b, loc, 0, 1));
  linalg::GenericOp any = orRowsSeeingKey(col0, visibility, flag);
  if (programLive)
    any->setAttr(kProgramLiveAttrName, b.getUnitAttr());
  return memref::LoadOp::create(b, loc, flag, ValueRange{});
}

linalg::GenericOp ProgramBuilder::orRowsSeeingKey(Value col0,
                                                  const KeyVisibility &vis,
                                                  Value flag) {
  // Over the rows of mRow (its values unused: it gives the row domain).
  return generic(
      ValueRange{mRow}, ValueRange{flag},
      {map(1, {0}), AffineMap::get(1, 0, {}, b.getContext())},
      {IteratorType::reduction},
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value keep = vis.buildVisible(nb, l, queryIndex(nb, l), col0, nullptr);
        yieldValue(nb, l, arith::OrIOp::create(nb, l, args[1], keep));
      });
}

KeyVisibility ProgramBuilder::triangular() const {
  KeyVisibility tri;
  tri.queryLen = queryLen;
  tri.keyLen = keyLen;
  tri.causalOffset = triOffset;
  return tri;
}

void ProgramBuilder::buildTriangularScores(Value col0) {
  // S = c * S (unless folded), -inf past the diagonal and the key tail.
  KeyVisibility diagonal = triangular();
  Value c = f32Const(scaleLog2e);
  Value negInf = f32Const(-std::numeric_limits<double>::infinity());
  generic(ValueRange{}, ValueRange{sTile}, {map(2, {0, 1})},
          {IteratorType::parallel, IteratorType::parallel},
          [&](OpBuilder &nb, Location l, ValueRange args) {
            auto [i, j] = position(nb, l, col0);
            Value s =
                foldScale
                    ? args[0]
                    : arith::MulFOp::create(nb, l, args[0], c).getResult();
            Value keep = diagonal.buildVisible(nb, l, i, j, nullptr);
            yieldValue(nb, l, arith::SelectOp::create(nb, l, keep, s, negInf));
          });
}

void ProgramBuilder::buildMapScores(Value col0) {
  Value cls = pendingClass;
  pendingClass = Value();
  auto is = [&](MaskBlockClass c) -> Value {
    return arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq, cls,
        arith::ConstantIntOp::create(b, loc, static_cast<int64_t>(c), 8));
  };
  Value negInf = f32Const(-std::numeric_limits<double>::infinity());
  // A mixed block reads its terms and applies them; a block of zero terms
  // (nothing removed, no bias) is only scaled, as a block that needs no
  // mask (nothing to do when the scale is folded into the exponent).
  auto buildZeroOrMixed = [&] {
    Value mixed = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ne, cls,
        arith::ConstantIntOp::create(
            b, loc, static_cast<int64_t>(MaskBlockClass::Zero), 8));
    auto ifOp = scf::IfOp::create(b, loc, mixed, /*withElseRegion=*/!foldScale);
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    buildMaskTerms(col0);
    if (termsFlag) {
      fill(termsFlag, arith::ConstantIntOp::create(b, loc, 0, 1));
      generic(ValueRange{addTile}, ValueRange{termsFlag},
              {map(2, {0, 1}), AffineMap::get(2, 0, {}, b.getContext())},
              {IteratorType::reduction, IteratorType::reduction},
              [&](OpBuilder &nb, Location l, ValueRange args) {
                Value keep = arith::CmpFOp::create(
                    nb, l, arith::CmpFPredicate::UNE, args[0], negInf);
                yieldValue(nb, l, arith::OrIOp::create(nb, l, args[1], keep));
              });
    }
    buildScoreScaleAndMasks(col0, /*masked=*/true);
    if (!foldScale) {
      b.setInsertionPoint(ifOp.elseBlock()->getTerminator());
      buildScoreScaleAndMasks(col0, /*masked=*/false);
    }
  };
  if (!termsFlag) {
    // No flag: Q K^T for every block, then a triangular block's scores by
    // the diagonal (no mask read), the others' as above.
    buildContraction();
    auto scores = scf::IfOp::create(b, loc, is(MaskBlockClass::Triangular),
                                    /*withElseRegion=*/true);
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPoint(scores.thenBlock()->getTerminator());
    buildTriangularScores(col0);
    b.setInsertionPoint(scores.elseBlock()->getTerminator());
    buildZeroOrMixed();
    return;
  }

  // With a terms flag (f32, GPU), the rest of the block runs under `scf.if`
  // on it; the GPU lowering ORs it over each warp's rows or elements, so a
  // warp that sees no key of the block skips its softmax and P V. A
  // triangular block sets it before Q K^T, from the diagonal alone (as a
  // causal diagonal block), and its warps that see no key skip Q K^T too;
  // its scores get the diagonal's -inf without reading the mask. A mixed
  // block sets it from its terms, read after Q K^T (read before it, their
  // registers would live across the MMAs; docs/Rationale.md, Tried and
  // rejected).
  Value tri = is(MaskBlockClass::Triangular);
  auto check = scf::IfOp::create(b, loc, tri, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPoint(check.thenBlock()->getTerminator());
    fill(termsFlag, arith::ConstantIntOp::create(b, loc, 0, 1));
    orRowsSeeingKey(col0, triangular(), termsFlag);
    b.setInsertionPoint(check.elseBlock()->getTerminator());
    fill(termsFlag, arith::ConstantIntOp::create(b, loc, 1, 1));
  }
  auto guarded = [&]() {
    Value live = memref::LoadOp::create(b, loc, termsFlag, ValueRange{});
    auto ifOp = scf::IfOp::create(b, loc, live, /*withElseRegion=*/false);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    return ifOp;
  };
  {
    OpBuilder::InsertionGuard inner(b);
    guarded();
    buildContraction();
  }
  auto scores = scf::IfOp::create(b, loc, tri, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPoint(scores.thenBlock()->getTerminator());
    buildTriangularScores(col0);
    b.setInsertionPoint(scores.elseBlock()->getTerminator());
    buildZeroOrMixed();
  }
  guarded();
}
