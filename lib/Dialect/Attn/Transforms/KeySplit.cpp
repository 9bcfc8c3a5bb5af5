//===- KeySplit.cpp - split-KV: the split count and the combine -*- C++ -*-===//
//
// Part of the attn-mlir project.
//
// A program that computes few query rows (decode) walks the whole key
// sequence alone, and B x Hq such programs leave most of a GPU idle. With
// key splits (flash-decoding), S programs share one query block: split s
// reads its run of whole key blocks, and writes the softmax of those keys
// alone (O_s normalized, in f32) and its log-sum-exp L_s. A second grid
// merges them exactly, per row:
//
//   m = max_s L_s;  w_s = exp(L_s - m);  lse = m + log(sum_s w_s)
//   O = sum_s w_s O_s / sum_s w_s
//
// (m = -inf, every split empty: O = 0 and lse = -inf, as for one program.)
// The split count is a function of the launch's sizes, so that one kernel
// serves every batch and cache length:
//
//   S = min(ceil(Tk / min_keys), ceil(programs / (B * Hq)))
//
// enough programs to fill the GPU, none with fewer than `min_keys` keys.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <limits>

using namespace mlir;
using namespace mlir::attn;

Value mlir::attn::buildNumKeySplits(OpBuilder &b, Location loc,
                                    OpFoldResult batch, OpFoldResult heads,
                                    OpFoldResult keyLen, int64_t minKeys,
                                    int64_t programs) {
  auto value = [&](OpFoldResult ofr) {
    return getValueOrCreateConstantIndexOp(b, loc, ofr);
  };
  auto constant = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  Value byKeys =
      b.createOrFold<arith::CeilDivUIOp>(loc, value(keyLen), constant(minKeys));
  Value perProgram =
      b.createOrFold<arith::MulIOp>(loc, value(batch), value(heads));
  Value byPrograms =
      b.createOrFold<arith::CeilDivUIOp>(loc, constant(programs), perProgram);
  return b.createOrFold<arith::MinUIOp>(loc, byKeys, byPrograms);
}

scf::ForallOp mlir::attn::buildSplitCombine(OpBuilder &b, Location loc,
                                            Value partialOutput,
                                            Value partialLse, Value numSplits,
                                            Value output, Value lse) {
  auto outputType = cast<MemRefType>(output.getType());
  Type elementType = outputType.getElementType();
  Type f32 = b.getF32Type();
  SmallVector<OpFoldResult> sizes;
  for (int64_t dim = 0; dim < 3; ++dim)
    sizes.push_back(memref::getMixedSize(b, loc, output, dim));
  int64_t valueHeadDim = outputType.getDimSize(3);
  auto grid = scf::ForallOp::create(
      b, loc, sizes, ValueRange{}, std::nullopt,
      [&](OpBuilder &nb, Location l, ValueRange ivs) {
        auto f32Const = [&](double v) {
          return arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(v))
              .getResult();
        };
        Value zero = arith::ConstantIndexOp::create(nb, l, 0);
        Value one = arith::ConstantIndexOp::create(nb, l, 1);
        Value negInf = f32Const(-std::numeric_limits<double>::infinity());
        Value zeroF = f32Const(0.0);
        // A loop over the splits that folds `body(split, acc)` from `init`.
        auto overSplits = [&](Value init,
                              function_ref<Value(Value, Value)> body) {
          auto loop = scf::ForOp::create(
              nb, l, zero, numSplits, one, ValueRange{init},
              [&](OpBuilder &lb, Location ll, Value s, ValueRange acc) {
                OpBuilder::InsertionGuard guard(nb);
                nb.setInsertionPoint(lb.getInsertionBlock(),
                                     lb.getInsertionPoint());
                scf::YieldOp::create(nb, ll, body(s, acc[0]));
              });
          return loop.getResult(0);
        };
        auto splitLse = [&](Value s) {
          return memref::LoadOp::create(nb, l, partialLse,
                                        ValueRange{s, ivs[0], ivs[1], ivs[2]})
              .getResult();
        };
        Value m = overSplits(negInf, [&](Value s, Value acc) {
          return arith::MaximumFOp::create(nb, l, acc, splitLse(s));
        });
        Value mIsNegInf =
            arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ, m, negInf);
        Value mu = arith::SelectOp::create(nb, l, mIsNegInf, zeroF, m);
        auto weight = [&](Value s) {
          return math::ExpOp::create(
              nb, l, arith::SubFOp::create(nb, l, splitLse(s), mu));
        };
        Value sum = overSplits(zeroF, [&](Value s, Value acc) {
          return arith::AddFOp::create(nb, l, acc, weight(s));
        });
        Value empty =
            arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ, sum, zeroF);
        Value inverse = arith::SelectOp::create(
            nb, l, empty, zeroF,
            arith::DivFOp::create(nb, l, f32Const(1.0), sum));
        // O[b, h, i, :], one column per iteration (the GPU splits the
        // columns over its threads).
        auto columns = scf::ForOp::create(
            nb, l, zero, arith::ConstantIndexOp::create(nb, l, valueHeadDim),
            one);
        columns->setAttr(kThreadLoopAttrName, nb.getUnitAttr());
        {
          OpBuilder::InsertionGuard guard(nb);
          nb.setInsertionPoint(columns.getBody()->getTerminator());
          Value d = columns.getInductionVar();
          Value acc = overSplits(zeroF, [&](Value s, Value acc) {
            Value o = memref::LoadOp::create(
                nb, l, partialOutput, ValueRange{s, ivs[0], ivs[1], ivs[2], d});
            return math::FmaOp::create(nb, l, weight(s), o, acc);
          });
          Value o = arith::MulFOp::create(nb, l, acc, inverse);
          if (elementType != f32)
            o = arith::TruncFOp::create(nb, l, elementType, o);
          memref::StoreOp::create(nb, l, o, output,
                                  ValueRange{ivs[0], ivs[1], ivs[2], d});
        }
        if (lse) {
          Value logSum =
              arith::AddFOp::create(nb, l, mu, math::LogOp::create(nb, l, sum));
          Value value = arith::SelectOp::create(nb, l, empty, negInf, logSum);
          memref::StoreOp::create(nb, l, value, lse,
                                  ValueRange{ivs[0], ivs[1], ivs[2]});
        }
        scf::InParallelOp::create(nb, l);
      });
  grid->setAttr(kSplitCombineAttrName, b.getUnitAttr());
  return grid;
}
