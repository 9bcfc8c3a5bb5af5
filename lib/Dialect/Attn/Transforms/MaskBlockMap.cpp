//===- MaskBlockMap.cpp - classify a mask tensor's blocks once -*- C++ -*-===//
//
// Part of the attn-mlir project.
//
// `--attn-mask-block-map`: gives each program grid that reads a mask tensor
// a map of block classes (removed / zero / triangular / mixed) written by a
// grid of its own before it, so that programs skip removed blocks and read mask
// elements only for mixed ones (see the pass description).
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "attn/Dialect/Attn/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <limits>

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNMASKBLOCKMAP
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

/// Whether `value` is available before `grid` (defined outside it).
static bool isDefinedAbove(Value value, Operation *grid) {
  Region *region = value.getParentRegion();
  return region && !grid->isAncestor(region->getParentOp());
}

/// A mask_mod that reads data (not classifiable at compile time) of a
/// program without a mask tensor, classified here with the causal limit and
/// the window; null otherwise.
static Region *getDataMaskMod(BlockAttentionOp op) {
  if (op.getMask() || op.getMaskMod().empty() ||
      isClassifiableMaskMod(op.getMaskMod()))
    return nullptr;
  return &op.getMaskMod();
}

FailureOr<scf::ForallOp> mlir::attn::addMaskBlockMap(RewriterBase &rewriter,
                                                     BlockAttentionOp op) {
  Value mask = op.getMask();
  Region *maskMod = getDataMaskMod(op);
  if ((!mask && !maskMod) || op.getBlockMap())
    return rewriter.notifyMatchFailure(
        op, "no mask or data-reading mask_mod, or a block map already");
  // The classes take Tk for every batch (and packed sequences' programs
  // are no fixed block of rows) (the tail, the bottom_right
  // diagonal); per-batch key counts would need them per batch.
  if (op.getKvLengths() || op.getCuSeqlensQ() || op.getBlockTable())
    return rewriter.notifyMatchFailure(op, "per-batch key counts");
  auto grid = dyn_cast<scf::ForallOp>(op->getParentOp());
  if (!grid || !grid->hasAttr(kConfigAttrName))
    return op.emitOpError("expects to be a program of a program grid");
  Value query = op.getQuery(), key = op.getKey();
  SmallVector<Value> inputs = {query, key};
  if (mask)
    inputs.push_back(mask);
  llvm::append_range(inputs, op.getCaptures());
  for (Value v : inputs)
    if (!isDefinedAbove(v, grid))
      return op.emitOpError("expects its inputs to be defined above the grid");

  Location loc = op.getLoc();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(grid);
  KernelConfigAttr config = op.getConfig();
  int64_t blockM = config.getBlockM(), blockN = config.getBlockN();
  auto cIndex = [&](OpBuilder &b, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };

  // The map: MB x MH x NI x NJ bytes. MB and MH are 1 where the mask's type
  // broadcasts (rank 2, or size 1), else the query's B and Hq; for a
  // mask_mod, B, and Hq where it reads its head argument.
  auto queryType = cast<MemRefType>(query.getType());
  auto broadcasts = [&](int64_t d) {
    if (maskMod)
      return d == 1 && maskMod->getArgument(1).use_empty();
    auto maskType = cast<MemRefType>(mask.getType());
    return maskType.getRank() == 2 || maskType.getDimSize(d) == 1;
  };
  SmallVector<int64_t> shape;
  SmallVector<Value> dynamicSizes;
  SmallVector<OpFoldResult> extents;
  for (int64_t d = 0; d < 2; ++d) {
    bool broadcast = broadcasts(d);
    if (broadcast || !queryType.isDynamicDim(d)) {
      int64_t size = broadcast ? 1 : queryType.getDimSize(d);
      shape.push_back(size);
      extents.push_back(rewriter.getIndexAttr(size));
      continue;
    }
    Value size = memref::DimOp::create(rewriter, loc, query, d);
    shape.push_back(ShapedType::kDynamic);
    dynamicSizes.push_back(size);
    extents.push_back(size);
  }
  Value queryLen = memref::DimOp::create(rewriter, loc, query, 2);
  Value keyLen = memref::DimOp::create(rewriter, loc, key, 2);
  for (auto [len, block] : {std::pair{queryLen, blockM}, {keyLen, blockN}}) {
    Value blocks =
        arith::CeilDivUIOp::create(rewriter, loc, len, cIndex(rewriter, block));
    shape.push_back(ShapedType::kDynamic);
    dynamicSizes.push_back(blocks);
    extents.push_back(blocks);
  }
  auto mapType = MemRefType::get(shape, rewriter.getI8Type());
  auto map = memref::AllocOp::create(rewriter, loc, mapType, dynamicSizes);
  map->setAttr(kWorkspaceAttrName, rewriter.getStringAttr("mask_block_map"));

  // The classification grid: per block, OR over its (row, key) pairs of
  // "term != -inf" (live) and "term != 0" (not all zero).
  auto classify = scf::ForallOp::create(
      rewriter, loc, extents, ValueRange{}, std::nullopt,
      [&](OpBuilder &b, Location l, ValueRange ivs) {
        KeyVisibility visibility;
        visibility.queryLen = memref::DimOp::create(b, l, query, 2);
        visibility.keyLen = memref::DimOp::create(b, l, key, 2);
        visibility.causalOffset =
            buildCausalOffset(b, l, op, visibility.queryLen, visibility.keyLen);
        visibility.mask = mask;
        if (mask)
          for (int64_t d = 0, e = cast<MemRefType>(mask.getType()).getRank();
               d < e; ++d)
            visibility.maskSizes.push_back(
                memref::DimOp::create(b, l, mask, d));
        visibility.maskMod = maskMod;
        if (WindowAttr window = op.getWindowAttr()) {
          visibility.windowOffset =
              visibility.causalOffset ? visibility.causalOffset : cIndex(b, 0);
          visibility.windowLeft = window.getLeft();
          visibility.windowRight = window.getRight();
        }
        visibility.batch = ivs[0];
        visibility.head = ivs[1];
        Value row0 = arith::MulIOp::create(b, l, ivs[2], cIndex(b, blockM));
        Value col0 = arith::MulIOp::create(b, l, ivs[3], cIndex(b, blockN));
        Value no = arith::ConstantIntOp::create(b, l, 0, 1);
        // The triangular class's diagonal (see MaskBlockClass).
        KeyVisibility diagonal;
        diagonal.keyLen = visibility.keyLen;
        diagonal.causalOffset =
            visibility.causalOffset ? visibility.causalOffset : cIndex(b, 0);
        auto loop = scf::ForOp::create(
            b, l, cIndex(b, 0), cIndex(b, blockM * blockN), cIndex(b, 1),
            ValueRange{no, no, no},
            [&](OpBuilder &nb, Location nl, Value e, ValueRange acc) {
              Value bn = cIndex(nb, blockN);
              Value i = arith::AddIOp::create(
                  nb, nl, row0, arith::DivUIOp::create(nb, nl, e, bn));
              Value j = arith::AddIOp::create(
                  nb, nl, col0, arith::RemUIOp::create(nb, nl, e, bn));
              Value term = visibility.buildTerm(nb, nl, i, j);
              auto constant = [&](double v) -> Value {
                return arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(v));
              };
              auto differs = [&](Value v) -> Value {
                return arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::UNE,
                                             term, v);
              };
              Value negInf = constant(-std::numeric_limits<double>::infinity());
              Value zero = constant(0.0);
              Value live =
                  arith::OrIOp::create(nb, nl, acc[0], differs(negInf));
              Value nonzero =
                  arith::OrIOp::create(nb, nl, acc[1], differs(zero));
              Value triangular = arith::SelectOp::create(
                  nb, nl, diagonal.buildVisible(nb, nl, i, j, nullptr), zero,
                  negInf);
              Value notTriangular =
                  arith::OrIOp::create(nb, nl, acc[2], differs(triangular));
              scf::YieldOp::create(nb, nl,
                                   ValueRange{live, nonzero, notTriangular});
            });
        loop->setAttr(kBlockReduceAttrName, b.getUnitAttr());
        auto classConst = [&](MaskBlockClass c) -> Value {
          return arith::ConstantIntOp::create(b, l, static_cast<int64_t>(c), 8);
        };
        Value termsClass = arith::SelectOp::create(
            b, l, loop.getResult(2), classConst(MaskBlockClass::Mixed),
            classConst(MaskBlockClass::Triangular));
        Value nonzeroClass =
            arith::SelectOp::create(b, l, loop.getResult(1), termsClass,
                                    classConst(MaskBlockClass::Zero));
        Value cls =
            arith::SelectOp::create(b, l, loop.getResult(0), nonzeroClass,
                                    classConst(MaskBlockClass::Removed));
        memref::StoreOp::create(b, l, cls, map, ivs);
        scf::InParallelOp::create(b, l);
      });
  classify->setAttr(kMaskMapAttrName, config);

  rewriter.setInsertionPointAfter(grid);
  memref::DeallocOp::create(rewriter, loc, map);
  rewriter.modifyOpInPlace(op, [&] { op.getBlockMapMutable().assign(map); });
  return classify;
}

namespace {
struct AttnMaskBlockMapPass
    : public attn::impl::AttnMaskBlockMapBase<AttnMaskBlockMapPass> {
  using AttnMaskBlockMapBase::AttnMaskBlockMapBase;

  void runOnOperation() override {
    SmallVector<BlockAttentionOp> programs;
    // Programs with variants and a mask tensor read it per element.
    // So does a data-reading mask_mod without a mask tensor.
    getOperation().walk([&](BlockAttentionOp op) {
      if (op.getBlockMap() || op.getKvLengths() || op.getCuSeqlensQ() ||
          op.getBlockTable())
        return;
      if ((op.getMask() && !op.hasVariant()) || getDataMaskMod(op))
        programs.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (BlockAttentionOp op : programs) {
      if (failed(addMaskBlockMap(rewriter, op)))
        return signalPassFailure();
      ++numMapped;
    }
  }
};
} // namespace
