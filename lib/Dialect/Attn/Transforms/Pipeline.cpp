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
// rows. The loads moved ahead are marked `attn.async_copy`. The expansion
// lives in PipelineExpansion.cpp, the scores-ahead loops in ScoresAhead.cpp.
//
//===----------------------------------------------------------------------===//

#include "PipelineSchedule.h"

#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "attn/Dialect/Attn/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
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
using namespace mlir::attn::detail;

memref::AllocaOp mlir::attn::detail::tileOf(Value v) {
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
    if (!isAddressOp(&op) || op.getNumRegions() != 0)
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
                     const DenseSet<Operation *> &loops,
                     const DenseMap<Operation *, Value> &slotBases) {
  MemRefType tileType = tile.getType();
  for (OpOperand &use : llvm::make_early_inc_range(tile->getUses())) {
    Operation *user = use.getOwner();
    scf::ForOp loop = user->getParentOfType<scf::ForOp>();
    while (!loops.contains(loop))
      loop = loop->getParentOfType<scf::ForOp>();
    Location loc = user->getLoc();
    rewriter.setInsertionPoint(user);
    Value rel =
        arith::SubIOp::create(rewriter, loc, loop.getInductionVar(),
                              slotBases.lookup_or(loop, loop.getLowerBound()));
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

Operation *mlir::attn::detail::predicateCopy(RewriterBase &rewriter,
                                             linalg::CopyOp copy, Value pred) {
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

SetVector<Operation *>
mlir::attn::detail::loadSlice(scf::ForOp loop, ArrayRef<Operation *> loads) {
  Block *body = loop.getBody();
  SetVector<Operation *> slice(loads.begin(), loads.end());
  for (size_t i = 0; i < slice.size(); ++i) {
    slice[i]->walk([&](Operation *nested) {
      for (Value operand : nested->getOperands()) {
        Operation *def = operand.getDefiningOp();
        while (def && def->getBlock() != body)
          def = def->getParentOp() && def->getParentOp() != loop
                    ? def->getParentOp()
                    : nullptr;
        if (def)
          slice.insert(def);
      }
    });
  }
  return slice;
}

SmallVector<Operation *>
mlir::attn::detail::copiedTiles(ArrayRef<Operation *> loads) {
  SmallVector<Operation *> tiles;
  for (Operation *load : loads)
    if (auto copy = dyn_cast<linalg::CopyOp>(load))
      tiles.push_back(tileOf(copy.getDpsInits()[0]));
  return tiles;
}

/// The rows `copy` writes into its tile view.
OpFoldResult mlir::attn::detail::copiedRows(linalg::CopyOp copy) {
  Value dst = copy.getDpsInits()[0];
  if (auto view = dst.getDefiningOp<memref::SubViewOp>();
      view && view.getSourceType().getRank() == 2)
    return view.getMixedSizes()[0];
  auto type = cast<MemRefType>(dst.getType());
  if (!type.isDynamicDim(0))
    return IntegerAttr::get(IndexType::get(copy.getContext()),
                            type.getDimSize(0));
  return OpFoldResult();
}

/// The key loop that `loop` continues: the candidate right before it (pure
/// ops between) that ends where `loop` starts, with the same stage count,
/// copying into the same tiles; the values `loop`'s loads take from outside
/// it, and its upper bound, must be defined before that loop.
static scf::ForOp chainedPredecessor(
    scf::ForOp loop,
    const llvm::MapVector<scf::ForOp, SmallVector<Operation *>> &candidates,
    int64_t numStages, DominanceInfo &dom) {
  Operation *prev = loop->getPrevNode();
  while (prev && isAddressOp(prev) && prev->getNumRegions() == 0)
    prev = prev->getPrevNode();
  auto before = dyn_cast_or_null<scf::ForOp>(prev);
  if (!before || !candidates.contains(before) ||
      before.getUpperBound() != loop.getLowerBound() ||
      stagesFor(before, numStages) != stagesFor(loop, numStages))
    return {};
  ArrayRef<Operation *> loads = candidates.find(loop)->second;
  if (copiedTiles(candidates.find(before)->second) != copiedTiles(loads) ||
      !dom.properlyDominates(loop.getUpperBound(), before))
    return {};
  // `before` copies whole tiles, `loop` any number of rows.
  for (Operation *load : candidates.find(before)->second) {
    auto copy = dyn_cast<linalg::CopyOp>(load);
    if (copy && (!copiedRows(copy) ||
                 getConstantIntValue(copiedRows(copy)) !=
                     tileOf(copy.getDpsInits()[0]).getType().getDimSize(0)))
      return {};
  }
  for (Operation *load : loads)
    if (auto copy = dyn_cast<linalg::CopyOp>(load); copy && !copiedRows(copy))
      return {};
  for (Operation *op : loadSlice(loop, loads)) {
    WalkResult walk = op->walk([&](Operation *nested) {
      for (Value operand : nested->getOperands())
        if (!loop->isAncestor(operand.getParentRegion()->getParentOp()) &&
            !dom.properlyDominates(operand, before))
          return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return {};
  }
  return before;
}

/// A copy of a loop that runs on past its loop's end, up to the chain's, and
/// its predicate, applied once its tile is multi-buffered.
struct ChainGuard {
  Operation *copy;
  Value pred;
};

/// Chains `before` to `loop`: `before`'s loads (whole tiles) run on past its
/// end, up to `loop`'s, for the blocks that `loop` loads whole (its copies,
/// which handle a key tail, have as many rows), so that its last iterations
/// load `loop`'s first blocks; `loop`'s prologue is left the partial ones
/// (expandPipelinedLoop). Records the predicate of `before`'s copies. With
/// `firstBlockOnly` (a scores-ahead `before`, whose K loads run two blocks
/// ahead), they stop at `loop`'s first block.
static void extendLoads(RewriterBase &rewriter, scf::ForOp before,
                        ArrayRef<Operation *> beforeLoads, scf::ForOp loop,
                        ArrayRef<Operation *> loads,
                        SmallVectorImpl<ChainGuard> &guards,
                        bool firstBlockOnly) {
  Location loc = before.getLoc();
  auto first = cast<linalg::CopyOp>(*llvm::find_if(
      loads, [](Operation *op) { return isa<linalg::CopyOp>(op); }));
  int64_t tileRows = tileOf(first.getDpsInits()[0]).getType().getDimSize(0);
  rewriter.setInsertionPointToStart(before.getBody());
  // The rows `loop` copies of block iv, computed in `before`.
  IRMapping map;
  map.map(loop.getInductionVar(), before.getInductionVar());
  Value rows =
      getValueOrCreateConstantIndexOp(rewriter, loc, copiedRows(first));
  if (Operation *def = rows.getDefiningOp();
      def && def->getBlock() == loop.getBody()) {
    SetVector<Operation *> slice = loadSlice(loop, {def});
    SmallVector<Operation *> ordered(slice.begin(), slice.end());
    llvm::sort(ordered, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
    for (Operation *op : ordered)
      rewriter.clone(*op, map);
  }
  Value whole = arith::CmpIOp::create(
      rewriter, loc, arith::CmpIPredicate::sge, map.lookupOrDefault(rows),
      arith::ConstantIndexOp::create(rewriter, loc, tileRows));
  Value inChain = arith::AndIOp::create(
      rewriter, loc,
      arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::slt,
                            before.getInductionVar(), loop.getUpperBound()),
      whole);
  // A scores-ahead loop loads K two blocks ahead: of `loop`'s blocks, only
  // the first (two stages) is its to load.
  if (firstBlockOnly)
    inChain = arith::AndIOp::create(
        rewriter, loc, inChain,
        arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::sle,
                              before.getInductionVar(),
                              before.getUpperBound()));
  for (Operation *load : beforeLoads) {
    load->setAttr(kChainLoadAttrName, rewriter.getUnitAttr());
    if (isa<linalg::CopyOp>(load))
      guards.push_back({load, inChain});
  }
}

void mlir::attn::detail::annotateStages(RewriterBase &rewriter, scf::ForOp loop,
                                        DenseMap<Operation *, int64_t> stage,
                                        int64_t numStages) {
  Block *body = loop.getBody();
  SmallVector<Operation *> ordered;
  for (Operation &op : body->without_terminator())
    ordered.push_back(&op);
  // Users before their operands: a clone's operands get cloned in turn.
  for (Operation *op : llvm::reverse(ordered)) {
    llvm::MapVector<int64_t, SmallVector<OpOperand *>> later;
    for (OpOperand &use : op->getUses()) {
      Operation *owner = body->findAncestorOpInBlock(*use.getOwner());
      if (owner && stage.lookup(owner) != stage.lookup(op))
        later[stage.lookup(owner)].push_back(&use);
    }
    for (auto &[userStage, uses] : later) {
      rewriter.setInsertionPoint(op);
      Operation *clone = rewriter.clone(*op);
      stage[clone] = userStage;
      for (OpOperand *use : uses)
        rewriter.modifyOpInPlace(use->getOwner(), [&] {
          use->set(
              clone->getResult(cast<OpResult>(use->get()).getResultNumber()));
        });
    }
  }
  auto i64 = rewriter.getI64Type();
  for (Operation &op : body->without_terminator())
    op.setAttr(kPipelineStageAttrName, IntegerAttr::get(i64, stage[&op]));
  loop->setAttr(kPipelineStagesAttrName, IntegerAttr::get(i64, numStages));
}

/// Annotates `loop`'s body in two stages: `loads` and the ops they depend
/// on in stage 0, the others in stage S - 1.
static void annotateLoadStages(RewriterBase &rewriter, scf::ForOp loop,
                               ArrayRef<Operation *> loads, int64_t numStages) {
  SetVector<Operation *> first = loadSlice(loop, loads);
  DenseMap<Operation *, int64_t> stage;
  for (Operation &op : loop.getBody()->without_terminator())
    stage[&op] = first.contains(&op) ? 0 : numStages - 1;
  annotateStages(rewriter, loop, std::move(stage), numStages);
}

FailureOr<int64_t> mlir::attn::scheduleKeyLoops(RewriterBase &rewriter,
                                                Operation *root,
                                                int64_t numStages,
                                                LoopChaining chaining,
                                                ScoresAheadMode scoresAhead) {
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
  DominanceInfo dom(root);
  // Loops that compute the next block's scores ahead (two stages only): not
  // one that continues a loop before it (the key tail after the unmasked
  // blocks), whose few blocks would only pay for a second register block.
  DenseMap<Operation *, ScoresAhead> ahead;
  for (auto &[loop, loads] : candidates)
    if (wantsScoresAhead(loop, loads, scoresAhead) &&
        stagesFor(loop, numStages) == 2 &&
        !chainedPredecessor(loop, candidates, numStages, dom))
      if (std::optional<ScoresAhead> found = findScoresAhead(loop, loads)) {
        // tf32: where the GPU lowering keeps Q's fragments in registers
        // (head dim 64-128, the A of wgmma from registers): with Q from
        // shared memory (D = 256) the seed-shaped kernels spill. 16-bit
        // (auto): at head dim 128 only, the one where the overlap pays
        // (docs/Wgmma.md, 16-bit: both products on wgmma).
        int64_t k = found->contraction.getStaticLoopRanges()[2];
        bool f32 =
            cast<MemRefType>(found->contraction.getDpsInputs()[1].getType())
                .getElementType()
                .isF32();
        if (scoresAhead != ScoresAheadMode::All &&
            (f32 ? (k < 64 || k > 128) : k != 128))
          continue;
        ahead[loop] = *found;
      }
  // Chains of key loops (the unmasked blocks, then the masked ones): each
  // loop's last iterations load the first blocks of the next, whose slots
  // count from the chain's first lower bound.
  DenseMap<Operation *, Value> slotBases;
  DenseSet<Operation *> chained;
  SmallVector<ChainGuard> guards;
  SmallVector<std::pair<scf::ForOp, scf::ForOp>> links;
  for (auto &[loop, loads] : candidates) {
    if (chaining == LoopChaining::None)
      break;
    scf::ForOp before = chainedPredecessor(loop, candidates, numStages, dom);
    // A scores-ahead loop may come first in a chain, not after another.
    if (!before || ahead.contains(loop) ||
        (chaining == LoopChaining::F32 &&
         llvm::any_of(copiedTiles(loads), [](Operation *tile) {
           return cast<memref::AllocaOp>(tile)
                      .getType()
                      .getElementTypeBitWidth() != 32;
         })))
      continue;
    links.push_back({before, loop});
  }
  // A chain is two loops: the guard of the first one's loads is the second
  // one's bounds and tail. Of three chainable loops (a window's left edge,
  // the unmasked blocks, the tail), the last two chain.
  for (auto [before, loop] : links) {
    if (llvm::any_of(
            links, [&, loop = loop](auto link) { return link.first == loop; }))
      continue;
    auto &loads = candidates[loop];
    extendLoads(rewriter, before, candidates[before], loop, loads, guards,
                /*firstBlockOnly=*/ahead.contains(before));
    if (auto it = ahead.find(before); it != ahead.end())
      handOverScores(rewriter, before, it->second, loop, loads);
    slotBases[loop] = slotBases.lookup_or(before, before.getLowerBound());
    chained.insert(loop);
  }
  for (auto &[tile, stages] : tiles) {
    MemRefType type = tile.getType();
    rewriter.setInsertionPoint(tile);
    auto bufferType = MemRefType::get(
        {stages, type.getDimSize(0), type.getDimSize(1)}, type.getElementType(),
        MemRefLayoutAttrInterface{}, type.getMemorySpace());
    Value buffer =
        memref::AllocaOp::create(rewriter, tile.getLoc(), bufferType);
    useSlots(rewriter, tile, buffer, stages, loops, slotBases);
    rewriter.eraseOp(tile);
  }
  // The loads a loop took from the next in its chain run up to the chain's
  // end, not its own: they carry their own predicate.
  for (ChainGuard &guard : guards) {
    Operation *copy =
        predicateCopy(rewriter, cast<linalg::CopyOp>(guard.copy), guard.pred);
    for (auto &[loop, loads] : candidates)
      llvm::replace(loads, guard.copy, copy);
    for (auto &[loop, found] : ahead)
      llvm::replace(found.keyLoads, guard.copy, copy);
  }
  // The copies and fills themselves survive multi-buffering (only their
  // tile operands changed).
  for (auto &[loop, loads] : candidates) {
    if (auto it = ahead.find(loop); it != ahead.end()) {
      annotateScoresAhead(rewriter, loop, loads, it->second);
      continue;
    }
    annotateLoadStages(rewriter, loop, loads, stagesFor(loop, numStages));
    if (chained.contains(loop))
      loop->setAttr(kPipelineChainedAttrName, rewriter.getUnitAttr());
  }
  return static_cast<int64_t>(candidates.size());
}

namespace {
struct AttnPipelinePass
    : public attn::impl::AttnPipelineBase<AttnPipelinePass> {
  using AttnPipelineBase::AttnPipelineBase;

  /// `value` as one of `choices`, or nothing after an error that names the
  /// option and the choices, in their order.
  template <typename T>
  std::optional<T> parseChoice(StringRef option, StringRef value,
                               ArrayRef<std::pair<StringRef, T>> choices) {
    for (auto [name, choice] : choices)
      if (name == value)
        return choice;
    std::string names;
    for (auto [index, entry] : llvm::enumerate(choices))
      names += (index == 0                    ? "'"
                : index + 1 == choices.size() ? "' or '"
                                              : "', '") +
               entry.first.str();
    getOperation().emitError("--attn-pipeline: ")
        << option << " must be " << names << "', got '" << value << "'";
    return std::nullopt;
  }

  void runOnOperation() override {
    if (phase != "all" && phase != "schedule" && phase != "expand") {
      getOperation().emitError("--attn-pipeline: phase must be 'all', "
                               "'schedule' or 'expand', got '")
          << phase << "'";
      return signalPassFailure();
    }
    if (numStages < 0 || numStages > kMaxNumStages) {
      getOperation().emitError("--attn-pipeline: num-stages must be 0 to ")
          << kMaxNumStages << " (the #attn.config bound), got "
          << static_cast<int64_t>(numStages);
      return signalPassFailure();
    }
    IRRewriter rewriter(&getContext());
    std::optional<LoopChaining> chaining =
        parseChoice<LoopChaining>("chain", chain,
                                  {{"all", LoopChaining::All},
                                   {"f32", LoopChaining::F32},
                                   {"none", LoopChaining::None}});
    std::optional<ScoresAheadMode> ahead =
        parseChoice<ScoresAheadMode>("scores-ahead", scoresAhead,
                                     {{"none", ScoresAheadMode::None},
                                      {"tf32", ScoresAheadMode::Tf32},
                                      {"auto", ScoresAheadMode::Auto},
                                      {"all", ScoresAheadMode::All}});
    if (!chaining || !ahead)
      return signalPassFailure();
    if (phase != "expand" &&
        failed(scheduleKeyLoops(rewriter, getOperation(), numStages, *chaining,
                                *ahead)))
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
