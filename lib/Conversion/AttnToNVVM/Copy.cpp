//===- Copy.cpp - tile loads and fills onto threads -----------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
// The copies and fills of distributeProgram (see Distribute.cpp) and the
// shared-memory tiles they fill (allocation, addresses): global -> shared
// tile loads in 16-byte chunks, or narrower ones for rows that are not whole
// 16-byte vectors (synchronous, or cp.async for the loads --attn-pipeline
// moved ahead: Pipeline.cpp), zero fills folded into the copies that follow
// them, row-buffer copies in registers, and the store of the output from
// its accumulator (rewriteStore).
//
//===----------------------------------------------------------------------===//

#include "Distributor.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::detail;

Value mlir::attn::detail::sharedAddress(OpBuilder &b, Location loc,
                                        const Buffer &buf, Value row,
                                        Value col) {
  auto cIndex = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  int64_t bytes = buf.type.getElementType().getIntOrFloatBitWidth() / 8;
  if (buf.swizzle) {
    // (col bytes / 128) * rows * 128 + (row / 8) * 1024 + (row % 8) * 128
    //   + ((col bytes / 16) % 8 ^ row % 8) * 16 + col bytes % 16.
    Value byteCol = arith::MulIOp::create(b, loc, col, cIndex(bytes));
    Value inGroup = arith::RemUIOp::create(b, loc, row, cIndex(8));
    Value chunk = arith::XOrIOp::create(
        b, loc,
        arith::RemUIOp::create(
            b, loc, arith::DivUIOp::create(b, loc, byteCol, cIndex(16)),
            cIndex(8)),
        inGroup);
    Value atom = arith::MulIOp::create(
        b, loc, arith::DivUIOp::create(b, loc, byteCol, cIndex(128)),
        cIndex(buf.rows * 128));
    Value group = arith::MulIOp::create(
        b, loc, arith::DivUIOp::create(b, loc, row, cIndex(8)), cIndex(1024));
    Value inAtom = arith::AddIOp::create(
        b, loc,
        arith::AddIOp::create(
            b, loc, arith::MulIOp::create(b, loc, inGroup, cIndex(128)),
            arith::MulIOp::create(b, loc, chunk, cIndex(16))),
        arith::RemUIOp::create(b, loc, byteCol, cIndex(16)));
    return arith::AddIOp::create(
        b, loc, buf.base,
        arith::AddIOp::create(
            b, loc, arith::AddIOp::create(b, loc, atom, group), inAtom));
  }
  if (!buf.coreMatrix) {
    Value elem = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, row, cIndex(buf.ld)), col);
    return arith::AddIOp::create(
        b, loc, buf.base, arith::MulIOp::create(b, loc, elem, cIndex(bytes)));
  }
  // ((row / 8) * (cols / e) + col / e) * 128 + (row % 8) * 16
  //   + (col % e) * bytes, with e = 16 / bytes elements a core-matrix row.
  int64_t e = 16 / bytes;
  int64_t matrixCols = buf.cols / e;
  int64_t groupBytes = matrixCols * 128;
  Value matrices = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc,
                            arith::DivUIOp::create(b, loc, row, cIndex(8)),
                            cIndex(groupBytes)),
      arith::MulIOp::create(
          b, loc, arith::DivUIOp::create(b, loc, col, cIndex(e)), cIndex(128)));
  Value inMatrix = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(
          b, loc, arith::RemUIOp::create(b, loc, row, cIndex(8)), cIndex(16)),
      arith::MulIOp::create(b, loc,
                            arith::RemUIOp::create(b, loc, col, cIndex(e)),
                            cIndex(bytes)));
  return arith::AddIOp::create(
      b, loc, buf.base, arith::AddIOp::create(b, loc, matrices, inMatrix));
}

void Distributor::allocateSharedView(int64_t rows, int64_t cols, Type elt,
                                     Buffer &buf, int64_t numStages,
                                     int64_t at) {
  int64_t end = sharedOffset;
  if (at >= 0)
    sharedOffset = at;
  buf.offset = sharedOffset;
  auto workgroup =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  int64_t bytes = elt.getIntOrFloatBitWidth() / 8;
  // Core-matrix tiles (wgmma operands) are conflict-free unpadded.
  buf.ld = buf.coreMatrix ? cols : cols + buf.padBytes / bytes;
  auto type = MemRefType::get({rows, buf.ld}, elt, MemRefLayoutAttrInterface{},
                              workgroup);
  buf.storage = memref::ViewOp::create(b, loc, type, dynamicShared,
                                       cIndex(sharedOffset), ValueRange{});
  buf.base =
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buf.storage);
  buf.stageBytes = (rows * buf.ld * bytes + 15) / 16 * 16;
  if (buf.swizzle || buf.realigned) {
    // The swizzle repeats every 1024 bytes of the shared address, and
    // dynamic shared memory is only 16-byte aligned: the swizzled tiles,
    // allocated first and one after the other, start at the first 1024-byte
    // boundary of the 1024 bytes the first one reserves more. Their slots
    // are whole 1024-byte blocks (8-row groups of 128-byte atoms). The
    // realigned row tiles of tensor copies follow them (slots of whole
    // 128-byte units).
    assert((!swizzleBase || sharedOffset == swizzleEnd) &&
           "swizzled tiles are allocated first, together");
    assert((!buf.swizzle || swizzleUsed % 1024 == 0) &&
           "swizzled tiles come before the realigned ones");
    if (!swizzleBase) {
      swizzleBase = arith::AndIOp::create(
          b, loc, arith::AddIOp::create(b, loc, buf.base, cIndex(1023)),
          cIndex(~int64_t(1023)));
      sharedOffset += 1024;
    }
    buf.alignedOffset = swizzleUsed;
    buf.base = swizzleUsed ? arith::AddIOp::create(b, loc, swizzleBase,
                                                   cIndex(swizzleUsed))
                                 .getResult()
                           : swizzleBase;
    swizzleUsed += numStages * buf.stageBytes;
    swizzleEnd = sharedOffset + numStages * buf.stageBytes;
  }
  if (numStages > 1) {
    // Stage s at base + s * stageBytes; stageBytes is a whole number of rows.
    auto stagesType =
        MemRefType::get({numStages, buf.stageBytes / (buf.ld * bytes), buf.ld},
                        elt, MemRefLayoutAttrInterface{}, workgroup);
    buf.stages = memref::ViewOp::create(b, loc, stagesType, dynamicShared,
                                        cIndex(sharedOffset), ValueRange{});
  }
  sharedOffset += numStages * buf.stageBytes;
  if (at >= 0)
    sharedOffset = std::max(end, sharedOffset);
}

Value Distributor::sharedEntry(int64_t offset, Value index) {
  Value base =
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, dynamicShared);
  Value address = arith::AddIOp::create(
      b, loc, base,
      arith::AddIOp::create(b, loc, cIndex(offset),
                            arith::MulIOp::create(b, loc, index, cIndex(8))));
  Value i64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), address);
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3), i64);
}

std::pair<Value, Value>
mlir::attn::detail::chunkPosition(OpBuilder &b, Location loc, const Buffer &to,
                                  Value idx, int64_t vec) {
  auto cIndex = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  int64_t chunksPerRow = to.cols / vec;
  // Swizzled tiles too: 8 lanes copy 128 contiguous bytes of a row.
  if (!to.coreMatrix || to.swizzle) {
    Value r = arith::DivUIOp::create(b, loc, idx, cIndex(chunksPerRow));
    Value c = arith::MulIOp::create(
        b, loc, arith::RemUIOp::create(b, loc, idx, cIndex(chunksPerRow)),
        cIndex(vec));
    return {r, c};
  }
  // idx = ((row / 8) * chunksPerRow + chunk) * 8 + row % 8.
  Value r = arith::AddIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, idx, cIndex(8)),
      arith::MulIOp::create(
          b, loc, arith::DivUIOp::create(b, loc, idx, cIndex(8 * chunksPerRow)),
          cIndex(8)));
  Value c = arith::MulIOp::create(
      b, loc,
      arith::RemUIOp::create(b, loc,
                             arith::DivUIOp::create(b, loc, idx, cIndex(8)),
                             cIndex(chunksPerRow)),
      cIndex(vec));
  return {r, c};
}

void Distributor::forEachSharedChunk(int64_t rows, int64_t cols, int64_t vec,
                                     function_ref<void(Value, Value)> fn) {
  int64_t chunksPerRow = cols / vec;
  int64_t total = rows * chunksPerRow;
  auto loop =
      scf::ForOp::create(b, loc, tid, cIndex(total), cIndex(numThreads));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(loop.getBody()->getTerminator());
  Value idx = loop.getInductionVar();
  Value row = arith::DivUIOp::create(b, loc, idx, cIndex(chunksPerRow));
  Value col = arith::MulIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, idx, cIndex(chunksPerRow)),
      cIndex(vec));
  fn(row, col);
}

LogicalResult Distributor::rewriteCopyRun(linalg::CopyOp copy,
                                          DenseSet<Operation *> &done) {
  auto isTileLoad = [&](linalg::CopyOp c) {
    Buffer *to = lookup(c.getDpsInits()[0]);
    return to && to->layout == Layout::Shared && !lookup(c.getDpsInputs()[0]);
  };
  if (!isTileLoad(copy))
    return rewriteCopy(copy);
  return rewriteRun(copy, isTileLoad, done, [&](ArrayRef<linalg::CopyOp> run) {
    return rewriteTileLoads(run);
  });
}

LogicalResult Distributor::rewriteRun(
    linalg::CopyOp copy, function_ref<bool(linalg::CopyOp)> joins,
    DenseSet<Operation *> &done,
    function_ref<LogicalResult(ArrayRef<linalg::CopyOp>)> rewrite) {
  SmallVector<linalg::CopyOp> run = {copy};
  SmallVector<linalg::FillOp> dropped;
  for (Operation *next = copy->getNextNode(); next;
       next = next->getNextNode()) {
    auto nextCopy = dyn_cast<linalg::CopyOp>(next);
    if (nextCopy && joins(nextCopy)) {
      run.push_back(nextCopy);
      done.insert(nextCopy);
      continue;
    }
    // The zero fill of the next tile is made redundant by its copy.
    auto fill = dyn_cast<linalg::FillOp>(next);
    if (fill && lookup(fill.getDpsInits()[0]) &&
        isZeroFillBeforeCopy(fill, lookup(fill.getDpsInits()[0]))) {
      dropped.push_back(fill);
      done.insert(fill);
      continue;
    }
    if (!isAddressOp(next))
      break;
  }
  LogicalResult result = rewrite(run);
  for (linalg::FillOp fill : dropped)
    b.eraseOp(fill);
  return result;
}

static bool sameValue(Value a, Value b, int depth);

/// Whether indices `a` and `b` are the same computation (the slot indices
/// --attn-pipeline computes once per use).
static bool sameIndex(OpFoldResult a, OpFoldResult b, int depth = 6) {
  if (a == b)
    return true;
  if (!a || !b)
    return false;
  if (isa_and_nonnull<Attribute>(a) || isa_and_nonnull<Attribute>(b))
    return getConstantIntValue(a) &&
           getConstantIntValue(a) == getConstantIntValue(b);
  return sameValue(cast<Value>(a), cast<Value>(b), depth);
}

static bool sameValue(Value a, Value b, int depth) {
  if (a == b)
    return true;
  Operation *da = a ? a.getDefiningOp() : nullptr;
  Operation *db = b ? b.getDefiningOp() : nullptr;
  if (!da || !db || depth == 0 || !isPure(da) ||
      da->getName() != db->getName() ||
      da->getAttrDictionary() != db->getAttrDictionary() ||
      da->getNumOperands() != db->getNumOperands() ||
      da->getNumRegions() != 0 || db->getNumRegions() != 0)
    return false;
  for (auto [x, y] : llvm::zip(da->getOperands(), db->getOperands()))
    if (!sameValue(x, y, depth - 1))
      return false;
  return true;
}

LogicalResult Distributor::rewriteAsyncCopyRun(linalg::CopyOp copy,
                                               DenseSet<Operation *> &done) {
  auto rowsOf = [&](linalg::CopyOp c) {
    OpFoldResult rows;
    (void)lookup(c.getDpsInits()[0], &rows);
    return rows;
  };
  OpFoldResult rows = rowsOf(copy);
  auto joins = [&](linalg::CopyOp next) {
    return next->hasAttr(kAsyncCopyAttrName) && sameIndex(rowsOf(next), rows);
  };
  return rewriteRun(copy, joins, done, [&](ArrayRef<linalg::CopyOp> run) {
    return rewriteAsyncCopies(run);
  });
}

bool Distributor::isZeroFillBeforeCopy(linalg::FillOp fill, Buffer *buf) {
  if (!matchPattern(fill.getDpsInputs()[0], m_AnyZeroFloat()))
    return false;
  auto [tile, slot] = tileAndSlot(fill.getDpsInits()[0]);
  for (Operation *next = fill->getNextNode(); next;
       next = next->getNextNode()) {
    if (auto copy = dyn_cast<linalg::CopyOp>(next)) {
      auto [copyTile, copySlot] = tileAndSlot(copy.getDpsInits()[0]);
      return copyTile == tile && sameIndex(copySlot, slot);
    }
    if (!isAddressOp(next))
      return false;
  }
  return false;
}

LogicalResult Distributor::rewriteFill(linalg::FillOp op) {
  Buffer *buf = lookup(op.getDpsInits()[0]);
  if (!buf)
    return op.emitOpError("fills an unknown buffer");
  Value value = op.getDpsInputs()[0];
  b.setInsertionPoint(op);
  if (buf->layout == Layout::Shared && isZeroFillBeforeCopy(op, buf)) {
    // The copy that follows zeroes the rows it does not load.
    b.eraseOp(op);
    return success();
  }
  if (buf->layout == Layout::Shared && buf->stage)
    return op.emitOpError("fills one slot of a multi-buffered tile without "
                          "a copy after it");
  if (buf->layout == Layout::Shared) {
    Type elt = buf->type.getElementType();
    int64_t vec = 16 / (elt.getIntOrFloatBitWidth() / 8);
    auto vecType = VectorType::get({vec}, elt);
    barrier();
    forEachSharedChunk(buf->rows, buf->cols, vec, [&](Value r, Value c) {
      Value splat = vector::BroadcastOp::create(b, loc, vecType, value);
      if (buf->coreMatrix || buf->realigned || buf->swizzledRows) {
        // Its layout is not the view's, or its base is aligned past the
        // view's start (swizzled and realigned tiles).
        Value address = arith::IndexCastOp::create(
            b, loc, b.getI64Type(), sharedAddress(b, loc, *buf, r, c));
        Value ptr = LLVM::IntToPtrOp::create(
            b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3), address);
        LLVM::StoreOp::create(b, loc, splat, ptr, /*alignment=*/16);
        return;
      }
      vector::StoreOp::create(b, loc, splat, buf->storage, ValueRange{r, c},
                              /*nontemporal=*/false, llvm::MaybeAlign(16));
    });
    if (buf->coreMatrix)
      fenceForAsyncProxy();
    barrier();
  } else {
    int64_t n = cast<MemRefType>(buf->storage.getType()).getDimSize(0);
    for (int64_t k = 0; k < n; ++k)
      storePrivate(*buf, k, value);
  }
  b.eraseOp(op);
  return success();
}

LogicalResult Distributor::rewriteCopy(linalg::CopyOp op) {
  Value src = op.getDpsInputs()[0], dst = op.getDpsInits()[0];
  OpFoldResult rows;
  Buffer *to = lookup(dst, &rows);
  Buffer *from = lookup(src);
  b.setInsertionPoint(op);
  if (to && from && to->layout == Layout::Row && from->layout == Layout::Row) {
    for (int64_t k = 0; k < rowTiles * 2; ++k)
      storePrivate(*to, k, loadPrivate(*from, k));
    b.eraseOp(op);
    return success();
  }
  if (to && from && to->layout == Layout::Acc && from->layout == Layout::Acc &&
      to->cols == from->cols && !to->transposedAcc && !from->transposedAcc) {
    // The next block's scores into S: a wgmma issued for them is waited
    // for here, the end of the iteration that overlapped it.
    if (asyncAccumulators.erase(from->storage))
      NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
    for (int64_t k = 0, e = rowTiles * (from->cols / 8) * 4; k < e; ++k)
      storePrivate(*to, k, loadPrivate(*from, k));
    b.eraseOp(op);
    return success();
  }
  if (!to || to->layout != Layout::Shared || from)
    return op.emitOpError("expects a copy from global memory into a shared "
                          "block buffer");
  return rewriteTileLoads({op});
}

SmallVector<Value> mlir::attn::detail::getGlobalIndices(OpBuilder &b,
                                                        Location loc,
                                                        Value view, Value row,
                                                        Value col) {
  auto type = cast<MemRefType>(view.getType());
  SmallVector<Value> indices = {row};
  if (type.getRank() - (col ? 1 : 0) == 3) {
    Value queryLen = arith::ConstantIndexOp::create(b, loc, type.getDimSize(2));
    indices = {arith::ConstantIndexOp::create(b, loc, 0),
               arith::DivUIOp::create(b, loc, row, queryLen),
               arith::RemUIOp::create(b, loc, row, queryLen)};
  }
  if (col)
    indices.push_back(col);
  return indices;
}

namespace {
/// One global -> shared tile copy, cut into 16-byte chunks.
struct TileLoad {
  Value src, validRows;
  Buffer *to;
  VectorType vecType;
  int64_t vec, chunksPerRow, total, perThread, group;
  /// The columns the source has (a padded head dim: fewer than the tile's,
  /// the rest zero).
  int64_t validCols;
  /// The bytes of a chunk: 16, or fewer where the source's rows are not
  /// whole 16-byte vectors (runtime::getRowVectorBytes).
  int64_t vecBytes;
};
} // namespace

/// Loads `count` chunks of `load` starting at chunk `tid + groupBase` (step
/// numThreads): a 16-byte vector per chunk, zero for rows past the valid
/// ones. Returns (value, row, col, in-range predicate or null).
static SmallVector<std::tuple<Value, Value, Value, Value>>
loadChunks(OpBuilder &b, Location loc, const TileLoad &load, Value tid,
           Value groupBase, int64_t count, int64_t numThreads, bool ragged) {
  auto cIndex = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value zero = arith::ConstantOp::create(b, loc, load.vecType,
                                         b.getZeroAttr(load.vecType));
  SmallVector<std::tuple<Value, Value, Value, Value>> chunks;
  for (int64_t i = 0; i < count; ++i) {
    Value idx = arith::AddIOp::create(
        b, loc, arith::AddIOp::create(b, loc, tid, groupBase),
        cIndex(i * numThreads));
    auto [r, c] = chunkPosition(b, loc, *load.to, idx, load.vec);
    Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, r,
                                         load.validRows);
    if (load.validCols < load.to->cols)
      inside = arith::AndIOp::create(
          b, loc, inside,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, c,
                                cIndex(load.validCols)));
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{load.vecType}, inside,
                                  /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      Value v = vector::LoadOp::create(b, loc, load.vecType, load.src,
                                       getGlobalIndices(b, loc, load.src, r, c),
                                       /*nontemporal=*/false,
                                       llvm::MaybeAlign(load.vecBytes));
      scf::YieldOp::create(b, loc, v);
      b.setInsertionPointToStart(&ifOp.getElseRegion().front());
      scf::YieldOp::create(b, loc, zero);
    }
    Value inRange =
        ragged ? arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, idx,
                                       cIndex(load.total))
                     .getResult()
               : Value();
    chunks.push_back({ifOp.getResult(0), r, c, inRange});
  }
  return chunks;
}

static void
storeChunks(OpBuilder &b, Location loc, const TileLoad &load,
            ArrayRef<std::tuple<Value, Value, Value, Value>> chunks) {
  for (auto [v, r, c, inRange] : chunks) {
    OpBuilder::InsertionGuard guard(b);
    if (inRange) {
      auto ifOp = scf::IfOp::create(b, loc, inRange, /*withElse=*/false);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    }
    if (load.to->coreMatrix || load.to->swizzledRows) {
      Value address = arith::IndexCastOp::create(
          b, loc, b.getI64Type(), sharedAddress(b, loc, *load.to, r, c));
      Value ptr = LLVM::IntToPtrOp::create(
          b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3), address);
      LLVM::StoreOp::create(b, loc, v, ptr, load.vecBytes);
      continue;
    }
    vector::StoreOp::create(b, loc, v, load.to->storage, ValueRange{r, c},
                            /*nontemporal=*/false,
                            llvm::MaybeAlign(load.vecBytes));
  }
}

LogicalResult Distributor::rewriteTileLoads(ArrayRef<linalg::CopyOp> copies) {
  // Global rows [0, rows) -> shared rows [0, rows) in 16-byte chunks; rows
  // past `rows` become zero. Each thread issues its loads in groups (up to
  // 8 x 16 bytes, fewer for wide f32 rows whose blocks already hold many
  // registers) before the group's stores, so loads are in flight together;
  // consecutive tile copies (K and V) share one group when both fit.
  b.setInsertionPoint(copies.back());
  SmallVector<TileLoad> loads;
  for (linalg::CopyOp op : copies) {
    OpFoldResult rows;
    TileLoad load;
    load.to = lookup(op.getDpsInits()[0], &rows, &load.validCols);
    if (load.to->stage)
      return op.emitOpError("copies into one slot of a multi-buffered tile "
                            "without attn.async_copy");
    load.src = op.getDpsInputs()[0];
    load.validRows = getValueOrCreateConstantIndexOp(b, loc, rows);
    Type elt = load.to->type.getElementType();
    int64_t bytes = elt.getIntOrFloatBitWidth() / 8;
    load.vecBytes = ::attn::runtime::getRowVectorBytes(load.validCols * bytes);
    load.vec = load.vecBytes / bytes;
    load.vecType = VectorType::get({load.vec}, elt);
    load.chunksPerRow = load.to->cols / load.vec;
    load.total = load.to->rows * load.chunksPerRow;
    load.perThread = (load.total + numThreads - 1) / numThreads;
    load.group = std::clamp<int64_t>(8 * 256 / (load.to->cols * bytes), 1, 8);
    loads.push_back(load);
  }
  barrier();
  int64_t together = 0;
  for (const TileLoad &load : loads)
    together += load.perThread;
  if (together <= 8 && llvm::all_of(loads, [](const TileLoad &l) {
        return l.perThread <= l.group;
      })) {
    SmallVector<SmallVector<std::tuple<Value, Value, Value, Value>>> all;
    for (const TileLoad &load : loads)
      all.push_back(loadChunks(b, loc, load, tid, cIndex(0), load.perThread,
                               numThreads, load.total % numThreads != 0));
    for (auto [load, chunks] : llvm::zip(loads, all))
      storeChunks(b, loc, load, chunks);
  } else {
    for (const TileLoad &load : loads) {
      int64_t numGroups = (load.perThread + load.group - 1) / load.group;
      if (numGroups == 1) {
        storeChunks(b, loc, load,
                    loadChunks(b, loc, load, tid, cIndex(0), load.perThread,
                               numThreads, load.total % numThreads != 0));
        continue;
      }
      // A loop over groups, so that the compiler does not hoist every load
      // of the tile at once; chunks past the tile are cut by the range
      // predicate.
      auto loop = scf::ForOp::create(
          b, loc, cIndex(0), cIndex(numGroups * load.group * numThreads),
          cIndex(load.group * numThreads));
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(loop.getBody()->getTerminator());
      storeChunks(b, loc, load,
                  loadChunks(b, loc, load, tid, loop.getInductionVar(),
                             load.group, numThreads, /*ragged=*/true));
    }
  }
  if (llvm::any_of(loads, [](const TileLoad &l) { return l.to->coreMatrix; }))
    fenceForAsyncProxy();
  barrier();
  // A tile filled once, outside the key loops (Q): its tf32 fragments into
  // registers now, if selectCachedFragments chose it.
  if (!copies.front()->getParentOfType<scf::ForOp>())
    for (const TileLoad &load : loads)
      cacheFragments(*load.to);
  for (linalg::CopyOp op : copies)
    b.eraseOp(op);
  return success();
}

LogicalResult Distributor::rewriteStore(linalg::GenericOp op, Buffer &src) {
  Value dst = op.getDpsInits()[0];
  OpFoldResult rowsOfr;
  lookup(op.getDpsInputs()[0], &rowsOfr);
  b.setInsertionPoint(op);
  Value rows = getValueOrCreateConstantIndexOp(b, loc, rowsOfr);
  int64_t nTiles = src.cols / 8;
  auto dstType = cast<MemRefType>(dst.getType());
  Type elt = dstType.getElementType();
  int64_t bytes = elt.getIntOrFloatBitWidth() / 8;
  // A 2-d view of the output, or the 4-d one of packed query heads; of a
  // padded head dim, fewer columns than the accumulator's (whose columns,
  // a multiple of 8, make whole 16-byte rows of the staging tile).
  if (dstType.getRank() != 2 && dstType.getRank() != 4)
    return op.emitOpError("expects the output's 2-d view, or the 4-d view of "
                          "packed query heads");
  int64_t dstCols = dstType.getShape().back();
  // Transposed accumulators store straight from registers (see
  // storeTransposedPairs) from head dim 32 on: at 16, ptxas spilled the row
  // bounds of a boolean-mask kernel kept alive for the stores (20 bytes).
  if (src.transposedAcc && src.cols >= 32 && dstCols == src.cols) {
    storeTransposedPairs(op, src, dst, rows);
    b.eraseOp(op);
    return success();
  }
  // Through shared memory, so that global memory sees whole rows in
  // 16-byte vectors: each thread puts its fragment pairs into a staging
  // tile (over the K/V tiles and Q, which no thread reads any more), then
  // the block copies the valid rows out.
  auto workgroup =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  int64_t ld = src.cols + 16 / bytes;
  sharedOffset = std::max(sharedOffset, src.rows * ld * bytes);
  Value staging = memref::ViewOp::create(
      b, loc,
      MemRefType::get({src.rows, ld}, elt, MemRefLayoutAttrInterface{},
                      workgroup),
      dynamicShared, cIndex(0), ValueRange{});
  // A prefetched tile (Q) may still be landing when no key loop ran.
  NVVM::CpAsyncWaitGroupOp::create(b, loc, b.getI32IntegerAttr(0));
  waitForSingleTensorCopies();
  barrier();
  auto pairType = VectorType::get({2}, elt);
  if (src.transposedAcc) {
    // Element pairs (dm, qn, 0, j), (dm, qn, 1, j): 2 adjacent columns.
    for (int64_t dm = 0; dm < src.cols / 16; ++dm)
      for (int64_t qn = 0; qn < 2 * rowTiles; ++qn)
        for (int64_t j = 0; j < 2; ++j) {
          Value row = transposedRow(qn, j), col = transposedCol(dm, 0);
          SmallVector<Value> pair;
          for (int64_t i = 0; i < 2; ++i) {
            Value v = loadPrivate(src, transposedIndex(dm, qn, i, j));
            pair.push_back(cloneBody(op, ValueRange{v, v},
                                     {row, transposedCol(dm, i)})[0]);
          }
          Value vec = vector::FromElementsOp::create(b, loc, pairType, pair);
          vector::StoreOp::create(b, loc, vec, staging, ValueRange{row, col},
                                  /*nontemporal=*/false,
                                  llvm::MaybeAlign(2 * bytes));
        }
  }
  // Plain accumulators: the pairs (nt, 0), (nt, 1), 2 columns apart.
  for (int64_t mt = 0; mt < (src.transposedAcc ? 0 : rowTiles); ++mt)
    for (int64_t i = 0; i < 2; ++i) {
      Value row = rowOfLane(mt, i);
      for (int64_t nt = 0; nt < nTiles; ++nt) {
        SmallVector<Value> pair;
        for (int64_t j = 0; j < 2; ++j) {
          Value v = loadPrivate(src, accIndex(src, mt, nt, i, j));
          pair.push_back(
              cloneBody(op, ValueRange{v, v}, {row, colOfLane(nt, j)})[0]);
        }
        Value vec = vector::FromElementsOp::create(b, loc, pairType, pair);
        vector::StoreOp::create(
            b, loc, vec, staging, ValueRange{row, colOfLane(nt, 0)},
            /*nontemporal=*/false, llvm::MaybeAlign(2 * bytes));
      }
    }
  barrier();
  // Vectors of 16 bytes, or fewer where the output's rows are not whole
  // 16-byte vectors.
  int64_t vecBytes = ::attn::runtime::getRowVectorBytes(dstCols * bytes);
  int64_t vec = vecBytes / bytes;
  auto vecType = VectorType::get({vec}, elt);
  int64_t chunksPerRow = dstCols / vec;
  int64_t total = src.rows * chunksPerRow;
  // The thread id as warp * 32 + %laneid: LLVM cannot tell it from the
  // Q load's chunk geometry, which it would otherwise reuse here and keep
  // alive through the whole kernel (ptxas then spills it).
  Value laneId = arith::IndexCastOp::create(
      b, loc, b.getIndexType(), NVVM::LaneIdOp::create(b, loc, b.getI32Type()));
  Value threadId = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(
          b, loc, arith::DivUIOp::create(b, loc, tid, cIndex(32)), cIndex(32)),
      laneId);
  for (int64_t first = 0; first < total; first += numThreads) {
    OpBuilder::InsertionGuard guard(b);
    Value idx = arith::AddIOp::create(b, loc, threadId, cIndex(first));
    Value r = arith::DivUIOp::create(b, loc, idx, cIndex(chunksPerRow));
    Value c = arith::MulIOp::create(
        b, loc, arith::RemUIOp::create(b, loc, idx, cIndex(chunksPerRow)),
        cIndex(vec));
    Value inside =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, r, rows);
    if (total % numThreads != 0)
      inside = arith::AndIOp::create(
          b, loc, inside,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, idx,
                                cIndex(total)));
    auto ifOp = scf::IfOp::create(b, loc, inside, /*withElse=*/false);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    Value v = vector::LoadOp::create(b, loc, vecType, staging, ValueRange{r, c},
                                     /*nontemporal=*/false,
                                     llvm::MaybeAlign(vecBytes));
    vector::StoreOp::create(b, loc, v, dst, getGlobalIndices(b, loc, dst, r, c),
                            /*nontemporal=*/false, llvm::MaybeAlign(vecBytes));
  }
  b.eraseOp(op);
  return success();
}

LogicalResult Distributor::rewriteRowStore(linalg::GenericOp op, Buffer &src) {
  Value dst = op.getDpsInits()[0];
  int64_t dstRank = cast<MemRefType>(dst.getType()).getRank();
  if (dstRank != 1 && dstRank != 3)
    return op.emitOpError("expects a row buffer stored into a 1-d buffer or "
                          "the 3-d view of packed query heads");
  OpFoldResult rowsOfr;
  lookup(op.getDpsInputs()[0], &rowsOfr);
  b.setInsertionPoint(op);
  Value rows = getValueOrCreateConstantIndexOp(b, loc, rowsOfr);
  // The 4 lanes of a quad hold the same rows.
  Value quadLeader = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                           quadCol, cIndex(0));
  for (int64_t mt = 0; mt < rowTiles; ++mt)
    for (int64_t i = 0; i < 2; ++i) {
      OpBuilder::InsertionGuard guard(b);
      Value row = rowOfLane(mt, i);
      Value inside = arith::AndIOp::create(
          b, loc, quadLeader,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row, rows));
      auto ifOp = scf::IfOp::create(b, loc, inside, /*withElse=*/false);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      Value v = loadPrivate(src, mt * 2 + i);
      memref::StoreOp::create(b, loc, cloneBody(op, ValueRange{v, v}, {row})[0],
                              dst, getGlobalIndices(b, loc, dst, row));
    }
  b.eraseOp(op);
  return success();
}
