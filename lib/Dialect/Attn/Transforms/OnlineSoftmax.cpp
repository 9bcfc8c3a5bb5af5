//===- OnlineSoftmax.cpp - expand programs into the online loop -*- C++ -*-===//
//
// Part of the attn-mlir project.
//
// Expands `attn.block_attention` (one program: one query block of one head)
// into the exact streaming softmax over key/value blocks of FlashAttention,
// on block-sized buffers with `linalg.generic` for the block math:
//
//   c     = scale * log2(e)
//   S     = c * Q K^T (+ log2(e) * bias; masked keys -> -inf)
//   m_new = max(m, rowmax(S));  mu = (m_new == -inf) ? 0 : m_new
//   alpha = exp2(m - mu);       P = exp2(S - mu)
//   l     = alpha * l + rowsum(P)
//   acc   = alpha * acc + P V;  m = m_new
//   O     = acc * ((l == 0) ? 0 : 1 / l)   (once, after the loop)
//
// With c > 0, the scale is folded into the exponent instead (as
// FlashAttention-2 does): S stays Q K^T (plus log2(e) * bias / c under a
// float mask), the running max is taken on unscaled scores (c > 0 keeps
// their order), and P = exp2(fma(S, c, -c * mu)),
// alpha = exp2(fma(m, c, -c * mu)). That saves one multiply per score.
//
//===----------------------------------------------------------------------===//

#include "ProgramBuilder.h"

#include "attn/Dialect/Attn/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>
#include <limits>

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_ATTNONLINESOFTMAX
#include "attn/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::detail;

Value ProgramBuilder::rowsView(Value source, Value b0, Value b1, Value row0,
                               OpFoldResult rows, int64_t cols) {
  auto sourceType = cast<MemRefType>(source.getType());
  SmallVector<OpFoldResult> offsets = {b0, b1, row0, b.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1), b.getIndexAttr(1), rows,
                                     b.getIndexAttr(cols)};
  SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
  std::optional<int64_t> staticRows = getConstantIntValue(rows);
  int64_t rowsDim = staticRows ? *staticRows : ShapedType::kDynamic;
  MemRefType viewType = memref::SubViewOp::inferRankReducedResultType(
      {rowsDim, cols}, sourceType, offsets, sizes, strides);
  return memref::SubViewOp::create(b, loc, viewType, source, offsets, sizes,
                                   strides);
}

Value ProgramBuilder::prefixView(Value buffer, OpFoldResult rows,
                                 int64_t cols) {
  auto type = cast<MemRefType>(buffer.getType());
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes = {rows};
  if (type.getRank() == 2)
    sizes.push_back(b.getIndexAttr(cols < 0 ? type.getDimSize(1) : cols));
  SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
  return memref::SubViewOp::create(b, loc, buffer, offsets, sizes, strides);
}

void ProgramBuilder::loadTile(Value source, Value b0, Value b1, Value row0,
                              OpFoldResult rows, Value tile, bool padded) {
  // The operand's head dim: a tile of a padded head dim has more columns,
  // zero past it.
  int64_t cols = cast<MemRefType>(source.getType()).getDimSize(3);
  if (padded || cols != cast<MemRefType>(tile.getType()).getDimSize(1))
    fill(tile, arith::ConstantOp::create(b, loc, b.getZeroAttr(elementType)));
  Value from = rowsView(source, b0, b1, row0, rows, cols);
  Value to = prefixView(tile, rows, cols);
  linalg::CopyOp::create(b, loc, ValueRange{from}, ValueRange{to});
}

Value ProgramBuilder::headsView(Value source) {
  auto type = cast<MemRefType>(source.getType());
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> offsets = {op.getBatch(), firstHead};
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1),
                                     b.getIndexAttr(packedHeads)};
  for (int64_t d = 2; d < rank; ++d) {
    offsets.push_back(b.getIndexAttr(0));
    sizes.push_back(b.getIndexAttr(type.getDimSize(d)));
  }
  SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
  return memref::SubViewOp::create(b, loc, source, offsets, sizes, strides);
}

Value ProgramBuilder::packedRowsView(Value buffer, int64_t cols) {
  int64_t queryLen = op.getQuery().getType().getDimSize(2);
  Value rows = prefixView(buffer, b.getIndexAttr(packedHeads * queryLen), cols);
  SmallVector<int64_t> shape = {1, packedHeads, queryLen};
  SmallVector<ReassociationIndices> reassociation = {{0, 1, 2}};
  if (cols >= 0) {
    shape.push_back(cols);
    reassociation.push_back({3});
  }
  return memref::ExpandShapeOp::create(b, loc, shape, rows, reassociation);
}

void ProgramBuilder::build() {
  // Program coordinates: batch, query head, query block; the KV head of GQA.
  Value batch = op.getBatch(), head = op.getHead();
  Value query = op.getQuery(), key = op.getKey();
  Value groupSize = arith::DivUIOp::create(b, loc, dim(query, 1), dim(key, 1));
  // Packed heads: the program's head h stands for query heads h * p ..
  // h * p + p - 1, of one KV head.
  packedHeads = op.getPackedHeads() ? *op.getPackedHeads() : 1;
  firstHead = packedHeads > 1
                  ? arith::MulIOp::create(b, loc, head, index(packedHeads))
                  : head;
  kvHead = arith::DivUIOp::create(b, loc, firstHead, groupSize);
  queryLen = dim(query, 2);
  // Tk: a paged cache's logical keys are P * page.
  keyLen = op.getBlockTable()
               ? arith::MulIOp::create(b, loc, dim(op.getBlockTable(), 1),
                                       index(getPageSize()))
               : dim(key, 2);
  // A batch's own key count, clamped to 0..Tk, stands for Tk everywhere.
  if (Value lengths = op.getKvLengths()) {
    Value length = arith::IndexCastOp::create(
        b, loc, b.getIndexType(),
        memref::LoadOp::create(b, loc, lengths, ValueRange{batch}));
    keyLen = arith::MinSIOp::create(
        b, loc, arith::MaxSIOp::create(b, loc, length, index(0)), keyLen);
  }
  queryBlock = op.getQueryBlock();
  regionBatch = batch;
  if (op.getCuSeqlensQ())
    buildSequenceLookup();
  Value bm = index(blockM), bn = index(blockN);
  row0 = arith::MulIOp::create(b, loc, queryBlock, bm);
  // Valid query rows of this block: min(block_m, Tq - row0); packed, the
  // p * Tq rows of one block.
  Value rows =
      packedHeads > 1
          ? index(packedHeads * op.getQuery().getType().getDimSize(2))
          : arith::MinSIOp::create(
                b, loc, bm, arith::SubIOp::create(b, loc, queryLen, row0))
                .getResult();
  // Split s of n reads key blocks [s * per, min((s + 1) * per, NB)), per =
  // ceil(NB / n): every key loop below is clamped to that run.
  if (Value split = op.getKeySplit()) {
    Value numBlocks = arith::CeilDivSIOp::create(b, loc, keyLen, bn);
    Value per =
        arith::CeilDivSIOp::create(b, loc, numBlocks, op.getNumKeySplits());
    splitStart = arith::MulIOp::create(b, loc, split, per);
    splitEnd = arith::MinSIOp::create(
        b, loc, arith::AddIOp::create(b, loc, splitStart, per), numBlocks);
  }

  // Block buffers.
  // Head dims are padded to whole 16-element chunks, the unit of the GPU's
  // shared-memory tiles and tensor-core steps; the columns past the head
  // dim are zero in Q, K and V, so they add nothing to Q K^T, and the
  // accumulator's are not stored.
  int64_t tileDim = llvm::alignTo(headDim, 16),
          tileValueDim = llvm::alignTo(valueHeadDim, 16);
  qTile = allocBuffer({blockM, tileDim}, elementType);
  kTile = allocBuffer({blockN, tileDim}, elementType);
  vTile = allocBuffer({blockN, tileValueDim}, elementType);
  sTile = allocBuffer({blockM, blockN}, f32);
  mRow = allocBuffer({blockM}, f32);
  mNewRow = allocBuffer({blockM}, f32);
  alphaRow = allocBuffer({blockM}, f32);
  lRow = allocBuffer({blockM}, f32);
  offsetRow = allocBuffer({blockM}, f32);
  accTile = allocBuffer({blockM, tileValueDim}, f32);
  // f32 kernels for GPU targets check each causal diagonal block for rows
  // that see none of its keys (see buildStep). 16-bit kernels do not: with
  // the check ptxas schedules their unmasked loop's HMMA and LDSM in another
  // order, which costs more than the skipped blocks save at long sequences
  // (docs/GPU.md, The key loops).
  bool causalLiveCheck = op.getCausal() && !op.getMask() && !op.hasVariant() &&
                         elementType == f32 &&
                         op.getConfig().getTarget() != "cpu";
  // Exact f32 keeps one flag for both, as it was (see buildStep): a second,
  // or the one marked attn.program_live, made ptxas spill 4-8 bytes at head
  // dim 16 (ptxas matrix).
  bool ieee = op.getPrecision() && *op.getPrecision() == PrecisionKind::IEEE;
  if (causalLiveCheck) {
    liveFlag = allocBuffer({}, b.getI1Type());
    if (!ieee)
      qkLiveFlag = allocBuffer({}, b.getI1Type());
  }
  // Likewise, with a block map, the mixed blocks' terms (see buildStep).
  if (op.getMask() && op.getBlockMap() && elementType == f32 &&
      op.getConfig().getTarget() != "cpu")
    termsFlag = allocBuffer({}, b.getI1Type());
  // And the causal rows' diagonal blocks (see buildCausalRowCheck).
  if (op.getMask() && op.getBlockMap() && elementType == f32 &&
      op.getConfig().getNumStages() > 1 &&
      op.getConfig().getTarget() != "cpu") {
    causalRowLiveFlag = allocBuffer({}, b.getI1Type());
    if (!ieee)
      causalRowQkLiveFlag = allocBuffer({}, b.getI1Type());
  }
  if (userMask()) {
    if (!op.getBlockMap())
      liveFlag = allocBuffer({}, b.getI1Type());
    addTile = allocBuffer({blockM, blockN}, f32);
  }

  // Q block, zero past Tq; running max -inf, running sum and acc 0.
  // The block's first row in the query and output operands, once: under
  // cu_seqlens, the sequence's first row is dead after it.
  packedRow0 = queryRow(row0);
  if (packedHeads > 1) {
    fill(qTile, arith::ConstantOp::create(b, loc, b.getZeroAttr(elementType)));
    linalg::CopyOp::create(b, loc, ValueRange{headsView(query)},
                           ValueRange{packedRowsView(qTile, headDim)});
  } else {
    loadTile(query, batch, head, packedRow0, rows, qTile, /*padded=*/true);
  }
  fill(mRow, f32Const(-std::numeric_limits<double>::infinity()));
  fill(lRow, f32Const(0.0));
  fill(accTile, f32Const(0.0));

  if (op.hasVariant())
    buildVariantLoops();
  else
    buildKeyLoops(rows, bn);
  buildEpilogue(rows);
}

void ProgramBuilder::buildKeyLoops(Value rows, Value bn) {
  // Key blocks to visit. numBlocks = ceil(Tk / block_n); full blocks (no key
  // tail) = floor(Tk / block_n).
  Value numBlocks = arith::CeilDivSIOp::create(b, loc, keyLen, bn);
  Value numVisit = numBlocks;
  Value numUnmasked = arith::DivSIOp::create(b, loc, keyLen, bn);
  Value zero = index(0), one = index(1);
  if (std::optional<CausalKind> causal = op.getCausal()) {
    // Query i sees key j when j <= i + off, off = 0 (top_left) or Tk - Tq
    // (bottom_right).
    causalOffset = buildCausalOffset(b, loc, op, queryLen, keyLen);
    // Blocks past the one holding key (last valid row + off) are above the
    // diagonal for every row: never visited, never loaded. Packed rows
    // (row0 = 0) take query indices 0 .. Tq - 1.
    Value lastRow = arith::SubIOp::create(
        b, loc,
        arith::AddIOp::create(b, loc, row0, packedHeads > 1 ? queryLen : rows),
        one);
    Value lastKey = arith::AddIOp::create(b, loc, lastRow, causalOffset);
    Value visit = arith::AddIOp::create(
        b, loc, arith::FloorDivSIOp::create(b, loc, lastKey, bn), one);
    visit = arith::MaxSIOp::create(b, loc, visit, zero);
    numVisit = arith::MinSIOp::create(b, loc, visit, numBlocks);
    // Blocks whose last key is visible from the first row need no causal
    // mask: kb < floor((row0 + off + 1) / block_n).
    Value firstKey = arith::AddIOp::create(
        b, loc, arith::AddIOp::create(b, loc, row0, causalOffset), one);
    Value below = arith::FloorDivSIOp::create(b, loc, firstKey, bn);
    below = arith::MaxSIOp::create(b, loc, below, zero);
    numUnmasked = arith::MinSIOp::create(b, loc, numUnmasked, below);
  }
  visibility.queryLen = queryLen;
  visibility.keyLen = keyLen;
  visibility.causalOffset = causalOffset;
  if (op.getBlockMap())
    triOffset = causalOffset ? causalOffset : zero;
  visibility.mask = op.getMask();
  visibility.batch = regionBatch;
  visibility.head = op.getHead();
  // A user mask can remove any key of any block: then every block is masked.
  // (Whole blocks that need no causal or tail mask: below unmaskedBound.)
  Value unmaskedBound = arith::MinSIOp::create(b, loc, numUnmasked, numVisit);
  numUnmasked = op.getMask() ? zero : unmaskedBound;

  // Loop 1: blocks that need no mask. Loop 2: diagonal and tail blocks (and
  // every block under a user mask).
  auto loop = [&](Value lb, Value ub, bool masked) {
    buildKeyLoop(lb, ub, masked);
  };
  if (!op.getMask())
    loop(zero, numUnmasked, /*masked=*/false);
  if (op.getBlockMap() && op.getConfig().getNumStages() > 1) {
    // The pipeliner loads every block of its loop a block ahead, removed or
    // not: the loops run over the live range only (for a causal mask tensor, up
    // to the diagonal). With one stage a removed block's loads are skipped with
    // its math, and the scan costs more than it saves (docs/GPU.md, Mask
    // tensors: the block map). The run of zero-term blocks at its start (for a
    // causal mask tensor, every block left of the diagonal) needs no mask code
    // at all: the unmasked step, as loop 1 of a kernel without a mask, over
    // whole blocks. f32 only: the second copy of the block math made ptxas
    // spill 12 bytes in the 16-bit head dim 64 i1-mask kernels of the CI
    // matrix.
    LiveRange range = buildLiveRange(numVisit);
    auto mapLoops = [&] {
      Value plainEnd = range.first;
      if (elementType == f32) {
        plainEnd = arith::MinSIOp::create(
            b, loc, arith::MinSIOp::create(b, loc, range.zeroEnd, range.last),
            unmaskedBound);
        plainEnd = arith::MaxSIOp::create(b, loc, plainEnd, range.first);
        loop(range.first, plainEnd, /*masked=*/false);
      }
      loop(plainEnd, range.last, /*masked=*/true);
    };
    if (elementType != f32) {
      mapLoops();
    } else {
      // A row whose classes are a triangular mask's runs the loops of a
      // causal program (diagonal at triOffset), bounded by the causal
      // formulas: no class loads or dispatch (see buildCausalRowCheck).
      CausalRow row = buildCausalRowCheck(range, rows, numBlocks);
      auto ifOp = scf::IfOp::create(b, loc, row.shaped,
                                    /*withElseRegion=*/true);
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
      {
        CausalRowScope scope(*this);
        loop(zero, row.below, /*masked=*/false);
        loop(row.below, row.visit, /*masked=*/true);
      }
      b.setInsertionPoint(ifOp.elseBlock()->getTerminator());
      mapLoops();
    }
  } else {
    loop(numUnmasked, numVisit, /*masked=*/true);
  }
}

void ProgramBuilder::buildKeyLoop(Value lb, Value ub, bool masked,
                                  std::optional<bool> partial) {
  if (splitStart) {
    lb = arith::MaxSIOp::create(b, loc, lb, splitStart);
    ub = arith::MinSIOp::create(b, loc, ub, splitEnd);
  }
  auto forOp = scf::ForOp::create(b, loc, lb, ub, index(1));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(forOp.getBody()->getTerminator());
  buildStep(forOp.getInductionVar(), masked, partial.value_or(masked));
}

void ProgramBuilder::buildEpilogue(Value rows) {
  Value batch = op.getBatch(), head = op.getHead();
  Value zeroF = f32Const(0.0), oneF = f32Const(1.0);
  if (Value lse = op.getLse()) {
    // The log-sum-exp of each row, in natural units. The terms of l are
    // exp2(e * S + offset), offset = -e * mu, with e * S = log2(e) * s for
    // the final score s, so log(sum exp(s)) = ln(2) * (log2(l) - offset),
    // the offset recomputed from m as the step computes it. A row with no
    // kept key (l == 0) has -inf.
    double expScale = foldScale ? scaleLog2e : 1.0;
    Value negE = f32Const(-expScale), ln2 = f32Const(std::log(2.0));
    Value negInf = f32Const(-std::numeric_limits<double>::infinity());
    Value lseRow = allocBuffer({blockM}, f32);
    generic(ValueRange{lRow, mRow}, ValueRange{lseRow},
            {map(1, {0}), map(1, {0}), map(1, {0})}, {IteratorType::parallel},
            [&](OpBuilder &nb, Location l, ValueRange args) {
              Value sum = args[0], m = args[1];
              Value mIsNegInf = arith::CmpFOp::create(
                  nb, l, arith::CmpFPredicate::OEQ, m, negInf);
              Value mu = arith::SelectOp::create(nb, l, mIsNegInf, zeroF, m);
              Value offset = arith::MulFOp::create(nb, l, mu, negE);
              Value log2Sum = math::Log2Op::create(nb, l, sum);
              Value value = arith::MulFOp::create(
                  nb, l, arith::SubFOp::create(nb, l, log2Sum, offset), ln2);
              Value empty = arith::CmpFOp::create(
                  nb, l, arith::CmpFPredicate::OEQ, sum, zeroF);
              yieldValue(nb, l,
                         arith::SelectOp::create(nb, l, empty, negInf, value));
            });
    if (packedHeads > 1) {
      generic(ValueRange{packedRowsView(lseRow)}, ValueRange{headsView(lse)},
              {map(3, {0, 1, 2}), map(3, {0, 1, 2})},
              SmallVector<IteratorType>(3, IteratorType::parallel),
              [&](OpBuilder &nb, Location l, ValueRange args) {
                yieldValue(nb, l, args[0]);
              });
    } else {
      auto lseType = cast<MemRefType>(lse.getType());
      SmallVector<OpFoldResult> offsets = {batch, head, packedRow0};
      SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1), b.getIndexAttr(1),
                                         rows};
      SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
      std::optional<int64_t> staticRows = getConstantIntValue(rows);
      MemRefType viewType = memref::SubViewOp::inferRankReducedResultType(
          {staticRows ? *staticRows : ShapedType::kDynamic}, lseType, offsets,
          sizes, strides);
      Value to = memref::SubViewOp::create(b, loc, viewType, lse, offsets,
                                           sizes, strides);
      generic(ValueRange{prefixView(lseRow, rows)}, ValueRange{to},
              {map(1, {0}), map(1, {0})}, {IteratorType::parallel},
              [&](OpBuilder &nb, Location l, ValueRange args) {
                yieldValue(nb, l, args[0]);
              });
    }
  }
  // O = acc * (1 / l), one division per row; rows with no visible key
  // (l == 0, acc == 0) give 0.
  generic(ValueRange{lRow}, ValueRange{lRow}, {map(1, {0}), map(1, {0})},
          {IteratorType::parallel},
          [&](OpBuilder &nb, Location l, ValueRange args) {
            Value empty = arith::CmpFOp::create(
                nb, l, arith::CmpFPredicate::OEQ, args[0], zeroF);
            Value inverse = arith::DivFOp::create(nb, l, oneF, args[0]);
            yieldValue(nb, l,
                       arith::SelectOp::create(nb, l, empty, zeroF, inverse));
          });
  generic(ValueRange{lRow}, ValueRange{accTile}, {map(2, {0}), map(2, {0, 1})},
          {IteratorType::parallel, IteratorType::parallel},
          [&](OpBuilder &nb, Location l, ValueRange args) {
            yieldValue(nb, l, arith::MulFOp::create(nb, l, args[1], args[0]));
          });
  // Store the valid rows, converted to the element type.
  int64_t storeRank = packedHeads > 1 ? 4 : 2;
  Value from = packedHeads > 1 ? packedRowsView(accTile, valueHeadDim)
                               : prefixView(accTile, rows, valueHeadDim);
  Value to = packedHeads > 1 ? headsView(op.getOutput())
                             : rowsView(op.getOutput(), batch, head, packedRow0,
                                        rows, valueHeadDim);
  AffineMap identity = b.getMultiDimIdentityMap(storeRank);
  generic(ValueRange{from}, ValueRange{to}, {identity, identity},
          SmallVector<IteratorType>(storeRank, IteratorType::parallel),
          [&](OpBuilder &nb, Location l, ValueRange args) {
            Value v = args[0];
            if (v.getType() != args[1].getType())
              v = arith::TruncFOp::create(nb, l, args[1].getType(), v);
            yieldValue(nb, l, v);
          });
}

void ProgramBuilder::buildContraction() {
  // S = Q K^T, accumulated in f32.
  fill(sTile, f32Const(0.0));
  generic(
      ValueRange{qTile, kTile}, ValueRange{sTile},
      {map(3, {0, 2}), map(3, {1, 2}), map(3, {0, 1})},
      {IteratorType::parallel, IteratorType::parallel, IteratorType::reduction},
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value prod = arith::MulFOp::create(nb, l, extend(nb, l, args[0]),
                                           extend(nb, l, args[1]));
        yieldValue(nb, l, arith::AddFOp::create(nb, l, args[2], prod));
      });
}

void ProgramBuilder::buildStep(Value kb, bool masked, bool partial) {
  Value col0 = arith::MulIOp::create(b, loc, kb, index(blockN));
  OpFoldResult cols = b.getIndexAttr(blockN);
  if (partial)
    cols = arith::MinSIOp::create(b, loc, index(blockN),
                                  arith::SubIOp::create(b, loc, keyLen, col0))
               .getResult();
  // K and V blocks of the KV head (GQA); zero past Tk on masked blocks.
  // A paged cache: the block's page and its first row in it (Paged.cpp).
  auto loadTiles = [&] {
    Value keyRow0 = keyRow(col0), keyIndex = op.getBatch();
    if (op.getBlockTable())
      std::tie(keyIndex, keyRow0) = buildPageLookup(col0);
    loadTile(op.getKey(), keyIndex, kvHead, keyRow0, cols, kTile, partial);
    loadTile(op.getValue(), keyIndex, kvHead, keyRow0, cols, vTile, partial);
  };

  // Under a user mask, a block whose keys are all masked out for every row
  // of the program (e.g. above the diagonal of a causal mask tensor) leaves
  // m, l and acc as they are: its math runs under `scf.if live`. With one
  // stage its K/V tiles are loaded under the `if` too; with more, the loads
  // stay at the head of the loop body, where the pipeliner issues them a
  // block ahead.
  OpBuilder::InsertionGuard guard(b);
  bool skipCheck = masked && userMask();
  bool loadsUnderCheck = skipCheck && op.getConfig().getNumStages() <= 1;
  if (!loadsUnderCheck)
    loadTiles();
  // A causal diagonal block (GPU targets): live = some row sees a key of
  // it. The whole program's rows always do (the loop holds only blocks its
  // last row sees), but the GPU lowering ORs the flag over each warp's rows
  // only, so a warp whose rows are all above the block's first key skips
  // its math (no barrier: the loads stay outside). Q K^T and the rest are
  // two `scf.if`s, so that --attn-pipeline still issues the next block's
  // loads after Q K^T, on two flags, both marked true over the program
  // (attn.program_live): Q K^T's, so that a warpgroup's wgmma needs no
  // thread-block OR; the rest's stays per warp where its P V is per warp,
  // and is true where P V is the warpgroup's wgmma. (Exact f32: one flag
  // for both, unmarked, whose P V is the thread block's; see qkLiveFlag.)
  if (masked && liveFlag && !userMask()) {
    Value qkLive =
        buildCausalLiveCheck(col0, qkLiveFlag ? qkLiveFlag : liveFlag,
                             /*programLive=*/bool(qkLiveFlag));
    auto qk = scf::IfOp::create(b, loc, qkLive, /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPoint(qk.thenBlock()->getTerminator());
      buildContraction();
    }
    Value live = qkLiveFlag ? buildCausalLiveCheck(col0, liveFlag,
                                                   /*programLive=*/true)
                            : qkLive;
    auto rest = scf::IfOp::create(b, loc, live, /*withElseRegion=*/false);
    b.setInsertionPoint(rest.thenBlock()->getTerminator());
    buildScoreScaleAndMasks(col0, masked);
  } else if (skipCheck) {
    visibility.maskSizes.clear();
    auto maskType = cast<MemRefType>(op.getMask().getType());
    for (int64_t d = 0; d < maskType.getRank(); ++d)
      visibility.maskSizes.push_back(dim(op.getMask(), d));
    Value live = buildLiveCheck(kb, col0);
    auto ifOp = scf::IfOp::create(b, loc, live, /*withElseRegion=*/false);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  }
  if (op.getBlockMap() && op.hasVariant()) {
    // A data-reading mask_mod's block map: a removed block is skipped.
    Value live = isLiveClass(loadBlockClass(kb));
    auto ifOp = scf::IfOp::create(b, loc, live, /*withElseRegion=*/false);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  }
  if (classifyMaskMod) {
    // A mask_mod classified per block: a block whose pairs it all drops is
    // skipped (its loads stay ahead for the pipeliner), and a whole block
    // whose pairs it all keeps needs no mask (see buildScores).
    auto [canKeep, canDrop] = buildModClass(col0);
    auto ifOp = scf::IfOp::create(b, loc, canKeep, /*withElseRegion=*/false);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    modCanDrop = canDrop;
  }
  if (loadsUnderCheck)
    loadTiles();
  if (masked && liveFlag && !userMask()) {
    // Scores built above.
  } else if (pendingClass) {
    buildMapScores(col0);
  } else {
    buildScores(col0, masked);
  }
  modCanDrop = Value();

  Value negInf = f32Const(-std::numeric_limits<double>::infinity());
  Value zeroF = f32Const(0.0);
  // Rows with every key masked so far keep m = -inf; exp2 then uses 0 as
  // the reference so that alpha and P are 0, not NaN.
  auto reference = [&](OpBuilder &nb, Location l, Value m) {
    Value isNegInf =
        arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ, m, negInf);
    return arith::SelectOp::create(nb, l, isNegInf, zeroF, m).getResult();
  };

  // m_new = max(m, rowmax(S)) (maximumf propagates NaN to its row only).
  linalg::CopyOp::create(b, loc, ValueRange{mRow}, ValueRange{mNewRow});
  generic(ValueRange{sTile}, ValueRange{mNewRow}, {map(2, {0, 1}), map(2, {0})},
          {IteratorType::parallel, IteratorType::reduction},
          [&](OpBuilder &nb, Location l, ValueRange args) {
            yieldValue(nb, l,
                       arith::MaximumFOp::create(nb, l, args[1], args[0]));
          });
  // The reference max is updated lazily: a row keeps it until its max
  // exceeds it by more than 2^kLazyRescaleLog2 in P's units, so P <= 2^8
  // (f16/bf16 and the f32 sums hold that) and alpha is exactly 1 for rows
  // that keep it, which lets the GPU lowering skip the rescale of acc.
  // The final acc / l is the same softmax: every term of a row shares the
  // row's reference.
  //   grow   = rowmax > m + threshold;  m_new = grow ? rowmax : m
  //   offset = -e * mu (mu = m_new, 0 for -inf)
  //   alpha  = grow ? exp2(e * m + offset) : 1;  P = exp2(e * S + offset)
  // with e = c when the scale is folded (S is unscaled), else 1.
  constexpr double kLazyRescaleLog2 = 8.0;
  double expScale = foldScale ? scaleLog2e : 1.0;
  Value e = f32Const(expScale), negE = f32Const(-expScale);
  Value threshold = f32Const(kLazyRescaleLog2 / expScale);
  Value oneF = f32Const(1.0);
  // The exponent e * x + offset, offset = -round(e * mu). Rounding e * x before
  // adding the offset makes it exactly 0 at x = mu, whatever the scores' size;
  // alpha always takes that form (one per row), and so does P for f32 inputs.
  // 16-bit kernels fuse P's into one fma (FlashAttention-2's form, one
  // instruction a score fewer; docs/GPU.md, The online softmax on the GPU):
  // every P of a row then shares the factor 2^r, r = e * mu - round(e * mu),
  // which the quotient acc / l cancels while |r| < 1 (|e * mu| < 2^24), but
  // which past 2^27 overflows P's 16-bit rounding (docs/AttnPasses.md). Fused
  // for f32 too, rows of scores past 2^32 were inf / inf = NaN.
  auto exponent = [&](OpBuilder &nb, Location l, Value x, Value offset,
                      bool fused) {
    if (foldScale && fused)
      return math::FmaOp::create(nb, l, x, e, offset).getResult();
    if (foldScale)
      x = arith::MulFOp::create(nb, l, x, e);
    return arith::AddFOp::create(nb, l, x, offset).getResult();
  };
  bool fuseP = elementType != f32;
  generic(ValueRange{mNewRow}, ValueRange{mRow, alphaRow, offsetRow},
          {map(1, {0}), map(1, {0}), map(1, {0}), map(1, {0})},
          {IteratorType::parallel},
          [&](OpBuilder &nb, Location l, ValueRange args) {
            Value rowMax = args[0], m = args[1];
            Value grow = arith::CmpFOp::create(
                nb, l, arith::CmpFPredicate::OGT, rowMax,
                arith::AddFOp::create(nb, l, m, threshold));
            Value mNew = arith::SelectOp::create(nb, l, grow, rowMax, m);
            Value offset =
                foldScale
                    ? arith::MulFOp::create(nb, l, reference(nb, l, mNew), negE)
                          .getResult()
                    : arith::NegFOp::create(nb, l, reference(nb, l, mNew))
                          .getResult();
            Value alpha = arith::SelectOp::create(
                nb, l, grow,
                math::Exp2Op::create(nb, l, exponent(nb, l, m, offset, false)),
                oneF);
            linalg::YieldOp::create(nb, l, ValueRange{mNew, alpha, offset});
          });
  // P = exp2(e * S + offset), in place of S.
  generic(ValueRange{offsetRow}, ValueRange{sTile},
          {map(2, {0}), map(2, {0, 1})},
          {IteratorType::parallel, IteratorType::parallel},
          [&](OpBuilder &nb, Location l, ValueRange args) {
            yieldValue(nb, l,
                       math::Exp2Op::create(
                           nb, l, exponent(nb, l, args[1], args[0], fuseP))
                           .getResult());
          });
  // l = alpha * l + rowsum(P).
  generic(ValueRange{alphaRow}, ValueRange{lRow}, {map(1, {0}), map(1, {0})},
          {IteratorType::parallel},
          [&](OpBuilder &nb, Location l, ValueRange args) {
            yieldValue(
                nb, l,
                arith::MulFOp::create(nb, l, args[1], args[0]).getResult());
          });
  generic(ValueRange{sTile}, ValueRange{lRow}, {map(2, {0, 1}), map(2, {0})},
          {IteratorType::parallel, IteratorType::reduction},
          [&](OpBuilder &nb, Location l, ValueRange args) {
            yieldValue(
                nb, l,
                arith::AddFOp::create(nb, l, args[1], args[0]).getResult());
          });
  // acc = alpha * acc + P V, with P rounded to the input type as the tensor
  // cores see it (f16/bf16).
  generic(
      ValueRange{alphaRow}, ValueRange{accTile}, {map(2, {0}), map(2, {0, 1})},
      {IteratorType::parallel, IteratorType::parallel},
      [&](OpBuilder &nb, Location l, ValueRange args) {
        yieldValue(nb, l,
                   arith::MulFOp::create(nb, l, args[1], args[0]).getResult());
      });
  generic(
      ValueRange{sTile, vTile}, ValueRange{accTile},
      {map(3, {0, 2}), map(3, {2, 1}), map(3, {0, 1})},
      {IteratorType::parallel, IteratorType::parallel, IteratorType::reduction},
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value p = args[0];
        if (elementType != f32)
          p = arith::ExtFOp::create(
              nb, l, f32,
              arith::TruncFOp::create(nb, l, elementType, p).getResult());
        Value prod = arith::MulFOp::create(nb, l, p, extend(nb, l, args[1]));
        yieldValue(nb, l,
                   arith::AddFOp::create(nb, l, args[2], prod).getResult());
      });
}

LogicalResult mlir::attn::expandBlockAttention(RewriterBase &rewriter,
                                               BlockAttentionOp op) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  // Block buffers are `memref.alloca`s in the program body: the program grid
  // (scf.forall) is their allocation scope.
  ProgramBuilder(rewriter, op.getLoc(), op).build();
  rewriter.eraseOp(op);
  return success();
}

namespace {
struct ExpandBlockAttentionPattern : public OpRewritePattern<BlockAttentionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(BlockAttentionOp op,
                                PatternRewriter &rewriter) const override {
    return expandBlockAttention(rewriter, op);
  }
};

struct AttnOnlineSoftmaxPass
    : public attn::impl::AttnOnlineSoftmaxBase<AttnOnlineSoftmaxPass> {
  using AttnOnlineSoftmaxBase::AttnOnlineSoftmaxBase;

  void runOnOperation() override {
    int64_t count = 0;
    getOperation().walk([&](BlockAttentionOp) { ++count; });
    RewritePatternSet patterns(&getContext());
    populateAttnOnlineSoftmaxPatterns(patterns);
    GreedyRewriteConfig config;
    config.enableFolding(false);
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      return signalPassFailure();
    numExpanded += count;
  }
};
} // namespace

void mlir::attn::populateAttnOnlineSoftmaxPatterns(
    RewritePatternSet &patterns) {
  patterns.add<ExpandBlockAttentionPattern>(patterns.getContext());
}
