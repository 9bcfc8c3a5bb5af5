//===- Tf32Fragments.cpp - tf32 mma.sync operands in wide loads -*- C++ -*-===//
//
// Part of the attn-mlir project.
//
// The tf32 m16n8k8 fragments hold one 4-byte element per register: read as
// they sit ([n][k] K, [k][n] V), every B register of every mma is its own
// 4-byte shared load, two per mma. The head dim is a free index of both
// contractions, so it is renumbered where that makes a lane's registers
// contiguous in shared memory:
//
//  - Q K^T: the reduction runs over the head dim in any order, so Q and K
//    agree on one: k step kt, register half h (k = lane % 4 + 4 h) reads
//    column (kt / 2) * 16 + (lane % 4) * 4 + (kt % 2) * 2 + h. One 16-byte
//    load of K gives the B registers of two k steps, and cached Q
//    fragments are read the same way. K's rows are padded by 64 bytes so
//    that the 8 lanes of a quarter warp (two rows, four 16-byte chunks
//    each) hit distinct banks.
//  - P V runs transposed, O^T += V^T P^T (M = head dim, N = query rows):
//    B (P^T) is then the pair of P's accumulator registers as they sit, and
//    A (V^T) two 8-byte loads of V rows with the head-dim rows lane / 4
//    and + 8 renumbered to adjacent columns. Read as C = P V instead, each
//    B pair would come from two V rows (two loads, then register moves);
//    O's accumulator is transposed (Buffer::transposedAcc), so the row
//    factors that scale it are shuffled in from the lanes that own them.
//
// Per warp and 64x32 block of the seed's D = 128 kernel: 32 16-byte loads
// of K and 64 8-byte loads of V for 128 mma.sync, instead of 256 4-byte
// loads (bench/probes/mma_ceiling.cu: B in 16-byte loads reaches 219
// TFLOP/s at 8 warps per SM against 142 in 4-byte ones).
//
//===----------------------------------------------------------------------===//

#include "Distributor.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
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
  auto dims = [ctx = kernel.getContext()](unsigned x, unsigned y) {
    return contractionMap(ctx, x, y);
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
        c->cols % 16 == 0 && bBuf->cols == c->cols && bBuf->rows == k &&
        a->cols == k && k % 8 == 0) {
      c->transposedAcc = true;
      pv.push_back(op);
    }
  }
  // A transposed accumulator must only meet transposed accumulators and row
  // factors (elementwise math into accumulators), fills, its P V and the
  // store; anything else keeps the plain layout.
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
          llvm::any_of(accs, [](Buffer *x) { return x->transposedAcc; });
      if (!anyWide)
        return;
      auto generic = dyn_cast<linalg::GenericOp>(op);
      bool allowed = false;
      if (generic && llvm::is_contained(pv, generic))
        allowed = true;
      else if (generic && !isContraction(generic))
        allowed =
            llvm::all_of(accs, [](Buffer *x) { return x->transposedAcc; }) &&
            llvm::none_of(generic.getDpsInits(), [&](Value init) {
              Buffer *out = lookup(init);
              return out && out->layout != Layout::Acc;
            });
      if (allowed)
        return;
      for (Buffer *x : accs)
        if (x->transposedAcc) {
          x->transposedAcc = false;
          changed = true;
        }
    });
  }
  for (linalg::GenericOp op : pv)
    if (lookup(op.getDpsInits()[0])->transposedAcc)
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
  // P V transposed, O^T += V^T P^T (m16n8k8 with M the head dim, N the
  // query rows, K the keys). Keys 2 (lane % 4) and 2 (lane % 4) + 1 of step
  // kt stand for k = lane % 4 and + 4, so that B (P^T) is the pair of P's
  // accumulator registers (r, 2 (lane % 4)) and (r, 2 (lane % 4) + 1) as
  // they sit; the head-dim rows lane / 4 and + 8 of m tile dm stand for
  // columns dm * 16 + 2 (lane / 4) and + 1, so that A (V^T) is two 8-byte
  // loads of V, rows 2 (lane % 4) and + 1, each an aligned register pair.
  // No register moves, and the rows' 8-byte chunks of a half warp fall in
  // distinct banks (V's rows padded by 16 bytes).
  int64_t queryTiles = 2 * rowTiles;
  auto i32x2 = VectorType::get({2}, b.getI32Type());
  auto load2 = [&](Value row, Value col) {
    Value v =
        vector::BitCastOp::create(b, loc, i32x2, loadShared(bBuf, row, col, 2));
    return std::make_pair(Value(vector::ExtractOp::create(b, loc, v, 0)),
                          Value(vector::ExtractOp::create(b, loc, v, 1)));
  };
  for (int64_t kt = 0; kt < k / 8; ++kt) {
    SmallVector<SmallVector<Value>> bRegs;
    for (int64_t qn = 0; qn < queryTiles; ++qn)
      bRegs.push_back({loadPrivate(a, accIndex(a, qn / 2, kt, qn % 2, 0)),
                       loadPrivate(a, accIndex(a, qn / 2, kt, qn % 2, 1))});
    Value row0 = arith::AddIOp::create(b, loc, quadCol2, cIndex(kt * 8));
    Value row1 = arith::AddIOp::create(b, loc, row0, cIndex(1));
    for (int64_t dm = 0; dm < c.cols / 16; ++dm) {
      Value col = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, quadRow, cIndex(2)),
          cIndex(dm * 16));
      auto [a0, a1] = load2(row0, col);
      auto [a2, a3] = load2(row1, col);
      for (int64_t qn = 0; qn < queryTiles; ++qn) {
        SmallVector<Value> cElems;
        for (int64_t i = 0; i < 2; ++i)
          for (int64_t j = 0; j < 2; ++j)
            cElems.push_back(loadPrivate(c, transposedIndex(dm, qn, i, j)));
        SmallVector<Value> d =
            emitMma(b, loc, f32, {a0, a1, a2, a3}, bRegs[qn], cElems);
        for (int64_t i = 0; i < 2; ++i)
          for (int64_t j = 0; j < 2; ++j)
            storePrivate(c, transposedIndex(dm, qn, i, j), d[i * 2 + j]);
      }
    }
  }
}

Value Distributor::transposedRow(int64_t qn, int64_t j) {
  return arith::AddIOp::create(
      b, loc, arith::AddIOp::create(b, loc, warpRow0, quadCol2),
      cIndex(qn * 8 + j));
}

Value Distributor::transposedCol(int64_t dm, int64_t i) {
  return arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, quadRow, cIndex(2)),
      cIndex(dm * 16 + i));
}

void Distributor::storeTransposedPairs(linalg::GenericOp op, Buffer &src,
                                       Value dst, Value rows) {
  // Element pairs (dm, qn, 0, j), (dm, qn, 1, j) are 2 adjacent columns of
  // row qn * 8 + 2 (lane % 4) + j. For one (qn, j, dm) the 8 lanes that
  // hold a row write 16 adjacent columns, so every store fills whole
  // 32-byte sectors of 4 rows: staged through shared memory to store 16
  // bytes a thread, as plain accumulators are, it only adds two barriers and
  // a shared-memory round trip. The wait: a prefetched tile (Q) may still
  // be landing when no key loop ran.
  NVVM::CpAsyncWaitGroupOp::create(b, loc, b.getI32IntegerAttr(0));
  Type elt = cast<MemRefType>(dst.getType()).getElementType();
  int64_t bytes = elt.getIntOrFloatBitWidth() / 8;
  auto pairType = VectorType::get({2}, elt);
  // Rows and columns from %laneid read here: LLVM cannot tell them from the
  // lane geometry of the loads before the key loops, which it would
  // otherwise reuse and keep alive through the whole kernel (ptxas then
  // spilled the addresses of a head-dim-16 kernel).
  Value lane = arith::IndexCastOp::create(
      b, loc, b.getIndexType(), NVVM::LaneIdOp::create(b, loc, b.getI32Type()));
  Value warpRow = arith::MulIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, tid, cIndex(32)),
      cIndex(rowsPerWarp));
  Value rowBase = arith::AddIOp::create(
      b, loc, warpRow,
      arith::MulIOp::create(
          b, loc, arith::RemUIOp::create(b, loc, lane, cIndex(4)), cIndex(2)));
  Value colBase = arith::MulIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, lane, cIndex(4)), cIndex(2));
  for (int64_t qn = 0; qn < 2 * rowTiles; ++qn)
    for (int64_t j = 0; j < 2; ++j) {
      Value row = arith::AddIOp::create(b, loc, rowBase, cIndex(qn * 8 + j));
      Value inside =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row, rows);
      auto ifOp = scf::IfOp::create(b, loc, inside, /*withElse=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      for (int64_t dm = 0; dm < src.cols / 16; ++dm) {
        SmallVector<Value> pair;
        Value col = arith::AddIOp::create(b, loc, colBase, cIndex(dm * 16));
        for (int64_t i = 0; i < 2; ++i) {
          Value v = loadPrivate(src, transposedIndex(dm, qn, i, j));
          Value coli = arith::AddIOp::create(b, loc, col, cIndex(i));
          pair.push_back(cloneBody(op, ValueRange{v, v}, {row, coli})[0]);
        }
        vector::StoreOp::create(
            b, loc, vector::FromElementsOp::create(b, loc, pairType, pair), dst,
            getGlobalIndices(b, loc, dst, row, col), /*nontemporal=*/false,
            llvm::MaybeAlign(2 * bytes));
      }
    }
}

Value Distributor::rowValueForTransposed(const Buffer &row, int64_t qn,
                                         int64_t j) {
  // Row qn * 8 + g of the warp is register qn of lanes 4 g .. 4 g + 3.
  Type i32 = b.getI32Type();
  Value lane = arith::AddIOp::create(
      b, loc,
      arith::IndexCastOp::create(
          b, loc, i32, arith::MulIOp::create(b, loc, quadCol, cIndex(8))),
      arith::ConstantIntOp::create(b, loc, 4 * j, 32));
  Value width = arith::ConstantIntOp::create(b, loc, 32, 32);
  return gpu::ShuffleOp::create(b, loc, loadPrivate(row, qn), lane, width,
                                gpu::ShuffleMode::IDX)
      .getShuffleResult();
}

LogicalResult
Distributor::rewriteTransposedElementwise(linalg::GenericOp op,
                                          ArrayRef<Buffer *> operands) {
  if (op.getNumLoops() != 2)
    return op.emitOpError("expects 2-d math on a transposed accumulator");
  int64_t queryTiles = 2 * rowTiles, cols = op.getStaticLoopRanges()[1];
  // The row factors of every (qn, j), shuffled in once.
  DenseMap<Buffer *, SmallVector<Value>> rowValues;
  for (Buffer *buf : operands)
    if (buf->layout == Layout::Row && !rowValues.count(buf))
      for (int64_t qn = 0; qn < queryTiles; ++qn)
        for (int64_t j = 0; j < 2; ++j)
          rowValues[buf].push_back(rowValueForTransposed(*buf, qn, j));
  for (int64_t dm = 0; dm < cols / 16; ++dm)
    for (int64_t qn = 0; qn < queryTiles; ++qn)
      for (int64_t i = 0; i < 2; ++i)
        for (int64_t j = 0; j < 2; ++j) {
          int64_t index = transposedIndex(dm, qn, i, j);
          SmallVector<Value> args;
          for (Buffer *buf : operands)
            args.push_back(buf->layout == Layout::Row
                               ? rowValues[buf][qn * 2 + j]
                               : loadPrivate(*buf, index));
          SmallVector<Value> results =
              cloneBody(op, args, {transposedRow(qn, j), transposedCol(dm, i)});
          for (auto [k, result] : llvm::enumerate(results))
            storePrivate(*operands[op.getNumDpsInputs() + k], index, result);
        }
  b.eraseOp(op);
  return success();
}
