//===- PipelineExpansion.cpp - --attn-pipeline's expansion -----*- C++ -*-===//
//
// Part of the attn-mlir project.
//
// The expansion step of `--attn-pipeline` (see Pipeline.cpp): a key loop
// annotated by scheduleKeyLoops becomes prologue + pipelined loop through
// upstream scf::pipelineForLoop, its moved loads predicated on their
// iteration (or their chain's end) and marked `attn.async_copy`; and the
// prefetch of tiles that only pipelined loops read (markPrefetchedTiles).
//
//===----------------------------------------------------------------------===//

#include "PipelineSchedule.h"

#include "attn/Dialect/Attn/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::detail;

/// The rows of the tile slot `v` is, or views the first rows of.
static int64_t slotRows(Value v) {
  while (true) {
    auto type = cast<MemRefType>(v.getType());
    if (type.getRank() == 2 && !type.isDynamicDim(0))
      return type.getDimSize(0);
    v = v.getDefiningOp<memref::SubViewOp>().getSource();
  }
}

/// In the body of a pipelined scores-ahead loop, moves the copies that
/// precede the next block's scores to right after them. They are
/// independent: the scores read the slot of block i + 1, which the previous
/// iteration's copies filled, and the copies fill the other slots. On the
/// GPU the wgmma's register fence otherwise waits for the `cp.async` just
/// before it to release their address registers (docs/Wgmma.md, "Scores
/// before the copies"). The prologue keeps the schedule's order, so that all
/// of its copies are issued before it waits for any.
static void issueScoresBeforeCopies(RewriterBase &rewriter, scf::ForOp loop) {
  Block *body = loop.getBody();
  Operation *scores = nullptr;
  for (Operation &op : body->without_terminator())
    if (op.hasAttr(kScoresAheadAttrName) && isa<linalg::GenericOp>(op))
      scores = &op;
  if (!scores)
    return;
  SmallVector<Operation *> copies;
  for (Operation &op : body->without_terminator()) {
    if (&op == scores)
      break;
    if (isa<linalg::CopyOp, linalg::FillOp>(op) &&
        !op.hasAttr(kScoresAheadAttrName))
      copies.push_back(&op);
  }
  Operation *after = scores;
  for (Operation *copy : copies) {
    rewriter.moveOpAfter(copy, after);
    after = copy;
  }
}

FailureOr<scf::ForOp> mlir::attn::expandPipelinedLoop(RewriterBase &rewriter,
                                                      scf::ForOp loop) {
  auto stagesAttr = loop->getAttrOfType<IntegerAttr>(kPipelineStagesAttrName);
  if (!stagesAttr)
    return emitOpErrorAtLoc(loop, "has no ") << kPipelineStagesAttrName;
  int64_t numStages = stagesAttr.getInt();
  // The schedule annotates loops of 2 .. kMaxNumStages stages; other counts
  // would make scf::pipelineForLoop build unbounded prologues.
  if (numStages < 2 || numStages > kMaxNumStages)
    return loop.emitOpError("needs ") << kPipelineStagesAttrName << " 2 to "
                                      << kMaxNumStages << ", got " << numStages;
  bool ahead = loop->hasAttr(kScoresAheadAttrName);
  if (ahead && numStages != 3)
    return emitOpErrorAtLoc(loop, "with ") << kScoresAheadAttrName << " needs "
                                           << kPipelineStagesAttrName << " = 3";
  // Scores ahead: the loads of stage 0, then those of stage 1 and the next
  // block's scores (`ahead`, in order), the math of stage 2, and the copy of
  // the next block's scores into S last.
  SmallVector<Operation *> loads, math, next, last;
  for (Operation &op : loop.getBody()->without_terminator()) {
    auto attr = op.getAttrOfType<IntegerAttr>(kPipelineStageAttrName);
    bool valid =
        attr && (attr.getInt() == 0 || attr.getInt() == numStages - 1 ||
                 (ahead && attr.getInt() == 1));
    if (!valid) {
      op.emitOpError("in a pipelined loop needs ")
          << kPipelineStageAttrName << " 0 or " << numStages - 1
          << (ahead ? " (or 1)" : "");
      return failure();
    }
    if (attr.getInt() == 0)
      loads.push_back(&op);
    else if (attr.getInt() == numStages - 1)
      math.push_back(&op);
    else if (isa<linalg::CopyOp>(op) && op.hasAttr(kScoresAheadAttrName))
      last.push_back(&op);
    else
      next.push_back(&op);
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
  if (ahead) {
    add(loads, 0);
    add(next, 1);
    add(math, 2);
    add(last, 1);
  } else {
    size_t cut = split - math.begin();
    add(ArrayRef(math).take_front(cut), numStages - 1);
    add(loads, 0);
    add(ArrayRef(math).drop_front(cut), numStages - 1);
  }
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
    // The scores of a block past the end are computed and never read.
    if (isAddressOp(op) || isa<linalg::FillOp>(op) ||
        op->hasAttr(kChainLoadAttrName) || op->hasAttr(kScoresAheadAttrName))
      return op;
    if (auto copy = dyn_cast<linalg::CopyOp>(op))
      return predicateCopy(rewriter, copy, pred);
    return nullptr;
  };
  // A chained loop's first blocks were loaded by the loop before it: its
  // prologue's loads go.
  bool chained = loop->hasAttr(kPipelineChainedAttrName);
  options.annotateFn = [numStages](Operation *op,
                                   scf::PipeliningOption::PipelinerPart,
                                   unsigned) {
    auto attr = op->getAttrOfType<IntegerAttr>(kPipelineStageAttrName);
    if (attr && attr.getInt() < numStages - 1 && isa<linalg::CopyOp>(op) &&
        !op->hasAttr(kScoresAheadAttrName))
      op->setAttr(kAsyncCopyAttrName, UnitAttr::get(op->getContext()));
    op->removeAttr(kPipelineStageAttrName);
    op->removeAttr(kChainLoadAttrName);
  };
  // The prologue goes where the rewriter stands.
  rewriter.setInsertionPoint(loop);
  bool modified = false;
  FailureOr<scf::ForOp> pipelined =
      scf::pipelineForLoop(rewriter, loop, options, &modified);
  if (failed(pipelined))
    return emitOpErrorAtLoc(loop, "could not be pipelined");
  // The loop before loaded the whole ones of the prologue's blocks: the
  // prologue loads a block only when it is partial (a key tail), and zeroes
  // its slot only then, right before its copy.
  if (chained) {
    // The prologue: the ops since the loop before.
    SmallVector<Operation *> prologue;
    for (Operation *op = (*pipelined)->getPrevNode();
         op && (isa<linalg::CopyOp, linalg::FillOp>(op) ||
                (isAddressOp(op) && op->getNumRegions() == 0));
         op = op->getPrevNode())
      prologue.insert(prologue.begin(), op);
    for (auto [index, op] : llvm::enumerate(prologue)) {
      auto fill = dyn_cast<linalg::FillOp>(op);
      auto copy = dyn_cast<linalg::CopyOp>(op);
      if (!fill && !copy)
        continue;
      if (fill) {
        auto next = llvm::find_if(
            ArrayRef(prologue).drop_front(index + 1),
            [](Operation *later) { return isa<linalg::CopyOp>(later); });
        if (next == prologue.end())
          return fill.emitOpError("in a chained prologue, without a copy");
        copy = cast<linalg::CopyOp>(*next);
      }
      int64_t tileRows = slotRows(copy.getDpsInits()[0]);
      rewriter.setInsertionPoint(copy);
      Location loc = copy.getLoc();
      Value rows =
          getValueOrCreateConstantIndexOp(rewriter, loc, copiedRows(copy));
      Value partial = arith::AndIOp::create(
          rewriter, loc,
          arith::CmpIOp::create(
              rewriter, loc, arith::CmpIPredicate::sgt, rows,
              arith::ConstantIndexOp::create(rewriter, loc, 0)),
          arith::CmpIOp::create(
              rewriter, loc, arith::CmpIPredicate::slt, rows,
              arith::ConstantIndexOp::create(rewriter, loc, tileRows)));
      if (copy == op) {
        predicateCopy(rewriter, copy, partial);
        continue;
      }
      Value dst = fill.getDpsInits()[0];
      auto type = cast<MemRefType>(dst.getType());
      Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
      Value fillRows = arith::SelectOp::create(
          rewriter, loc, partial,
          arith::ConstantIndexOp::create(rewriter, loc, tileRows), zero);
      SmallVector<OpFoldResult> offsets(2, rewriter.getIndexAttr(0));
      SmallVector<OpFoldResult> sizes = {
          fillRows, rewriter.getIndexAttr(type.getDimSize(1))};
      SmallVector<OpFoldResult> strides(2, rewriter.getIndexAttr(1));
      Value part = memref::SubViewOp::create(rewriter, loc, dst, offsets, sizes,
                                             strides);
      linalg::FillOp::create(rewriter, loc, fill.getDpsInputs()[0], part);
      rewriter.eraseOp(fill);
    }
  }
  (*pipelined)->removeAttr(kPipelineStagesAttrName);
  (*pipelined)->removeAttr(kPipelineChainedAttrName);
  // The slots of its tiles: two for a scores-ahead loop, whose copies of
  // iteration i (K of block i + 2, V of i + 1) are all waited for at the
  // head of iteration i + 1.
  (*pipelined)
      ->setAttr(kPipelinedAttrName,
                ahead ? rewriter.getI64IntegerAttr(2) : stagesAttr);
  if (ahead) {
    (*pipelined)->setAttr(kScoresAheadAttrName, rewriter.getUnitAttr());
    issueScoresBeforeCopies(rewriter, *pipelined);
  }
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
    // registers once, before the first pipelined loop, after waiting for
    // the tile's copy only (K and V of the first blocks stay in flight).
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
      // The scores a scores-ahead loop's prologue computes: the GPU waits
      // for the copies up to their K block's before them.
      if (!loop && !user->hasAttr(kScoresAheadAttrName))
        return;
      read = true;
    }
    if (read)
      copy->setAttr(kAsyncCopyAttrName, UnitAttr::get(copy->getContext()));
  });
}
