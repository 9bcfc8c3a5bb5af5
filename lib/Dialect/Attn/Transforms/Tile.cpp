//===- Tile.cpp - split attn.attention into a grid of programs --*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "attn/Dialect/Attn/Transforms/Transforms.h"
#include "attn/Runtime/Facts.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <numeric>

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNTILE
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

/// A read-only buffer view of tensor `value` with dynamic strides and offset
/// (innermost stride 1): programs index inputs through the strides they are
/// given, so a (B, T, H, D) tensor viewed as (B, H, T, D) is read in place.
static Value toBuffer(RewriterBase &rewriter, Location loc, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> strides(type.getRank(), ShapedType::kDynamic);
  if (!strides.empty())
    strides.back() = 1;
  auto layout = StridedLayoutAttr::get(rewriter.getContext(),
                                       ShapedType::kDynamic, strides);
  auto bufferType =
      MemRefType::get(type.getShape(), type.getElementType(), layout);
  return bufferization::ToBufferOp::create(rewriter, loc, bufferType, value,
                                           /*read_only=*/true);
}

// GQA decode: with one query row per head and a key set the same for every
// such row, the g query heads of KV head hk are the g rows of one program
// (FlashAttention's "seqlen_q ngroups swapped"): the program reads its KV
// head's keys once, not g times, and fills g of its block_m rows instead of
// one. Regions read the head and the row, a window's bounds move with the
// row; of the causal alignments, bottom_right keeps every key of the one
// row, top_left only key 0.
//
// With a static Tq of 2..16 (speculative decoding), the largest p dividing
// g with p * Tq <= block_m heads are packed (packed_heads): each row keeps
// its own query index, so causal of either alignment and kv_lengths apply
// per row; a window, softcap or region is not packed.
int64_t mlir::attn::getQueryHeadPacking(AttentionOp op, int64_t blockM) {
  RankedTensorType queryType = op.getQuery().getType();
  RankedTensorType keyType = op.getKey().getType();
  if (queryType.isDynamicDim(2) || queryType.isDynamicDim(1) ||
      keyType.isDynamicDim(1))
    return 1;
  int64_t queryLen = queryType.getDimSize(2);
  int64_t queryHeads = queryType.getDimSize(1),
          keyHeads = keyType.getDimSize(1);
  if (queryHeads <= keyHeads || op.getMask() || op.getWindow() ||
      op.getCuSeqlensQ() || !op.getScoreMod().empty() ||
      !op.getMaskMod().empty())
    return 1;
  int64_t group = queryHeads / keyHeads;
  if (queryLen == 1) {
    if (std::optional<CausalKind> causal = op.getCausalKind();
        causal && *causal != CausalKind::BottomRight)
      return 1;
    return group;
  }
  if (queryLen > kMaxPackedQueryLen || op.getSoftcap())
    return 1;
  int64_t packing = group;
  while (packing > 1 && (group % packing != 0 || packing * queryLen > blockM))
    --packing;
  return packing;
}

/// `buffer` (B x Hq x 1 [x X]) viewed as B x Hq/g x g [x X]: the query
/// heads of one KV head as the rows of a query sequence, for any strides
/// (Hq expanded to (Hq/g, g), then (g, 1) collapsed).
static Value packQueryHeads(OpBuilder &b, Location loc, Value buffer,
                            int64_t g) {
  auto type = cast<MemRefType>(buffer.getType());
  int64_t rank = type.getRank();
  SmallVector<int64_t> shape = {type.getDimSize(0), type.getDimSize(1) / g, g};
  llvm::append_range(shape, type.getShape().drop_front(2));
  SmallVector<ReassociationIndices> reassociation = {{0}, {1, 2}};
  for (int64_t dim = 2; dim < rank; ++dim)
    reassociation.push_back({dim + 1});
  SmallVector<OpFoldResult> sizes;
  for (auto [dim, size] : llvm::enumerate(shape))
    sizes.push_back(
        ShapedType::isDynamic(size)
            ? memref::getMixedSize(b, loc, buffer, dim == 0 ? 0 : dim - 1)
            : b.getIndexAttr(size));
  Value expanded = memref::ExpandShapeOp::create(b, loc, shape, buffer,
                                                 reassociation, sizes);
  // Then the unit query dim (3) joins the g rows: a collapse keeps the
  // rows' stride whatever the unit dim's (a rank-reducing subview's dropped
  // dim is ambiguous where B or Hkv is 1 too, and canonicalization picked
  // the wrong one).
  SmallVector<ReassociationIndices> collapse = {{0}, {1}, {2, 3}};
  for (int64_t dim = 4; dim <= rank; ++dim)
    collapse.push_back({dim});
  return memref::CollapseShapeOp::create(b, loc, expanded, collapse);
}

/// The query-slot count of packed sequences: `queryBlocks` (ceil(Tq /
/// block_m)) + dim(cu_q) + 1, one slot more than the N + 2 segments (the
/// rows before cu_q[0], N sequences, the rows from cu_q[N] on) can need,
/// floor(Tq / block_m) + N + 2, so that the launch's grid is one expression
/// of the sizes (docs/Serving.md).
static OpFoldResult buildPackedSlots(RewriterBase &rewriter, Location loc,
                                     OpFoldResult queryBlocks, Value cuQ) {
  Value blocks = getValueOrCreateConstantIndexOp(rewriter, loc, queryBlocks);
  Value offsets = memref::DimOp::create(rewriter, loc, cuQ, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  return arith::AddIOp::create(
             rewriter, loc, blocks,
             arith::AddIOp::create(rewriter, loc, offsets, one))
      .getResult();
}

FailureOr<SmallVector<Value>> mlir::attn::tileAttention(RewriterBase &rewriter,
                                                        AttentionOp op,
                                                        KernelConfigAttr config,
                                                        int64_t splitPrograms) {
  Location loc = op.getLoc();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);

  Value query = toBuffer(rewriter, loc, op.getQuery());
  Value key = toBuffer(rewriter, loc, op.getKey());
  Value value = toBuffer(rewriter, loc, op.getValue());
  Value mask = op.getMask() ? toBuffer(rewriter, loc, op.getMask()) : Value();
  Value kvLengths =
      op.getKvLengths() ? toBuffer(rewriter, loc, op.getKvLengths()) : Value();
  // Packed sequences: the programs look up their sequence in these.
  Value cuQ, cuK;
  if (op.getCuSeqlensQ()) {
    cuQ = toBuffer(rewriter, loc, op.getCuSeqlensQ());
    cuK = toBuffer(rewriter, loc, op.getCuSeqlensK());
  }
  // A paged cache: the programs read their pages' ids from the table.
  Value blockTable = op.getBlockTable()
                         ? toBuffer(rewriter, loc, op.getBlockTable())
                         : Value();
  // The tensors the regions read become read-only buffers too (the
  // programs' captures), each once.
  SmallVector<Value> captures;
  IRMapping buffers;
  for (Value tensor : op.getCapturedTensors()) {
    buffers.map(tensor, toBuffer(rewriter, loc, tensor));
    captures.push_back(buffers.lookup(tensor));
  }

  // The output buffer: B x Hq x Tq x Dv, dynamic sizes taken from the query.
  auto alloc = [&](RankedTensorType type) -> Value {
    auto bufferType = MemRefType::get(type.getShape(), type.getElementType());
    SmallVector<Value> dynamicSizes;
    for (int64_t dim = 0; dim < 3; ++dim)
      if (bufferType.isDynamicDim(dim))
        dynamicSizes.push_back(
            memref::DimOp::create(rewriter, loc, query, dim));
    return memref::AllocOp::create(rewriter, loc, bufferType, dynamicSizes);
  };
  Value output = alloc(op.getOutput().getType());
  // The log-sum-exp, B x Hq x Tq, when the op has that result.
  Value lse = op.getLse() ? alloc(cast<RankedTensorType>(op.getLse().getType()))
                          : Value();

  // The grid: B x Hq x ceil(Tq / block_m) programs.
  auto dimOf = [&](int64_t dim) -> OpFoldResult {
    int64_t size = op.getQuery().getType().getDimSize(dim);
    if (!ShapedType::isDynamic(size))
      return rewriter.getIndexAttr(size);
    return memref::DimOp::create(rewriter, loc, query, dim).getResult();
  };
  OpFoldResult batch = dimOf(0), heads = dimOf(1), seqLen = dimOf(2);
  // The programs' heads and query rows: Hq and Tq, or with GQA decode
  // packing Hkv and the g query heads of each.
  int64_t blockM = config.getBlockM();
  int64_t packing = getQueryHeadPacking(op, blockM);
  // Packed rows of several queries each: the program copies its heads'
  // rows itself (packed_heads); of one query, a view gives them (below).
  bool packedRows = packing > 1 && !isConstantIntValue(seqLen, 1);
  OpFoldResult programHeads = heads, programRows = seqLen;
  if (packing > 1) {
    programHeads =
        rewriter.getIndexAttr(op.getQuery().getType().getDimSize(1) / packing);
    programRows =
        rewriter.getIndexAttr(packing * op.getQuery().getType().getDimSize(2));
  }
  OpFoldResult numQueryBlocks;
  if (std::optional<int64_t> staticLen = getConstantIntValue(programRows)) {
    numQueryBlocks = rewriter.getIndexAttr((*staticLen + blockM - 1) / blockM);
  } else {
    Value blockMValue = arith::ConstantIndexOp::create(rewriter, loc, blockM);
    numQueryBlocks = arith::CeilDivUIOp::create(
                         rewriter, loc, cast<Value>(programRows), blockMValue)
                         .getResult();
  }

  // Packed sequences: ceil(Tq / block_m) + N + 2 slots, N + 1 = dim(cu_q)
  // (OnlineSoftmax's buildSequenceLookup: segment t's blocks start at slot
  // floor(c_t / block_m) + t, t = 0 .. N + 1).
  if (cuQ)
    numQueryBlocks = buildPackedSlots(rewriter, loc, numQueryBlocks, cuQ);

  // Split-KV (KeySplit.cpp): one query block per (batch, head), the keys
  // split over S programs that write partial results to f32 workspaces
  // (S x B x Hq x Tq [x Dv]), merged by a second grid. Not for packed
  // sequences, whose programs are their own sequence's query blocks.
  std::optional<int64_t> staticQueryLen = getConstantIntValue(programRows);
  bool split =
      splitPrograms > 0 && staticQueryLen && *staticQueryLen <= blockM && !cuQ;
  Value numSplits, splitOutput, splitLse;
  int64_t minSplitKeys = 4 * config.getBlockN();
  if (split) {
    // Tk: the key dim, or P * page for a paged cache (logical keys).
    OpFoldResult keyLen = memref::getMixedSize(rewriter, loc, key, 2);
    if (blockTable)
      keyLen =
          arith::MulIOp::create(
              rewriter, loc,
              memref::DimOp::create(rewriter, loc, blockTable, 1),
              arith::ConstantIndexOp::create(rewriter, loc, op.getPageSize()))
              .getResult();
    numSplits = buildNumKeySplits(rewriter, loc, batch, programHeads, keyLen,
                                  minSplitKeys, splitPrograms);
    auto workspace = [&](StringRef name, bool columns) {
      SmallVector<int64_t> shape = {ShapedType::kDynamic};
      SmallVector<Value> sizes = {numSplits};
      for (OpFoldResult size : {batch, heads, seqLen}) {
        std::optional<int64_t> known = getConstantIntValue(size);
        shape.push_back(known ? *known : ShapedType::kDynamic);
        if (!known)
          sizes.push_back(cast<Value>(size));
      }
      if (columns)
        shape.push_back(op.getValueHeadDim());
      auto alloc = memref::AllocOp::create(
          rewriter, loc, MemRefType::get(shape, rewriter.getF32Type()), sizes);
      alloc->setAttr(kWorkspaceAttrName, rewriter.getStringAttr(name));
      return alloc.getResult();
    };
    splitOutput = workspace("split_output", /*columns=*/true);
    splitLse = workspace("split_lse", /*columns=*/false);
  }
  // Split s's rank-reduced view of a workspace.
  auto splitView = [&](OpBuilder &b, Location l, Value workspace, Value s) {
    auto type = cast<MemRefType>(workspace.getType());
    SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
    offsets[0] = s;
    SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1)};
    for (int64_t dim = 1; dim < type.getRank(); ++dim)
      sizes.push_back(memref::getMixedSize(b, l, workspace, dim));
    SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
    auto viewType = memref::SubViewOp::inferRankReducedResultType(
        type.getShape().drop_front(), type, offsets, sizes, strides);
    return memref::SubViewOp::create(b, l, cast<MemRefType>(viewType),
                                     workspace, offsets, sizes, strides)
        .getResult();
  };

  FloatAttr scale = rewriter.getF32FloatAttr(op.getScaleValue());
  BlockAttentionOp program;
  OpFoldResult programs = split ? OpFoldResult(numSplits) : numQueryBlocks;
  auto grid = scf::ForallOp::create(
      rewriter, loc, ArrayRef<OpFoldResult>{batch, programHeads, programs},
      ValueRange{}, std::nullopt,
      [&](OpBuilder &b, Location bodyLoc, ValueRange ivs) {
        Value queryBlock = ivs[2], programOutput = output, programLse = lse;
        Value programQuery = query, keySplit;
        if (split) {
          keySplit = ivs[2];
          queryBlock = arith::ConstantIndexOp::create(b, bodyLoc, 0);
          programOutput = splitView(b, bodyLoc, splitOutput, keySplit);
          programLse = splitView(b, bodyLoc, splitLse, keySplit);
        }
        // Packed, the program sees a problem of Hkv heads of g rows each,
        // every row seeing all its keys (so without the causal alignment).
        CausalKindAttr causal = op.getCausalAttr();
        if (packing > 1 && !packedRows) {
          programQuery = packQueryHeads(b, bodyLoc, query, packing);
          programOutput = packQueryHeads(b, bodyLoc, programOutput, packing);
          if (programLse)
            programLse = packQueryHeads(b, bodyLoc, programLse, packing);
          causal = nullptr;
        }
        program = BlockAttentionOp::create(
            b, bodyLoc, programQuery, key, value, mask,
            /*block_map=*/Value(), kvLengths, cuQ, cuK, blockTable, captures,
            programOutput, programLse, ivs[0], ivs[1], queryBlock, keySplit,
            split ? numSplits : Value(), config, scale, causal,
            op.getPrecisionAttr(), op.getWindowAttr(), op.getSoftcapAttr(),
            packedRows ? b.getI64IntegerAttr(packing) : IntegerAttr());
        scf::InParallelOp::create(b, bodyLoc);
      });
  // The regions, reading the captured buffers where they read the tensors.
  for (auto [from, to] : {std::pair{&op.getScoreMod(), &program.getScoreMod()},
                          {&op.getMaskMod(), &program.getMaskMod()}}) {
    if (from->empty())
      continue;
    rewriter.cloneRegionBefore(*from, *to, to->end());
    to->walk([&](tensor::ExtractOp extract) {
      rewriter.setInsertionPoint(extract);
      rewriter.replaceOpWithNewOp<memref::LoadOp>(
          extract, buffers.lookup(extract.getTensor()), extract.getIndices());
    });
  }
  rewriter.setInsertionPointAfter(grid);
  // The grid carries the config too: GPU lowerings read the program shape
  // (warps, block sizes) and the matmul precision from it once the programs
  // have been expanded.
  grid->setAttr(kConfigAttrName, config);
  if (Attribute precision = op.getPrecisionAttr())
    grid->setAttr(kPrecisionAttrName, precision);
  if (split) {
    grid->setAttr(kKeySplitsAttrName,
                  rewriter.getDenseI64ArrayAttr({minSplitKeys, splitPrograms}));
    buildSplitCombine(rewriter, loc, splitOutput, splitLse, numSplits, output,
                      lse);
    memref::DeallocOp::create(rewriter, loc, splitOutput);
    memref::DeallocOp::create(rewriter, loc, splitLse);
  }

  SmallVector<Value> results;
  for (Value buffer : {output, lse})
    if (buffer)
      results.push_back(bufferization::ToTensorOp::create(
          rewriter, loc, memref::getTensorTypeFromMemRefType(buffer.getType()),
          buffer, /*restrict=*/rewriter.getUnitAttr(),
          /*writable=*/rewriter.getUnitAttr()));
  return results;
}

/// The config of `op` for `target`, or null after an error on `op`.
static KernelConfigAttr selectConfig(AttentionOp op, StringRef target,
                                     const KernelConfigOverrides &overrides) {
  // A paged cache: GPU kernels load each key block from one page by TMA
  // (boxes of a power-of-two row count that a page holds whole).
  int64_t page = op.getPageSize();
  if (page && isKnownCudaChip(target) &&
      (page < 16 || page > 256 || !llvm::isPowerOf2_64(page))) {
    op.emitError() << "expects a page size ('key' dim 2 with 'block_table') "
                      "that is a power of two in 16..256 on "
                   << target << ", got " << page;
    return nullptr;
  }
  // A variant masks per element like a mask tensor, and a window's left
  // edge adds a third key loop: they take the mask tensor's configs (at
  // head dim 256 the 16-bit kernels' 64x32 blocks spill with three loops).
  KernelConfigAttr config = selectKernelConfig(
      [&] { return op.emitError("the kernel config: "); }, op.getContext(),
      op.getElementType(), op.getHeadDim(), op.getValueHeadDim(),
      op.getMask() || op.hasVariant(), op.isIEEEPrecision(), target, overrides);
  // Paged: each key block lies within one page, block_n = gcd(block_n,
  // page) (min(block_n, page) for the GPU's powers of two).
  if (config && page && page % config.getBlockN() != 0)
    config = KernelConfigAttr::getChecked(
        [&] { return op.emitError("the kernel config: "); }, op.getContext(),
        config.getBlockM(), std::gcd(config.getBlockN(), page),
        config.getNumWarps(), config.getNumStages(), config.getTarget());
  // Rows that are not whole 16-byte vectors (D or Dv times the element's
  // bytes not a multiple of 16) are copied in narrower vectors, which
  // cp.async and TMA do not move: one stage, whose copies are synchronous.
  int64_t bytes = op.getElementType().getIntOrFloatBitWidth() / 8;
  if (config && target != "cpu" && config.getNumStages() > 1 &&
      (::attn::runtime::getRowVectorBytes(op.getHeadDim() * bytes) != 16 ||
       ::attn::runtime::getRowVectorBytes(op.getValueHeadDim() * bytes) !=
           16)) {
    if (overrides.numStages > 1) {
      op.emitError() << "the kernel config: expects num_stages = 1 where a "
                        "head dim's rows are not whole 16-byte vectors (D = "
                     << op.getHeadDim() << ", Dv = " << op.getValueHeadDim()
                     << " of " << op.getElementType() << "), got "
                     << overrides.numStages;
      return nullptr;
    }
    config = KernelConfigAttr::getChecked(
        [&] { return op.emitError("the kernel config: "); }, op.getContext(),
        config.getBlockM(), config.getBlockN(), config.getNumWarps(),
        /*numStages=*/int64_t(1), config.getTarget());
  }
  // A key block is the k of P V: 16 for the 16-bit MMAs (m16n8k16, wgmma's
  // k16), 8 for tf32's.
  if (config && target != "cpu" && !op.getElementType().isF32() &&
      config.getBlockN() % 16 != 0) {
    op.emitError() << "the kernel config: expects block_n to be a multiple "
                      "of 16 for "
                   << op.getElementType() << " on " << target
                   << " (the k of P V's 16-bit MMAs), got "
                   << config.getBlockN();
    return nullptr;
  }
  return config;
}

namespace {
/// Tiles one attn.attention with the default (or overridden) config.
struct TileAttentionPattern : public OpRewritePattern<AttentionOp> {
  TileAttentionPattern(MLIRContext *context, StringRef target,
                       const KernelConfigOverrides &overrides,
                       int64_t splitPrograms)
      : OpRewritePattern<AttentionOp>(context), target(target.str()),
        overrides(overrides),
        splitPrograms(splitPrograms < 0 ? getDefaultSplitPrograms(target)
                                        : splitPrograms) {}

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    KernelConfigAttr config = selectConfig(op, target, overrides);
    if (!config)
      return failure();
    FailureOr<SmallVector<Value>> results =
        tileAttention(rewriter, op, config, splitPrograms);
    if (failed(results))
      return failure();
    rewriter.replaceOp(op, *results);
    return success();
  }

  std::string target;
  KernelConfigOverrides overrides;
  int64_t splitPrograms;
};

struct AttnTilePass : public mlir::attn::impl::AttnTileBase<AttnTilePass> {
  using AttnTileBase::AttnTileBase;

  void runOnOperation() override {
    KernelConfigOverrides overrides{blockM, blockN, numWarps, numStages};
    if (blockM < 0 || blockN < 0 || numWarps < 0 || numStages < 0) {
      getOperation().emitError("attn-tile options must be >= 0");
      return signalPassFailure();
    }
    if (splitPrograms < -1) {
      getOperation().emitError("attn-tile: split-programs must be >= -1 (-1: "
                               "the target's default)");
      return signalPassFailure();
    }
    // Every op's config first: an invalid one is an error of the pass, not
    // an op the patterns leave alone.
    int64_t count = 0;
    WalkResult configs = getOperation().walk([&](AttentionOp op) {
      ++count;
      return selectConfig(op, target, overrides) ? WalkResult::advance()
                                                 : WalkResult::interrupt();
    });
    if (configs.wasInterrupted())
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    populateAttnTilePatterns(patterns, target, overrides, splitPrograms);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    numTiled += count;
  }
};
} // namespace

int64_t mlir::attn::getDefaultSplitPrograms(StringRef target) {
  // Two programs per SM of a 132-SM Hopper; the host does not split.
  return target == "cpu" ? 0 : 2 * 132;
}

void mlir::attn::populateAttnTilePatterns(
    RewritePatternSet &patterns, StringRef target,
    const KernelConfigOverrides &overrides, int64_t splitPrograms) {
  patterns.add<TileAttentionPattern>(patterns.getContext(), target, overrides,
                                     splitPrograms);
}
