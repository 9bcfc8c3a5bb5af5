//===- Pipeline.cpp - cp.async for the loops --attn-pipeline expanded -----===//
//
// Part of the attn-mlir project.
//
// `--attn-pipeline` leaves block IR in which the K/V tile loads of
// iteration i + S - 1 sit at the head of iteration i, into slot
// (i + S - 1 - lb) mod S of each tile, after a prologue that loads
// iterations lb .. lb + S - 2; those loads carry `attn.async_copy`. On the
// GPU each becomes cp.async (16 bytes a thread, rows past the valid ones
// zero-filled) and one commit group, so every iteration commits the same
// number of groups, n, and the prologue (S - 1) * n:
//
//   barrier                               // the slots are free
//   prologue: cp.async ...; commit        // (S - 1) * n groups
//   for i = lb .. ub:
//     cp.async.wait_group (S - 2) * n     // tiles(i) have landed ...
//     barrier                             // ... for every thread, and
//                                         // iteration i - 1 is done with
//                                         // the slot refilled below
//     cp.async tiles(i + S - 1); commit   // zero rows past ub: no copy
//     compute on slot (i - lb) mod S
//
// A copy of zero rows (an iteration past the end) issues no cp.async but
// still commits its (empty) group, which keeps the count.
//
//===----------------------------------------------------------------------===//

#include "Distributor.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::detail;

bool Distributor::isTensorCopy(Operation *op) {
  auto copy = dyn_cast<linalg::CopyOp>(op);
  return copy &&
         tensorCopyTiles.count(tileAndSlot(copy.getDpsInits()[0]).first);
}

bool Distributor::onlyTensorCopies() {
  WalkResult result = kernel.walk([&](Operation *op) {
    return op->hasAttr(kAsyncCopyAttrName) && !isTensorCopy(op)
               ? WalkResult::interrupt()
               : WalkResult::advance();
  });
  return !result.wasInterrupted();
}

bool Distributor::wgmmaReadsOnlyTensorCopies() {
  for (Operation *op : wgmmaContractions)
    for (Value input : cast<linalg::GenericOp>(op).getDpsInputs()) {
      // The tile itself (lookup would build a view of the slot here).
      Value tile = tileAndSlot(input).first;
      auto it = buffers.find(tile);
      if (it == buffers.end() || it->second.layout != Layout::Shared)
        continue;
      // A from registers (cached fragments), or a tile TMA writes.
      if (!fragmentTiles.count(it->second.storage) &&
          !tensorCopyTiles.count(tile))
        return false;
    }
  return true;
}

void Distributor::waitInPipelinedLoops() {
  // Where every async copy of the kernel is a tensor copy (a loop head's
  // wait also covers the copies before the loop, such as Q's), each read
  // waits for its slot's mbarrier instead, and where no tile wgmma reads is
  // written by the generic proxy, no proxy fence is needed either: the head
  // keeps only the barrier after which a slot is refilled.
  bool allTensor = onlyTensorCopies();
  bool noGenericWgmmaTiles = wgmmaReadsOnlyTensorCopies();
  onlyTensorCopiesForWgmma = allTensor && noGenericWgmmaTiles;
  kernel.walk([&](scf::ForOp loop) {
    auto stages = loop->getAttrOfType<IntegerAttr>(kPipelinedAttrName);
    if (!stages)
      return;
    int64_t perIteration = 0;
    for (Operation &op : loop.getBody()->without_terminator())
      if (op.hasAttr(kAsyncCopyAttrName))
        ++perIteration;
    b.setInsertionPointToStart(loop.getBody());
    if (!allTensor)
      NVVM::CpAsyncWaitGroupOp::create(
          b, loc,
          b.getI32IntegerAttr(
              static_cast<int32_t>((stages.getInt() - 2) * perIteration)));
    if (!wgmmaContractions.empty() && !(allTensor && noGenericWgmmaTiles))
      fenceForAsyncProxy();
    if (allTensor)
      refillBarrier();
    else
      barrier();
  });
}

LogicalResult Distributor::rewriteAsyncCopies(ArrayRef<linalg::CopyOp> copies) {
  MLIRContext *ctx = b.getContext();
  SmallVector<std::pair<Buffer *, Value>> tiles;
  // The columns each source has (fewer than its tile's: a padded head dim).
  SmallVector<int64_t> validCols;
  linalg::CopyOp first = copies.front();
  b.setInsertionPoint(copies.back());
  for (linalg::CopyOp copy : copies) {
    OpFoldResult rowsOfr;
    Buffer *to =
        lookup(copy.getDpsInits()[0], &rowsOfr, &validCols.emplace_back());
    if (!to || to->layout != Layout::Shared || lookup(copy.getDpsInputs()[0]))
      return copy.emitOpError("expects an async copy from global memory into "
                              "a shared block buffer");
    tiles.push_back({to, getValueOrCreateConstantIndexOp(b, loc, rowsOfr)});
    int64_t rowBytes = validCols.back() * to->type.getElementTypeBitWidth() / 8;
    if (::attn::runtime::getRowVectorBytes(rowBytes) != 16)
      return copy.emitOpError("expects rows of whole 16-byte vectors for "
                              "cp.async, got rows of ")
             << rowBytes << " bytes (one stage copies them synchronously)";
  }
  // A prologue copy: once every thread is done with the slots (a loop
  // before may still read them), before the first of its loop's copies.
  auto keyLoop = first->getParentOfType<scf::ForOp>();
  if (!keyLoop || !keyLoop->hasAttr(kPipelinedAttrName)) {
    auto pipelined = [](Operation *op) {
      return isa<scf::ForOp>(op) && op->hasAttr(kPipelinedAttrName);
    };
    Operation *loop = first;
    while (loop && !pipelined(loop)) {
      // Key loops in the branches of an `scf.if` (the loops of a causal map
      // row, and the map's own): this barrier also covers the prologue of
      // each branch's first loop, which nothing between reads the slots
      // before.
      if (isa<scf::IfOp>(loop))
        for (Region &region : loop->getRegions())
          for (Operation &op : region.getOps())
            if (pipelined(&op)) {
              prologueBarriers.insert(&op);
              break;
            }
      loop = loop->getNextNode();
    }
    if (!loop || prologueBarriers.insert(loop).second)
      refillBarrier();
  }
  // The copies of a run have the same rows (K and V of one block).
  Value validRows = tiles.front().second;
  // No rows (an iteration past the end): no copy, not even of zeros; the
  // slot may still hold a tile another iteration reads.
  Value any = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                                    validRows, cIndex(0));
  // A copy --attn-pipeline predicated has `select(p, rows, 0)` rows: in the
  // branch they are `rows`, often a constant (a full tile), which spares
  // each chunk its row test.
  auto select = validRows.getDefiningOp<arith::SelectOp>();
  if (select && matchPattern(select.getFalseValue(), m_Zero())) {
    validRows = select.getTrueValue();
    any = arith::AndIOp::create(b, loc, select.getCondition(),
                                arith::CmpIOp::create(b, loc,
                                                      arith::CmpIPredicate::sgt,
                                                      validRows, cIndex(0)));
  }
  auto sharedPtr = LLVM::LLVMPointerType::get(ctx, 3);
  auto globalPtr = LLVM::LLVMPointerType::get(ctx, 1);
  auto genericPtr = LLVM::LLVMPointerType::get(ctx);
  auto toPointer = [&](Type type, Value address) -> Value {
    Value i64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), address);
    return LLVM::IntToPtrOp::create(b, loc, type, i64);
  };
  // The chunks of one copy into `to` from the 2-d global view `source`, of
  // which `rows` are valid, and `cols` columns (the rest zero).
  auto emitCopy = [&](Buffer *to, Value source, Value rows, int64_t cols) {
    {
      Type elt = to->type.getElementType();
      int64_t bytes = elt.getIntOrFloatBitWidth() / 8;
      int64_t vec = 16 / bytes;
      int64_t chunksPerRow = to->cols / vec;
      int64_t total = to->rows * chunksPerRow;
      int64_t perThread = (total + numThreads - 1) / numThreads;
      // Source: base + (offset + r * stride0 + c) * bytes, a global pointer.
      auto meta = memref::ExtractStridedMetadataOp::create(b, loc, source);
      Value srcBase = memref::ExtractAlignedPointerAsIndexOp::create(
          b, loc, meta.getBaseBuffer());
      Value srcOffset = meta.getOffset();
      Value srcStride = meta.getStrides()[0];
      for (int64_t i = 0; i < perThread; ++i) {
        Value idx = arith::AddIOp::create(b, loc, tid, cIndex(i * numThreads));
        OpBuilder::InsertionGuard chunkGuard(b);
        if (total % numThreads != 0) {
          Value inRange = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::ult, idx, cIndex(total));
          auto ifOp = scf::IfOp::create(b, loc, inRange, /*withElse=*/false);
          b.setInsertionPointToStart(&ifOp.getThenRegion().front());
        }
        auto [r, c] = chunkPosition(b, loc, *to, idx, vec);
        Value inside =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, r, rows);
        Value srcCol = c;
        if (cols < to->cols) {
          inside = arith::AndIOp::create(
              b, loc, inside,
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, c,
                                    cIndex(cols)));
          srcCol = arith::SelectOp::create(b, loc, inside, c, cIndex(0));
        }
        Value srcRow = arith::SelectOp::create(b, loc, inside, r, cIndex(0));
        Value srcElem = arith::AddIOp::create(
            b, loc, srcOffset,
            arith::AddIOp::create(
                b, loc, arith::MulIOp::create(b, loc, srcRow, srcStride),
                srcCol));
        Value srcPtr = toPointer(
            genericPtr,
            arith::AddIOp::create(
                b, loc, srcBase,
                arith::MulIOp::create(b, loc, srcElem, cIndex(bytes))));
        srcPtr = LLVM::AddrSpaceCastOp::create(b, loc, globalPtr, srcPtr);
        Value dstPtr = toPointer(sharedPtr, sharedAddress(b, loc, *to, r, c));
        // Rows past the valid ones: source size 0, cp.async writes zeros.
        Value srcSize = arith::SelectOp::create(
            b, loc, inside, arith::ConstantIntOp::create(b, loc, 16, 32),
            arith::ConstantIntOp::create(b, loc, 0, 32));
        NVVM::CpAsyncOp::create(b, loc, dstPtr, srcPtr, b.getI32IntegerAttr(16),
                                NVVM::LoadCacheModifierKindAttr::get(
                                    ctx, NVVM::LoadCacheModifierKind::CG),
                                srcSize);
      }
    }
  };
  {
    OpBuilder::InsertionGuard guard(b);
    auto anyIf = scf::IfOp::create(b, loc, any, /*withElse=*/false);
    b.setInsertionPointToStart(&anyIf.getThenRegion().front());
    for (auto [index, tile] : llvm::enumerate(tiles)) {
      linalg::CopyOp copy = copies[index];
      if (tensorCopyTiles.count(tileAndSlot(copy.getDpsInits()[0]).first))
        emitTensorCopy(copy, *tile.first);
      else
        emitCopy(tile.first, copy.getDpsInputs()[0], validRows,
                 validCols[index]);
    }
  }
  // One group per copy (the first holds them all, the others are empty):
  // every iteration commits as many groups as it has async copies.
  for (linalg::CopyOp copy : copies) {
    NVVM::CpAsyncCommitGroupOp::create(b, loc);
    b.eraseOp(copy);
  }
  return success();
}

/// The commit groups issued from `from` on and before `until` (a later op
/// of its block; null: the block's end): one per async copy between them.
/// -1 where an op between holds async copies in a region (a count that may
/// vary).
static int64_t groupsFrom(Operation *from, Operation *until) {
  int64_t groups = 0;
  for (Operation *op = from; op && op != until; op = op->getNextNode()) {
    if (op->hasAttr(kAsyncCopyAttrName)) {
      ++groups;
      continue;
    }
    WalkResult nested = op->walk([](Operation *inner) {
      return inner->hasAttr(kAsyncCopyAttrName) ? WalkResult::interrupt()
                                                : WalkResult::advance();
    });
    if (nested.wasInterrupted())
      return -1;
  }
  return groups;
}

/// The commit groups issued after the async copy `copy` and before `until`
/// (see groupsFrom).
static int64_t groupsBetween(Operation *copy, Operation *until) {
  return groupsFrom(copy->getNextNode(), until);
}

std::pair<Value, OpFoldResult> mlir::attn::detail::tileAndSlot(Value v) {
  OpFoldResult slot;
  while (auto sub = v.getDefiningOp<memref::SubViewOp>()) {
    if (sub.getSource().getDefiningOp<memref::AllocaOp>() &&
        sub.getSourceType().getRank() == 3)
      slot = sub.getMixedOffsets()[0];
    v = sub.getSource();
  }
  return {v, slot};
}

/// Whether `a` and `b` are the same value: the same SSA value or constant,
/// or the results of the same pure computation on such values (the slot
/// indices of one block, computed twice before CSE).
static bool sameValue(OpFoldResult a, OpFoldResult b, int depth = 8) {
  if (isEqualConstantIntOrValue(a, b))
    return true;
  auto va = dyn_cast<Value>(a), vb = dyn_cast<Value>(b);
  if (!va || !vb || depth == 0)
    return false;
  auto ra = dyn_cast<OpResult>(va), rb = dyn_cast<OpResult>(vb);
  if (!ra || !rb || ra.getResultNumber() != rb.getResultNumber())
    return false;
  Operation *x = ra.getOwner(), *y = rb.getOwner();
  if (x->getName() != y->getName() || !isPure(x) || x->getNumRegions() != 0 ||
      x->getAttrDictionary() != y->getAttrDictionary() ||
      x->getNumOperands() != y->getNumOperands())
    return false;
  for (auto [p, q] : llvm::zip(x->getOperands(), y->getOperands()))
    if (!sameValue(p, q, depth - 1))
      return false;
  return true;
}

void Distributor::selectPrologueWaits() {
  // The scores a scores-ahead loop's prologue computes read Q and the first
  // K block: the groups of the copies after that block's (the next K
  // block's, the first V block's) may still be in flight.
  kernel.walk([&](linalg::GenericOp op) {
    if (!op->hasAttr(kScoresAheadAttrName) ||
        op->getParentOfType<scf::ForOp>() || op.getNumDpsInputs() != 2)
      return;
    auto [tile, slot] = tileAndSlot(op.getDpsInputs()[1]);
    for (Operation *prev = op->getPrevNode(); prev;
         prev = prev->getPrevNode()) {
      auto copy = dyn_cast<linalg::CopyOp>(prev);
      if (!copy || !copy->hasAttr(kAsyncCopyAttrName))
        continue;
      auto [copyTile, copySlot] = tileAndSlot(copy.getDpsInits()[0]);
      if (copyTile != tile || !slot || !copySlot || !sameValue(slot, copySlot))
        continue;
      int64_t groups = groupsBetween(copy, op);
      if (groups > 0)
        prologueGroups[op] = groups;
      return;
    }
  });
}

void Distributor::cachePrefetchedFragments() {
  SmallVector<linalg::CopyOp> prefetches;
  kernel.walk([&](linalg::CopyOp copy) {
    if (!copy->hasAttr(kAsyncCopyAttrName) ||
        copy->getParentOfType<scf::ForOp>())
      return;
    Buffer *to = lookup(copy.getDpsInits()[0]);
    if (to && to->slots == 1 && fragmentTiles.count(to->storage))
      prefetches.push_back(copy);
  });
  for (linalg::CopyOp copy : prefetches) {
    // The first op after the copy, in its block, that is or holds a
    // pipelined loop or the scores a scores-ahead loop's prologue computes:
    // every reader of the tile is one of those.
    auto readsFirst = [](Operation *op) {
      return (isa<scf::ForOp>(op) && op->hasAttr(kPipelinedAttrName)) ||
             op->hasAttr(kScoresAheadAttrName);
    };
    auto firstReader = [&](Operation *from) -> Operation * {
      for (Operation *op = from; op; op = op->getNextNode()) {
        WalkResult found = op->walk([&](Operation *inner) {
          return readsFirst(inner) ? WalkResult::interrupt()
                                   : WalkResult::advance();
        });
        if (found.wasInterrupted())
          return op;
      }
      return nullptr;
    };
    Operation *first = firstReader(copy->getNextNode());
    if (!first)
      continue;
    // The tile's own group: the copies after it (K and V of the first
    // blocks) may still be in flight.
    int64_t pending = std::max<int64_t>(groupsBetween(copy, first), 0);
    Buffer &tile = *lookup(copy.getDpsInits()[0]);
    // Where the fragments are read: before `first`, or, for key loops in
    // the branches of an `scf.if` (the loops of a causal map row, and the
    // map's own), in each branch after its first blocks' copies, into the
    // same registers. Each point: the op, the groups issued after the
    // tile's, whether it refills.
    struct CachePoint {
      Operation *before;
      int64_t groups;
      bool refill;
    };
    SmallVector<CachePoint> points;
    auto branch = dyn_cast<scf::IfOp>(first);
    if (!branch || readsFirst(first)) {
      points.push_back({first, pending, false});
    } else {
      for (Region &region : branch->getRegions()) {
        Operation *inner =
            region.empty() ? nullptr : firstReader(&region.front().front());
        if (!inner)
          continue;
        int64_t more =
            std::max<int64_t>(groupsFrom(&region.front().front(), inner), 0);
        points.push_back({inner, pending + more, !points.empty()});
      }
    }
    for (const CachePoint &point : points) {
      b.setInsertionPoint(point.before);
      auto copied =
          tensorCopyTiles.find(tileAndSlot(copy.getDpsInits()[0]).first);
      if (copied != tensorCopyTiles.end()) {
        // By a tensor copy: every thread waits for the tile's phase.
        waitForTensorCopyPhase(copied->second, cIndex(0));
      } else {
        NVVM::CpAsyncWaitGroupOp::create(b, loc,
                                         b.getI32IntegerAttr(point.groups));
        barrier();
      }
      cacheFragments(tile, point.refill);
      // No thread reads the tile again: under warp specialization its
      // slot is released.
      if (copied != tensorCopyTiles.end())
        releaseTensorCopySlot(copied->second, cIndex(0));
    }
  }
}
