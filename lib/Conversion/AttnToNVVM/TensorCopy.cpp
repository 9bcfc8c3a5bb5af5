//===- TensorCopy.cpp - Q/K/V tiles by TMA tensor copies ------------------===//
//
// Part of the attn-mlir project.
//
// With `tensor-copies` on sm_90 and newer, a multi-buffered tile in wgmma's
// 128-byte swizzle that only wgmma reads is loaded by the Tensor Memory
// Accelerator instead of by every thread's cp.async, and so is a tf32
// kernel's V tile, whose rows `mma.sync` reads padded by 16 bytes: one box a
// block, one pad wider than the head dim, so that TMA writes the padded rows
// itself (the pad columns are past the operand's head dim: zeros), into a
// tile whose base is aligned to 128 bytes at run time (`Buffer::realigned`);
// so is a tf32 kernel's Q tile, which each warp reads once into its cached
// fragments (it has one slot; every thread waits for it there, and again
// before the kernel's end, so that no copy outlives its thread block). Q
// comes as K does, one box per 128-byte atom in the 128-byte swizzle
// (`Buffer::swizzledRows`), where its rows are whole atoms: a padded row's
// box reaches past the head dim, and TMA's fill of those columns costs time;
// unpadded but unswizzled, the fragment reads conflict 8 ways (docs/Wgmma.md,
// TMA tensor copies and mbarriers; docs/Rationale.md, Tried and rejected).
// By default (`auto`) K and V of the 16-bit wgmma kernels, and Q, K and V
// of the tf32 ones whose V goes so; `all` also takes a tf32 K whose V
// cannot (K alone was slower, docs/Wgmma.md).
// Each slot s of the tile has an mbarrier in shared memory, and every thread
// counts the slot's fills in a register (the copies' branches are uniform
// over the thread block, so all threads count alike):
//
//   kernel entry:  thread 0: mbarrier.init [bar(s)], 1; fence; fills(s) = 0
//   copy into slot s (when the copy has rows):
//                  fills(s) += 1
//                  thread 0: mbarrier.arrive.expect_tx [bar(s)], box bytes
//                            cp.async.bulk.tensor.4d [atom a of slot s],
//                                [map, {d0 + a * 128 / bytes, t, h, b}],
//                                [bar(s)]
//                  (one per 128-byte atom: TMA's 128-byte swizzle writes the
//                  box exactly as Buffer::swizzle lays out an atom)
//   a contraction reading slot s (every thread, right before it):
//                  mbarrier.try_wait.parity [bar(s)], (fills(s) + 1) mod 2
//
// The wait is for the phase of the slot's latest fill, which is the block
// the wgmma reads: a loop's copies go to other slots than its reads of the
// same iteration (slot (i + S - 1) mod S against i mod S, or for a
// scores-ahead loop after its read), and a slot is refilled only after the
// loop head's barrier that follows every read of it. A read of
// a block no copy loaded (the scores of a block past the end, which nothing
// uses) finds an older, completed phase, or with no fill yet parity 1,
// which a fresh mbarrier reports complete: no wait can hang, as no
// cp.async.wait_group could. (Counts in shared memory would need a load
// after the loop head's barrier, whose latency comes before every wgmma;
// docs/Wgmma.md, TMA tensor copies and mbarriers.) Rows past
// the operand's end come in as zeros (the map's out-of-bounds fill), as
// cp.async's zero-filled rows did. The copies keep their commit groups (empty
// now), so the cp.async waits of the other tiles (V) count as before. The map
// is a kernel argument
// (`attn.kernel_tensor_maps`): a pointer to a CUtensorMap that the host
// builds (docs/ManifestKernels.md, version 3).
//
//===----------------------------------------------------------------------===//

#include "Distributor.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::detail;

namespace {
/// A 2-d view of one block of a 4-d kernel argument: the argument's number
/// and the element coordinates of the view's (0, 0), outermost first.
struct ArgumentView {
  unsigned arg = 0;
  SmallVector<OpFoldResult> coords;
};
} // namespace

/// Follows `view` back through 2-d subviews at offset zero and one
/// rank-reducing subview (unit strides, dims 0 and 1 of size 1) to an
/// argument of `kernel`.
static std::optional<ArgumentView> traceToArgument(Value view,
                                                   gpu::GPUFuncOp kernel) {
  ArgumentView result;
  while (true) {
    if (auto cast = view.getDefiningOp<memref::CastOp>()) {
      view = cast.getSource();
      continue;
    }
    auto sub = view.getDefiningOp<memref::SubViewOp>();
    if (!sub)
      break;
    if (!llvm::all_of(sub.getMixedStrides(),
                      [](OpFoldResult s) { return isConstantIntValue(s, 1); }))
      return std::nullopt;
    if (sub.getSourceType().getRank() == sub.getType().getRank()) {
      if (!llvm::all_of(sub.getMixedOffsets(), [](OpFoldResult o) {
            return isConstantIntValue(o, 0);
          }))
        return std::nullopt;
    } else {
      if (!result.coords.empty() || sub.getSourceType().getRank() != 4 ||
          sub.getType().getRank() != 2 ||
          !isConstantIntValue(sub.getMixedSizes()[0], 1) ||
          !isConstantIntValue(sub.getMixedSizes()[1], 1))
        return std::nullopt;
      result.coords = sub.getMixedOffsets();
    }
    view = sub.getSource();
  }
  auto arg = dyn_cast<BlockArgument>(view);
  if (!arg || arg.getOwner() != &kernel.getBody().front() ||
      result.coords.size() != 4)
    return std::nullopt;
  result.arg = arg.getArgNumber();
  return result;
}

/// Whether `chip` (sm_NN[a]) has bulk and tensor copies (the Tensor Memory
/// Accelerator) and mbarrier transaction counts: sm_90 and newer.
static bool hasBulkCopies(StringRef chip) {
  return parseCudaChip(chip).value_or(0) >= 90;
}

std::optional<TensorCopyMode> mlir::attn::parseTensorCopyMode(StringRef name) {
  return llvm::StringSwitch<std::optional<TensorCopyMode>>(name)
      .Case("none", TensorCopyMode::None)
      .Case("auto", TensorCopyMode::Auto)
      .Default(std::nullopt);
}

bool Distributor::tensorCopyUses(
    Value tile, SmallVectorImpl<linalg::CopyOp> &copies,
    SmallVectorImpl<Operation *> &reads,
    function_ref<bool(Operation *, unsigned)> accepts) {
  bool valid = true;
  // A multi-buffered tile's uses are of its slots.
  bool slotted = buffers.find(tile)->second.slots > 1;
  kernel.walk([&](Operation *op) {
    if (!isa<linalg::LinalgOp>(op))
      return;
    for (OpOperand &operand : op->getOpOperands()) {
      auto [opTile, slot] = tileAndSlot(operand.get());
      if (opTile != tile)
        continue;
      auto copy = dyn_cast<linalg::CopyOp>(op);
      if (copy && copy->hasAttr(kAsyncCopyAttrName) &&
          operand.getOperandNumber() == 1 && bool(slot) == slotted &&
          traceToArgument(copy.getDpsInputs()[0], kernel))
        copies.push_back(copy);
      else if (operand.getOperandNumber() < 2 && bool(slot) == slotted &&
               accepts(op, operand.getOperandNumber()))
        reads.push_back(op);
      else if (!isa<linalg::FillOp>(op))
        valid = false;
    }
  });
  if (!valid || copies.empty() || reads.empty())
    return false;
  // One kernel argument for all copies of the tile.
  unsigned arg = traceToArgument(copies.front().getDpsInputs()[0], kernel)->arg;
  return llvm::all_of(copies, [&](linalg::CopyOp copy) {
    return traceToArgument(copy.getDpsInputs()[0], kernel)->arg == arg;
  });
}

void Distributor::selectRowTensorCopies() {
  if (tensorCopies == TensorCopyMode::None || wgmmaContractions.empty() ||
      !hasBulkCopies(config.getTarget()))
    return;
  auto isMmaContraction = [&](Operation *op, unsigned) {
    auto generic = dyn_cast<linalg::GenericOp>(op);
    return generic && isContraction(generic) && !wgmmaContractions.contains(op);
  };
  // Q's tile, when each warp reads it once, into the registers of its
  // cached fragments (selectCachedFragments): the A operand of f32
  // contractions only.
  auto readsFragments = [&](Operation *op, unsigned operand) {
    auto generic = dyn_cast<linalg::GenericOp>(op);
    return generic && isContraction(generic) && operand == 0 && !ieee &&
           cachesFragments(generic.getStaticLoopRanges()[2]);
  };
  for (auto &[value, buf] : buffers) {
    if (buf.layout != Layout::Shared || buf.swizzle || buf.coreMatrix)
      continue;
    bool single = buf.slots == 1;
    if (single && !buf.type.getElementType().isF32())
      continue;
    int64_t bytes = buf.type.getElementTypeBitWidth() / 8;
    // The box is a padded row wide: whole 16-byte units, at most 256
    // elements; slots stay 128-byte aligned.
    int64_t boxCols = buf.cols + buf.padBytes / bytes;
    if (buf.cols * bytes % 16 != 0 || buf.padBytes % 16 != 0 || boxCols > 256 ||
        buf.rows > 256 || buf.rows * boxCols * bytes % 128)
      continue;
    SmallVector<linalg::CopyOp> copies;
    SmallVector<Operation *> reads;
    if (!tensorCopyUses(
            value, copies, reads,
            single
                ? function_ref<bool(Operation *, unsigned)>(readsFragments)
                : function_ref<bool(Operation *, unsigned)>(isMmaContraction)))
      continue;
    // Q in whole 128-byte atoms (8-row groups): swizzled, unpadded. (Not
    // under warp specialization, whose consumers' 216 registers then spill.)
    if (single && !options.warpSpecialize && buf.cols * bytes % 128 == 0 &&
        buf.rows % 8 == 0) {
      buf.swizzle = buf.swizzledRows = true;
      buf.padBytes = 0;
      continue;
    }
    buf.realigned = true;
  }
}

LogicalResult Distributor::selectTensorCopies() {
  if (tensorCopies == TensorCopyMode::None || wgmmaContractions.empty() ||
      !hasBulkCopies(config.getTarget()))
    return success();
  // The candidates: multi-buffered swizzled tiles of whole 128-byte atoms
  // that only wgmma reads, and the row tiles selectRowTensorCopies chose.
  // Each use must be an async copy into a slot from a block of a kernel
  // argument, a zero fill of a slot (the copy's tail, which the tensor
  // copy's out-of-bounds fill replaces) or a read by a contraction.
  struct Uses {
    SmallVector<linalg::CopyOp> copies;
    SmallVector<Operation *> reads;
  };
  llvm::MapVector<Value, Uses> candidates;
  auto isWgmma = [&](Operation *op, unsigned) {
    return wgmmaContractions.contains(op);
  };
  auto isContractionOp = [&](Operation *op, unsigned) {
    auto generic = dyn_cast<linalg::GenericOp>(op);
    return generic && isContraction(generic);
  };
  // `auto` takes an f32 K tile only with its kernel's V (K alone was
  // slower: docs/Wgmma.md).
  auto isRowTile = [](const Buffer &buf) {
    return buf.realigned || buf.swizzledRows;
  };
  bool withRows = llvm::any_of(
      buffers, [&](const auto &entry) { return isRowTile(entry.second); });
  for (auto &[value, buf] : buffers) {
    bool swizzled =
        buf.layout == Layout::Shared && buf.swizzle && buf.slots > 1 &&
        buf.cols * (buf.type.getElementTypeBitWidth() / 8) % 128 == 0 &&
        (buf.type.getElementTypeBitWidth() == 16 || withRows);
    bool rowTile = isRowTile(buf);
    if (!swizzled && !rowTile)
      continue;
    // A single tile is waited for only where its fragments are cached
    // (cachePrefetchedFragments): no other read may see it landing. (Else
    // it stays realigned, loaded by cp.async through its base.)
    if (buf.slots == 1 && !fragmentTiles.count(buf.storage)) {
      // A swizzled Q tile has no cp.async path (selectRowTensorCopies
      // chose it for the reads selectCachedFragments takes).
      if (buf.swizzledRows)
        return emitOpErrorAtLoc(
            kernel, "a swizzled Q tile whose fragments are not cached");
      continue;
    }
    Uses uses;
    if (tensorCopyUses(
            value, uses.copies, uses.reads,
            rowTile ? function_ref<bool(Operation *, unsigned)>(isContractionOp)
                    : function_ref<bool(Operation *, unsigned)>(isWgmma)))
      candidates[value] = std::move(uses);
    else if (buf.swizzledRows)
      return emitOpErrorAtLoc(kernel,
                              "a swizzled Q tile that tensor copies cannot "
                              "load");
  }
  if (candidates.empty())
    return success();
  SmallVector<Attribute> maps;
  SmallVector<int32_t> hostArgs(
      kernel->getAttrOfType<DenseI32ArrayAttr>(kKernelArgsAttrName)
          .asArrayRef());
  MLIRContext *ctx = b.getContext();
  for (auto &[tile, uses] : candidates) {
    std::optional<ArgumentView> view =
        traceToArgument(uses.copies.front().getDpsInputs()[0], kernel);
    Buffer &buf = buffers[tile];
    int64_t bytes = buf.type.getElementTypeBitWidth() / 8;
    TensorCopyTile &entry = tensorCopyTiles[tile];
    entry.arg = view->arg;
    // A swizzled tile (K, or Q's swizzled rows): one box per 128-byte atom.
    // A realigned row tile: one box, its padded rows whole (the pad columns
    // are out of bounds: zeros).
    entry.boxCols = buf.realigned ? buf.ld : 128 / bytes;
    entry.txBytes =
        buf.realigned ? buf.rows * buf.ld * bytes : buf.rows * buf.cols * bytes;
    unsigned index = kernel.getNumArguments();
    if (failed(kernel.insertArgument(index, LLVM::LLVMPointerType::get(ctx),
                                     DictionaryAttr::get(ctx), loc)))
      return emitOpErrorAtLoc(kernel, "could not add a tensor map argument");
    entry.map = kernel.getArgument(index);
    hostArgs.push_back(kTensorMapArgCode - static_cast<int32_t>(maps.size()));
    maps.push_back(b.getDictionaryAttr(
        {b.getNamedAttr("arg", b.getI64IntegerAttr(view->arg)),
         b.getNamedAttr(
             "box", b.getDenseI64ArrayAttr({1, 1, buf.rows, entry.boxCols})),
         b.getNamedAttr("swizzle",
                        b.getI64IntegerAttr(buf.realigned ? 0 : 128))}));
    // Per slot an 8-byte mbarrier, after what is allocated.
    sharedOffset = llvm::alignTo(sharedOffset, 8);
    entry.barriers = sharedOffset;
    sharedOffset += 8 * buf.slots;
    // A single tile (Q) is waited for where its fragments are cached
    // (cachePrefetchedFragments), not at each contraction.
    if (buf.slots > 1)
      for (Operation *read : uses.reads)
        tensorCopyReads[read] = tile;
  }
  if (maps.empty())
    return success();
  kernel->setAttr(kKernelArgsAttrName, b.getDenseI32ArrayAttr(hostArgs));
  kernel->setAttr(kKernelTensorMapsAttrName, b.getArrayAttr(maps));

  // Thread 0 initializes the mbarriers at the entry (the barrier before the
  // first copies publishes them), predicated rather than branched: a branch
  // here would split the entry block, and the register arrays allocated
  // after it would live on the stack. Every thread's fill counts start at 0.
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointAfter(dynamicShared.getDefiningOp());
  Value first =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, cIndex(0));
  Value zero = arith::ConstantIntOp::create(b, loc, 0, 32);
  auto countType = MemRefType::get({1}, b.getI32Type());
  for (auto &[tile, entry] : tensorCopyTiles) {
    for (int64_t s = 0, e = buffers[tile].slots; s < e; ++s) {
      NVVM::MBarrierInitOp::create(
          b, loc, sharedEntry(entry.barriers, cIndex(s)),
          arith::ConstantIntOp::create(b, loc, 1, 32), first);
      Value count = memref::AllocaOp::create(b, loc, countType);
      memref::StoreOp::create(b, loc, zero, count, ValueRange{cIndex(0)});
      entry.fills.push_back(count);
    }
  }
  // Visible to the async proxy that completes the copies on them.
  NVVM::FenceMbarrierInitOp::create(b, loc);
  // A single tile's copy lands before the thread block exits, also where no
  // path read it.
  b.setInsertionPoint(kernel.getBody().back().getTerminator());
  waitForSingleTensorCopies();
  return success();
}

void Distributor::waitForSingleTensorCopies() {
  for (auto &[tile, entry] : tensorCopyTiles)
    if (entry.fills.size() == 1)
      waitForTensorCopyPhase(entry, cIndex(0));
}

Value Distributor::tensorCopyFills(const TensorCopyTile &entry, Value slot) {
  return slotCount(entry.fills, slot);
}

Value Distributor::slotCount(ArrayRef<Value> counts, Value slot) {
  Value count;
  for (auto [s, counter] : llvm::enumerate(counts)) {
    Value value =
        memref::LoadOp::create(b, loc, counter, ValueRange{cIndex(0)});
    if (!count) {
      count = value;
      continue;
    }
    Value isSlot = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, slot,
                                         cIndex(s));
    count = arith::SelectOp::create(b, loc, isSlot, value, count);
  }
  return count;
}

void Distributor::waitForTensorCopy(Operation *read) {
  auto it = tensorCopyReads.find(read);
  if (it == tensorCopyReads.end())
    return;
  const TensorCopyTile &entry = tensorCopyTiles.lookup(it->second);
  for (Value input : cast<linalg::GenericOp>(read).getDpsInputs()) {
    auto [tile, slot] = tileAndSlot(input);
    if (tile != it->second)
      continue;
    waitForTensorCopyPhase(entry,
                           getValueOrCreateConstantIndexOp(b, loc, slot));
  }
}

void Distributor::waitForTensorCopyPhase(const TensorCopyTile &entry,
                                         Value index) {
  // The phase of the slot's latest fill: (fills + 1) mod 2.
  Value fills = tensorCopyFills(entry, index);
  Value parity = arith::AndIOp::create(
      b, loc,
      arith::AddIOp::create(b, loc, fills,
                            arith::ConstantIntOp::create(b, loc, 1, 32)),
      arith::ConstantIntOp::create(b, loc, 1, 32));
  // Under warp specialization a slot whose latest fill the consumers have
  // released (or that has no fill yet) is not waited for: the producer
  // may have completed the slot's next fill already, and the parity would
  // then name a fill after that one, which may never come. Only a read of
  // a block no copy loaded (past the end, unused, as without the producer)
  // finds its slot so; a released fill has landed.
  std::optional<OpBuilder::InsertionGuard> guard;
  if (warpSpecialized) {
    Value filled = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                         releasedFills(entry, index), fills);
    auto ifFilled = scf::IfOp::create(b, loc, filled, /*withElse=*/false);
    guard.emplace(b);
    b.setInsertionPoint(ifFilled.thenBlock()->getTerminator());
  }
  Operation *wait =
      spinOnParity(b, loc, sharedEntry(entry.barriers, index), parity);
  wait->setAttr(kTensorCopyWaitAttrName, b.getUnitAttr());
}

Operation *mlir::attn::detail::spinOnParity(OpBuilder &b, Location loc,
                                            Value barrier, Value parity) {
  // A spin on try_wait without a suspend-time hint: with one (upstream's
  // nvvm.mbarrier.try_wait.parity takes it), ptxas puts a NANOSLEEP in
  // the retry path, and a thread that misses the phase sleeps.
  Value address = LLVM::PtrToIntOp::create(b, loc, b.getI32Type(), barrier);
  return LLVM::InlineAsmOp::create(
      b, loc, TypeRange(), ValueRange{address, parity},
      "{\n\t.reg .pred p;\n\twait:\n\t"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [$0], $1;\n\t"
      "@!p bra wait;\n\t}",
      "r,r", /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::tailcallkind::TailCallKind::None,
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
      /*operand_attrs=*/ArrayAttr());
}

void Distributor::emitTensorCopy(linalg::CopyOp copy, Buffer &to) {
  MLIRContext *ctx = b.getContext();
  auto [tile, slot] = tileAndSlot(copy.getDpsInits()[0]);
  const TensorCopyTile &entry = tensorCopyTiles.lookup(tile);
  std::optional<ArgumentView> view =
      traceToArgument(copy.getDpsInputs()[0], kernel);
  // Every thread counts the fill (the copy's branch is uniform).
  Value index =
      slot ? getValueOrCreateConstantIndexOp(b, loc, slot) : cIndex(0);
  for (auto [s, count] : llvm::enumerate(entry.fills)) {
    Value value = memref::LoadOp::create(b, loc, count, ValueRange{cIndex(0)});
    Value isSlot = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                         index, cIndex(s));
    Value next = arith::AddIOp::create(
        b, loc, value, arith::ExtUIOp::create(b, loc, b.getI32Type(), isSlot));
    memref::StoreOp::create(b, loc, next, count, ValueRange{cIndex(0)});
  }
  // Under warp specialization: the consumers' release of the slot and the
  // producer's wait for it (WarpRoles.cpp).
  if (warpSpecialized)
    emitSlotHandover(entry, index, tensorCopyFills(entry, index));
  OpBuilder::InsertionGuard guard(b);
  Value first =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, cIndex(0));
  auto ifOp = scf::IfOp::create(b, loc, first, /*withElse=*/false);
  if (warpSpecialized)
    ifOp->setAttr(kWarpRoleAttrName, b.getStringAttr("issue"));
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  Value barrierPtr = sharedEntry(entry.barriers, index);
  // The whole box counts, rows past the operand's end (zeros) included.
  NVVM::MBarrierArriveExpectTxOp::create(
      b, loc, Type(), barrierPtr,
      arith::ConstantIntOp::create(b, loc, entry.txBytes, 32),
      NVVM::MemScopeKind::CTA, /*relaxed=*/false, Value());
  Type i32 = b.getI32Type();
  auto toI32 = [&](OpFoldResult ofr) -> Value {
    return arith::IndexCastOp::create(
        b, loc, i32, getValueOrCreateConstantIndexOp(b, loc, ofr));
  };
  // Coordinates innermost first: head dim, key, head, batch.
  Value key = toI32(view->coords[2]);
  Value head = toI32(view->coords[1]);
  Value batch = toI32(view->coords[0]);
  Value dim0 = getValueOrCreateConstantIndexOp(b, loc, view->coords[3]);
  auto sharedPtr = LLVM::LLVMPointerType::get(ctx, 3);
  for (int64_t col = 0; col < to.cols; col += entry.boxCols) {
    Value address = arith::IndexCastOp::create(
        b, loc, b.getI64Type(),
        sharedAddress(b, loc, to, cIndex(0), cIndex(col)));
    // As a shared::cluster address (this CTA's window of it).
    Value dst = LLVM::AddrSpaceCastOp::create(
        b, loc, LLVM::LLVMPointerType::get(ctx, 7),
        LLVM::IntToPtrOp::create(b, loc, sharedPtr, address));
    Value dim = arith::IndexCastOp::create(
        b, loc, i32, arith::AddIOp::create(b, loc, dim0, cIndex(col)));
    NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
        b, loc, dst, entry.map, ValueRange{dim, key, head, batch}, barrierPtr,
        /*im2colOffsets=*/ValueRange(), /*multicastMask=*/Value(),
        /*l2CacheHint=*/Value(), NVVM::TMALoadMode::TILE,
        /*isCTAOnly=*/false, /*group=*/nullptr, /*predicate=*/Value());
  }
}
