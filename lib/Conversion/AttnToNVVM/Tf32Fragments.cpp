//===- Tf32Fragments.cpp - tf32 mma.sync operands in 16-byte loads -*- C++ -*-//
//
// Part of the attn-mlir project.
//
// The tf32 m16n8k8 fragments hold one 4-byte element per register: read as
// they sit ([n][k] K, [k][n] V), every B register of every mma is its own
// 4-byte shared load, two per mma. The head dim is a free index of both
// contractions, so it is renumbered where that makes a lane's registers
// contiguous in shared memory, and each 16-byte load feeds several mmas:
//
//  - Q K^T: the reduction runs over the head dim in any order, so Q and K
//    agree on one: k step kt, register half h (k = lane % 4 + 4 h) reads
//    column (kt / 2) * 16 + (lane % 4) * 4 + (kt % 2) * 2 + h. One 16-byte
//    load of K gives the B registers of two k steps, and cached Q
//    fragments are read the same way. K's rows are padded by 64 bytes so
//    that the 8 lanes of a quarter warp (two rows, four 16-byte chunks
//    each) hit distinct banks.
//  - P V: the accumulator's n index is renumbered instead: the mma column
//    x of n tile nt stands for head-dim column (nt / 4) * 32 + x * 4 +
//    nt % 4. A lane's B registers of n tiles 4c..4c+3 (x = lane / 4) are
//    then 16 contiguous bytes of a V row, and its accumulator elements of
//    those tiles are 16 contiguous bytes of an O row (accColumn). V keeps
//    its 16-byte row padding, which puts the quarter warp's rows (keys
//    2 (lane % 4) + i, two rows apart) in distinct banks.
//
// A 64x32 block of the seed's D = 128 kernel thus issues 64 16-byte loads
// per warp for its 128 mma.sync instead of 256 4-byte ones
// (bench/mma_ceiling.cu: 142 -> 219 TFLOP/s at 8 warps per SM).
//
//===----------------------------------------------------------------------===//

#include "Distributor.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::detail;

/// The padding of K's rows for the 16-byte fragment loads of Q K^T (see
/// the file comment): a row stride of 64 bytes modulo 128.
static constexpr int64_t kWideKPaddingBytes = 64;

void Distributor::selectWideTf32Operands() {
  if (ieee)
    return;
  MLIRContext *ctx = kernel.getContext();
  auto dims = [&](unsigned x, unsigned y) {
    return AffineMap::get(
        3, 0, {getAffineDimExpr(x, ctx), getAffineDimExpr(y, ctx)}, ctx);
  };
  SmallVector<linalg::GenericOp> generics;
  kernel.walk([&](linalg::GenericOp op) { generics.push_back(op); });
  // Q tiles (A of Q K^T) whose every contraction can renumber the head
  // dim; the others keep the plain order.
  DenseMap<Buffer *, bool> qTiles;
  SmallVector<linalg::GenericOp> qk, pv;
  for (linalg::GenericOp op : generics) {
    if (!isContraction(op))
      continue;
    Buffer *a = lookup(op.getDpsInputs()[0]);
    Buffer *bBuf = lookup(op.getDpsInputs()[1]);
    Buffer *c = lookup(op.getDpsInits()[0]);
    if (!a || !bBuf || !c || bBuf->layout != Layout::Shared ||
        c->layout != Layout::Acc || !bBuf->type.getElementType().isF32())
      continue;
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    int64_t k = op.getStaticLoopRanges()[2];
    bool eligible = !wgmmaContractions.contains(op) && maps[0] == dims(0, 2) &&
                    maps[2] == dims(0, 1);
    if (a->layout == Layout::Shared) {
      eligible = eligible && maps[1] == dims(1, 2) && k % 16 == 0 &&
                 a->cols == k && bBuf->cols == k && !bBuf->coreMatrix &&
                 !a->coreMatrix;
      auto [it, inserted] = qTiles.try_emplace(a, eligible);
      it->second = it->second && eligible;
      qk.push_back(op);
      continue;
    }
    if (a->layout == Layout::Acc && eligible && maps[1] == dims(2, 1) &&
        c->cols % 32 == 0 && bBuf->cols == c->cols && bBuf->rows == k &&
        a->cols == k && k % 8 == 0) {
      c->wideColumns = true;
      pv.push_back(op);
    }
  }
  // A renumbered accumulator must only meet accumulators renumbered alike
  // (elementwise math), fills, its P V and the store; anything else keeps
  // the plain order.
  bool changed = true;
  while (changed) {
    changed = false;
    kernel.walk([&](Operation *op) {
      auto dps = dyn_cast<DestinationStyleOpInterface>(op);
      if (!dps || isa<linalg::FillOp>(op))
        return;
      SmallVector<Buffer *> accs;
      for (Value v : op->getOperands())
        if (Buffer *buf = lookup(v); buf && buf->layout == Layout::Acc)
          accs.push_back(buf);
      bool anyWide =
          llvm::any_of(accs, [](Buffer *x) { return x->wideColumns; });
      if (!anyWide)
        return;
      auto generic = dyn_cast<linalg::GenericOp>(op);
      bool allowed = false;
      if (generic && llvm::is_contained(pv, generic))
        allowed = true;
      else if (generic && !isContraction(generic))
        allowed = llvm::all_of(accs, [](Buffer *x) { return x->wideColumns; });
      if (allowed)
        return;
      for (Buffer *x : accs)
        if (x->wideColumns) {
          x->wideColumns = false;
          changed = true;
        }
    });
  }
  for (linalg::GenericOp op : pv)
    if (lookup(op.getDpsInits()[0])->wideColumns)
      wideContractions.insert(op);
  for (linalg::GenericOp op : qk) {
    Buffer *a = lookup(op.getDpsInputs()[0]);
    if (!qTiles.lookup(a))
      continue;
    a->wideHeadDim = true;
    lookup(op.getDpsInputs()[1])->padBytes = kWideKPaddingBytes;
    wideContractions.insert(op);
  }
}

Value Distributor::accColumn(const Buffer &buf, int64_t nt, int64_t j) {
  if (!buf.wideColumns)
    return colOfLane(nt, j);
  // (nt / 4) * 32 + (2 (lane % 4) + j) * 4 + nt % 4.
  Value x = arith::AddIOp::create(b, loc, quadCol2, cIndex(j));
  return arith::AddIOp::create(b, loc,
                               arith::MulIOp::create(b, loc, x, cIndex(4)),
                               cIndex(nt / 4 * 32 + nt % 4));
}

Value Distributor::tf32Column(const Buffer &a, int64_t kt, int64_t half) {
  if (!a.wideHeadDim)
    return arith::AddIOp::create(b, loc, quadCol, cIndex(kt * 8 + half * 4));
  return arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, quadCol, cIndex(4)),
      cIndex(kt / 2 * 16 + kt % 2 * 2 + half));
}

void Distributor::contractWithWideTf32(Buffer &a, Buffer &bBuf, Buffer &c,
                                       bool bTransposed, int64_t k) {
  Type f32 = b.getF32Type();
  // The four registers as i32 (the mma operand type), extracted right after
  // the load: LLVM scalarizes such a load and merges the four back into one
  // only while nothing separates them (a bitcast at each mma made it two
  // 8-byte loads).
  auto load4 = [&](Value row, Value col) {
    Value v =
        vector::BitCastOp::create(b, loc, VectorType::get({4}, b.getI32Type()),
                                  loadShared(bBuf, row, col, 4));
    SmallVector<Value> elems;
    for (int64_t e = 0; e < 4; ++e)
      elems.push_back(vector::ExtractOp::create(b, loc, v, e));
    return elems;
  };
  auto mma = [&](int64_t mt, int64_t nt, ArrayRef<Value> aRegs,
                 ArrayRef<Value> bRegs) {
    SmallVector<Value> cElems;
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 2; ++j)
        cElems.push_back(loadPrivate(c, accIndex(c, mt, nt, i, j)));
    SmallVector<Value> d = emitMma(b, loc, f32, aRegs, bRegs, cElems);
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 2; ++j)
        storePrivate(c, accIndex(c, mt, nt, i, j), d[i * 2 + j]);
  };
  if (bTransposed) {
    // Q K^T: per pair of k steps, the A registers of every row tile and one
    // 16-byte load of K per n tile, then the first step over all n tiles
    // and the second (consecutive mmas write different accumulators).
    int64_t nTiles = c.cols / 8;
    for (int64_t q = 0; q < k / 16; ++q) {
      SmallVector<SmallVector<Value>> aRegs[2];
      for (int64_t s = 0; s < 2; ++s)
        for (int64_t mt = 0; mt < rowTiles; ++mt)
          aRegs[s].push_back(loadTf32A(a, mt, 2 * q + s, k));
      Value col = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, quadCol, cIndex(4)),
          cIndex(q * 16));
      SmallVector<SmallVector<Value>> bRegs;
      for (int64_t nt = 0; nt < nTiles; ++nt)
        bRegs.push_back(
            load4(arith::AddIOp::create(b, loc, quadRow, cIndex(nt * 8)), col));
      for (int64_t s = 0; s < 2; ++s)
        for (int64_t nt = 0; nt < nTiles; ++nt)
          for (int64_t mt = 0; mt < rowTiles; ++mt)
            mma(mt, nt, aRegs[s][mt], {bRegs[nt][2 * s], bRegs[nt][2 * s + 1]});
    }
    return;
  }
  // P V: A is P in registers (keys 2q and 2q + 1 of step kt stand for
  // k = q and q + 4); per step and 4 n tiles, two 16-byte loads of V. (The
  // B pairs take registers of both loads, which costs moves; m16n8k4, whose
  // B is one register, was 2% slower for `causal`, 2% faster with the mask
  // tensor: bench/results/2026-12-01-h200-tf32-wide-loads-ab.log.)
  for (int64_t kt = 0; kt < k / 8; ++kt) {
    SmallVector<SmallVector<Value>> aRegs;
    for (int64_t mt = 0; mt < rowTiles; ++mt) {
      SmallVector<Value> regs;
      for (int64_t j = 0; j < 2; ++j)
        for (int64_t i = 0; i < 2; ++i)
          regs.push_back(loadPrivate(a, accIndex(a, mt, kt, i, j)));
      aRegs.push_back(regs);
    }
    Value row0 = arith::AddIOp::create(b, loc, quadCol2, cIndex(kt * 8));
    Value row1 = arith::AddIOp::create(b, loc, row0, cIndex(1));
    for (int64_t chunk = 0; chunk < c.cols / 32; ++chunk) {
      Value col = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, quadRow, cIndex(4)),
          cIndex(chunk * 32));
      SmallVector<Value> v0 = load4(row0, col), v1 = load4(row1, col);
      for (int64_t e = 0; e < 4; ++e)
        for (int64_t mt = 0; mt < rowTiles; ++mt)
          mma(mt, chunk * 4 + e, aRegs[mt], {v0[e], v1[e]});
    }
  }
}
