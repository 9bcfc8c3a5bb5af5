//===- Pipeline.cpp - software pipelining of the K/V tile loads -*- C++ -*-===//
//
// Part of the attn-mlir project.
//
// `--attn-pipeline` in two steps:
//
// Schedule. A key loop's body starts with the loads of its K/V tiles
// (copies from the inputs into block tiles, zero fills of those tiles, and
// the pure address arithmetic they need). Each tile gets a leading slot
// dimension of `S` (the stage count); every use of the tile reads slot
// `(iv - lb) mod S` of its iteration. The loads and the arithmetic feeding
// them are stage 0, everything else stage S - 1; arithmetic both need is
// duplicated so that no value crosses stages.
//
// Expansion. scf::pipelineForLoop turns the annotated loop into
//
//   stage 0 (lb) ... stage 0 (lb + S - 2)                     prologue
//   scf.for %i = lb to ub {
//     stage S-1 (%i) up to its first contraction (S = Q K^T)
//     stage 0 (%i + S - 1)
//     the rest of stage S-1 (%i)
//   }
//
// without a peeled epilogue: a load of an iteration past `ub` copies zero
// rows. The loads moved ahead are marked `attn.async_copy`.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "attn/Dialect/Attn/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNPIPELINE
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

/// The block tile `v` is, or views: a 2-d `memref.alloca`.
static memref::AllocaOp tileOf(Value v) {
  if (auto sub = v.getDefiningOp<memref::SubViewOp>())
    v = sub.getSource();
  auto alloca = v.getDefiningOp<memref::AllocaOp>();
  if (!alloca || alloca.getType().getRank() != 2 ||
      !alloca.getType().hasStaticShape())
    return nullptr;
  return alloca;
}

/// The loads a key loop starts with: copies from outside the block tiles
/// into a tile, and zero fills of tiles, with only pure ops between. Fills
/// count only when a copy follows.
static SmallVector<Operation *> leadingLoads(scf::ForOp loop) {
  SmallVector<Operation *> loads;
  for (Operation &op : loop.getBody()->without_terminator()) {
    if (auto copy = dyn_cast<linalg::CopyOp>(op)) {
      if (!tileOf(copy.getDpsInits()[0]) || tileOf(copy.getDpsInputs()[0]))
        break;
      loads.push_back(copy);
      continue;
    }
    if (auto fill = dyn_cast<linalg::FillOp>(op)) {
      if (!tileOf(fill.getDpsInits()[0]) ||
          !matchPattern(fill.getDpsInputs()[0], m_AnyZeroFloat()))
        break;
      loads.push_back(fill);
      continue;
    }
    if (!isPure(&op) || op.getNumRegions() != 0)
      break;
  }
  while (!loads.empty() && isa<linalg::FillOp>(loads.back()))
    loads.pop_back();
  return loads;
}

/// The stage count of `loop`: `numStages`, or the config of its grid.
static int64_t stagesFor(scf::ForOp loop, int64_t numStages) {
  if (numStages > 0)
    return numStages;
  for (Operation *p = loop->getParentOp(); p; p = p->getParentOp())
    if (auto config = p->getAttrOfType<KernelConfigAttr>(kConfigAttrName))
      return config.getNumStages();
  return 1;
}

/// Replaces every use of `tile` by the slot of the iteration of the key loop
/// around the use, in `buffer` (`S x tile`).
static void useSlots(RewriterBase &rewriter, memref::AllocaOp tile,
                     Value buffer, int64_t numStages,
                     const DenseSet<Operation *> &loops) {
  MemRefType tileType = tile.getType();
  for (OpOperand &use : llvm::make_early_inc_range(tile->getUses())) {
    Operation *user = use.getOwner();
    scf::ForOp loop = user->getParentOfType<scf::ForOp>();
    while (!loops.contains(loop))
      loop = loop->getParentOfType<scf::ForOp>();
    Location loc = user->getLoc();
    rewriter.setInsertionPoint(user);
    Value rel = arith::SubIOp::create(rewriter, loc, loop.getInductionVar(),
                                      loop.getLowerBound());
    Value slot = arith::RemUIOp::create(
        rewriter, loc, rel,
        arith::ConstantIndexOp::create(rewriter, loc, numStages));
    SmallVector<OpFoldResult> offsets(3, rewriter.getIndexAttr(0));
    offsets[0] = slot;
    SmallVector<OpFoldResult> sizes = {
        rewriter.getIndexAttr(1), rewriter.getIndexAttr(tileType.getDimSize(0)),
        rewriter.getIndexAttr(tileType.getDimSize(1))};
    SmallVector<OpFoldResult> strides(3, rewriter.getIndexAttr(1));
    auto viewType = memref::SubViewOp::inferRankReducedResultType(
        tileType.getShape(), cast<MemRefType>(buffer.getType()), offsets, sizes,
        strides);
    Value view = memref::SubViewOp::create(rewriter, loc, viewType, buffer,
                                           offsets, sizes, strides);
    if (auto sub = dyn_cast<memref::SubViewOp>(user)) {
      Value replacement =
          memref::SubViewOp::create(rewriter, loc, view, sub.getMixedOffsets(),
                                    sub.getMixedSizes(), sub.getMixedStrides());
      rewriter.replaceAllUsesWith(sub.getResult(), replacement);
      rewriter.eraseOp(sub);
      continue;
    }
    rewriter.modifyOpInPlace(user, [&] { use.set(view); });
  }
}

/// Annotates the top-level ops of `loop`'s body: `loads` and the ops they
/// depend on in stage 0, the others in stage S - 1. An op of stage 0 that
/// stage S - 1 also uses is cloned for it.
static void annotateStages(RewriterBase &rewriter, scf::ForOp loop,
                           ArrayRef<Operation *> loads, int64_t numStages) {
  Block *body = loop.getBody();
  SetVector<Operation *> first(loads.begin(), loads.end());
  for (size_t i = 0; i < first.size(); ++i) {
    first[i]->walk([&](Operation *nested) {
      for (Value operand : nested->getOperands()) {
        Operation *def = operand.getDefiningOp();
        while (def && def->getBlock() != body)
          def = def->getParentOp() && def->getParentOp() != loop
                    ? def->getParentOp()
                    : nullptr;
        if (def)
          first.insert(def);
      }
    });
  }
  // Users before their operands: a clone's operands get cloned in turn.
  SmallVector<Operation *> ordered(first.begin(), first.end());
  llvm::sort(ordered,
             [](Operation *a, Operation *b) { return b->isBeforeInBlock(a); });
  for (Operation *op : ordered) {
    SmallVector<OpOperand *> lateUses;
    for (OpOperand &use : op->getUses()) {
      Operation *owner = body->findAncestorOpInBlock(*use.getOwner());
      if (owner && !first.contains(owner))
        lateUses.push_back(&use);
    }
    if (lateUses.empty())
      continue;
    rewriter.setInsertionPoint(op);
    Operation *clone = rewriter.clone(*op);
    for (OpOperand *use : lateUses)
      rewriter.modifyOpInPlace(use->getOwner(), [&] {
        use->set(
            clone->getResult(cast<OpResult>(use->get()).getResultNumber()));
      });
  }
  auto i64 = rewriter.getI64Type();
  for (Operation &op : body->without_terminator())
    op.setAttr(kPipelineStageAttrName,
               IntegerAttr::get(i64, first.contains(&op) ? 0 : numStages - 1));
  loop->setAttr(kPipelineStagesAttrName, IntegerAttr::get(i64, numStages));
}

FailureOr<int64_t> mlir::attn::scheduleKeyLoops(RewriterBase &rewriter,
                                                Operation *root,
                                                int64_t numStages) {
  // Candidate loops and the tiles they load.
  llvm::MapVector<scf::ForOp, SmallVector<Operation *>> candidates;
  root->walk([&](scf::ForOp loop) {
    if (loop->hasAttr(kPipelineStagesAttrName) ||
        loop->hasAttr(kPipelinedAttrName) ||
        !matchPattern(loop.getStep(), m_One()) ||
        stagesFor(loop, numStages) < 2)
      return;
    SmallVector<Operation *> loads = leadingLoads(loop);
    if (!loads.empty())
      candidates[loop] = std::move(loads);
  });
  // A tile is multi-buffered when the loads of candidate loops are its only
  // writers and every use sits in a candidate loop of one stage count;
  // loops loading any other tile stay as they are.
  bool changed = true;
  llvm::MapVector<memref::AllocaOp, int64_t> tiles;
  while (changed) {
    changed = false;
    tiles.clear();
    DenseSet<Operation *> loops;
    for (auto &[loop, loads] : candidates)
      loops.insert(loop);
    DenseSet<memref::AllocaOp> bad;
    for (auto &[loop, loads] : candidates) {
      int64_t stages = stagesFor(loop, numStages);
      for (Operation *load : loads) {
        memref::AllocaOp tile =
            tileOf(cast<DestinationStyleOpInterface>(load).getDpsInits()[0]);
        auto [it, inserted] = tiles.insert({tile, stages});
        if (!inserted && it->second != stages)
          bad.insert(tile);
      }
    }
    for (auto &[tile, stages] : tiles)
      for (Operation *user : tile->getUsers()) {
        scf::ForOp loop = user->getParentOfType<scf::ForOp>();
        while (loop && !loops.contains(loop))
          loop = loop->getParentOfType<scf::ForOp>();
        if (!loop)
          bad.insert(tile);
      }
    for (auto &[loop, loads] : llvm::make_early_inc_range(candidates)) {
      bool drop = llvm::any_of(loads, [&](Operation *load) {
        return bad.contains(
            tileOf(cast<DestinationStyleOpInterface>(load).getDpsInits()[0]));
      });
      if (drop) {
        candidates.erase(loop);
        changed = true;
        break;
      }
    }
  }
  if (candidates.empty())
    return 0;

  DenseSet<Operation *> loops;
  for (auto &[loop, loads] : candidates)
    loops.insert(loop);
  for (auto &[tile, stages] : tiles) {
    MemRefType type = tile.getType();
    rewriter.setInsertionPoint(tile);
    auto bufferType = MemRefType::get(
        {stages, type.getDimSize(0), type.getDimSize(1)}, type.getElementType(),
        MemRefLayoutAttrInterface{}, type.getMemorySpace());
    Value buffer =
        memref::AllocaOp::create(rewriter, tile.getLoc(), bufferType);
    useSlots(rewriter, tile, buffer, stages, loops);
    rewriter.eraseOp(tile);
  }
  // The copies and fills themselves survive multi-buffering (only their
  // tile operands changed).
  for (auto &[loop, loads] : candidates)
    annotateStages(rewriter, loop, loads, stagesFor(loop, numStages));
  return static_cast<int64_t>(candidates.size());
}

/// `copy` limited to its first `select(pred, rows, 0)` rows: a copy of an
/// iteration past the end copies nothing.
static Operation *predicateCopy(RewriterBase &rewriter, linalg::CopyOp copy,
                                Value pred) {
  Location loc = copy.getLoc();
  Value src = copy.getDpsInputs()[0], dst = copy.getDpsInits()[0];
  auto dstType = cast<MemRefType>(dst.getType());
  if (dstType.getRank() != 2)
    return nullptr;
  rewriter.setInsertionPoint(copy);
  // The rows the copy writes, without a memref.dim of a tile view where
  // the view says them.
  Value rows;
  if (auto view = dst.getDefiningOp<memref::SubViewOp>();
      view && view.getSourceType().getRank() == 2)
    rows =
        getValueOrCreateConstantIndexOp(rewriter, loc, view.getMixedSizes()[0]);
  else if (!dstType.isDynamicDim(0))
    rows = arith::ConstantIndexOp::create(rewriter, loc, dstType.getDimSize(0));
  else
    rows = memref::DimOp::create(rewriter, loc, dst, 0);
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value n = arith::SelectOp::create(rewriter, loc, pred, rows, zero);
  auto limit = [&](Value view) -> Value {
    SmallVector<OpFoldResult> offsets(2, rewriter.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes = {
        n, rewriter.getIndexAttr(dstType.getDimSize(1))};
    SmallVector<OpFoldResult> strides(2, rewriter.getIndexAttr(1));
    return memref::SubViewOp::create(rewriter, loc, view, offsets, sizes,
                                     strides);
  };
  auto predicated =
      linalg::CopyOp::create(rewriter, loc, limit(src), limit(dst));
  predicated->setDiscardableAttrs(copy->getDiscardableAttrDictionary());
  rewriter.eraseOp(copy);
  return predicated;
}

FailureOr<scf::ForOp> mlir::attn::expandPipelinedLoop(RewriterBase &rewriter,
                                                      scf::ForOp loop) {
  auto stagesAttr = loop->getAttrOfType<IntegerAttr>(kPipelineStagesAttrName);
  if (!stagesAttr)
    return loop.emitOpError("has no ") << kPipelineStagesAttrName;
  int64_t numStages = stagesAttr.getInt();
  SmallVector<Operation *> loads, math;
  for (Operation &op : loop.getBody()->without_terminator()) {
    auto attr = op.getAttrOfType<IntegerAttr>(kPipelineStageAttrName);
    if (!attr || (attr.getInt() != 0 && attr.getInt() != numStages - 1)) {
      op.emitOpError("in a pipelined loop needs ")
          << kPipelineStageAttrName << " 0 or " << numStages - 1;
      return failure();
    }
    (attr.getInt() == 0 ? loads : math).push_back(&op);
  }
  // The loads of block i + S - 1 go after the first contraction of block i
  // (S = Q K^T), or after the `scf.if` that guards it alone (a causal
  // diagonal block's live check); under a mask tensor it sits in the
  // block-skip `scf.if` with the rest of the math, and the loads stay
  // first. On the GPU the cp.async then no longer sits just before the
  // first fragment loads, which waited on its address registers (ncu); the
  // slot it fills was freed by the barrier at the head of the iteration
  // either way.
  auto isContraction = [](Operation *op) {
    auto generic = dyn_cast<linalg::GenericOp>(op);
    return generic && generic.getNumReductionLoops() == 1 &&
           generic.getNumLoops() == 3;
  };
  auto guardsContraction = [&](Operation *op) {
    auto ifOp = dyn_cast<scf::IfOp>(op);
    if (!ifOp || ifOp.elseBlock())
      return false;
    int64_t contractions = 0;
    for (Operation &inner : ifOp.thenBlock()->without_terminator()) {
      if (isContraction(&inner))
        ++contractions;
      else if (!isa<linalg::FillOp>(inner) && !isPure(&inner))
        return false;
    }
    return contractions == 1;
  };
  auto split = llvm::find_if(math, [&](Operation *op) {
    return isContraction(op) || guardsContraction(op);
  });
  if (split != math.end())
    ++split;
  else
    split = math.begin();
  std::vector<std::pair<Operation *, unsigned>> schedule;
  auto add = [&](ArrayRef<Operation *> ops, int64_t stage) {
    for (Operation *op : ops)
      schedule.emplace_back(op, static_cast<unsigned>(stage));
  };
  size_t cut = split - math.begin();
  add(ArrayRef(math).take_front(cut), numStages - 1);
  add(loads, 0);
  add(ArrayRef(math).drop_front(cut), numStages - 1);
  scf::PipeliningOption options;
  options.getScheduleFn =
      [&](scf::ForOp, std::vector<std::pair<Operation *, unsigned>> &out) {
        out = schedule;
      };
  options.peelEpilogue = false;
  options.supportDynamicLoops = true;
  options.predicateFn = [](RewriterBase &rewriter, Operation *op,
                           Value pred) -> Operation * {
    // Address arithmetic is harmless past the end; a zero fill writes a
    // slot no live iteration reads (the CPU runs it, the GPU folds it into
    // the copy that follows).
    if (isPure(op) || isa<linalg::FillOp>(op))
      return op;
    if (auto copy = dyn_cast<linalg::CopyOp>(op))
      return predicateCopy(rewriter, copy, pred);
    return nullptr;
  };
  options.annotateFn = [](Operation *op, scf::PipeliningOption::PipelinerPart,
                          unsigned) {
    auto attr = op->getAttrOfType<IntegerAttr>(kPipelineStageAttrName);
    if (attr && attr.getInt() == 0 && isa<linalg::CopyOp>(op))
      op->setAttr(kAsyncCopyAttrName, UnitAttr::get(op->getContext()));
    op->removeAttr(kPipelineStageAttrName);
  };
  // The prologue goes where the rewriter stands.
  rewriter.setInsertionPoint(loop);
  bool modified = false;
  FailureOr<scf::ForOp> pipelined =
      scf::pipelineForLoop(rewriter, loop, options, &modified);
  if (failed(pipelined))
    return loop.emitOpError("could not be pipelined");
  (*pipelined)->removeAttr(kPipelineStagesAttrName);
  (*pipelined)->setAttr(kPipelinedAttrName, stagesAttr);
  return pipelined;
}

void mlir::attn::markPrefetchedTiles(Operation *root) {
  root->walk([&](linalg::CopyOp copy) {
    memref::AllocaOp tile = tileOf(copy.getDpsInits()[0]);
    if (!tile || copy->hasAttr(kAsyncCopyAttrName) ||
        copy->getParentOfType<scf::ForOp>() || tileOf(copy.getDpsInputs()[0]))
      return;
    // Rows under 128 bytes (head dim 16) are one short load per thread:
    // nothing to overlap, and the copy's registers would live on.
    MemRefType type = tile.getType();
    if (type.getDimSize(1) * type.getElementTypeBitWidth() / 8 < 128)
      return;
    // f32 tiles too: the GPU lowering reads a tf32 Q tile's fragments into
    // registers once, after waiting for the copies issued before the first
    // pipelined loop (Q, K and V of its first block), so Q's load overlaps
    // theirs.
    // Every reader of the tile sits in a pipelined loop, whose head waits for
    // all but the newest groups: the copy may stay in flight until then.
    bool read = false;
    for (Operation *user : tile->getUsers()) {
      if (user == copy.getDpsInits()[0].getDefiningOp() ||
          (isa<linalg::FillOp>(user) && user->getBlock() == copy->getBlock() &&
           user->isBeforeInBlock(copy)))
        continue;
      auto loop = user->getParentOfType<scf::ForOp>();
      while (loop && !loop->hasAttr(kPipelinedAttrName))
        loop = loop->getParentOfType<scf::ForOp>();
      if (!loop)
        return;
      read = true;
    }
    if (read)
      copy->setAttr(kAsyncCopyAttrName, UnitAttr::get(copy->getContext()));
  });
}

namespace {
struct AttnPipelinePass
    : public attn::impl::AttnPipelineBase<AttnPipelinePass> {
  using AttnPipelineBase::AttnPipelineBase;

  void runOnOperation() override {
    if (phase != "all" && phase != "schedule" && phase != "expand") {
      getOperation().emitError("--attn-pipeline: phase must be 'all', "
                               "'schedule' or 'expand', got '")
          << phase << "'";
      return signalPassFailure();
    }
    if (numStages < 0) {
      getOperation().emitError("--attn-pipeline: num-stages must be >= 0");
      return signalPassFailure();
    }
    IRRewriter rewriter(&getContext());
    if (phase != "expand" &&
        failed(scheduleKeyLoops(rewriter, getOperation(), numStages)))
      return signalPassFailure();
    if (phase == "schedule")
      return;
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) {
      if (loop->hasAttr(kPipelineStagesAttrName))
        loops.push_back(loop);
    });
    for (scf::ForOp loop : loops) {
      if (failed(expandPipelinedLoop(rewriter, loop)))
        return signalPassFailure();
      ++numPipelined;
    }
    markPrefetchedTiles(getOperation());
  }
};
} // namespace
