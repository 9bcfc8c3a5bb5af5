//===- ProgramPrefetch.cpp - the next program's Q by bulk copies ----------===//
//
// Part of the attn-mlir project.
//
// In a program loop (outlineProgramGrid's `program-tiles`), a program used
// to load its Q tile at its start, behind the barrier that frees the K/V
// slots, and to wait for it before its first MMA: 2400-2700 cycles on the
// H200 for the seed's kernels, and about 4600 inside the loop, where the
// loads queue behind the previous program's O stores. The tf32 kernels read
// Q's fragments into registers once (cacheFragments), after which no thread
// reads the tile: from there the tile is free for the next program.
//
// So on sm_90 and newer each warp loads its own rows of Q with bulk copies
// (`cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes`, one
// per row) that complete on an mbarrier of that warp:
//
//   before the loop: init the mbarriers; zero the rows past the valid ones
//                    (no copy writes them); barrier; program 0's rows
//   program t:       wait for phase t % 2 of this warp's mbarrier
//                    read the fragments of this warp's rows
//                    fence.proxy.async; bar.warp.sync  // reads before the
//                                                      // copies' writes
//                    if t + 1 < programs: program t + 1's rows
//
// A warp reads only its own rows' fragments, so no barrier of the thread
// block is needed. The copies of program t + 1 land while program t runs its
// key loops: the next program starts with Q in place and waits for its first
// K/V block only.
//
//===----------------------------------------------------------------------===//

#include "Distributor.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::detail;

bool mlir::attn::detail::hasBulkCopies(StringRef chip) {
  return parseCudaChip(chip).value_or(0) >= 90;
}

/// The global pointer to row `row` of the 2-d view `meta` describes
/// (`base`: its aligned pointer as an index; `bytes` an element).
static Value globalRowPointer(OpBuilder &b, Location loc,
                              memref::ExtractStridedMetadataOp meta, Value base,
                              Value row, int64_t bytes) {
  Value elem = arith::AddIOp::create(
      b, loc, meta.getOffset(),
      arith::MulIOp::create(b, loc, row, meta.getStrides()[0]));
  Value address = arith::AddIOp::create(
      b, loc, base,
      arith::MulIOp::create(b, loc, elem,
                            arith::ConstantIndexOp::create(b, loc, bytes)));
  Value i64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), address);
  MLIRContext *ctx = b.getContext();
  return LLVM::AddrSpaceCastOp::create(
      b, loc, LLVM::LLVMPointerType::get(ctx, 1),
      LLVM::IntToPtrOp::create(b, loc, LLVM::LLVMPointerType::get(ctx), i64));
}

/// `fn(r)` for r = `first` + i, i = 0, `step`, ... below `limit`, each under
/// a guard r < `rows` (a thread's rows of a copy).
static void forEachRow(OpBuilder &b, Location loc, Value first, int64_t limit,
                       int64_t step, Value rows, function_ref<void(Value)> fn) {
  for (int64_t i = 0; i < limit; i += step) {
    OpBuilder::InsertionGuard guard(b);
    Value r = arith::AddIOp::create(b, loc, first,
                                    arith::ConstantIndexOp::create(b, loc, i));
    Value inside =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, r, rows);
    auto ifOp = scf::IfOp::create(b, loc, inside, /*withElse=*/false);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    fn(r);
  }
}

/// The buffer a view is of (through its subviews).
static Value rootBuffer(Value v) {
  while (auto sub = v.getDefiningOp<memref::SubViewOp>())
    v = sub.getSource();
  return v;
}

/// The fill of `copy`'s tile before it with only pure ops between (null if
/// none).
static linalg::FillOp zeroFillBefore(linalg::CopyOp copy) {
  for (Operation *prev = copy->getPrevNode(); prev;
       prev = prev->getPrevNode()) {
    if (auto fill = dyn_cast<linalg::FillOp>(prev))
      return rootBuffer(fill.getDpsInits()[0]) ==
                     rootBuffer(copy.getDpsInits()[0])
                 ? fill
                 : linalg::FillOp();
    if (!isPure(prev))
      return {};
  }
  return {};
}

bool Distributor::canPrefetchAcrossPrograms(linalg::CopyOp copy,
                                            const Buffer &tile) {
  if (!programPrefetch || !programLoopOp ||
      !hasBulkCopies(config.getTarget()) || crossProgramTile ||
      copy->getBlock() != programLoopOp.getBody())
    return false;
  // Whole rows, contiguous in shared memory, 16-byte aligned; each warp's
  // rows within its 32 lanes' reach.
  int64_t bytes = tile.type.getElementType().getIntOrFloatBitWidth() / 8;
  if (tile.coreMatrix || tile.swizzle || tile.transposed ||
      (tile.cols * bytes) % 16 != 0 || (tile.ld * bytes) % 16 != 0 ||
      tile.rows != rowsPerWarp * config.getNumWarps())
    return false;
  // Nothing else may live over the tile (tf32 P V's transposed V tiles
  // reuse Q's when its fragments are cached).
  if (!transposedTiles.empty() || !groupContractions.empty())
    return false;
  auto source = copy.getDpsInputs()[0];
  if (cast<MemRefType>(source.getType()).getRank() != 2 ||
      !clonableForProgram(source))
    return false;
  // Nothing else writes the tile: a write in a program would land over the
  // rows the next program's copies may be filling.
  linalg::FillOp fill = zeroFillBefore(copy);
  Value root = rootBuffer(copy.getDpsInits()[0]);
  WalkResult other = kernel.walk([&](DestinationStyleOpInterface op) {
    if (op == copy || op == fill)
      return WalkResult::advance();
    for (Value init : op.getDpsInits())
      if (rootBuffer(init) == root)
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return !other.wasInterrupted();
}

/// What `v` is computed from in the program loop's body (`body`): the ops of
/// its backward slice there, in order. Fails where one of them is not plain
/// arithmetic on the program's indices (regions, memory reads: what the map
/// row's scan computes, which another program's copies cannot reuse); the
/// inline asm that reads a special register (%tid.x, %ctaid.x) is.
/// Ops `leaf` accepts stay out of the slice: their results are given (the
/// thread block ids of another program).
static FailureOr<SetVector<Operation *>>
programSlice(Value v, Block *body,
             function_ref<bool(Operation *)> leaf = nullptr) {
  BackwardSliceOptions options;
  options.inclusive = true;
  options.filter = [&](Operation *op) {
    return op->getBlock() == body && !(leaf && leaf(op));
  };
  SetVector<Operation *> slice;
  if (Operation *def = v.getDefiningOp())
    if (failed(getBackwardSlice(def, &slice, options)))
      return failure();
  for (Operation *op : slice) {
    if (auto asmOp = dyn_cast<LLVM::InlineAsmOp>(op)) {
      if (asmOp->getNumOperands() != 0 ||
          !asmOp.getAsmString().starts_with("mov.u32 $0, %"))
        return failure();
      continue;
    }
    if (op->getNumRegions() != 0 || !isMemoryEffectFree(op))
      return failure();
  }
  return slice;
}

bool Distributor::clonableForProgram(Value v) {
  return succeeded(programSlice(v, programLoopOp.getBody()));
}

Value Distributor::cloneForProgram(Value v, Value program) {
  FailureOr<SetVector<Operation *>> slice =
      programSlice(v, programLoopOp.getBody());
  assert(succeeded(slice) && "check clonableForProgram first");
  IRMapping map;
  map.map(programLoopOp.getInductionVar(), program);
  for (Operation *op : *slice)
    b.clone(*op, map);
  return map.lookupOrDefault(v);
}

Value Distributor::nextProgramIndex() {
  Value program = programLoopOp.getInductionVar();
  return arith::AddIOp::create(
      b, loc, program,
      arith::ConstantIntOp::create(b, loc, program.getType(), 1));
}

std::pair<Value, Value> Distributor::nextProgram() {
  Value next = nextProgramIndex();
  Value more = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, next,
                                     programLoopOp.getUpperBound());
  return {next, more};
}

Value Distributor::programMbarrier(Value warp) {
  return sharedEntry(mbarrierOffset, warp);
}

void Distributor::issueRowCopies(Buffer &tile, Value source, Value mbarrier,
                                 Value warp, Value lane) {
  MLIRContext *ctx = b.getContext();
  int64_t bytes = tile.type.getElementType().getIntOrFloatBitWidth() / 8;
  int64_t rowBytes = tile.cols * bytes;
  Value valid = memref::DimOp::create(b, loc, source, 0);
  Value firstRow = arith::MulIOp::create(b, loc, warp, cIndex(rowsPerWarp));
  // This warp's valid rows: clamp(valid - firstRow, 0, rowsPerWarp).
  Value rows = arith::MaxSIOp::create(
      b, loc,
      arith::MinSIOp::create(b, loc,
                             arith::SubIOp::create(b, loc, valid, firstRow),
                             cIndex(rowsPerWarp)),
      cIndex(0));
  Value txBytes = arith::IndexCastOp::create(
      b, loc, b.getI32Type(),
      arith::MulIOp::create(b, loc, rows, cIndex(rowBytes)));
  {
    OpBuilder::InsertionGuard guard(b);
    Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane,
                                        cIndex(0));
    auto ifOp = scf::IfOp::create(b, loc, first, /*withElse=*/false);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    NVVM::MBarrierArriveExpectTxOp::create(b, loc, Type(), mbarrier, txBytes,
                                           NVVM::MemScopeKind::CTA,
                                           /*relaxed=*/false, Value());
  }
  // The expected bytes before any copy completes on the phase.
  NVVM::SyncWarpOp::create(b, loc,
                           arith::ConstantIntOp::create(b, loc, -1, 32));
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, source);
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(
      b, loc, meta.getBaseBuffer());
  auto sharedPtr = LLVM::LLVMPointerType::get(ctx, 3);
  Value size = arith::ConstantIntOp::create(b, loc, rowBytes, 32);
  forEachRow(b, loc, lane, rowsPerWarp, 32, rows, [&](Value r) {
    Value row = arith::AddIOp::create(b, loc, firstRow, r);
    Value src = globalRowPointer(b, loc, meta, base, row, bytes);
    Value dstI64 = arith::IndexCastOp::create(
        b, loc, b.getI64Type(), sharedAddress(b, loc, tile, row, cIndex(0)));
    // As a shared::cluster address (this CTA's window of it): the
    // shared::cta form of the instruction needs PTX 8.6.
    Value dst = LLVM::AddrSpaceCastOp::create(
        b, loc, LLVM::LLVMPointerType::get(ctx, 7),
        LLVM::IntToPtrOp::create(b, loc, sharedPtr, dstI64));
    NVVM::CpAsyncBulkGlobalToSharedClusterOp::create(
        b, loc, dst, src, mbarrier, size, /*multicastMask=*/Value(),
        /*l2CacheHint=*/Value());
  });
}

void Distributor::startProgramPrefetch(linalg::CopyOp copy, Buffer &tile) {
  OpBuilder::InsertionGuard guard(b);
  crossProgramTile = tile.storage;
  crossProgramSource = copy.getDpsInputs()[0];
  // One 8-byte mbarrier a warp, after the tiles.
  sharedOffset = llvm::alignTo(sharedOffset, 8);
  mbarrierOffset = sharedOffset;
  sharedOffset += 8 * config.getNumWarps();

  b.setInsertionPoint(programLoopOp);
  Value tid0 = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value warp = arith::DivUIOp::create(b, loc, tid0, cIndex(32));
  Value lane = arith::RemUIOp::create(b, loc, tid0, cIndex(32));
  Value mbarrier = programMbarrier(warp);
  Value isLane0 =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, cIndex(0));
  {
    OpBuilder::InsertionGuard initGuard(b);
    auto ifOp = scf::IfOp::create(b, loc, isLane0, /*withElse=*/false);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    NVVM::MBarrierInitOp::create(
        b, loc, mbarrier, arith::ConstantIntOp::create(b, loc, 1, 32), Value());
    // The initialized mbarrier visible to the async proxy that completes
    // the copies' transactions on it (as CUTLASS and Triton do after init).
    NVVM::FenceMbarrierInitOp::create(b, loc);
  }
  // The first program's source, and zeros in the rows past its valid ones
  // (every program of the thread block has the same query block).
  Value first = cloneForProgram(
      crossProgramSource,
      arith::ConstantIntOp::create(
          b, loc, programLoopOp.getInductionVar().getType(), 0));
  Value valid = memref::DimOp::create(b, loc, first, 0);
  Type elt = tile.type.getElementType();
  int64_t bytes = elt.getIntOrFloatBitWidth() / 8;
  int64_t vec = 16 / bytes;
  int64_t chunksPerRow = tile.cols / vec;
  auto vecType = VectorType::get({vec}, elt);
  Value zero = arith::ConstantOp::create(
      b, loc, vecType, DenseElementsAttr::get(vecType, b.getZeroAttr(elt)));
  Value firstRow = arith::MulIOp::create(b, loc, warp, cIndex(rowsPerWarp));
  {
    OpBuilder::InsertionGuard zeroGuard(b);
    auto forOp = scf::ForOp::create(
        b, loc, lane, cIndex(rowsPerWarp * chunksPerRow), cIndex(32));
    b.setInsertionPointToStart(forOp.getBody());
    Value idx = forOp.getInductionVar();
    Value row = arith::AddIOp::create(
        b, loc, firstRow,
        arith::DivUIOp::create(b, loc, idx, cIndex(chunksPerRow)));
    Value col = arith::MulIOp::create(
        b, loc, arith::RemUIOp::create(b, loc, idx, cIndex(chunksPerRow)),
        cIndex(vec));
    Value past =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, row, valid);
    auto ifOp = scf::IfOp::create(b, loc, past, /*withElse=*/false);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    Value address = arith::IndexCastOp::create(
        b, loc, b.getI64Type(), sharedAddress(b, loc, tile, row, col));
    Value ptr = LLVM::IntToPtrOp::create(
        b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3), address);
    LLVM::StoreOp::create(b, loc, zero, ptr, /*alignment=*/16);
  }
  // The mbarriers initialized (and the zeros written) for every thread.
  barrier();
  Value any = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                                    programLoopOp.getUpperBound(),
                                    programLoopOp.getLowerBound());
  {
    OpBuilder::InsertionGuard issueGuard(b);
    auto ifOp = scf::IfOp::create(b, loc, any, /*withElse=*/false);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    issueRowCopies(tile, first, mbarrier, warp, lane);
  }

  // The zero fill before the copy: the rows past the valid ones hold zeros
  // from above.
  if (linalg::FillOp fill = zeroFillBefore(copy))
    b.eraseOp(fill);
}

void Distributor::cacheAndPrefetchNext(Buffer &tile, bool refill) {
  Value warp = arith::DivUIOp::create(b, loc, tid, cIndex(32));
  Value lane = arith::RemUIOp::create(b, loc, tid, cIndex(32));
  Value mbarrier = programMbarrier(warp);
  Value program = programLoopOp.getInductionVar();
  Type ivType = program.getType();
  Value parity = arith::AndIOp::create(
      b, loc, program, arith::ConstantIntOp::create(b, loc, ivType, 1));
  if (ivType != b.getI32Type())
    parity = arith::TruncIOp::create(b, loc, b.getI32Type(), parity);
  NVVM::MBarrierTryWaitParityOp::create(
      b, loc, mbarrier, parity,
      arith::ConstantIntOp::create(b, loc, 0x989680, 32));
  cacheFragments(tile, refill);
  // This warp's reads of the tile before the copies that overwrite it.
  fenceForAsyncProxy();
  NVVM::SyncWarpOp::create(b, loc,
                           arith::ConstantIntOp::create(b, loc, -1, 32));
  Value more = nextProgram().second;
  OpBuilder::InsertionGuard guard(b);
  if (!nextSource) {
    // Once per program, at its top, where few registers are live.
    OpBuilder::InsertionGuard top(b);
    b.setInsertionPointAfter(tid.getDefiningOp());
    nextSource = cloneForProgram(crossProgramSource, nextProgramIndex());
  }
  auto ifOp = scf::IfOp::create(b, loc, more, /*withElse=*/false);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  issueRowCopies(tile, nextSource, mbarrier, warp, lane);
}

void Distributor::prefetchNextBlocksToL2() {
  if (!programPrefetchL2 || !programLoopOp ||
      !hasBulkCopies(config.getTarget()))
    return;
  // The copies of a program's first blocks: async copies outside the key
  // loops, in the program's body itself (under a branch, what they load can
  // depend on the program's data: the map row's first live block). Q's is
  // one of them unless the bulk copies above load it.
  SmallVector<linalg::CopyOp> firsts;
  for (Operation &op : programLoopOp.getBody()->without_terminator()) {
    auto copy = dyn_cast<linalg::CopyOp>(&op);
    if (!copy || !copy->hasAttr(kAsyncCopyAttrName))
      continue;
    if (cast<MemRefType>(copy.getDpsInputs()[0].getType()).getRank() != 2 ||
        !clonableForProgram(copy.getDpsInputs()[0]))
      continue;
    firsts.push_back(copy);
  }
  if (firsts.empty())
    return;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointAfter(tid.getDefiningOp());
  auto [next, more] = nextProgram();
  auto ifOp = scf::IfOp::create(b, loc, more, /*withElse=*/false);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  for (linalg::CopyOp copy : firsts)
    prefetchRowsToL2(cloneForProgram(copy.getDpsInputs()[0], next),
                     lookup(copy.getDpsInits()[0])->rows);
}

void Distributor::prefetchRowsToL2(Value source, int64_t maxRows) {
  auto type = cast<MemRefType>(source.getType());
  int64_t bytes = type.getElementTypeBitWidth() / 8;
  int64_t cols = type.getDimSize(1);
  if (ShapedType::isDynamic(cols) || (cols * bytes) % 16 != 0)
    return;
  Value rows = memref::DimOp::create(b, loc, source, 0);
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, source);
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(
      b, loc, meta.getBaseBuffer());
  Value size = arith::ConstantIntOp::create(b, loc, cols * bytes, 32);
  // Thread r prefetches row r (and r + threads, ...): the rows of a block
  // are at most a few threads' worth.
  forEachRow(b, loc, tid, maxRows, numThreads, rows, [&](Value row) {
    Value ptr = globalRowPointer(b, loc, meta, base, row, bytes);
    NVVM::CpAsyncBulkPrefetchOp::create(b, loc, ptr, size,
                                        /*l2CacheHint=*/Value());
  });
}

void Distributor::prefetchAheadToL2() {
  if (prefetchAhead <= 0 || programLoopOp || !hasBulkCopies(config.getTarget()))
    return;
  // The program's thread block ids (outlineProgramGrid: x the query block,
  // y the head, z the batch) and its first copies: async copies outside
  // the key loops, in the kernel's body itself, computed from the ids by
  // plain arithmetic.
  Block &body = kernel.getBody().front();
  gpu::BlockIdOp idX, idY, idZ;
  for (auto id : body.getOps<gpu::BlockIdOp>()) {
    if (id.getDimension() == gpu::Dimension::x && !idX)
      idX = id;
    else if (id.getDimension() == gpu::Dimension::y && !idY)
      idY = id;
    else if (id.getDimension() == gpu::Dimension::z && !idZ)
      idZ = id;
  }
  if (!idX || !idY || !idZ)
    return;
  auto leaf = [&](Operation *op) { return isa<gpu::BlockIdOp>(op); };
  SmallVector<linalg::CopyOp> firsts;
  for (Operation &op : body.without_terminator()) {
    auto copy = dyn_cast<linalg::CopyOp>(&op);
    if (!copy || !copy->hasAttr(kAsyncCopyAttrName))
      continue;
    Value source = copy.getDpsInputs()[0];
    if (cast<MemRefType>(source.getType()).getRank() != 2 ||
        failed(programSlice(source, &body, leaf)))
      continue;
    firsts.push_back(copy);
  }
  if (firsts.empty())
    return;
  // After the program's own first copies (those before its first key
  // loop; the slices are cloned whole, so the later ones' too): thread
  // block c + prefetchAhead x nsmid in launch order (x fastest), if the
  // grid has it.
  Operation *after = firsts.front();
  for (linalg::CopyOp copy : firsts) {
    if (!llvm::any_of(body.getOps<scf::ForOp>(), [&](scf::ForOp loop) {
          return loop->isBeforeInBlock(copy);
        }))
      after = copy;
  }
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointAfter(after);
  Type index = b.getIndexType();
  Value nx = gpu::GridDimOp::create(b, loc, gpu::Dimension::x);
  Value ny = gpu::GridDimOp::create(b, loc, gpu::Dimension::y);
  Value nz = gpu::GridDimOp::create(b, loc, gpu::Dimension::z);
  Value sms = arith::IndexCastUIOp::create(
      b, loc, index, NVVM::SmDimOp::create(b, loc, b.getI32Type()));
  Value nxy = arith::MulIOp::create(b, loc, nx, ny);
  Value linear = arith::AddIOp::create(
      b, loc, idX,
      arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, idY, nx),
                            arith::MulIOp::create(b, loc, idZ, nxy)));
  Value ahead = arith::AddIOp::create(
      b, loc, linear,
      arith::MulIOp::create(b, loc, sms, cIndex(prefetchAhead)));
  Value inGrid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, ahead,
                                       arith::MulIOp::create(b, loc, nxy, nz));
  auto ifOp = scf::IfOp::create(b, loc, inGrid, /*withElse=*/false);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  IRMapping map;
  Value plane = arith::DivUIOp::create(b, loc, ahead, nx);
  map.map(idX.getResult(), arith::RemUIOp::create(b, loc, ahead, nx));
  map.map(idY.getResult(), arith::RemUIOp::create(b, loc, plane, ny));
  map.map(idZ.getResult(), arith::DivUIOp::create(b, loc, plane, ny));
  for (linalg::CopyOp copy : firsts) {
    Value source = copy.getDpsInputs()[0];
    IRMapping copyMap = map;
    FailureOr<SetVector<Operation *>> slice = programSlice(source, &body, leaf);
    for (Operation *op : *slice)
      b.clone(*op, copyMap);
    prefetchRowsToL2(copyMap.lookupOrDefault(source),
                     lookup(copy.getDpsInits()[0])->rows);
  }
}

/// The row offset (an SSA value) of the block `copy` loads: the third
/// offset of the view of the kernel's 4-d operand its source is a view of;
/// null where that is not so or the offset is a constant.
static Value rowOffsetOf(linalg::CopyOp copy) {
  Value v = copy.getDpsInputs()[0];
  while (auto sub = v.getDefiningOp<memref::SubViewOp>()) {
    if (isa<BlockArgument>(sub.getSource()) &&
        sub.getSourceType().getRank() == 4)
      return dyn_cast<Value>(sub.getMixedOffsets()[2]);
    v = sub.getSource();
  }
  return {};
}

void Distributor::planFirstBlockPrefetch() {
  if (!programPrefetchKV || !crossProgramTile || !programLoopOp)
    return;
  Block *body = programLoopOp.getBody();
  SmallVector<scf::ForOp> loops;
  for (auto loop : body->getOps<scf::ForOp>())
    if (loop->hasAttr(kPipelinedAttrName))
      loops.push_back(loop);
  if (loops.empty())
    return;
  scf::ForOp firstLoop = loops.front(), lastLoop = loops.back();
  // Two slots: the copy past the end goes to the slot the next program's
  // first block takes exactly when the program has an even number of key
  // blocks (checked at run time, on the slot).
  auto stages = lastLoop->getAttrOfType<IntegerAttr>(kPipelinedAttrName);
  if (!stages || stages.getInt() != 2)
    return;
  // A scores-ahead loop reads the slot of the block after this one (its
  // next scores), which the copy past the end would be filling.
  if (lastLoop->hasAttr(kScoresAheadAttrName))
    return;
  // Each tile's first copy before the first key loop (K's and V's first
  // block), where the next program's source can be cloned.
  DenseMap<Value, linalg::CopyOp> firsts;
  for (Operation &op : *body) {
    if (&op == firstLoop.getOperation())
      break;
    auto copy = dyn_cast<linalg::CopyOp>(&op);
    if (!copy || !copy->hasAttr(kAsyncCopyAttrName))
      continue;
    Buffer *to = lookup(copy.getDpsInits()[0]);
    if (!to || to->slots != 2 || !to->stage || firsts.count(to->storage) ||
        !clonableForProgram(copy.getDpsInputs()[0]))
      continue;
    firsts[to->storage] = copy;
  }
  // A flag per first copy, in a register: false before the first program;
  // each program reads it at its top (whether the program before loaded
  // the block) and clears it.
  OpBuilder::InsertionGuard guard(b);
  auto flagType = MemRefType::get({1}, b.getI1Type());
  DenseMap<Value, FirstBlock> planned;
  auto firstBlockOf = [&](Value storage) -> FirstBlock {
    auto known = planned.find(storage);
    if (known != planned.end())
      return known->second;
    linalg::CopyOp first = firsts.lookup(storage);
    OpBuilder::InsertionGuard flagGuard(b);
    b.setInsertionPointToStart(&kernel.getBody().front());
    Value flag = memref::AllocaOp::create(b, loc, flagType);
    b.setInsertionPoint(programLoopOp);
    memref::StoreOp::create(
        b, loc, arith::ConstantIntOp::create(b, loc, b.getI1Type(), 0), flag,
        ValueRange{cIndex(0)});
    b.setInsertionPointAfter(tid.getDefiningOp());
    skipFirstBlock[first.getOperation()] =
        memref::LoadOp::create(b, loc, flag, ValueRange{cIndex(0)});
    memref::StoreOp::create(
        b, loc, arith::ConstantIntOp::create(b, loc, b.getI1Type(), 0), flag,
        ValueRange{cIndex(0)});
    FirstBlock block{first.getDpsInputs()[0],
                     lookup(first.getDpsInits()[0])->stage, flag};
    planned[storage] = block;
    return block;
  };
  // The last loop's copies of those tiles.
  for (Operation &op : lastLoop.getBody()->without_terminator()) {
    auto copy = dyn_cast<linalg::CopyOp>(&op);
    if (!copy || !copy->hasAttr(kAsyncCopyAttrName) || !rowOffsetOf(copy))
      continue;
    Buffer *to = lookup(copy.getDpsInits()[0]);
    if (!to || !to->stage || !firsts.count(to->storage))
      continue;
    redirectFirstBlock[copy] = firstBlockOf(to->storage);
  }
}

void Distributor::redirectToNextProgram(
    linalg::CopyOp copy, Buffer &to, Value any,
    function_ref<void(Buffer *, Value, Value)> emitCopy) {
  FirstBlock first = redirectFirstBlock.lookup(copy);
  auto loop = copy->getParentOfType<scf::ForOp>();
  Type i1 = b.getI1Type();
  // No rows, the block at the loop's end, the slot the next program's first
  // block takes, and a next program.
  Value none = arith::XOrIOp::create(
      b, loc, any, arith::ConstantIntOp::create(b, loc, i1, 1));
  Value atEnd =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rowOffsetOf(copy),
                            arith::MulIOp::create(b, loc, loop.getUpperBound(),
                                                  cIndex(config.getBlockN())));
  Value sameSlot = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                         to.stage, first.stage);
  auto [next, more] = nextProgram();
  Value take =
      arith::AndIOp::create(b, loc, arith::AndIOp::create(b, loc, none, atEnd),
                            arith::AndIOp::create(b, loc, sameSlot, more));
  OpBuilder::InsertionGuard guard(b);
  auto ifOp = scf::IfOp::create(b, loc, take, /*withElse=*/false);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  Value source = cloneForProgram(first.source, next);
  emitCopy(&to, source, memref::DimOp::create(b, loc, source, 0));
  memref::StoreOp::create(b, loc, arith::ConstantIntOp::create(b, loc, i1, 1),
                          first.flag, ValueRange{cIndex(0)});
}
