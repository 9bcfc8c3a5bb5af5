//===- Pipeline.cpp - two-stage cp.async pipelining of tile loads -*- C++ -*-//
//
// Part of the attn-mlir project.
//
// A key loop of the block IR starts with the copies of its K and V tiles
// (and their zero fills). On the GPU those copies become cp.async into one
// of two stages of each tile, issued one iteration ahead:
//
//   barrier; if (lb < ub) cp.async tiles(lb) -> stage 0; commit
//   for i = lb .. ub:
//     cp.async.wait_group 0; barrier        // tiles(i) visible to all
//     if (i + 1 < ub) cp.async tiles(i + 1) -> stage (i + 1 - lb) % 2
//     compute on stage (i - lb) % 2         // overlaps the copies above
//
// The barrier at the top of iteration i also orders iteration i - 1's reads
// of the stage that iteration i's copies overwrite. Rows past the tail are
// zero-filled by cp.async (source size 0).
//
//===----------------------------------------------------------------------===//

#include "Distributor.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::detail;

/// The tile loads a key loop starts with: copies from global memory into
/// shared tiles, with only pure ops and zero fills of those tiles between.
static SmallVector<Operation *>
leadingTileLoads(scf::ForOp loop,
                 function_ref<bool(linalg::CopyOp)> isTileLoad) {
  SmallVector<Operation *> loads;
  for (Operation &op : loop.getBody()->without_terminator()) {
    if (auto copy = dyn_cast<linalg::CopyOp>(op)) {
      if (!isTileLoad(copy))
        break;
      loads.push_back(copy);
      continue;
    }
    if (auto fill = dyn_cast<linalg::FillOp>(op)) {
      if (!matchPattern(fill.getDpsInputs()[0], m_AnyZeroFloat()))
        break;
      loads.push_back(fill);
      continue;
    }
    if (!isPure(&op))
      break;
  }
  // Only fills followed by their copy count.
  while (!loads.empty() && isa<linalg::FillOp>(loads.back()))
    loads.pop_back();
  return loads;
}

void Distributor::issueAsyncCopies(scf::ForOp loop,
                                   ArrayRef<linalg::CopyOp> copies, Value iv,
                                   Value stage) {
  MLIRContext *ctx = b.getContext();
  Block *body = loop.getBody();
  // Recompute the copies' sources and row counts for iteration `iv`.
  SetVector<Operation *> slice;
  BackwardSliceOptions options;
  options.filter = [&](Operation *op) { return op->getBlock() == body; };
  options.inclusive = true;
  for (linalg::CopyOp copy : copies)
    for (Value operand : copy->getOperands())
      if (Operation *def = operand.getDefiningOp())
        if (def->getBlock() == body)
          (void)getBackwardSlice(def, &slice, options);
  IRMapping mapping;
  mapping.map(loop.getInductionVar(), iv);
  SmallVector<Operation *> ordered(slice.begin(), slice.end());
  llvm::sort(ordered,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  for (Operation *op : ordered)
    b.clone(*op, mapping);

  auto sharedPtr = LLVM::LLVMPointerType::get(ctx, 3);
  auto globalPtr = LLVM::LLVMPointerType::get(ctx, 1);
  auto genericPtr = LLVM::LLVMPointerType::get(ctx);
  auto toPointer = [&](Type type, Value address) -> Value {
    Value i64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), address);
    return LLVM::IntToPtrOp::create(b, loc, type, i64);
  };
  for (linalg::CopyOp copy : copies) {
    OpFoldResult rowsOfr;
    Buffer *to = lookup(copy.getDpsInits()[0], &rowsOfr);
    Value src = mapping.lookupOrDefault(copy.getDpsInputs()[0]);
    Value validRows = isa<Value>(rowsOfr)
                          ? mapping.lookupOrDefault(cast<Value>(rowsOfr))
                          : cIndex(*getConstantIntValue(rowsOfr));
    Type elt = to->type.getElementType();
    int64_t bytes = elt.getIntOrFloatBitWidth() / 8;
    int64_t vec = 16 / bytes;
    int64_t chunksPerRow = to->cols / vec;
    int64_t total = to->rows * chunksPerRow;
    int64_t perThread = (total + numThreads - 1) / numThreads;
    // Source: base + (offset + r * stride0 + c) * bytes, as a global pointer.
    auto meta = memref::ExtractStridedMetadataOp::create(b, loc, src);
    Value srcBase = memref::ExtractAlignedPointerAsIndexOp::create(
        b, loc, meta.getBaseBuffer());
    Value srcOffset = meta.getOffset();
    Value srcStride = meta.getStrides()[0];
    // Destination: stage `stage` of the tile.
    Value dstBase = arith::AddIOp::create(
        b, loc, to->base,
        arith::MulIOp::create(b, loc, stage, cIndex(to->stageBytes)));
    for (int64_t i = 0; i < perThread; ++i) {
      Value idx = arith::AddIOp::create(b, loc, tid, cIndex(i * numThreads));
      OpBuilder::InsertionGuard guard(b);
      if (total % numThreads != 0) {
        Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                              idx, cIndex(total));
        auto ifOp = scf::IfOp::create(b, loc, inRange, /*withElse=*/false);
        b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      }
      Value r = arith::DivUIOp::create(b, loc, idx, cIndex(chunksPerRow));
      Value c = arith::MulIOp::create(
          b, loc, arith::RemUIOp::create(b, loc, idx, cIndex(chunksPerRow)),
          cIndex(vec));
      Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, r,
                                           validRows);
      Value srcRow = arith::SelectOp::create(b, loc, inside, r, cIndex(0));
      Value srcElem = arith::AddIOp::create(
          b, loc, srcOffset,
          arith::AddIOp::create(
              b, loc, arith::MulIOp::create(b, loc, srcRow, srcStride), c));
      Value srcPtr =
          toPointer(genericPtr,
                    arith::AddIOp::create(
                        b, loc, srcBase,
                        arith::MulIOp::create(b, loc, srcElem, cIndex(bytes))));
      srcPtr = LLVM::AddrSpaceCastOp::create(b, loc, globalPtr, srcPtr);
      Value dstElem = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, r, cIndex(to->ld)), c);
      Value dstPtr =
          toPointer(sharedPtr,
                    arith::AddIOp::create(
                        b, loc, dstBase,
                        arith::MulIOp::create(b, loc, dstElem, cIndex(bytes))));
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
  NVVM::CpAsyncCommitGroupOp::create(b, loc);
}

void Distributor::findPipelinedTiles() {
  auto isTileLoad = [&](linalg::CopyOp copy) {
    Buffer *to = lookup(copy.getDpsInits()[0]);
    return to && to->layout == Layout::Shared &&
           !lookup(copy.getDpsInputs()[0]) &&
           copy.getDpsInits()[0].getDefiningOp<memref::SubViewOp>();
  };
  kernel.walk([&](scf::ForOp loop) {
    if (!matchPattern(loop.getStep(), m_One()))
      return;
    SmallVector<Operation *> loads = leadingTileLoads(loop, isTileLoad);
    if (loads.empty())
      return;
    // Tiles with rows under 128 bytes (head dim 16) gain nothing from the
    // overlap and only add registers: they stay synchronous.
    for (Operation *op : loads) {
      auto copy = dyn_cast<linalg::CopyOp>(op);
      Buffer *to = copy ? lookup(copy.getDpsInits()[0]) : nullptr;
      if (to && to->cols * to->type.getElementTypeBitWidth() / 8 < 128)
        return;
    }
    for (Operation *op : loads)
      if (auto copy = dyn_cast<linalg::CopyOp>(op))
        stagedTiles.insert(copy.getDpsInits()[0]
                               .getDefiningOp<memref::SubViewOp>()
                               .getSource());
    pipelined.push_back({loop, loads});
  });
}

LogicalResult Distributor::pipelineTileLoads() {
  for (auto &[loop, loads] : pipelined) {
    SmallVector<linalg::CopyOp> copies;
    for (Operation *op : loads)
      if (auto copy = dyn_cast<linalg::CopyOp>(op))
        copies.push_back(copy);
    Value lb = loop.getLowerBound(), ub = loop.getUpperBound();
    // Prologue: tiles of the first iteration into stage 0, once every
    // thread is done with what the tiles held before.
    b.setInsertionPoint(loop);
    barrier();
    {
      Value any =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, lb, ub);
      auto ifOp = scf::IfOp::create(b, loc, any, /*withElse=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      issueAsyncCopies(loop, copies, lb, cIndex(0));
    }
    // Body: wait for this iteration's tiles, then prefetch the next ones
    // into the other stage.
    Block *body = loop.getBody();
    b.setInsertionPointToStart(body);
    Value iv = loop.getInductionVar();
    Value stage = arith::RemUIOp::create(
        b, loc, arith::SubIOp::create(b, loc, iv, lb), cIndex(2));
    NVVM::CpAsyncWaitGroupOp::create(b, loc, b.getI32IntegerAttr(0));
    barrier();
    DenseMap<Value, Buffer> &stages = loopStages[loop];
    for (linalg::CopyOp copy : copies) {
      Value tile =
          copy.getDpsInits()[0].getDefiningOp<memref::SubViewOp>().getSource();
      Buffer current = buffers.find(tile)->second;
      current.stage = stage;
      current.base = arith::AddIOp::create(
          b, loc, current.base,
          arith::MulIOp::create(b, loc, stage, cIndex(current.stageBytes)));
      stages[tile] = current;
    }
    // The prefetch goes where the copies were: after the ops their sources
    // come from, before the block math.
    b.setInsertionPoint(loads.back());
    Value next = arith::AddIOp::create(b, loc, iv, cIndex(1));
    Value more =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, next, ub);
    auto ifOp = scf::IfOp::create(b, loc, more, /*withElse=*/false);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      issueAsyncCopies(loop, copies, next,
                       arith::SubIOp::create(b, loc, cIndex(1), stage));
    }
    for (Operation *op : llvm::reverse(loads))
      b.eraseOp(op);
  }
  return success();
}
