//===- BlockBounds.cpp - the key blocks a program visits --------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
// Closed-form key block bounds of one program under causal masking and a
// window (SPEC.md section 1.1). Row i sees keys
//
//   i + off - L <= j <= i + off + U,  j < Tk
//
// with off the causal offset (Tk - Tq for bottom_right, else 0), U = 0 under
// causal and R otherwise; L or U = -1 leaves that side open. Both limits
// grow with i, so the program's first row r0 = qb * block_m bounds the first
// key any row sees and its last valid row r1 = min(r0 + block_m, Tq) - 1 the
// last; and the keys every row sees run from r1's first to r0's last:
//
//   start     = max(0, floor((r0 + off - L) / bn))
//   end       = min(ceil(Tk / bn), floor((r1 + off + U) / bn) + 1)
//   fullStart = min(floor(Tk / bn), ceil((r1 + off - L) / bn))
//   fullEnd   = min(floor(Tk / bn), floor((r0 + off + U + 1) / bn))
//
// (r1 is a minimum, and floor and ceil are monotone: each bound is one
// affine.min or affine.max over the query block, Tq and Tk.) fullStart
// stops at the key tail's block, so that the blocks before it are whole:
// their loop loads K and V without a tail.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/Transforms.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::attn;

KeyBlockRange mlir::attn::buildKeyBlockRange(OpBuilder &b, Location loc,
                                             BlockAttentionOp op,
                                             Value queryBlock, Value queryLen,
                                             Value keyLen) {
  MLIRContext *ctx = b.getContext();
  KernelConfigAttr config = op.getConfig();
  int64_t bm = config.getBlockM(), bn = config.getBlockN();
  AffineExpr qb = getAffineDimExpr(0, ctx);
  AffineExpr tq = getAffineSymbolExpr(0, ctx), tk = getAffineSymbolExpr(1, ctx);
  std::optional<CausalKind> causal = op.getCausal();
  AffineExpr off = causal == CausalKind::BottomRight
                       ? tk - tq
                       : getAffineConstantExpr(0, ctx);
  WindowAttr window = op.getWindowAttr();
  int64_t left = window ? window.getLeft() : -1;
  std::optional<int64_t> upper;
  if (causal)
    upper = 0;
  else if (window && window.getRight() >= 0)
    upper = window.getRight();

  AffineExpr firstRow = qb * bm;
  AffineExpr lastRows[] = {qb * bm + (bm - 1), tq - 1};
  SmallVector<AffineExpr> start = {getAffineConstantExpr(0, ctx)};
  SmallVector<AffineExpr> end = {tk.ceilDiv(bn)};
  // Blocks before fullStart are whole (no key tail), blocks from fullEnd on
  // may be the tail's.
  SmallVector<AffineExpr> fullStart = {tk.floorDiv(bn)},
                          fullEnd = {tk.floorDiv(bn)};
  if (left >= 0) {
    start.push_back((firstRow + off - left).floorDiv(bn));
    for (AffineExpr lastRow : lastRows)
      fullStart.push_back((lastRow + off - left).ceilDiv(bn));
  } else {
    fullStart = {getAffineConstantExpr(0, ctx)};
  }
  if (upper) {
    for (AffineExpr lastRow : lastRows)
      end.push_back((lastRow + off + *upper).floorDiv(bn) + 1);
    fullEnd.push_back((firstRow + off + *upper + 1).floorDiv(bn));
  }

  SmallVector<Value> operands = {queryBlock, queryLen, keyLen};
  auto bound = [&](ArrayRef<AffineExpr> exprs, bool isMax) -> Value {
    AffineMap map = simplifyAffineMap(AffineMap::get(1, 2, exprs, ctx));
    if (isMax)
      return affine::AffineMaxOp::create(b, loc, map, operands);
    return affine::AffineMinOp::create(b, loc, map, operands);
  };
  KeyBlockRange range;
  range.start = bound(start, /*isMax=*/true);
  range.end = bound(end, /*isMax=*/false);
  // The full blocks inside [start, end).
  Value fs = bound(fullStart, /*isMax=*/false);
  Value fe = bound(fullEnd, /*isMax=*/false);
  range.fullStart = arith::MaxSIOp::create(
      b, loc, range.start, arith::MinSIOp::create(b, loc, fs, range.end));
  range.fullEnd = arith::MaxSIOp::create(
      b, loc, range.fullStart, arith::MinSIOp::create(b, loc, fe, range.end));
  return range;
}
