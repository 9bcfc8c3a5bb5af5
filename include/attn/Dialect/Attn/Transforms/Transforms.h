//===- Transforms.h - attn transforms as free functions ---------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
// The transformations behind the attn passes, callable without the passes by
// pipelines and other compilers.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_TRANSFORMS_TRANSFORMS_H
#define ATTN_DIALECT_ATTN_TRANSFORMS_TRANSFORMS_H

#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir {
namespace attn {

/// Discardable attributes `--attn-tile` puts on each program grid
/// (`scf.forall`): the kernel config and, for f32 inputs, the precision.
inline constexpr llvm::StringLiteral kConfigAttrName = "attn.config";
inline constexpr llvm::StringLiteral kPrecisionAttrName = "attn.precision";

/// An error at `op`'s location, worded as `op->emitOpError(message)` words
/// it but without `op` printed after it: the program grids, kernels and
/// loops the passes report on span thousands of lines.
inline InFlightDiagnostic emitOpErrorAtLoc(Operation *op,
                                           const Twine &message) {
  return emitError(op->getLoc()) << "'" << op->getName() << "' op " << message;
}

/// Kernel parameters a user or an autotuner pins; 0 keeps the default.
struct KernelConfigOverrides {
  int64_t blockM = 0;
  int64_t blockN = 0;
  int64_t numWarps = 0;
  int64_t numStages = 0;
};

/// The one place that chooses block sizes, warps and stages, from the element
/// type, the head dims (D, Dv), whether a mask tensor is read, and the
/// target (`cpu`, `sm_80`, `sm_90a`, ...).
/// Fields of `overrides` that are not 0 replace the defaults. Returns null,
/// after reporting why through `emitError`, where the result is not a valid
/// config (an unknown target, or overrides that the target cannot run).
KernelConfigAttr
selectKernelConfig(function_ref<InFlightDiagnostic()> emitError,
                   MLIRContext *context, Type elementType, int64_t headDim,
                   int64_t valueHeadDim, bool hasMask, bool ieee,
                   StringRef target, const KernelConfigOverrides &overrides);

/// GQA decode packing: the number of query heads sharing a KV head that
/// `tileAttention` makes the rows of one program, or 1 (static Tq and head
/// counts, no mask tensor, no region, no window). With a Tq of 1 that is
/// all g of them (not under top_left causal); with a Tq of 2 ..
/// kMaxPackedQueryLen (no softcap either) the largest p dividing g with p *
/// Tq <= `blockM`. The programs then cover (batch, Hq / p, query block or
/// split) with p * Tq query rows.
constexpr int64_t kMaxPackedQueryLen = 16;
int64_t getQueryHeadPacking(AttentionOp op, int64_t blockM);

/// Rewrites `op` into a program grid (`scf.forall` over batch, query head and
/// query block) of `attn.block_attention` on buffers, with `config`. With
/// `splitPrograms` > 0 and a static Tq of one query block (decode), the keys
/// are split too (KeySplit.cpp): programs over (batch, query head, split)
/// and a combine grid after them. Returns the tensors that replace the op's
/// results.
FailureOr<SmallVector<Value>> tileAttention(RewriterBase &rewriter,
                                            AttentionOp op,
                                            KernelConfigAttr config,
                                            int64_t splitPrograms = 0);

/// The program slots split-KV aims to fill on `target` by default: 0 (no
/// splits) on the host, two programs per SM of a 132-SM Hopper on GPUs.
int64_t getDefaultSplitPrograms(StringRef target);

/// Patterns that tile every `attn.attention` with `selectKernelConfig`
/// (`splitPrograms` < 0: the target's default).
void populateAttnTilePatterns(RewritePatternSet &patterns, StringRef target,
                              const KernelConfigOverrides &overrides,
                              int64_t splitPrograms = -1);

/// Which keys a query row sees inside a program (SPEC.md section 1): the key
/// tail, the causal diagonal, the window and the user mask, as block IR shared
/// by
/// `--attn-online-softmax` (the scores) and `--attn-mask-block-map` (the
/// classification of mask blocks), so both read the same terms.
struct KeyVisibility {
  /// Tq and Tk.
  Value queryLen, keyLen;
  /// Query i sees key j only when j <= i + causalOffset (null: no causal).
  Value causalOffset;
  /// A window (SPEC.md section 1.1): query i sees key j only when
  /// i + windowOffset - windowLeft <= j <= i + windowOffset + windowRight;
  /// -1 leaves a side unbounded. windowOffset is the causal offset under
  /// causal, else 0 (null when both sides are unbounded).
  Value windowOffset;
  int64_t windowLeft = -1, windowRight = -1;
  /// The user mask (null: none), its sizes, and the batch and query head
  /// its broadcast dimensions (size 1) do not index.
  Value mask;
  SmallVector<Value> maskSizes;
  Value batch, head;
  /// A mask_mod (null: none), evaluated at (batch, head, i, j) clamped to
  /// the last row and key.
  Region *maskMod = nullptr;

  /// Whether query row `i` sees key `j`; for a float mask, also its value
  /// (extended to f32) in `*bias` when `bias` is not null. Rows and keys
  /// past Tq and Tk read the mask at the last row and key.
  Value buildVisible(OpBuilder &b, Location loc, Value i, Value j,
                     Value *bias) const;
  /// The term score (i, j) gets in exp2 units: log2(e) * bias (0 without a
  /// float mask) where the key is visible, else -inf.
  Value buildTerm(OpBuilder &b, Location loc, Value i, Value j) const;
};

/// The value `region` (a score_mod or mask_mod) yields for `args`, its ops
/// cloned at the insertion point of `b`.
Value inlineModifier(OpBuilder &b, Region &region, ValueRange args);

/// Whether the mask_mod `region` reads only index arithmetic and compares,
/// which `--attn-online-softmax` classifies per block on intervals at
/// compile time; a mask_mod that is not gets a per-launch block map.
bool isClassifiableMaskMod(Region &region);

/// The causal offset of `op` (0 for top_left, Tk - Tq for bottom_right;
/// null without causal).
Value buildCausalOffset(OpBuilder &b, Location loc, BlockAttentionOp op,
                        Value queryLen, Value keyLen);

/// The key blocks a program of `op` visits under its causal limit and
/// window, in closed form from its query block (affine.max / affine.min of
/// the query block, Tq and Tk): every key a row of the program sees lies in
/// blocks [start, end); every row sees every key of the blocks in
/// [fullStart, fullEnd) (no key tail, causal or window cut), which are
/// clamped so that start <= fullStart <= fullEnd and, for start <= end,
/// fullEnd <= end. A mask tensor or a mask_mod is not looked at.
struct KeyBlockRange {
  Value start, fullStart, fullEnd, end;
};
/// `queryBlock` is the program's block of rows (its sequence's, under
/// cu_seqlens).
KeyBlockRange buildKeyBlockRange(OpBuilder &b, Location loc,
                                 BlockAttentionOp op, Value queryBlock,
                                 Value queryLen, Value keyLen);

/// Split-KV (KeySplit.cpp). The number of key splits of a launch, as index
/// arithmetic of its sizes: min(ceil(Tk / minKeys), ceil(programs / (B *
/// Hq))), so that B * Hq * S programs fill a GPU of about `programs`
/// program slots and none reads fewer than `minKeys` keys.
Value buildNumKeySplits(OpBuilder &b, Location loc, OpFoldResult batch,
                        OpFoldResult heads, OpFoldResult keyLen,
                        int64_t minKeys, int64_t programs);
/// The grid (`scf.forall` over B x Hq x Tq) that merges the splits'
/// partial results, `partialOutput` (S x B x Hq x Tq x Dv, f32, each split's
/// normalized O) and `partialLse` (S x B x Hq x Tq), into `output` and, when
/// not null, `lse`, by their log-sum-exps (exact). Tagged
/// kSplitCombineAttrName.
scf::ForallOp buildSplitCombine(OpBuilder &b, Location loc, Value partialOutput,
                                Value partialLse, Value numSplits, Value output,
                                Value lse);
/// On a program grid whose programs split the keys: the split rule
/// `array<i64: min_keys, programs>` (buildNumKeySplits), which the launch
/// evaluates.
inline constexpr llvm::StringLiteral kKeySplitsAttrName = "attn.key_splits";
/// On the grid that merges the splits (launched after the programs).
inline constexpr llvm::StringLiteral kSplitCombineAttrName =
    "attn.split_combine";
/// On the combine grid's loop over value columns: the GPU splits it over
/// the threads of a block.
inline constexpr llvm::StringLiteral kThreadLoopAttrName = "attn.thread_loop";

/// Discardable attribute of `--attn-mask-block-map`: on the grid that
/// classifies the mask's blocks (the config of the programs it serves), and
/// on the workspace buffer it writes (its name, e.g. "mask_block_map").
inline constexpr llvm::StringLiteral kMaskMapAttrName = "attn.mask_block_map";
inline constexpr llvm::StringLiteral kWorkspaceAttrName = "attn.workspace";
/// On the classification grid's loop over a block's (row, key) pairs: a
/// loop whose iteration results are ORs (the GPU splits it over threads).
inline constexpr llvm::StringLiteral kBlockReduceAttrName = "attn.block_reduce";

/// On the loop of a program that scans its row of the block map for its
/// live range (i32 from 0 by 1 over one class load, yielding the first live
/// block, one past the last, and the end of the zero-term run from the
/// first): the GPU runs it 32 classes a warp step.
inline constexpr llvm::StringLiteral kBlockRowScanAttrName =
    "attn.block_row_scan";

/// On a row OR into a block-skip flag (a linalg.generic): the OR over all of
/// the program's rows is known to be true (a causal diagonal block inside a
/// loop that holds only the blocks the program's last row sees). A lowering
/// that ORs over a warp's rows still skips that warp's work; one that would
/// OR over the whole program (a warpgroup's wgmma) takes true without a
/// thread-block reduction.
inline constexpr llvm::StringLiteral kProgramLiveAttrName = "attn.program_live";

/// Block classes of the map (see `attn.block_attention`): every term -inf
/// (Removed), every term 0 (Zero), the terms of a triangular mask: 0 where
/// key j <= row i + off and j < Tk, else -inf, with off the causal offset
/// (0 without causal) (Triangular), anything else (Mixed).
enum class MaskBlockClass : int8_t {
  Removed = 0,
  Zero = 1,
  Mixed = 2,
  Triangular = 3
};

/// Gives `op` (a program of a grid, with a mask and no block map yet) a
/// block map: allocates it before the grid, fills it with a classification
/// grid (`scf.forall` over mask batch, mask head, query block and key
/// block) and frees it after. Returns the classification grid.
FailureOr<scf::ForallOp> addMaskBlockMap(RewriterBase &rewriter,
                                         BlockAttentionOp op);

/// Expands `op` into the online-softmax loop over key/value blocks (see the
/// `--attn-online-softmax` pass description).
LogicalResult expandBlockAttention(RewriterBase &rewriter, BlockAttentionOp op);

/// Patterns that expand every `attn.block_attention`.
void populateAttnOnlineSoftmaxPatterns(RewritePatternSet &patterns);

/// Discardable attributes of `--attn-pipeline`: the stage count of a key
/// loop to pipeline and the stage of each op of its body (schedule); the
/// stage count of an expanded loop and the loads the expansion moved ahead
/// (the GPU issues them asynchronously).
inline constexpr llvm::StringLiteral kPipelineStagesAttrName =
    "attn.pipeline_stages";
inline constexpr llvm::StringLiteral kPipelinedAttrName = "attn.pipelined";
inline constexpr llvm::StringLiteral kPipelineStageAttrName =
    "attn.pipeline_stage";
inline constexpr llvm::StringLiteral kAsyncCopyAttrName = "attn.async_copy";
/// A key loop whose first blocks the loop before it loads (its last
/// iterations issue them): its expansion emits no prologue loads. And the
/// loads such a loop before it took from it, predicated on the end of the
/// chain rather than on their own loop's end.
inline constexpr llvm::StringLiteral kPipelineChainedAttrName =
    "attn.pipeline_chained";
inline constexpr llvm::StringLiteral kChainLoadAttrName = "attn.chain_load";
/// On the memref.load of a paged cache's table entry (Paged.cpp): the
/// address of a K/V block. The pipeliner moves it with the block's loads,
/// as the pure arithmetic of their addresses (its index is clamped into the
/// table, so a load ahead of the last block reads a valid entry).
inline constexpr llvm::StringLiteral kPageLookupAttrName = "attn.page_lookup";
/// Pure ops and page lookups: what the K/V loads' addresses are made of.
inline bool isAddressOp(Operation *op) {
  return isPure(op) || op->hasAttr(kPageLookupAttrName);
}
/// `scores-ahead`: a key loop that computes the scores of the next block
/// (S' = Q K'^T) while the softmax and P V of this one run, and the ops of
/// that contraction (the zero fill of S', the contraction, and the copy
/// S' -> S at the end of the iteration). On the GPU a wgmma contraction so
/// marked is waited for only at that copy.
inline constexpr llvm::StringLiteral kScoresAheadAttrName = "attn.scores_ahead";
/// On the `scf.if` that skips the scores contraction of the first block of a
/// key loop chained after a scores-ahead loop, whose last iteration computed
/// them (see --attn-pipeline).
inline constexpr llvm::StringLiteral kScoresHandedAttrName =
    "attn.scores_handed";

/// Which consecutive key loops `--attn-pipeline` chains (see its
/// description): none, those whose tiles are 32-bit, or all.
enum class LoopChaining { None, F32, All };

/// The schedule of `--attn-pipeline` for the key loops under `root`:
/// multi-buffers their K/V tiles into `numStages` slots and annotates each
/// loop and the ops of its body with their stages. `numStages` <= 0 takes
/// the `num_stages` of each loop's program grid. Returns the number of loops
/// scheduled.
/// Which loops `--attn-pipeline` schedules scores-ahead (see its
/// description): none; those of f32 tiles (head dim 64-128) in programs
/// whose Q K^T runs on wgmma (sm_90a, 16-row warps in whole warpgroups, not
/// ieee); those and, in such programs, the loops of 16-bit tiles at head dim
/// 128 (auto); or all.
enum class ScoresAheadMode { None, Tf32, Auto, All };

/// With `scoresAhead`, a two-stage loop whose block math starts with
/// `S = 0; S += A K^T` (K one of its tiles) is instead scheduled in three
/// stages: K's loads two blocks ahead, the other loads and the scores of
/// the next block one ahead (into a second register block, copied into S
/// at the end of the iteration), the rest of the math on this block; its
/// tiles keep two slots, and it is chained only to a loop after it.
FailureOr<int64_t>
scheduleKeyLoops(RewriterBase &rewriter, Operation *root, int64_t numStages,
                 LoopChaining chaining = LoopChaining::F32,
                 ScoresAheadMode scoresAhead = ScoresAheadMode::None);
/// The expansion of `--attn-pipeline`: rewrites one loop annotated by
/// scheduleKeyLoops into prologue + pipelined loop (scf::pipelineForLoop,
/// epilogue predicated, not peeled). Returns the new loop.
FailureOr<scf::ForOp> expandPipelinedLoop(RewriterBase &rewriter,
                                          scf::ForOp loop);
/// Marks `attn.async_copy` the loads of 16-bit block tiles before the key
/// loops (Q) whose tile only pipelined loops read: the GPU issues them with
/// the first K/V blocks and the loops' waits cover them. (f32 tiles stay
/// synchronous: the GPU lowering reads their tf32 fragments after the copy.)
void markPrefetchedTiles(Operation *root);

} // namespace attn
} // namespace mlir

#endif // ATTN_DIALECT_ATTN_TRANSFORMS_TRANSFORMS_H
