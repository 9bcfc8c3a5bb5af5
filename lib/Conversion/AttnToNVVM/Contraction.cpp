//===- Contraction.cpp - Q K^T and P V on tensor cores ---------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
// The contractions of distributeProgram: ldmatrix operand loads, mma.sync
// m16n8k16 (f16/bf16) and m16n8k8 (tf32) on accumulator fragments, P fed
// from registers, and FMAs for f32 with ieee precision; their wgmma forms
// are in Wgmma.cpp.
//
//===----------------------------------------------------------------------===//

#include "Distributor.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::detail;

/// The shared-memory pointer of element (row, col) of `buf`.
static Value sharedPointer(OpBuilder &b, Location loc, const Buffer &buf,
                           Value row, Value col) {
  Value address = arith::IndexCastOp::create(
      b, loc, b.getI64Type(), sharedAddress(b, loc, buf, row, col));
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3), address);
}

Value Distributor::loadShared(Buffer &buf, Value row, Value col,
                              int64_t width) {
  Type elt = buf.type.getElementType();
  if (buf.realigned || buf.swizzledRows) {
    // Past its views' start, or swizzled: through the base.
    Value ptr = sharedPointer(b, loc, buf, row, col);
    Type type = width == 1 ? elt : VectorType::get({width}, elt);
    return LLVM::LoadOp::create(b, loc, type, ptr,
                                width * elt.getIntOrFloatBitWidth() / 8);
  }
  Value memref = buf.stage ? buf.stages : buf.storage;
  SmallVector<Value> indices = {row, col};
  if (buf.stage)
    indices.insert(indices.begin(), buf.stage);
  if (width == 1)
    return memref::LoadOp::create(b, loc, memref, indices);
  int64_t bytes = width * elt.getIntOrFloatBitWidth() / 8;
  return vector::LoadOp::create(b, loc, VectorType::get({width}, elt), memref,
                                indices, /*nontemporal=*/false,
                                llvm::MaybeAlign(bytes));
}

SmallVector<Value> Distributor::loadMatrix(Buffer &buf, Value row, Value col,
                                           int num, bool transpose) {
  MLIRContext *ctx = b.getContext();
  Value ptr = sharedPointer(b, loc, buf, row, col);
  Type i32 = b.getI32Type();
  Type resultType =
      num == 1
          ? i32
          : LLVM::LLVMStructType::getLiteral(ctx, SmallVector<Type>(num, i32));
  Value result = NVVM::LdMatrixOp::create(
      b, loc, resultType, ptr, b.getI32IntegerAttr(num),
      NVVM::MMALayoutAttr::get(ctx, transpose ? NVVM::MMALayout::col
                                              : NVVM::MMALayout::row),
      NVVM::LdStMatrixShapeAttr::get(ctx, 8, 8),
      NVVM::LdStMatrixEltTypeAttr::get(ctx, NVVM::LdStMatrixEltType::B16));
  if (num == 1)
    return {result};
  SmallVector<Value> regs;
  for (int i = 0; i < num; ++i)
    regs.push_back(LLVM::ExtractValueOp::create(b, loc, result, i));
  return regs;
}

SmallVector<Value> mlir::attn::detail::emitMma(OpBuilder &b, Location loc,
                                               Type elt, ArrayRef<Value> aRegs,
                                               ArrayRef<Value> bRegs,
                                               ArrayRef<Value> c) {
  Type f32 = b.getF32Type(), i32 = b.getI32Type();
  NVVM::MMATypes type = elt.isF16()    ? NVVM::MMATypes::f16
                        : elt.isBF16() ? NVVM::MMATypes::bf16
                                       : NVVM::MMATypes::tf32;
  // f16 operands go as vector<2xf16>; bf16 pairs and tf32 as i32 bits.
  auto operand = [&](Value v) -> Value {
    Type want =
        type == NVVM::MMATypes::f16 ? Type(VectorType::get({2}, elt)) : i32;
    if (v.getType() == want)
      return v;
    return LLVM::BitcastOp::create(b, loc, want, v);
  };
  SmallVector<Value> a, bv;
  for (Value v : aRegs)
    a.push_back(operand(v));
  for (Value v : bRegs)
    bv.push_back(operand(v));
  auto resultType =
      LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
  int64_t k = type == NVVM::MMATypes::tf32 ? 8 : 16;
  auto mma = NVVM::MmaOp::create(
      b, loc, resultType, a, bv, c, ArrayRef<int64_t>{16, 8, k}, std::nullopt,
      std::nullopt, std::array<NVVM::MMATypes, 2>{type, type},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  SmallVector<Value> d;
  for (int64_t i = 0; i < 4; ++i)
    d.push_back(LLVM::ExtractValueOp::create(b, loc, mma, i));
  return d;
}

SmallVector<Value> Distributor::loadTf32AFragment(Buffer &a, int64_t mt,
                                                  int64_t kt) {
  // 4-byte loads. (ldmatrix on 8x4 f32 matrices also gives these registers,
  // and K's, but is no faster; docs/GPU.md, Fragments and the two products.)
  SmallVector<Value> regs;
  for (int64_t half = 0; half < 2; ++half) {
    Value col = tf32Column(a, kt, half);
    for (int64_t i = 0; i < 2; ++i)
      regs.push_back(loadShared(a, rowOfLane(mt, i), col, 1));
  }
  return regs;
}

SmallVector<Value> Distributor::loadTf32A(Buffer &a, int64_t mt, int64_t kt,
                                          int64_t k) {
  auto it = fragmentCache.find(a.storage);
  if (it == fragmentCache.end())
    return loadTf32AFragment(a, mt, kt);
  // Read once before the key loops (cacheFragments).
  SmallVector<Value> regs;
  for (int64_t r = 0; r < 4; ++r)
    regs.push_back(loadPrivate(it->second, (mt * (k / 8) + kt) * 4 + r));
  return regs;
}

bool Distributor::cachesFragments(int64_t k) const {
  // At most 64 registers of fragments (D <= 128 with one row tile): the
  // tf32 kernels use 166-168 of 255 without them, the 16-bit ones are at
  // the limit and are left out. Not below D = 64, where Q's share of the
  // traffic is small and ptxas answered 8 more registers at D = 16 with a
  // 64-register budget and a 4-byte spill (ptxas matrix).
  constexpr int64_t kMaxFragmentRegisters = 64, kMinK = 64;
  return !ieee && k >= kMinK && k % 8 == 0 &&
         rowTiles * (k / 8) * 4 <= kMaxFragmentRegisters;
}

void Distributor::selectCachedFragments() {
  if (ieee)
    return;
  DenseSet<Value> rejected;
  kernel.walk([&](linalg::GenericOp op) {
    if (!isContraction(op))
      return;
    Buffer *a = lookup(op.getDpsInputs()[0]);
    // wgmma takes Q by descriptor unless selectWgmmaOperands left it for
    // registers.
    if (!a || a->layout != Layout::Shared || a->slots != 1 || a->coreMatrix)
      return;
    int64_t k = op.getStaticLoopRanges()[2];
    if (!a->type.getElementType().isF32() || !cachesFragments(k)) {
      rejected.insert(a->storage);
      return;
    }
    fragmentTiles[a->storage] = k;
  });
  for (Value v : rejected)
    fragmentTiles.erase(v);
}

void Distributor::cacheFragments(Buffer &tile, bool refill) {
  auto it = fragmentTiles.find(tile.storage);
  auto existing = fragmentCache.find(tile.storage);
  if (it == fragmentTiles.end() || (existing != fragmentCache.end()) != refill)
    return;
  int64_t kSteps = it->second / 8;
  Buffer cache;
  if (refill) {
    cache = existing->second;
  } else {
    cache.layout = Layout::Acc;
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&kernel.getBody().front());
    cache.storage = memref::AllocaOp::create(
        b, loc, MemRefType::get({rowTiles * kSteps * 4}, b.getF32Type()));
  }
  for (int64_t mt = 0; mt < rowTiles; ++mt)
    for (int64_t kt = 0; kt < kSteps; ++kt)
      for (auto [r, v] : llvm::enumerate(loadTf32AFragment(tile, mt, kt)))
        storePrivate(cache, (mt * kSteps + kt) * 4 + r, v);
  fragmentCache[tile.storage] = cache;
}

void Distributor::contractWithMMA(Buffer &a, Buffer &bBuf, Buffer &c,
                                  bool bTransposed, int64_t k) {
  Type elt = bBuf.type.getElementType();
  bool tf32 = elt.isF32();
  int64_t kStep = tf32 ? 8 : 16;
  auto pairType = VectorType::get({2}, elt);
  bool aInRegisters = a.layout == Layout::Acc;
  auto toElt = [&](Value v) -> Value {
    return elt.isF32() ? v
                       : arith::TruncFOp::create(b, loc, elt, v).getResult();
  };
  auto pair = [&](Value x, Value y) -> Value {
    return vector::FromElementsOp::create(b, loc, pairType, ValueRange{x, y});
  };
  // A registers of row tile mt at k step kt: (r, c), (r + 8, c), (r, c + 8),
  // (r + 8, c + 8) with c = 2 * (lane % 4) for k16 (pairs c, c + 1);
  // c = lane % 4 and c + 4 for tf32 k8.
  auto loadA = [&](int64_t mt, int64_t kt) -> SmallVector<Value> {
    SmallVector<Value> aRegs;
    if (aInRegisters && !tf32) {
      // P from the accumulator layout of S: tiles 2kt and 2kt + 1.
      for (int64_t half = 0; half < 2; ++half)
        for (int64_t i = 0; i < 2; ++i)
          aRegs.push_back(pair(
              toElt(loadPrivate(a, accIndex(a, mt, 2 * kt + half, i, 0))),
              toElt(loadPrivate(a, accIndex(a, mt, 2 * kt + half, i, 1)))));
    } else if (aInRegisters) {
      // tf32 P: keys 2q and 2q + 1 of tile kt stand for k = q and q + 4;
      // V's rows are read in the same order (loadB).
      for (int64_t j = 0; j < 2; ++j)
        for (int64_t i = 0; i < 2; ++i)
          aRegs.push_back(loadPrivate(a, accIndex(a, mt, kt, i, j)));
    } else if (!tf32) {
      // ldmatrix.x4: lanes 0-15 give rows 0-15 at column k0, lanes 16-31
      // the same rows at k0 + 8; the four matrices are exactly the A
      // registers (r, c), (r + 8, c), (r, c + 8), (r + 8, c + 8).
      Value row = arith::AddIOp::create(b, loc, rowOf(mt, 0), laneMod16);
      Value col = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, laneHi, cIndex(8)),
          cIndex(kt * 16));
      aRegs = loadMatrix(a, row, col, 4, /*transpose=*/false);
    } else {
      aRegs = loadTf32A(a, mt, kt, k);
    }
    return aRegs;
  };
  // B registers of n tiles nt and nt + 1 (when `pairs`) at k step kt.
  bool pairs = !tf32;
  int64_t nTiles = c.cols / 8;
  auto loadB = [&](int64_t nt, int64_t kt) -> SmallVector<SmallVector<Value>> {
    SmallVector<SmallVector<Value>> tiles;
    if (pairs) {
      // ldmatrix.x4 for two tiles (x2 for an odd last one). K ([n][k])
      // loads as is, V ([k][n]) transposed; each tile gets (k, k + 1) and
      // (k + 8, k + 9).
      int num = nt + 1 < nTiles ? 4 : 2;
      Value row, col;
      Value lane8 = num == 4 ? laneHi : cIndex(0);
      if (bTransposed) {
        row = arith::AddIOp::create(
            b, loc,
            arith::AddIOp::create(
                b, loc, laneMod8,
                arith::MulIOp::create(b, loc, lane8, cIndex(8))),
            cIndex(nt * 8));
        col = arith::AddIOp::create(
            b, loc, arith::MulIOp::create(b, loc, laneBit3, cIndex(8)),
            cIndex(kt * 16));
      } else {
        row = arith::AddIOp::create(
            b, loc,
            arith::AddIOp::create(
                b, loc, laneMod8,
                arith::MulIOp::create(b, loc, laneBit3, cIndex(8))),
            cIndex(kt * 16));
        col = arith::AddIOp::create(
            b, loc, arith::MulIOp::create(b, loc, lane8, cIndex(8)),
            cIndex(nt * 8));
      }
      SmallVector<Value> regs =
          loadMatrix(bBuf, row, col, num, /*transpose=*/!bTransposed);
      tiles.push_back({regs[0], regs[1]});
      if (num == 4)
        tiles.push_back({regs[2], regs[3]});
      return tiles;
    }
    // tf32, one 4-byte load per register.
    Value n = arith::AddIOp::create(b, loc, quadRow, cIndex(nt * 8));
    if (bTransposed) {
      Value col = arith::AddIOp::create(b, loc, quadCol, cIndex(kt * 8));
      tiles.push_back(
          {loadShared(bBuf, n, col, 1),
           loadShared(bBuf, n, arith::AddIOp::create(b, loc, col, cIndex(4)),
                      1)});
    } else {
      // tf32 V ([k][n]): one element per row, rows in the order the A
      // registers of P stand for (loadA).
      Value base = arith::AddIOp::create(
          b, loc, aInRegisters ? quadCol2 : quadCol, cIndex(kt * 8));
      Value second =
          arith::AddIOp::create(b, loc, base, cIndex(aInRegisters ? 1 : 4));
      tiles.push_back(
          {loadShared(bBuf, base, n, 1), loadShared(bBuf, second, n, 1)});
    }
    return tiles;
  };
  // Per k step: the A registers of every row tile, then the n tiles one
  // ldmatrix group at a time, each used by every row tile. A warp of 32 rows
  // reads K and V from shared memory half as often per FLOP as one of 16,
  // and only one group of B registers is live at a time.
  for (int64_t kt = 0; kt < k / kStep; ++kt) {
    SmallVector<SmallVector<Value>> aRegs;
    for (int64_t mt = 0; mt < rowTiles; ++mt)
      aRegs.push_back(loadA(mt, kt));
    for (int64_t nt0 = 0; nt0 < nTiles; nt0 += pairs ? 2 : 1) {
      SmallVector<SmallVector<Value>> bTiles = loadB(nt0, kt);
      for (int64_t mt = 0; mt < rowTiles; ++mt) {
        for (auto [g, bRegs] : llvm::enumerate(bTiles)) {
          int64_t nt = nt0 + g;
          SmallVector<Value> cElems;
          for (int64_t i = 0; i < 2; ++i)
            for (int64_t j = 0; j < 2; ++j)
              cElems.push_back(loadPrivate(c, accIndex(c, mt, nt, i, j)));
          SmallVector<Value> d = emitMma(b, loc, elt, aRegs[mt], bRegs, cElems);
          for (int64_t i = 0; i < 2; ++i)
            for (int64_t j = 0; j < 2; ++j)
              storePrivate(c, accIndex(c, mt, nt, i, j), d[i * 2 + j]);
        }
      }
    }
  }
}

void Distributor::contractWithFMA(Buffer &a, Buffer &bBuf, Buffer &c,
                                  bool bTransposed, int64_t k) {
  Buffer *aShared = &a;
  if (a.layout == Layout::Acc) {
    // Exact f32: every thread needs whole rows of P, so P goes through
    // shared memory.
    aShared = &scratch[a.storage];
    barrier();
    for (int64_t mt = 0; mt < rowTiles; ++mt)
      for (int64_t i = 0; i < 2; ++i)
        for (int64_t nt = 0; nt < a.cols / 8; ++nt)
          for (int64_t j = 0; j < 2; ++j)
            memref::StoreOp::create(
                b, loc, loadPrivate(a, accIndex(a, mt, nt, i, j)),
                aShared->storage,
                ValueRange{rowOfLane(mt, i), colOfLane(nt, j)});
    barrier();
  }
  auto loop = scf::ForOp::create(b, loc, cIndex(0), cIndex(k), cIndex(1));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(loop.getBody()->getTerminator());
  Value kk = loop.getInductionVar();
  for (int64_t mt = 0; mt < rowTiles; ++mt) {
    for (int64_t i = 0; i < 2; ++i) {
      Value row = rowOfLane(mt, i);
      Value av = loadShared(*aShared, row, kk, 1);
      for (int64_t nt = 0; nt < c.cols / 8; ++nt) {
        for (int64_t j = 0; j < 2; ++j) {
          Value col = colOfLane(nt, j);
          Value bv = bTransposed ? loadShared(bBuf, col, kk, 1)
                                 : loadShared(bBuf, kk, col, 1);
          int64_t idx = accIndex(c, mt, nt, i, j);
          Value sum = math::FmaOp::create(b, loc, av, bv, loadPrivate(c, idx));
          storePrivate(c, idx, sum);
        }
      }
    }
  }
}

LogicalResult Distributor::rewriteContraction(linalg::GenericOp op) {
  Buffer *a = lookup(op.getDpsInputs()[0]);
  Buffer *bBuf = lookup(op.getDpsInputs()[1]);
  Buffer *c = lookup(op.getDpsInits()[0]);
  if (!a || !bBuf || !c || c->layout != Layout::Acc ||
      bBuf->layout != Layout::Shared || a->layout == Layout::Row)
    return op.emitOpError("expects a contraction of block buffers into a "
                          "register block");
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  auto dims = [ctx = op.getContext()](unsigned x, unsigned y) {
    return contractionMap(ctx, x, y);
  };
  if (maps[0] != dims(0, 2) || maps[2] != dims(0, 1) ||
      (maps[1] != dims(1, 2) && maps[1] != dims(2, 1)))
    return op.emitOpError("expects C[i][j] += A[i][k] * B[j][k] or B[k][j]");
  bool bTransposed = maps[1] == dims(1, 2);
  int64_t k = op.getStaticLoopRanges()[2];
  b.setInsertionPoint(op);
  Type elt = bBuf->type.getElementType();
  // Whole k steps of the MMAs (k8 for tf32, k16 else): a rest would be
  // dropped (the 16-bit P V of a key block of 8 or 24).
  if (int64_t kStep = elt.isF32() ? 8 : 16; k % kStep != 0)
    return op.emitOpError("expects a reduction of whole ")
           << kStep << "-element MMA steps, got k = " << k;
  // The scores a scores-ahead loop's prologue computes (outside the loop)
  // read the first K block: its copy is waited for (selectPrologueWaits).
  bool ahead = op->hasAttr(kScoresAheadAttrName);
  // Its operands in shared memory all loaded by tensor copies (K; A from
  // registers), as every async copy of the kernel is: the wait for its
  // slot's phase below is the only one needed.
  bool byTensorCopies = onlyTensorCopiesForWgmma && tensorCopyReads.count(op);
  if (ahead && !op->getParentOfType<scf::ForOp>() && !byTensorCopies) {
    NVVM::CpAsyncWaitGroupOp::create(
        b, loc, b.getI32IntegerAttr(prologueGroups.lookup(op)));
    if (wgmmaContractions.contains(op))
      fenceForAsyncProxy();
    barrier();
  }
  // A tile loaded by tensor copies: the slot's phase (TensorCopy.cpp).
  waitForTensorCopy(op);
  if (wgmmaContractions.contains(op)) {
    // In the loop, the next block's scores run on while this block's softmax
    // and P V do.
    if (failed(contractWithWgmma(*a, *bBuf, *c, k,
                                 /*async=*/ahead &&
                                     op->getParentOfType<scf::ForOp>())))
      return failure();
  } else if (elt.isF32() && ieee)
    contractWithFMA(*a, *bBuf, *c, bTransposed, k);
  else if (wideContractions.contains(op))
    contractWithWideTf32(*a, *bBuf, *c, bTransposed, k);
  else
    contractWithMMA(*a, *bBuf, *c, bTransposed, k);
  b.eraseOp(op);
  return success();
}
