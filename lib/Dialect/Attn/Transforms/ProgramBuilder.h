//===- ProgramBuilder.h - the expansion of one program ----------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
// The builder behind `--attn-online-softmax` (see OnlineSoftmax.cpp), shared
// by OnlineSoftmax.cpp (the key loops and the softmax step) and
// ProgramMasks.cpp (masks, block-skip checks and the mask block map).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_DIALECT_ATTN_TRANSFORMS_PROGRAMBUILDER_H
#define ATTN_LIB_DIALECT_ATTN_TRANSFORMS_PROGRAMBUILDER_H

#include "attn/Dialect/Attn/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir {
namespace attn {
namespace detail {

/// Terminates a linalg.generic body with one value.
inline void yieldValue(OpBuilder &b, Location loc, Value value) {
  linalg::YieldOp::create(b, loc, ValueRange{value});
}

using utils::IteratorType;

/// Builds the expansion of one `attn.block_attention`. All block buffers are
/// allocated once per program; the key loop reuses them.
class ProgramBuilder {
public:
  ProgramBuilder(OpBuilder &b, Location loc, BlockAttentionOp op)
      : b(b), loc(loc), op(op), f32(b.getF32Type()),
        elementType(op.getQuery().getType().getElementType()) {
    KernelConfigAttr config = op.getConfig();
    blockM = config.getBlockM();
    blockN = config.getBlockN();
    headDim = op.getQuery().getType().getDimSize(3);
    valueHeadDim = op.getValue().getType().getDimSize(3);
    constexpr double log2e = 1.4426950408889634;
    scaleLog2e = op.getScale().convertToDouble() * log2e;
    Value mask = op.getMask();
    floatMask =
        mask && !cast<MemRefType>(mask.getType()).getElementType().isInteger(1);
    // A softcap or a score_mod needs the scores in natural units: S is
    // scaled before them and the exponent takes log2(e) * S.
    transformScores = op.getSoftcap() || !op.getScoreMod().empty();
    foldScale = scaleLog2e > 0.0 && !transformScores;
  }

  void build();

private:
  // Small helpers.
  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value f32Const(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  Value dim(Value memref, int64_t d) {
    return memref::DimOp::create(b, loc, memref, d);
  }
  Value allocBuffer(ArrayRef<int64_t> shape, Type type) {
    return memref::AllocaOp::create(b, loc, MemRefType::get(shape, type));
  }
  void fill(Value buffer, Value value) {
    linalg::FillOp::create(b, loc, ValueRange{value}, ValueRange{buffer});
  }
  Value extend(OpBuilder &nb, Location l, Value v) {
    return v.getType() == f32 ? v : arith::ExtFOp::create(nb, l, f32, v);
  }
  AffineMap map(unsigned numDims, ArrayRef<unsigned> results) {
    SmallVector<AffineExpr> exprs;
    for (unsigned r : results)
      exprs.push_back(b.getAffineDimExpr(r));
    return AffineMap::get(numDims, 0, exprs, b.getContext());
  }
  linalg::GenericOp
  generic(ValueRange inputs, ValueRange outputs, ArrayRef<AffineMap> maps,
          ArrayRef<IteratorType> iterators,
          function_ref<void(OpBuilder &, Location, ValueRange)> body) {
    return linalg::GenericOp::create(b, loc, inputs, outputs, maps, iterators,
                                     body);
  }

  /// A 2-D view `source[b0, b1, row0 : row0 + rows, 0 : cols]`.
  Value rowsView(Value source, Value b0, Value b1, Value row0,
                 OpFoldResult rows, int64_t cols);
  /// A view `buffer[0 : rows]` of a row buffer, or `buffer[0 : rows, 0 :
  /// cols]` of a block buffer (cols < 0: all its columns).
  Value prefixView(Value buffer, OpFoldResult rows, int64_t cols = -1);
  /// Copies `rows` rows of `source[b0, b1, row0 ...]` into `tile`; rows past
  /// `rows` are zero when `padded`.
  void loadTile(Value source, Value b0, Value b1, Value row0, OpFoldResult rows,
                Value tile, bool padded);

  /// The loops over key blocks (with `rows` valid query rows, bn =
  /// block_n): unmasked blocks, then diagonal, tail and user-mask blocks.
  void buildKeyLoops(Value rows, Value bn);
  /// Packed sequences (cu_seqlens, Varlen.cpp): finds the program's
  /// segment by a binary search over the segments' first slots and sets
  /// queryBlock, queryLen, keyLen, queryBase, keyBase and regionBatch to
  /// its sequence's; a slot past its segment's blocks gets no rows and no
  /// keys.
  void buildSequenceLookup();
  /// `row` of the program's sequence as a row of the packed operand (itself
  /// without cu_seqlens).
  Value queryRow(Value row) {
    return queryBase ? arith::AddIOp::create(b, loc, queryBase, row) : row;
  }
  Value keyRow(Value row) {
    return keyBase ? arith::AddIOp::create(b, loc, keyBase, row) : row;
  }
  /// A paged cache (block_table, Paged.cpp): the page that holds key block
  /// `col0` (its table entry, clamped to the pool) and the block's first
  /// row in that page.
  std::pair<Value, Value> buildPageLookup(Value col0);
  /// The keys of a page ('key' dim 2 under block_table), 0 without.
  int64_t getPageSize() {
    return op.getBlockTable()
               ? cast<MemRefType>(op.getKey().getType()).getDimSize(2)
               : 0;
  }
  /// The same for an op with variants (window, softcap, score_mod,
  /// mask_mod): the blocks of buildKeyBlockRange, the full ones unmasked
  /// (none under a mask tensor or a mask_mod). In ProgramVariants.cpp.
  void buildVariantLoops();
  /// One loop over key blocks [lb, ub); `partial` (default: `masked`)
  /// when one of them may be the key tail's block.
  void buildKeyLoop(Value lb, Value ub, bool masked,
                    std::optional<bool> partial = std::nullopt);
  /// O = acc / l, stored to the output.
  void buildEpilogue(Value rows);
  /// One step of the key loop over block `kb`; `masked` blocks apply the
  /// tail, causal and user masks; `partial` ones load K and V zero-padded
  /// past Tk.
  void buildStep(Value kb, bool masked, bool partial);
  /// S = c * Q K^T, with the masks on masked blocks.
  void buildScores(Value col0, bool masked) {
    buildContraction();
    if (!op.hasVariant()) {
      buildScoreScaleAndMasks(col0, masked);
      return;
    }
    if (masked || !modCanDrop) {
      buildVariantScores(col0, masked);
      return;
    }
    // A block every row sees whole: the mask_mod's class picks its scores.
    auto ifOp = scf::IfOp::create(b, loc, modCanDrop, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    buildVariantScores(col0, /*masked=*/true);
    b.setInsertionPoint(ifOp.elseBlock()->getTerminator());
    buildVariantScores(col0, /*masked=*/false);
  }
  /// The scores of an op with variants, per element in SPEC.md section
  /// 1.1's order: scale, softcap, bias, score_mod; on masked blocks, -inf
  /// where the tail, causal, window, mask or mask_mod removes the key.
  void buildVariantScores(Value col0, bool masked);
  /// For a mask_mod of index arithmetic and compares (classifyMaskMod):
  /// whether it may keep and whether it may drop some (valid row, key) pair
  /// of the block at col0, from the region evaluated on the block's row and
  /// key intervals.
  std::pair<Value, Value> buildModClass(Value col0);
  /// S = Q K^T.
  void buildContraction();
  /// S = c * S (unless folded), with the masks on masked blocks.
  void buildScoreScaleAndMasks(Value col0, bool masked);
  /// Inside a block generic over (row, key): the query row and key index.
  std::pair<Value, Value> position(OpBuilder &nb, Location l, Value col0) {
    return {
        queryIndex(nb, l),
        arith::AddIOp::create(nb, l, col0, linalg::IndexOp::create(nb, l, 1))};
  }
  /// Inside a block generic over rows (dim 0): the row's query index, row0
  /// + row, or with packed heads (row0 = 0) row mod Tq.
  Value queryIndex(OpBuilder &nb, Location l) {
    Value row =
        arith::AddIOp::create(nb, l, row0, linalg::IndexOp::create(nb, l, 0));
    if (packedHeads == 1)
      return row;
    return arith::RemUIOp::create(nb, l, row, queryLen);
  }
  /// Packed heads: the view (1, p, Tq [, X]) of the program's p query heads
  /// in `source` (query, output, lse).
  Value headsView(Value source);
  /// Packed heads: the first p * Tq rows (and `cols` columns; a row buffer:
  /// -1) of block buffer `buffer` viewed as (1, p, Tq [, cols]), head-major
  /// as headsView.
  Value packedRowsView(Value buffer, int64_t cols = -1);
  /// addTile = the mask terms of the block at col0 (KeyVisibility::buildTerm).
  void buildMaskTerms(Value col0);
  /// live = any key of the block at col0 visible from any row: a block of a
  /// user mask whose keys are all masked out is skipped at run time. With a
  /// block map, its class says so (and whether the terms are all 0) without
  /// reading the mask; else the terms are read and reduced.
  Value buildLiveCheck(Value kb, Value col0);
  /// live = some row of the program sees key col0, the first of a causal
  /// block (then it sees a key of the block; and a row that sees any key of
  /// the block sees col0): an OR over the rows into `flag`, which the GPU
  /// lowering takes over each warp's rows. With `programLive` the OR is
  /// marked as true over the whole program (attn.program_live).
  Value buildCausalLiveCheck(Value col0, Value flag, bool programLive);
  /// ORs into `flag` over the program's rows whether a row sees key col0
  /// under `vis` (see buildCausalLiveCheck); returns the OR.
  linalg::GenericOp orRowsSeeingKey(Value col0, const KeyVisibility &vis,
                                    Value flag);
  /// The key tail and the diagonal of the block map's triangular class
  /// (key j visible from row i when j <= i + triOffset), without the mask.
  KeyVisibility triangular() const;
  /// With a block map, after the block's skip check: S and its masks by the
  /// block's class (pendingClass). With a terms flag, also sets it and
  /// leaves the insertion point in the `scf.if` on it that the rest of the
  /// step goes into.
  void buildMapScores(Value col0);
  /// S = c * S (unless folded) with -inf where the triangular class's
  /// diagonal or the key tail removes the key: a triangular block's scores.
  void buildTriangularScores(Value col0);
  /// The class of key block `kb` in the program's row of the block map.
  Value loadBlockClass(Value kb);
  /// Whether block class `cls` keeps any key (is not Removed).
  Value isLiveClass(Value cls);
  /// With a block map and pipelined key loops, from a scan of the
  /// program's map row before the loops: the first and one past the last
  /// block of [0, numVisit) the map does not remove (numVisit and 0 when
  /// it removes all), and the end of the run of zero-term blocks that
  /// starts at the first (numVisit when it reaches the end); and how many
  /// of its blocks are triangular.
  struct LiveRange {
    Value first, last, zeroEnd, triangular;
  };
  LiveRange buildLiveRange(Value numVisit);
  /// A map row is causal when its classes are those of a triangular mask
  /// (diagonal at triOffset): zero-term blocks up to `below`, triangular
  /// ones up to `visit`, removed ones after. Its mask terms are then the
  /// triangular mask's, and the program may run as a causal one.
  struct CausalRow {
    Value shaped, below, visit;
  };
  CausalRow buildCausalRowCheck(const LiveRange &range, Value rows,
                                Value numBlocks);
  /// While alive, the steps are built as a causal program's (diagonal at
  /// triOffset, no mask): the loops of a causal map row.
  class CausalRowScope {
  public:
    explicit CausalRowScope(ProgramBuilder &builder)
        : builder(builder), saved(builder) {
      builder.causalRow = true;
      builder.visibility.mask = Value();
      builder.visibility.causalOffset = builder.triOffset;
      builder.addTile = builder.termsFlag = Value();
      builder.liveFlag = builder.causalRowLiveFlag;
      builder.qkLiveFlag = builder.causalRowQkLiveFlag;
    }
    ~CausalRowScope() {
      builder.causalRow = false;
      builder.visibility = saved.visibility;
      builder.addTile = saved.addTile;
      builder.termsFlag = saved.termsFlag;
      builder.liveFlag = saved.liveFlag;
      builder.qkLiveFlag = saved.qkLiveFlag;
    }

  private:
    struct State {
      explicit State(const ProgramBuilder &p)
          : visibility(p.visibility), addTile(p.addTile),
            termsFlag(p.termsFlag), liveFlag(p.liveFlag),
            qkLiveFlag(p.qkLiveFlag) {}
      KeyVisibility visibility;
      Value addTile, termsFlag, liveFlag, qkLiveFlag;
    };
    ProgramBuilder &builder;
    State saved;
  };
  /// Whether the steps apply the user's mask with block checks and terms
  /// (not in a causal row's loops; variants read it per element).
  bool userMask() { return op.getMask() && !causalRow && !op.hasVariant(); }

  OpBuilder &b;
  Location loc;
  BlockAttentionOp op;
  Type f32, elementType;
  int64_t blockM, blockN, headDim, valueHeadDim;
  /// c = scale * log2(e); whether it is folded into the exponent (then a
  /// float mask's term t is added as t / c, see buildScoreScaleAndMasks).
  double scaleLog2e;
  bool foldScale, floatMask, transformScores;

  // Values shared by the steps.
  Value kvHead, row0, queryLen, keyLen, causalOffset;
  /// packed_heads (1 without) and the first query head of the program.
  int64_t packedHeads = 1;
  Value firstHead;
  /// The program's block of query rows (row0 = queryBlock * block_m) and
  /// the batch index the regions see: op's, or under cu_seqlens the block
  /// within the sequence and the sequence's index.
  Value queryBlock, regionBatch;
  /// Under cu_seqlens, the sequence's first query row and key in the packed
  /// operands (null otherwise).
  Value queryBase, keyBase;
  /// queryRow(row0): the program's first row in the packed operands.
  Value packedRow0;
  /// A key split's run of key blocks, [splitStart, splitEnd) (null
  /// without key_split): buildKeyLoop clamps every loop to it.
  Value splitStart, splitEnd;
  /// The diagonal offset of the block map's triangular class: the causal
  /// offset, 0 (top-left) without causal.
  Value triOffset;
  Value qTile, kTile, vTile, sTile, mRow, mNewRow, alphaRow, lRow, accTile;
  /// Per row, the exponent's addend: -e * mu (see buildStep).
  Value offsetRow;
  /// memref<i1>: the block-skip flag of masked blocks under a user mask
  /// (or of causal diagonal blocks, see buildCausalLiveCheck).
  Value liveFlag;
  /// memref<i1>: with a causal liveFlag, the flag of the diagonal blocks'
  /// Q K^T (its OR over the program marked true, see buildStep); none for
  /// exact f32, whose one flag serves both.
  Value qkLiveFlag;
  /// memref<i1>: under a block map, whether the rows see any key of the
  /// block (on the GPU: each warp's rows): by its terms for a mixed block,
  /// by the diagonal for a triangular one, true for the others. f32
  /// kernels for GPU targets only.
  Value termsFlag;
  /// Under a mask tensor: per (row, key) of the block, the term its score
  /// gets (log2(e) * bias, 0 for an i1 mask) or -inf for a removed key;
  /// read from the mask once for the block check and the scores.
  Value addTile;
  /// Which keys a row sees (its mask sizes are read per step).
  KeyVisibility visibility;
  /// Tq - 1 and Tk - 1: with variants, the regions read rows and keys
  /// clamped to them (padded rows and tail keys are masked or unused).
  Value lastRowIndex, lastKeyIndex;
  /// The program's last valid row, min(row0 + block_m, Tq) - 1.
  Value lastValidRow;
  /// Whether the mask_mod is classified per block (buildModClass); while a
  /// step is built, whether the mask_mod may drop a pair of its block.
  bool classifyMaskMod = false;
  Value modCanDrop;
  /// With a block map: the class of the current block (i8).
  Value pendingClass;
  /// Building a causal map row's loops (CausalRowScope); their diagonal
  /// blocks' skip flag (f32 GPU programs, as liveFlag of a causal one).
  bool causalRow = false;
  Value causalRowLiveFlag, causalRowQkLiveFlag;
};

} // namespace detail
} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_DIALECT_ATTN_TRANSFORMS_PROGRAMBUILDER_H
