//===- WgmmaPV.cpp - tf32 P V on wgmma as O^T = V^T P^T ---------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
// tf32 wgmma reads only K-major operands from shared memory; V's tile is
// [key][d], d contiguous, so `P V` with P from registers would need V
// transposed. The transposed product needs no copy: O^T += V^T P^T is
// m64nNk8 with M = the head dim (one wgmma per 64 of it), N = the 64 query
// rows of the warpgroup and K = the keys, where
//
//  - A (V^T) comes from registers: warp w holds 16 of each 64 head-dim rows,
//    and the rows lane / 4 and + 8 of its A fragment are two adjacent
//    head-dim columns, so that each register pair is one 8-byte load of a V
//    row (rows lane % 4 and + 4 of the k step). The pairs are placed 16
//    bytes apart in runs 64 bytes apart (groupColumn): with V's rows padded
//    by 16 bytes, the four rows of a half warp start 4 banks apart and its
//    16 pairs fall in distinct banks.
//  - B (P^T, K-major = P row-major) is read by descriptor from a 64 x 32 P
//    tile in the 128-byte swizzle (one atom a query row): each thread stores
//    its accumulator pairs of P there (8-byte stores, conflict-free), then
//    `fence.proxy.async` and a barrier of the warpgroup (= the thread
//    block: one warpgroup) publish it. Two tiles, alternated, so that a
//    block's stores never meet the previous block's wgmma.
//  - The accumulator O^T: a lane holds query rows 8 J + 2 (lane % 4) and + 1
//    of the whole program, so the softmax's per-row factors (alpha, then 1 /
//    l) come through shared memory: each lane writes the rows it holds into
//    a 64-float exchange before the barrier that publishes P, and reads its
//    16 after it.
//
// Per warp and 64 x 32 block of the seed's D = 128 kernel, the 64 mma.sync
// and 64 8-byte V loads of Tf32Fragments.cpp become 8 wgmma for the
// warpgroup, 16 V loads, 8 P stores, 2 + 8 exchange accesses and a barrier.
// P's tiles take the place of Q's, whose fragments are cached in registers
// before any key block. Opt-in (--convert-attn-to-nvvm's wgmma-tf32-pv):
// the barrier a block costs more than the wgmma saves, 3-5% slower than the
// per-warp form on the H200 (docs/Wgmma.md).
//
//===----------------------------------------------------------------------===//

#include "Distributor.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::detail;

/// The P tile: 64 query rows of one 128-byte atom (32 tf32 keys).
static constexpr int64_t kPTileBytes = 64 * 128;
/// The row exchange: 64 floats a phase, two phases and the epilogue's.
static constexpr int64_t kExchangeBytes = 64 * 4;

void Distributor::selectGroupPV() {
  if (!wgmmaTf32PV || ieee || warpSpecialize ||
      config.getTarget() != "sm_90a" || numThreads != 128 || rowTiles != 1)
    return;
  bool scoresAhead = false;
  kernel.walk([&](linalg::GenericOp op) {
    scoresAhead |= op->hasAttr(kScoresAheadAttrName);
  });
  if (!scoresAhead)
    return;
  for (Operation *op : wideContractions) {
    auto pv = cast<linalg::GenericOp>(op);
    Buffer *a = lookup(pv.getDpsInputs()[0]);
    Buffer *v = lookup(pv.getDpsInputs()[1]);
    Buffer *c = lookup(pv.getDpsInits()[0]);
    if (a->layout != Layout::Acc || !c->transposedAcc)
      continue;
    if (pv.getStaticLoopRanges()[2] != 32 || a->rows != 64 || a->cols != 32 ||
        (c->cols != 64 && c->cols != 128) || v->padBytes != 16 || v->coreMatrix)
      continue;
    c->groupTransposed = true;
    groupContractions.insert(op);
  }
  for (Operation *op : groupContractions)
    wideContractions.erase(op);
}

bool Distributor::allocateGroupPV() {
  if (groupContractions.empty())
    return true;
  // Q's tile, read once into its cached fragments before any key block:
  // the P tiles start at its first 1024-byte boundary.
  Buffer *free = nullptr;
  int64_t pad = 0;
  for (auto &[value, buf] : buffers) {
    if (buf.layout != Layout::Shared || buf.slots != 1 ||
        !fragmentTiles.count(buf.storage))
      continue;
    int64_t need = buf.alignedOffset >= 0
                       ? (1024 - buf.alignedOffset % 1024) % 1024
                       : 1024 - 16;
    if (buf.stageBytes >= need + 2 * kPTileBytes) {
      free = &buf;
      pad = need;
      break;
    }
  }
  if (!free) {
    for (Operation *op : groupContractions) {
      lookup(op->getOperand(op->getNumOperands() - 1))->groupTransposed = false;
      wideContractions.insert(op);
    }
    groupContractions.clear();
    return false;
  }
  if (free->alignedOffset >= 0)
    groupPTiles = arith::AddIOp::create(b, loc, free->base, cIndex(pad));
  else
    groupPTiles = arith::AndIOp::create(
        b, loc, arith::AddIOp::create(b, loc, free->base, cIndex(1023)),
        cIndex(~int64_t(1023)));
  // The exchange: not over Q's tile, whose next copy (a program loop's next
  // program) may be issued while slow threads still read the epilogue's.
  int64_t offset = llvm::alignTo(sharedOffset, 16);
  sharedOffset = offset + 3 * kExchangeBytes;
  groupRows = arith::AddIOp::create(
      b, loc,
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, dynamicShared),
      cIndex(offset));
  groupPhase =
      memref::AllocaOp::create(b, loc, MemRefType::get({1}, b.getIndexType()));
  Buffer counter;
  counter.layout = Layout::Scalar;
  counter.storage = groupPhase;
  storePrivate(counter, 0, cIndex(0));
  return true;
}

Value Distributor::groupColumn() {
  // Lane pairs 16 bytes apart, runs of four pairs 64 bytes apart: column
  // 32 (g / 4) + 16 ((g % 4) / 2) + 2 (g % 2) + 4 warp, g = lane / 4.
  Value warp = arith::DivUIOp::create(b, loc, tid, cIndex(32));
  Value g = quadRow;
  Value col = arith::MulIOp::create(b, loc, warp, cIndex(4));
  auto term = [&](Value x, int64_t div, int64_t mod, int64_t scale) {
    Value v = x;
    if (div > 1)
      v = arith::DivUIOp::create(b, loc, v, cIndex(div));
    if (mod > 0)
      v = arith::RemUIOp::create(b, loc, v, cIndex(mod));
    return arith::MulIOp::create(b, loc, v, cIndex(scale));
  };
  col = arith::AddIOp::create(b, loc, col, term(g, 4, 0, 32));
  col = arith::AddIOp::create(b, loc, col, term(g, 2, 2, 16));
  return arith::AddIOp::create(b, loc, col, term(g, 1, 2, 2));
}

Value Distributor::nextGroupPhase() {
  Buffer counter;
  counter.layout = Layout::Scalar;
  counter.storage = groupPhase;
  Value phase = loadPrivate(counter, 0);
  storePrivate(counter, 0,
               arith::XOrIOp::create(b, loc, phase, cIndex(1)).getResult());
  return phase;
}

/// An LLVM pointer into shared memory at index address `address`.
static Value sharedPtr(OpBuilder &b, Location loc, Value address) {
  Value i64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), address);
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3), i64);
}

void Distributor::stageGroupP(linalg::GenericOp pv, Value phase) {
  Buffer &p = *lookup(pv.getDpsInputs()[0]);
  Value tile = arith::AddIOp::create(
      b, loc, groupPTiles,
      arith::MulIOp::create(b, loc, phase, cIndex(kPTileBytes)));
  // Row r = warp row + 8 i + lane / 4 (r % 8 = lane / 4): its 16-byte chunk
  // c = 2 nt + (lane % 4) / 2 sits at c ^ (r % 8).
  Value row = arith::AddIOp::create(b, loc, warpRow0, quadRow);
  Value rowBase = arith::AddIOp::create(
      b, loc, tile, arith::MulIOp::create(b, loc, row, cIndex(128)));
  Value x = arith::XOrIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, quadCol, cIndex(2)), quadRow);
  Value within = arith::MulIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, quadCol, cIndex(2)), cIndex(8));
  auto pairType = VectorType::get({2}, b.getF32Type());
  for (int64_t nt = 0; nt < 4; ++nt) {
    Value chunk = arith::XOrIOp::create(b, loc, x, cIndex(2 * nt));
    Value at = arith::AddIOp::create(
        b, loc, arith::AddIOp::create(b, loc, rowBase, within),
        arith::MulIOp::create(b, loc, chunk, cIndex(16)));
    for (int64_t i = 0; i < 2; ++i) {
      SmallVector<Value> pair;
      for (int64_t j = 0; j < 2; ++j)
        pair.push_back(loadPrivate(p, accIndex(p, 0, nt, i, j)));
      Value address = arith::AddIOp::create(b, loc, at, cIndex(1024 * i));
      LLVM::StoreOp::create(
          b, loc, vector::FromElementsOp::create(b, loc, pairType, pair),
          sharedPtr(b, loc, address), /*alignment=*/8);
    }
  }
}

LogicalResult
Distributor::rewriteGroupTransposedElementwise(linalg::GenericOp op,
                                               ArrayRef<Buffer *> operands) {
  if (op.getNumLoops() != 2)
    return op.emitOpError("expects 2-d math on a transposed accumulator");
  Buffer *rowBuf = nullptr, *acc = nullptr;
  for (Buffer *buf : operands) {
    if (buf->layout == Layout::Row) {
      if (rowBuf && rowBuf != buf)
        return op.emitOpError("expects one row factor for a warpgroup's "
                              "transposed accumulator");
      rowBuf = buf;
    } else if (buf->groupTransposed) {
      acc = buf;
    }
  }
  b.setInsertionPoint(op);
  // The P V right after it into the same accumulator: its P is staged under
  // the exchange's barrier. Between them only pure ops and the private
  // register traffic of rewritten ops (the row sums of P, deferred there),
  // none of which writes P or the row factor.
  auto privateAccess = [&](Operation *o) {
    Value memref;
    if (auto load = dyn_cast<memref::LoadOp>(o))
      memref = load.getMemRef();
    else if (auto store = dyn_cast<memref::StoreOp>(o))
      memref = store.getMemRef();
    else
      return false;
    return !cast<MemRefType>(memref.getType()).getMemorySpace() &&
           (isa<memref::LoadOp>(o) || memref != rowBuf->storage);
  };
  Operation *next = op->getNextNode();
  while (rowBuf && next && !isa<linalg::GenericOp>(next) &&
         (isMemoryEffectFree(next) || privateAccess(next)))
    next = next->getNextNode();
  auto pv = dyn_cast_or_null<linalg::GenericOp>(next);
  bool fused = rowBuf && pv && groupContractions.contains(pv) &&
               lookup(pv.getDpsInits()[0]) == acc;
  if (fused)
    for (Operation *o = op->getNextNode(); o != pv; o = o->getNextNode())
      if (auto store = dyn_cast<memref::StoreOp>(o))
        fused &= store.getMemRef() != lookup(pv.getDpsInputs()[0])->storage &&
                 store.getMemRef() != acc->storage;
  SmallVector<Value> rowValues;
  if (!rowBuf)
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
  if (rowBuf) {
    Value region;
    if (fused) {
      Value phase = nextGroupPhase();
      stageGroupP(pv, phase);
      stagedGroupPV[pv] = phase;
      region = arith::AddIOp::create(
          b, loc, groupRows,
          arith::MulIOp::create(b, loc, phase, cIndex(kExchangeBytes)));
    } else {
      // Once a program (1 / l): every lane is past its last reads of the
      // exchange before any writes it.
      region =
          arith::AddIOp::create(b, loc, groupRows, cIndex(2 * kExchangeBytes));
      NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
      barrier();
    }
    // Each lane writes the rows it holds (its quad's lanes the same values).
    for (int64_t i = 0; i < 2; ++i) {
      Value row = rowOfLane(0, i);
      Value address = arith::AddIOp::create(
          b, loc, region, arith::MulIOp::create(b, loc, row, cIndex(4)));
      LLVM::StoreOp::create(b, loc, loadPrivate(*rowBuf, i),
                            sharedPtr(b, loc, address), /*alignment=*/4);
    }
    // The previous block's P V completes before the barrier: its
    // accumulators are read after it, and its P tile is the one the next
    // block's stores refill. (With the next block's scores, issued after it:
    // waiting for it alone, wait_group 1, made ptxas serialize every wgmma,
    // C7514, as it cannot tell the groups apart across the loop's back
    // edge.)
    if (fused) {
      NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
      fenceForAsyncProxy();
    }
    barrier();
    auto pairType = VectorType::get({2}, b.getF32Type());
    for (int64_t J = 0; J < 8; ++J) {
      Value row = arith::AddIOp::create(b, loc, quadCol2, cIndex(8 * J));
      Value address = arith::AddIOp::create(
          b, loc, region, arith::MulIOp::create(b, loc, row, cIndex(4)));
      Value pair =
          LLVM::LoadOp::create(b, loc, pairType, sharedPtr(b, loc, address), 8);
      for (int64_t j = 0; j < 2; ++j)
        rowValues.push_back(vector::ExtractOp::create(b, loc, pair, j));
    }
  }
  // Right before its P V, the math waits for V's fragment loads
  // (contractGroupPV): issued after it, their latency stalled the wgmma's
  // fence.
  if (fused) {
    deferredRescales[pv] = {op, SmallVector<Buffer *>(operands), rowValues};
    return success();
  }
  emitGroupElementwise(op, operands, rowValues);
  b.eraseOp(op);
  return success();
}

void Distributor::emitGroupElementwise(linalg::GenericOp op,
                                       ArrayRef<Buffer *> operands,
                                       ArrayRef<Value> rowValues) {
  Value col0 = groupColumn();
  int64_t halves = op.getStaticLoopRanges()[1] / 64;
  for (int64_t h = 0; h < halves; ++h)
    for (int64_t J = 0; J < 8; ++J)
      for (int64_t i = 0; i < 2; ++i)
        for (int64_t j = 0; j < 2; ++j) {
          int64_t index = 32 * h + 4 * J + 2 * i + j;
          Value row =
              arith::AddIOp::create(b, loc, quadCol2, cIndex(8 * J + j));
          Value col = arith::AddIOp::create(b, loc, col0, cIndex(64 * h + i));
          SmallVector<Value> args;
          for (Buffer *buf : operands)
            args.push_back(buf->layout == Layout::Row
                               ? rowValues[2 * J + j]
                               : loadPrivate(*buf, index));
          SmallVector<Value> results = cloneBody(op, args, {row, col});
          for (auto [k, result] : llvm::enumerate(results))
            storePrivate(*operands[op.getNumDpsInputs() + k], index, result);
        }
}

LogicalResult Distributor::contractGroupPV(linalg::GenericOp op, Buffer &a,
                                           Buffer &v, Buffer &c) {
  Value phase = stagedGroupPV.lookup(op);
  if (!phase) {
    phase = nextGroupPhase();
    stageGroupP(op, phase);
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
    fenceForAsyncProxy();
    barrier();
  }
  MLIRContext *ctx = b.getContext();
  Type i64 = b.getI64Type(), f32 = b.getF32Type();
  // B: the K-major 128-byte-swizzled P tile (stride byte offset 1024, the
  // next 8 rows); a k step is 32 bytes further in the atom.
  Value tile = arith::AddIOp::create(
      b, loc, groupPTiles,
      arith::MulIOp::create(b, loc, phase, cIndex(kPTileBytes)));
  Value start = arith::ShRUIOp::create(
      b, loc,
      arith::AndIOp::create(b, loc,
                            arith::IndexCastOp::create(b, loc, i64, tile),
                            arith::ConstantIntOp::create(b, loc, 0x3FFFF, 64)),
      arith::ConstantIntOp::create(b, loc, 4, 64));
  int64_t fields =
      (int64_t(1) << 16) | (int64_t(1024 >> 4) << 32) | (int64_t(1) << 62);
  Value desc = arith::OrIOp::create(
      b, loc, start, arith::ConstantIntOp::create(b, loc, fields, 64));
  // A: V rows 8 kt + lane % 4 and + 4, columns groupColumn and + 1.
  Value col0 = groupColumn();
  auto i32x2 = VectorType::get({2}, b.getI32Type());
  auto structType =
      LLVM::LLVMStructType::getLiteral(ctx, SmallVector<Type>(32, f32));
  // Every A register first (all of them written before the first
  // wgmma.fence), then the deferred rescale over their loads' latency.
  int64_t halves = c.cols / 64;
  SmallVector<SmallVector<SmallVector<Value>>> aRegs(halves);
  for (int64_t h = 0; h < halves; ++h) {
    Value col = arith::AddIOp::create(b, loc, col0, cIndex(64 * h));
    for (int64_t kt = 0; kt < 4; ++kt) {
      SmallVector<Value> operands;
      for (int64_t half = 0; half < 2; ++half) {
        Value row =
            arith::AddIOp::create(b, loc, quadCol, cIndex(8 * kt + 4 * half));
        Value pair = vector::BitCastOp::create(b, loc, i32x2,
                                               loadShared(v, row, col, 2));
        for (int64_t e = 0; e < 2; ++e)
          operands.push_back(vector::ExtractOp::create(b, loc, pair, e));
      }
      operands.push_back(arith::AddIOp::create(
          b, loc, desc,
          arith::ConstantIntOp::create(b, loc, kt * 32 >> 4, 64)));
      aRegs[h].push_back(operands);
    }
  }
  auto deferred = deferredRescales.find(op);
  if (deferred != deferredRescales.end()) {
    DeferredRescale &rescale = deferred->second;
    emitGroupElementwise(rescale.op, rescale.operands, rescale.rowValues);
    b.eraseOp(rescale.op);
    deferredRescales.erase(deferred);
  }
  for (int64_t h = 0; h < halves; ++h) {
    Value acc = LLVM::UndefOp::create(b, loc, structType);
    for (int64_t r = 0; r < 32; ++r)
      acc = LLVM::InsertValueOp::create(b, loc, acc, loadPrivate(c, 32 * h + r),
                                        r);
    acc = issueRegisterAWgmma(
        b, loc, acc, 32, "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32",
        "1, 1, 1", 4, /*operandsFirst=*/false,
        [&](int64_t kt) { return aRegs[h][kt]; });
    for (int64_t r = 0; r < 32; ++r)
      storePrivate(c, 32 * h + r, LLVM::ExtractValueOp::create(b, loc, acc, r));
  }
  // Waited for where its accumulators are next read (the next block's
  // rescale, the epilogue); the next block's scores, issued before it and
  // waited for at the end of this iteration, leave it in flight there.
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  groupPVBlocks.insert(op->getBlock());
  return success();
}

void Distributor::stageGroupTransposedPairs(linalg::GenericOp op, Buffer &src,
                                            Value staging) {
  // Pairs (i = 0, 1) of adjacent head-dim columns of row 8 J + 2 (lane %
  // 4) + j.
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
  Type elt = cast<MemRefType>(staging.getType()).getElementType();
  int64_t bytes = elt.getIntOrFloatBitWidth() / 8;
  auto pairType = VectorType::get({2}, elt);
  Value col0 = groupColumn();
  for (int64_t h = 0; h < src.cols / 64; ++h)
    for (int64_t J = 0; J < 8; ++J)
      for (int64_t j = 0; j < 2; ++j) {
        Value row = arith::AddIOp::create(b, loc, quadCol2, cIndex(8 * J + j));
        Value col = arith::AddIOp::create(b, loc, col0, cIndex(64 * h));
        SmallVector<Value> pair;
        for (int64_t i = 0; i < 2; ++i) {
          Value x = loadPrivate(src, 32 * h + 4 * J + 2 * i + j);
          Value coli = arith::AddIOp::create(b, loc, col, cIndex(i));
          pair.push_back(cloneBody(op, ValueRange{x, x}, {row, coli})[0]);
        }
        vector::StoreOp::create(
            b, loc, vector::FromElementsOp::create(b, loc, pairType, pair),
            staging, ValueRange{row, col}, /*nontemporal=*/false,
            llvm::MaybeAlign(2 * bytes));
      }
}
