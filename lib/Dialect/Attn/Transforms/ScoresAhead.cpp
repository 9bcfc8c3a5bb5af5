//===- ScoresAhead.cpp - the scores-ahead loops of --attn-pipeline --------===//
//
// Part of the attn-mlir project.
//
// `--attn-pipeline`'s scores-ahead (see its description): which key loops
// compute the next block's scores ahead, and their three-stage annotation,
// which Pipeline.cpp's expansion (upstream scf::pipelineForLoop) turns into
//
//   load K(lb), K(lb + 1), V(lb); S' = Q K(lb)^T; S = S'        (prologue)
//   scf.for %i = lb to ub {
//     load K(%i + 2), V(%i + 1); S' = Q K(%i + 1)^T
//     softmax(S); O = O * alpha + P V(%i)
//     S = S'
//   }
//
//===----------------------------------------------------------------------===//

#include "PipelineSchedule.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::detail;

std::optional<ScoresAhead>
mlir::attn::detail::findScoresAhead(scf::ForOp loop,
                                    ArrayRef<Operation *> loads) {
  Block *body = loop.getBody();
  auto nextEffect = [&](Operation *op) {
    while (op && op != body->getTerminator() && isAddressOp(op) &&
           op->getNumRegions() == 0)
      op = op->getNextNode();
    return op;
  };
  auto fill =
      dyn_cast_or_null<linalg::FillOp>(nextEffect(loads.back()->getNextNode()));
  if (!fill || !matchPattern(fill.getDpsInputs()[0], m_AnyZeroFloat()))
    return std::nullopt;
  auto scores = fill.getDpsInits()[0].getDefiningOp<memref::AllocaOp>();
  if (!scores || scores.getType().getRank() != 2 ||
      !scores.getType().hasStaticShape())
    return std::nullopt;
  auto contraction =
      dyn_cast_or_null<linalg::GenericOp>(nextEffect(fill->getNextNode()));
  if (!contraction || contraction.getNumLoops() != 3 ||
      contraction.getNumReductionLoops() != 1 ||
      contraction.getNumDpsInputs() != 2 ||
      contraction.getDpsInits()[0] != scores.getResult())
    return std::nullopt;
  MLIRContext *ctx = loop.getContext();
  auto map = [&](unsigned x, unsigned y) {
    return AffineMap::get(
        3, 0, {getAffineDimExpr(x, ctx), getAffineDimExpr(y, ctx)}, ctx);
  };
  if (contraction.getIndexingMapsArray() !=
      SmallVector<AffineMap>{map(0, 2), map(1, 2), map(0, 1)})
    return std::nullopt;
  SmallVector<Operation *> tiles = copiedTiles(loads);
  memref::AllocaOp keys = tileOf(contraction.getDpsInputs()[1]);
  memref::AllocaOp lhs = tileOf(contraction.getDpsInputs()[0]);
  if (!keys || !llvm::is_contained(tiles, keys.getOperation()) ||
      (lhs && llvm::is_contained(tiles, lhs.getOperation())))
    return std::nullopt;
  ScoresAhead ahead{fill, contraction, {}};
  for (Operation *load : loads)
    if (tileOf(cast<DestinationStyleOpInterface>(load).getDpsInits()[0]) ==
        keys)
      ahead.keyLoads.push_back(load);
  // K's tile, through its views: only its loads and the contraction in here.
  SmallVector<Value> views = {keys.getResult()};
  for (size_t i = 0; i < views.size(); ++i) {
    for (Operation *user : views[i].getUsers()) {
      if (auto view = dyn_cast<memref::SubViewOp>(user)) {
        views.push_back(view.getResult());
        continue;
      }
      if (!loop->isAncestor(user))
        continue;
      Operation *top = body->findAncestorOpInBlock(*user);
      if (top != contraction && !llvm::is_contained(ahead.keyLoads, top))
        return std::nullopt;
    }
  }
  return ahead;
}

bool mlir::attn::detail::wantsScoresAhead(scf::ForOp loop,
                                          ArrayRef<Operation *> loads,
                                          ScoresAheadMode mode) {
  if (mode == ScoresAheadMode::None || mode == ScoresAheadMode::All)
    return mode == ScoresAheadMode::All;
  // tf32: loops of f32 tiles; auto: also loops of 16-bit tiles (their head
  // dim is checked with the scores, scheduleKeyLoops).
  auto tileType = [](Operation *tile) {
    return cast<memref::AllocaOp>(tile).getType().getElementType();
  };
  if (!llvm::all_of(copiedTiles(loads), [&](Operation *tile) {
        Type elt = tileType(tile);
        return elt.isF32() ||
               (mode == ScoresAheadMode::Auto && (elt.isF16() || elt.isBF16()));
      }))
    return false;
  for (Operation *p = loop->getParentOp(); p; p = p->getParentOp()) {
    auto config = p->getAttrOfType<KernelConfigAttr>(kConfigAttrName);
    if (!config)
      continue;
    auto precision = p->getAttrOfType<PrecisionKindAttr>(kPrecisionAttrName);
    return config.getTarget() == "sm_90a" &&
           config.getBlockM() == 16 * config.getNumWarps() &&
           config.getNumWarps() % 4 == 0 &&
           !(precision && precision.getValue() == PrecisionKind::IEEE);
  }
  return false;
}

void mlir::attn::detail::annotateScoresAhead(RewriterBase &rewriter,
                                             scf::ForOp loop,
                                             ArrayRef<Operation *> loads,
                                             ScoresAhead ahead) {
  Block *body = loop.getBody();
  auto scores = ahead.fill.getDpsInits()[0].getDefiningOp<memref::AllocaOp>();
  rewriter.setInsertionPoint(scores);
  auto next =
      memref::AllocaOp::create(rewriter, scores.getLoc(), scores.getType());
  rewriter.modifyOpInPlace(ahead.fill, [&] {
    ahead.fill.getDpsInitsMutable()[0].set(next.getResult());
  });
  rewriter.modifyOpInPlace(ahead.contraction, [&] {
    ahead.contraction.getDpsInitsMutable()[0].set(next.getResult());
  });
  rewriter.setInsertionPoint(body->getTerminator());
  auto move = linalg::CopyOp::create(rewriter, ahead.contraction.getLoc(),
                                     next.getResult(), scores.getResult());
  UnitAttr unit = rewriter.getUnitAttr();
  for (Operation *op : {ahead.fill.getOperation(),
                        ahead.contraction.getOperation(), move.getOperation()})
    op->setAttr(kScoresAheadAttrName, unit);
  SmallVector<Operation *> early = {ahead.fill, ahead.contraction};
  for (Operation *load : loads)
    if (!llvm::is_contained(ahead.keyLoads, load))
      early.push_back(load);
  SetVector<Operation *> first = loadSlice(loop, ahead.keyLoads);
  SetVector<Operation *> second = loadSlice(loop, early);
  DenseMap<Operation *, int64_t> stage;
  for (Operation &op : body->without_terminator())
    stage[&op] = first.contains(&op)                                  ? 0
                 : second.contains(&op) || &op == move.getOperation() ? 1
                                                                      : 2;
  annotateStages(rewriter, loop, std::move(stage), 3);
  loop->setAttr(kScoresAheadAttrName, unit);
}

bool mlir::attn::detail::handOverScores(RewriterBase &rewriter,
                                        scf::ForOp before, ScoresAhead ahead,
                                        scf::ForOp loop,
                                        ArrayRef<Operation *> loads) {
  Value scores = ahead.fill.getDpsInits()[0];
  linalg::GenericOp source = ahead.contraction;
  // The same contraction into the scores tile: the same Q, K's tile (through
  // its slot views), maps and body.
  auto sameContraction = [&](linalg::GenericOp op) {
    if (op.getNumDpsInputs() != 2 || op.getDpsInits()[0] != scores ||
        op.getDpsInputs()[0] != source.getDpsInputs()[0] ||
        tileOf(op.getDpsInputs()[1]) != tileOf(source.getDpsInputs()[1]) ||
        op.getIndexingMapsArray() != source.getIndexingMapsArray() ||
        op.getIteratorTypesArray() != source.getIteratorTypesArray())
      return false;
    Block &a = op.getRegion().front(), &b = source.getRegion().front();
    return llvm::equal(a, b, [](Operation &x, Operation &y) {
      return x.getName() == y.getName();
    });
  };
  linalg::GenericOp contraction;
  int found = 0;
  loop.getBody()->walk([&](linalg::GenericOp op) {
    if (op.getDpsInits().size() == 1 && op.getDpsInits()[0] == scores &&
        op.getNumReductionLoops() == 1) {
      contraction = op;
      ++found;
    }
  });
  if (found != 1 || !sameContraction(contraction))
    return false;
  // Its zero fill right before it (pure ops between: the slot's view).
  Operation *prev = contraction->getPrevNode();
  while (prev && isAddressOp(prev) && prev->getNumRegions() == 0)
    prev = prev->getPrevNode();
  auto fill = dyn_cast_or_null<linalg::FillOp>(prev);
  if (!fill || fill.getDpsInits()[0] != scores ||
      !matchPattern(fill.getDpsInputs()[0], m_AnyZeroFloat()))
    return false;
  // Only the contraction uses what runs between them.
  SmallVector<Operation *> range;
  for (Operation *op = fill; op != contraction.getOperation();
       op = op->getNextNode())
    range.push_back(op);
  range.push_back(contraction);
  for (Operation *op : range)
    for (Operation *user : op->getUsers())
      if (!llvm::is_contained(range, user))
        return false;

  // Whether the block is whole: the rows `loop` copies of it (the chain's
  // loads of `before` stop at partial blocks, extendLoads).
  auto copy = cast<linalg::CopyOp>(*llvm::find_if(
      loads, [](Operation *op) { return isa<linalg::CopyOp>(op); }));
  OpFoldResult rows = copiedRows(copy);
  int64_t tileRows = tileOf(copy.getDpsInits()[0]).getType().getDimSize(0);
  if (!rows)
    return false;

  Location loc = contraction.getLoc();
  rewriter.setInsertionPoint(fill);
  Value firstBlock =
      arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                            loop.getInductionVar(), before.getUpperBound());
  // Where `before` ran, its last iteration computed them; where it ran no
  // iteration with lb == ub, its prologue did (its scores are never
  // predicated), from the K block the chain's prologue loaded.
  Value fromBefore =
      arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::sle,
                            before.getLowerBound(), before.getUpperBound());
  Value handed = arith::AndIOp::create(rewriter, loc, firstBlock, fromBefore);
  if (getConstantIntValue(rows) != tileRows)
    handed = arith::AndIOp::create(
        rewriter, loc, handed,
        arith::CmpIOp::create(
            rewriter, loc, arith::CmpIPredicate::sge,
            getValueOrCreateConstantIndexOp(rewriter, loc, rows),
            arith::ConstantIndexOp::create(rewriter, loc, tileRows)));
  Value compute = arith::XOrIOp::create(
      rewriter, loc, handed, arith::ConstantIntOp::create(rewriter, loc, 1, 1));
  auto ifOp = scf::IfOp::create(rewriter, loc, compute,
                                /*withElseRegion=*/false);
  ifOp->setAttr(kScoresHandedAttrName, rewriter.getUnitAttr());
  for (Operation *op : range)
    rewriter.moveOpBefore(op, ifOp.thenBlock()->getTerminator());
  return true;
}
