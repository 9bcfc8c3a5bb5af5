//===- WarpRoles.cpp - A producer warpgroup for the tensor copies ---------===//
//
// Part of the attn-mlir project.
//
// With `warp-specialize` on sm_90a, a kernel whose async copies are all TMA
// tensor copies (TensorCopy.cpp: one thread issues each onto its slot's
// mbarrier) gets a second warpgroup that issues them, so that no consumer
// thread waits at a thread block barrier for a slot to be refilled:
//
//   entry (all threads):   mbarrier.init full(s), 1; empty(s), num_warps
//                          released(s) = 0 (per thread); barrier 0
//   threads < C:           setmaxnreg.inc 216
//     (the consumers)      the kernel without its copies and refill
//                          barriers; a warp releases each fill of slot s
//                          once, where it is first known to be done with it:
//                            (wait for the fill to land); bar.warp.sync;
//                            released(s) = fills(s);
//                            lane 0: mbarrier.arrive empty(s)
//                          other barriers are named barrier 1 of C threads
//   threads >= C:          setmaxnreg.dec 40
//     (the producer)       warp C / 32: the copies alone, and what their
//                          coordinates, predicates, loops and fill counts
//                          need; before the n-th fill (n >= 2) of slot s:
//                            mbarrier.try_wait.parity empty(s), n mod 2
//                          then its first thread issues the copy
//
// Where a warp is done with a slot: after Q's fragments are read (Q's
// tile), and at the latest where the slot's next fill was issued (after the
// refill barrier that stood there). The n-th fill of a slot waits for
// phase n - 2 of its empty barrier, which completes once all C / 32 warps
// have released fill n - 1; a warp cannot release a fill twice, nor the
// next one before every warp released this one (it waits for the next
// fill to land first, which the producer issues only after that). A read
// does not wait for a slot whose latest fill its warp has released: the
// producer may have completed the next fill, and the parity would then
// name the one after it (TensorCopy.cpp). The launch has C + 128 threads
// and `.maxnreg` (65536 / 2 / (C + 128)): two thread blocks per SM.
//
// The Distributor prepares the kernel (selectWarpSpecialization,
// emitSlotHandover, releaseTensorCopySlot, refill barriers tagged
// kRefillBarrierAttrName), then splitWarpRoles makes the two roles out of
// it: the suffix after the entry's first barrier is cloned, the consumers'
// copy drops everything tagged for the producer, and the producer's copy
// keeps only the backward slice of its tagged ops (operands, enclosing
// loops and branches, and the stores to the private counters it reads).
// That slice must be pure arithmetic on private registers, or the split is
// undone (dropWarpRoles) and the kernel stays as it was.
//
//===----------------------------------------------------------------------===//

#include "Distributor.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::detail;

namespace {
/// The role tags (kWarpRoleAttrName).
constexpr llvm::StringLiteral kConsumer = "consumer";
constexpr llvm::StringLiteral kProducer = "producer";
/// A copy's `if (tid == 0)` branch: the producer's single thread runs it
/// unconditionally.
constexpr llvm::StringLiteral kIssue = "issue";
/// Registers of the two roles (setmaxnreg), and the launch's cap: two
/// thread blocks of 128 consumer and 128 producer threads per SM.
constexpr int32_t kConsumerRegisters = 216;
constexpr int32_t kProducerRegisters = 40;
constexpr int64_t kProducerThreads = 128;
constexpr int64_t kRegistersPerSM = 65536;
} // namespace

static StringRef roleOf(Operation *op) {
  auto role = op->getAttrOfType<StringAttr>(kWarpRoleAttrName);
  return role ? role.getValue() : StringRef();
}

void Distributor::selectWarpSpecialization() {
  if (!options.warpSpecialize || tensorCopyTiles.empty() ||
      config.getTarget() != "sm_90a" || numThreads != 128 ||
      !onlyTensorCopies())
    return;
  warpSpecialized = true;
  sharedOffset = llvm::alignTo(sharedOffset, 8);
  for (auto &[tile, entry] : tensorCopyTiles) {
    entry.emptyBarriers = sharedOffset;
    sharedOffset += 8 * buffers[tile].slots;
  }
  // Initialized with the full barriers, before their fence.
  NVVM::FenceMbarrierInitOp fence;
  for (auto op : kernel.getBody().front().getOps<NVVM::FenceMbarrierInitOp>())
    fence = op;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(fence);
  Value first =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, cIndex(0));
  Value warps = arith::ConstantIntOp::create(b, loc, numThreads / 32, 32);
  auto countType = MemRefType::get({1}, b.getI32Type());
  Value zero = arith::ConstantIntOp::create(b, loc, 0, 32);
  for (auto &[tile, entry] : tensorCopyTiles) {
    for (int64_t s = 0, e = buffers[tile].slots; s < e; ++s) {
      NVVM::MBarrierInitOp::create(
          b, loc, sharedEntry(entry.emptyBarriers, cIndex(s)), warps, first);
      Value count = memref::AllocaOp::create(b, loc, countType);
      memref::StoreOp::create(b, loc, zero, count, ValueRange{cIndex(0)});
      entry.released.push_back(count);
    }
  }
  // Every copy lands before the consumers leave, also one no read waited
  // for (a block the loop skipped): the thread block's shared memory must
  // outlive it.
  b.setInsertionPoint(kernel.getBody().back().getTerminator());
  for (auto &[tile, entry] : tensorCopyTiles)
    for (int64_t s = 0, e = entry.fills.size(); e > 1 && s < e; ++s)
      waitForTensorCopyPhase(entry, cIndex(s));
}

Value Distributor::releasedFills(const TensorCopyTile &entry, Value index) {
  return slotCount(entry.released, index);
}

void Distributor::arriveOnSlot(const TensorCopyTile &entry, Value index,
                               Value fills) {
  OpBuilder::InsertionGuard guard(b);
  // Every lane is past its reads; then lane 0 arrives for the warp.
  NVVM::SyncWarpOp::create(b, loc,
                           arith::ConstantIntOp::create(b, loc, -1, 32));
  for (auto [s, count] : llvm::enumerate(entry.released)) {
    Value isSlot = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                         index, cIndex(s));
    Value old = memref::LoadOp::create(b, loc, count, ValueRange{cIndex(0)});
    memref::StoreOp::create(b, loc,
                            arith::SelectOp::create(b, loc, isSlot, fills, old),
                            count, ValueRange{cIndex(0)});
  }
  Value lane0 = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq,
      arith::RemUIOp::create(b, loc, tid, cIndex(32)), cIndex(0));
  auto arrive = scf::IfOp::create(b, loc, lane0, /*withElse=*/false);
  b.setInsertionPointToStart(&arrive.getThenRegion().front());
  NVVM::MBarrierArriveOp::create(
      b, loc, Type(), sharedEntry(entry.emptyBarriers, index), Value());
}

void Distributor::releaseTensorCopySlot(const TensorCopyTile &entry,
                                        Value index) {
  if (!warpSpecialized)
    return;
  OpBuilder::InsertionGuard guard(b);
  Value fills = tensorCopyFills(entry, index);
  Value pending = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                        releasedFills(entry, index), fills);
  auto release = scf::IfOp::create(b, loc, pending, /*withElse=*/false);
  release->setAttr(kWarpRoleAttrName, b.getStringAttr(kConsumer));
  b.setInsertionPointToStart(&release.getThenRegion().front());
  // The fill has landed (a fill no read waited for, too), so that the
  // producer's next one cannot overtake it.
  Value parity = arith::AndIOp::create(
      b, loc,
      arith::AddIOp::create(b, loc, fills,
                            arith::ConstantIntOp::create(b, loc, 1, 32)),
      arith::ConstantIntOp::create(b, loc, 1, 32));
  spinOnParity(b, loc, sharedEntry(entry.barriers, index), parity);
  arriveOnSlot(entry, index, fills);
}

void Distributor::emitSlotHandover(const TensorCopyTile &entry, Value index,
                                   Value fills) {
  OpBuilder::InsertionGuard guard(b);
  Type i32 = b.getI32Type();
  // A slot's first fill finds it empty.
  Value again =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, fills,
                            arith::ConstantIntOp::create(b, loc, i32, 2));
  Value empty = sharedEntry(entry.emptyBarriers, index);
  Value parity = arith::AndIOp::create(
      b, loc, fills, arith::ConstantIntOp::create(b, loc, i32, 1));
  // The consumers: each warp, once every lane is past its last read, and
  // once the previous fill has landed: a fill no read waited for (a block
  // the loop skips) must not let a warp release the slot twice before the
  // producer has refilled it once (the producer's parity would then name
  // the wrong phase).
  // (An earlier release, releaseTensorCopySlot, may have done it.)
  Value previous = arith::SubIOp::create(
      b, loc, fills, arith::ConstantIntOp::create(b, loc, i32, 1));
  Value pending = arith::AndIOp::create(
      b, loc, again,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                            releasedFills(entry, index), previous));
  auto release = scf::IfOp::create(b, loc, pending, /*withElse=*/false);
  release->setAttr(kWarpRoleAttrName, b.getStringAttr(kConsumer));
  b.setInsertionPointToStart(&release.getThenRegion().front());
  spinOnParity(b, loc, sharedEntry(entry.barriers, index), parity);
  arriveOnSlot(entry, index, previous);
  // The producer: the phase of the previous fill's release, n - 2.
  b.setInsertionPointAfter(release);
  auto acquire = scf::IfOp::create(b, loc, again, /*withElse=*/false);
  acquire->setAttr(kWarpRoleAttrName, b.getStringAttr(kProducer));
  b.setInsertionPointToStart(&acquire.getThenRegion().front());
  spinOnParity(b, loc, empty, parity);
}

/// A kernel argument the kernel only reads (the mask map a kernel before
/// wrote, for instance).
static bool isReadOnlyArgument(Value memref) {
  auto arg = dyn_cast<BlockArgument>(memref);
  if (!arg || !isa<gpu::GPUFuncOp>(arg.getOwner()->getParentOp()))
    return false;
  return llvm::all_of(arg.getUsers(), [](Operation *user) {
    return isa<memref::LoadOp, memref::DimOp>(user);
  });
}

/// Whether the producer warp may run `op` of its slice: pure arithmetic,
/// structured control flow, the private counters, loads of read-only
/// arguments, warp votes and shuffles (the warp runs the slice's branches
/// as a consumer warp runs them), and what the Distributor tagged for it.
static bool producerMayRun(Operation *op) {
  for (Operation *p = op; p; p = p->getParentOp())
    if (roleOf(p) == kProducer || roleOf(p) == kIssue)
      return true;
  if (isa<scf::ForOp, scf::IfOp, scf::YieldOp, NVVM::VoteSyncOp, NVVM::ShflOp>(
          op))
    return true;
  if (auto load = dyn_cast<memref::LoadOp>(op))
    return load.getMemRef().getDefiningOp<memref::AllocaOp>() ||
           isReadOnlyArgument(load.getMemRef());
  if (auto store = dyn_cast<memref::StoreOp>(op))
    return store.getMemRef().getDefiningOp<memref::AllocaOp>() != nullptr;
  return op->getNumRegions() == 0 && isMemoryEffectFree(op);
}

/// Reduces `producer` (a clone of the kernel's suffix) to the backward slice
/// of its tagged ops. Fails if that slice needs an op the producer may not
/// run.
static LogicalResult sliceProducer(RewriterBase &rewriter, Block *producer) {
  Region *region = producer->getParent();
  auto inside = [&](Operation *op) {
    return op && region->isAncestor(op->getParentRegion());
  };
  SetVector<Operation *> live;
  DenseSet<Value> liveValues;
  SmallVector<Operation *> opWork;
  SmallVector<Value> valueWork;
  auto markOp = [&](Operation *op) {
    if (inside(op) && live.insert(op))
      opWork.push_back(op);
  };
  auto markValue = [&](Value v) {
    if (liveValues.insert(v).second)
      valueWork.push_back(v);
  };
  producer->walk([&](Operation *op) {
    for (Operation *p = op; inside(p); p = p->getParentOp())
      if (!roleOf(p).empty()) {
        markOp(op);
        break;
      }
  });
  while (!opWork.empty() || !valueWork.empty()) {
    if (!valueWork.empty()) {
      Value v = valueWork.pop_back_val();
      if (auto result = dyn_cast<OpResult>(v)) {
        Operation *def = result.getOwner();
        markOp(def);
        // A branch's or loop's result: what its regions yield for it.
        if (isa<scf::IfOp, scf::ForOp>(def)) {
          for (Region &r : def->getRegions())
            for (Block &block : r)
              markValue(
                  block.getTerminator()->getOperand(result.getResultNumber()));
          if (auto loop = dyn_cast<scf::ForOp>(def))
            markValue(loop.getInitArgs()[result.getResultNumber()]);
        }
        continue;
      }
      auto arg = cast<BlockArgument>(v);
      Operation *owner = arg.getOwner()->getParentOp();
      markOp(owner);
      if (auto loop = dyn_cast<scf::ForOp>(owner);
          loop && arg.getArgNumber() > 0) {
        unsigned i = arg.getArgNumber() - 1;
        markValue(loop.getInitArgs()[i]);
        markValue(loop.getBody()->getTerminator()->getOperand(i));
      }
      continue;
    }
    Operation *op = opWork.pop_back_val();
    markOp(op->getParentOp());
    // Region terminators stay (their operands only where a result is live).
    for (Region &r : op->getRegions())
      for (Block &block : r)
        markOp(block.getTerminator());
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      markValue(loop.getLowerBound());
      markValue(loop.getUpperBound());
      markValue(loop.getStep());
    } else if (auto branch = dyn_cast<scf::IfOp>(op)) {
      markValue(branch.getCondition());
    } else if (!isa<scf::YieldOp>(op)) {
      for (Value operand : op->getOperands())
        markValue(operand);
    }
    // A private counter's value: every store to it.
    if (auto load = dyn_cast<memref::LoadOp>(op))
      if (load.getMemRef().getDefiningOp<memref::AllocaOp>())
        for (Operation *user : load.getMemRef().getUsers())
          if (isa<memref::StoreOp>(user))
            markOp(user);
  }
  for (Operation *op : live)
    if (!producerMayRun(op))
      return failure();
  // Yielded values nothing live reads: zeros (the loops' and branches'
  // results stay, unused).
  for (Operation *op : live) {
    auto yield = dyn_cast<scf::YieldOp>(op);
    if (!yield)
      continue;
    for (OpOperand &operand : yield->getOpOperands()) {
      Operation *def = operand.get().getDefiningOp();
      if (liveValues.contains(operand.get()) || !inside(def))
        continue;
      Type type = operand.get().getType();
      if (!type.isIntOrIndexOrFloat())
        return failure();
      rewriter.setInsertionPoint(yield);
      operand.set(arith::ConstantOp::create(rewriter, yield.getLoc(),
                                            rewriter.getZeroAttr(type)));
    }
  }
  SmallVector<Operation *> dead;
  producer->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (live.contains(op) || op->hasTrait<OpTrait::IsTerminator>())
      return WalkResult::advance();
    dead.push_back(op);
    return WalkResult::skip();
  });
  for (Operation *op : llvm::reverse(dead)) {
    for (Value result : op->getResults())
      for (Operation *user : result.getUsers())
        if (live.contains(user))
          return op->emitOpError("warp specialization: a live op reads a "
                                 "value outside the producer's slice");
    rewriter.eraseOp(op);
  }
  return success();
}

LogicalResult mlir::attn::detail::splitWarpRoles(RewriterBase &rewriter,
                                                 gpu::GPUFuncOp kernel,
                                                 int64_t consumerThreads) {
  Block &entry = kernel.getBody().front();
  Location loc = kernel.getLoc();
  // The split: the entry's first barrier, which publishes the mbarriers.
  gpu::BarrierOp split;
  for (Operation &op : entry) {
    if ((split = dyn_cast<gpu::BarrierOp>(op)))
      break;
    bool tagged = false;
    op.walk([&](Operation *inner) { tagged |= !roleOf(inner).empty(); });
    if (tagged)
      return failure();
  }
  if (!split)
    return failure();
  split->removeAttr(kRefillBarrierAttrName);
  // Register arrays stay in the entry block (promoted to registers there).
  SmallVector<memref::AllocaOp> allocas;
  for (Operation *op = split->getNextNode(); op; op = op->getNextNode())
    op->walk([&](memref::AllocaOp alloca) { allocas.push_back(alloca); });
  for (memref::AllocaOp alloca : allocas)
    alloca->moveBefore(split);

  rewriter.setInsertionPoint(entry.getTerminator());
  Value tid = gpu::ThreadIdOp::create(rewriter, loc, gpu::Dimension::x);
  Value isConsumer = arith::CmpIOp::create(
      rewriter, loc, arith::CmpIPredicate::ult, tid,
      arith::ConstantIndexOp::create(rewriter, loc, consumerThreads));
  auto roles = scf::IfOp::create(rewriter, loc, isConsumer, /*withElse=*/true);
  SmallVector<Operation *> suffix;
  for (Operation *op = split->getNextNode(); op != tid.getDefiningOp();
       op = op->getNextNode())
    suffix.push_back(op);
  Block *consumer = &roles.getThenRegion().front();
  Block *producer = &roles.getElseRegion().front();
  for (Operation *op : suffix)
    op->moveBefore(consumer->getTerminator());
  // The producer's warp computes as consumer warp 0 does (whose thread 0
  // issued the copies): its thread ids less consumerThreads, through the
  // entry's arithmetic on them, cloned.
  IRMapping mapping;
  rewriter.setInsertionPoint(producer->getTerminator());
  Value shifted = arith::SubIOp::create(
      rewriter, loc, tid,
      arith::ConstantIndexOp::create(rewriter, loc, consumerThreads));
  for (Operation &op : entry) {
    if (&op == split.getOperation())
      break;
    if (auto id = dyn_cast<gpu::ThreadIdOp>(op)) {
      if (id.getDimension() == gpu::Dimension::x)
        mapping.map(id.getResult(), shifted);
      continue;
    }
    bool reads = llvm::any_of(op.getOperands(),
                              [&](Value v) { return mapping.contains(v); });
    if (reads && op.getNumRegions() == 0 && isMemoryEffectFree(&op))
      rewriter.clone(op, mapping);
  }
  for (Operation *op : suffix)
    rewriter.clone(*op, mapping);
  producer->walk([&](gpu::ThreadIdOp id) {
    if (id.getDimension() == gpu::Dimension::x)
      rewriter.replaceAllUsesWith(id.getResult(), shifted);
  });

  // The producer: its slice, on one thread.
  SmallVector<Operation *> consumerOnly;
  producer->walk([&](Operation *op) {
    if (roleOf(op) == kConsumer)
      consumerOnly.push_back(op);
  });
  for (Operation *op : consumerOnly)
    rewriter.eraseOp(op);
  if (failed(sliceProducer(rewriter, producer))) {
    // Undo: the kernel as it was.
    for (Operation *op : suffix)
      op->moveBefore(roles);
    rewriter.eraseOp(roles);
    return failure();
  }
  // The slice runs on the producer's first warp (its votes need every
  // lane), the copies on that warp's lane 0.
  SmallVector<Operation *> body;
  for (Operation &op : producer->without_terminator())
    body.push_back(&op);
  rewriter.setInsertionPointToStart(producer);
  NVVM::SetMaxRegisterOp::create(rewriter, loc, kProducerRegisters,
                                 NVVM::SetMaxRegisterAction::decrease);
  Value isIssuer = arith::CmpIOp::create(
      rewriter, loc, arith::CmpIPredicate::eq, tid,
      arith::ConstantIndexOp::create(rewriter, loc, consumerThreads));
  Value isWarp = arith::CmpIOp::create(
      rewriter, loc, arith::CmpIPredicate::ult, tid,
      arith::ConstantIndexOp::create(rewriter, loc, consumerThreads + 32));
  auto issuer = scf::IfOp::create(rewriter, loc, isWarp, /*withElse=*/false);
  producer->walk([&](scf::IfOp issue) {
    if (roleOf(issue) == kIssue)
      issue.getConditionMutable().assign(isIssuer);
  });
  for (Operation *op : body)
    op->moveBefore(issuer.getThenRegion().front().getTerminator());

  // The consumers: no copies, no refill barriers, their own barrier.
  SmallVector<Operation *> producerOnly;
  SmallVector<gpu::BarrierOp> barriers;
  SmallVector<NVVM::BarrierOp> reductions;
  consumer->walk([&](Operation *op) {
    if (roleOf(op) == kProducer || roleOf(op) == kIssue)
      producerOnly.push_back(op);
    else if (auto barrier = dyn_cast<gpu::BarrierOp>(op))
      barriers.push_back(barrier);
    else if (auto reduction = dyn_cast<NVVM::BarrierOp>(op))
      reductions.push_back(reduction);
  });
  for (Operation *op : producerOnly)
    rewriter.eraseOp(op);
  auto namedBarrier = [&](Location at) {
    return std::make_pair(
        arith::ConstantIntOp::create(rewriter, at, 1, 32).getResult(),
        arith::ConstantIntOp::create(rewriter, at, consumerThreads, 32)
            .getResult());
  };
  for (gpu::BarrierOp barrier : barriers) {
    if (!barrier->hasAttr(kRefillBarrierAttrName)) {
      rewriter.setInsertionPoint(barrier);
      auto [id, count] = namedBarrier(barrier.getLoc());
      NVVM::BarrierOp::create(rewriter, barrier.getLoc(), TypeRange(), id,
                              count, /*reductionOp=*/nullptr, Value());
    }
    rewriter.eraseOp(barrier);
  }
  // The block-any votes (`bar.red.or`): NVVM's op takes a reduction on
  // barrier 0 only, so the named one is inline PTX.
  for (NVVM::BarrierOp reduction : reductions) {
    auto kind = reduction.getReductionOp();
    if (!kind || *kind != NVVM::BarrierReduction::OR ||
        reduction.getBarrierId())
      return reduction.emitOpError("warp specialization: expects an 'or' "
                                   "vote on barrier 0");
  }
  for (NVVM::BarrierOp reduction : reductions) {
    rewriter.setInsertionPoint(reduction);
    std::string ptx = llvm::formatv(
        "{{\n\t.reg .pred p, q;\n\tsetp.ne.u32 p, $1, 0;\n\t"
        "bar.red.or.pred q, 1, {0}, p;\n\tselp.u32 $0, 1, 0, q;\n\t}",
        consumerThreads);
    auto vote = LLVM::InlineAsmOp::create(
        rewriter, reduction.getLoc(), rewriter.getI32Type(),
        ValueRange{reduction.getReductionPredicate()}, ptx, "=r,r",
        /*has_side_effects=*/true, /*is_align_stack=*/false,
        LLVM::tailcallkind::TailCallKind::None,
        LLVM::AsmDialectAttr::get(rewriter.getContext(),
                                  LLVM::AsmDialect::AD_ATT),
        /*operand_attrs=*/ArrayAttr());
    rewriter.replaceOp(reduction, vote.getResults());
  }
  consumer->walk([&](Operation *op) { op->removeAttr(kWarpRoleAttrName); });
  producer->walk([&](Operation *op) { op->removeAttr(kWarpRoleAttrName); });
  rewriter.setInsertionPointToStart(consumer);
  NVVM::SetMaxRegisterOp::create(rewriter, loc, kConsumerRegisters,
                                 NVVM::SetMaxRegisterAction::increase);

  int64_t threads = consumerThreads + kProducerThreads;
  kernel.setKnownBlockSizeAttr(
      rewriter.getDenseI32ArrayAttr({static_cast<int32_t>(threads), 1, 1}));
  kernel->setAttr(NVVM::NVVMDialect::getMaxnregAttrName(),
                  rewriter.getI32IntegerAttr(
                      static_cast<int32_t>(kRegistersPerSM / 2 / threads)));
  return success();
}

void mlir::attn::detail::dropWarpRoles(RewriterBase &rewriter,
                                       gpu::GPUFuncOp kernel) {
  SmallVector<Operation *> handovers;
  kernel.walk([&](Operation *op) {
    StringRef role = roleOf(op);
    if (role == kConsumer || role == kProducer)
      handovers.push_back(op);
    op->removeAttr(kWarpRoleAttrName);
    op->removeAttr(kRefillBarrierAttrName);
  });
  for (Operation *op : handovers)
    rewriter.eraseOp(op);
}
