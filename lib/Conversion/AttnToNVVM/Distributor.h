//===- Distributor.h - block IR onto threads (private) ----------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
// The state shared by Distribute.cpp (buffers, elementwise math, stores),
// Reduction.cpp (row reductions), Copy.cpp (tile loads, fills), Pipeline.cpp
// (cp.async), Contraction.cpp (mma.sync and FMA contractions) and Wgmma.cpp
// (wgmma contractions) of distributeProgram; see Distribute.cpp for the
// mapping.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_CONVERSION_ATTNTONVVM_DISTRIBUTOR_H
#define ATTN_LIB_CONVERSION_ATTNTONVVM_DISTRIBUTOR_H

#include "attn/Conversion/AttnToNVVM/AttnToNVVM.h"
#include "attn/Dialect/Attn/Transforms/Transforms.h"
#include "attn/Runtime/Facts.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

namespace mlir {
namespace attn {
namespace detail {
/// Where a block buffer lives: shared memory, mma accumulator fragments,
/// per-row registers, or one register per thread holding a value uniform
/// over the thread block (a 0-d buffer; the block-skip flag of a mask
/// tensor is uniform over the warp where the math it guards is per warp).
enum class Layout { Shared, Acc, Row, Scalar };

struct Buffer {
  Layout layout;
  MemRefType type;
  Value storage;
  int64_t rows = 0, cols = 0, ld = 0;
  /// Shared buffers: the byte address of element (0, 0), as an index.
  Value base;
  /// Multi-buffered tiles (`slots x rows x cols` after --attn-pipeline):
  /// the number of slots, all of them as one `slots x rows x ld` view, and
  /// the bytes of a slot. A view of one slot also has the slot (an index).
  int64_t slots = 1;
  Value stages, stage;
  int64_t stageBytes = 0;
  /// Shared buffers: the byte offset of the view in dynamic shared memory.
  int64_t offset = -1;
  /// A wgmma operand: 8-row x 16-byte core matrices, each 128 contiguous
  /// bytes, row-major over (row / 8, col / (16 / bytes)); no padding.
  bool coreMatrix = false;
  /// A coreMatrix tile in the 128-byte swizzled layout instead (wgmma's
  /// swizzle mode 1): rows of 128-byte atoms, atom a (bytes [128 a, 128 a +
  /// 128) of every row) a `rows x 128` block of its own, 8-row groups 1024
  /// bytes apart, and in row r the 16-byte chunk j at chunk j ^ (r % 8).
  /// A warp's copy of whole rows then reads 128 contiguous global bytes and
  /// writes 8 banks apart per 8 lanes: one L2 request per 8 lanes, where the
  /// plain core-matrix order (8 lanes down 8 rows) made one per lane. Its
  /// base is aligned to 1024 bytes at run time (the pattern repeats there).
  bool swizzle = false;
  /// Shared buffers (not core-matrix): the bytes that pad each row.
  int64_t padBytes = 16;
  /// A row-padded tile that tensor copies load (TensorCopy.cpp: V of tf32
  /// `P V`): TMA writes shared memory from 128-byte aligned addresses, so
  /// its base is aligned at run time in the region of the swizzled tiles,
  /// past the start of its views: every access goes through the base
  /// (sharedAddress), none through the views.
  bool realigned = false;
  /// A single tf32 Q tile that one tensor copy per 128-byte atom loads in
  /// the 128-byte swizzle (selectRowTensorCopies; also `swizzle`, not
  /// `coreMatrix`): its rows unpadded, every box in bounds, and its
  /// fragment reads, through sharedAddress, still conflict-free.
  bool swizzledRows = false;
  /// A tf32 Q tile whose fragments renumber the head dim so that K's are
  /// read 16 bytes at a time (Distributor::tf32Column, Tf32Fragments.cpp).
  bool wideHeadDim = false;
  /// An accumulator that tf32 P V writes transposed (O^T = V^T P^T,
  /// Tf32Fragments.cpp): element (dm, qn, i, j) of a lane, at
  /// Distributor::transposedIndex, holds row qn * 8 + 2 (lane % 4) + j of
  /// the warp and column dm * 16 + 2 (lane / 4) + i.
  bool transposedAcc = false;
  /// Swizzled and realigned tiles: the offset of `base` from the 1024-byte
  /// aligned base of the swizzled tiles.
  int64_t alignedOffset = -1;
};

/// The shared-memory byte address (an index) of element (row, col) of `buf`.
Value sharedAddress(OpBuilder &b, Location loc, const Buffer &buf, Value row,
                    Value col);

/// The (row, col) of 16-byte chunk `idx` of a copy into `to` (`vec`
/// elements a chunk): row-major, or for core-matrix tiles 8 consecutive
/// chunks down the 8 rows of one core matrix, so that 8 threads write 128
/// contiguous bytes.
std::pair<Value, Value> chunkPosition(OpBuilder &b, Location loc,
                                      const Buffer &to, Value idx, int64_t vec);

class Distributor {
public:
  Distributor(RewriterBase &b, gpu::GPUFuncOp kernel, KernelConfigAttr config,
              const ConvertAttnToNVVMOptions &options, bool ieee,
              TensorCopyMode tensorCopies)
      : b(b), kernel(kernel), config(config), options(options), ieee(ieee),
        tensorCopies(tensorCopies) {}

  FailureOr<int64_t> run();
  /// Read the shared memory's base afresh for each wgmma descriptor
  /// (uniformSharedAddress).
  bool freshSharedBase = false;

private:
  // Geometry.
  Value cIndex(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value rowOf(int64_t mt, int64_t i) {
    return arith::AddIOp::create(b, loc, warpRow0, cIndex(mt * 16 + 8 * i))
        .getResult();
  }
  Value rowOfLane(int64_t mt, int64_t i) {
    return arith::AddIOp::create(b, loc, rowOf(mt, i), quadRow);
  }
  Value colOfLane(int64_t nt, int64_t j) {
    return arith::AddIOp::create(b, loc, quadCol2, cIndex(nt * 8 + j));
  }
  /// The column of the tf32 A (and B) registers of k step kt, half `half`
  /// (k = lane % 4 + 4 half) of Q K^T with A tile `a` (wideHeadDim or not).
  Value tf32Column(const Buffer &a, int64_t kt, int64_t half);
  int64_t accIndex(const Buffer &buf, int64_t mt, int64_t nt, int64_t i,
                   int64_t j) {
    return ((mt * (buf.cols / 8) + nt) * 2 + i) * 2 + j;
  }
  Value loadPrivate(const Buffer &buf, int64_t index) {
    return memref::LoadOp::create(b, loc, buf.storage,
                                  ValueRange{cIndex(index)});
  }
  void storePrivate(const Buffer &buf, int64_t index, Value v) {
    memref::StoreOp::create(b, loc, v, buf.storage, ValueRange{cIndex(index)});
  }
  void barrier() { gpu::BarrierOp::create(b, loc); }
  /// A barrier after which copies refill slots (kRefillBarrierAttrName).
  void refillBarrier() {
    auto op = gpu::BarrierOp::create(b, loc);
    if (warpSpecialized)
      op->setAttr(kRefillBarrierAttrName, b.getUnitAttr());
  }
  /// Makes this thread's generic-proxy writes to shared memory (stores,
  /// completed cp.async) visible to wgmma, which reads through the async
  /// proxy; a barrier after it publishes them to the warpgroup.
  void fenceForAsyncProxy();
  /// `address` (in the swizzled tiles' region) from the dynamic shared
  /// memory's symbol read at the point of use, for a wgmma descriptor.
  Value uniformSharedAddress(Value address);

  // Analysis.
  LogicalResult classify();
  /// The block buffer `v` is a view of, with the view's rows and (a view of
  /// a block buffer's first `cols` columns: a padded head dim) columns.
  Buffer *lookup(Value v, OpFoldResult *rows = nullptr,
                 int64_t *cols = nullptr);

  // Rewrites.
  LogicalResult rewriteFill(linalg::FillOp op);
  /// Rewrites `copy` together with the global -> shared copies that follow
  /// it with only pure ops in between (K then V); marks them in `done`.
  LogicalResult rewriteCopyRun(linalg::CopyOp copy,
                               DenseSet<Operation *> &done);
  /// True for a zero fill of a shared buffer that a copy into the same
  /// buffer follows: the GPU copy zeroes the rows it does not load.
  bool isZeroFillBeforeCopy(linalg::FillOp fill, Buffer *buf);
  LogicalResult rewriteCopy(linalg::CopyOp op);
  /// Rewrites the `attn.async_copy` `copy` with the async copies of the same
  /// rows that follow it with only pure ops (and the zero fills they make
  /// redundant) in between; marks them in `done`.
  LogicalResult rewriteAsyncCopyRun(linalg::CopyOp copy,
                                    DenseSet<Operation *> &done);
  /// The run of copies that starts at `copy`: the copies after it that
  /// `joins` accepts, with only pure ops and the zero fills the copies make
  /// redundant in between, all marked in `done`; `rewrite` rewrites the run,
  /// then the fills are erased.
  LogicalResult
  rewriteRun(linalg::CopyOp copy, function_ref<bool(linalg::CopyOp)> joins,
             DenseSet<Operation *> &done,
             function_ref<LogicalResult(ArrayRef<linalg::CopyOp>)> rewrite);
  /// Global -> shared tile copies, issued together.
  LogicalResult rewriteTileLoads(ArrayRef<linalg::CopyOp> copies);

  // Pipelining (Pipeline.cpp) of the loops --attn-pipeline expanded: their
  // `attn.async_copy` loads become cp.async, one commit group each, and each
  // iteration waits for its own groups at its head.
  /// Waits at the head of every pipelined loop.
  void waitInPipelinedLoops();
  /// Tiles whose fragments are cached (cacheFragments) but whose copy is a
  /// prefetch (`attn.async_copy` before the loops): before the first
  /// pipelined loop after the copy, waits for the tile's copy (not the
  /// copies issued after it: K and V of the loop's first blocks) and caches
  /// them.
  void cachePrefetchedFragments();
  /// The scores-ahead prologue contractions (outside their loop) and the
  /// commit groups issued after the copy of the K block they read, which
  /// they need not wait for (selectPrologueWaits; 0: wait for all).
  void selectPrologueWaits();
  DenseMap<Operation *, int64_t> prologueGroups;

  // Tensor copies (TensorCopy.cpp): on sm_90+, the multi-buffered tiles in
  // the 128-byte swizzle that only wgmma reads (K, 16-bit V) and tf32's V
  // tile of padded rows are loaded by one thread with
  // `cp.async.bulk.tensor` (one per 128-byte atom, or one box of padded
  // rows) onto an mbarrier of their slot, and each contraction that reads a
  // slot waits for the phase of the slot's latest fill instead of for the
  // copies of every thread.
  /// Chooses the tiles, adds the kernel's tensor map arguments, reserves the
  /// mbarriers and initializes them and the fill counts at the kernel's
  /// entry.
  LogicalResult selectTensorCopies();
  /// Before allocation, unless `tensor-copies=none`: marks `realigned` the
  /// row-padded tiles that tensor copies can load whole (one box a block,
  /// one pad wider than the tile, whose pad columns TMA fills with zeros as
  /// out of bounds): multi-buffered ones that only `mma.sync` contractions
  /// read (V of tf32 `P V`), and f32 tiles of one slot whose fragments each
  /// warp caches in registers once (Q of the tf32 kernels).
  void selectRowTensorCopies();
  /// Whether `buf` (a shared tile) is loaded only by async copies of blocks
  /// of one kernel argument into its slots and read only by contractions
  /// that `reads` accepts (zero fills aside); collects them.
  bool tensorCopyUses(Value tile, SmallVectorImpl<linalg::CopyOp> &copies,
                      SmallVectorImpl<Operation *> &reads,
                      function_ref<bool(Operation *, unsigned)> accepts);
  /// Before `read` (a contraction, at the builder's point): the wait for
  /// the slot of a tensor-copied tile it reads, if any.
  void waitForTensorCopy(Operation *read);
  /// The tensor copy of `copy` into `to`, by thread 0 (at the builder's
  /// point, where the copy has rows).
  void emitTensorCopy(linalg::CopyOp copy, Buffer &to);
  /// A tile loaded by tensor copies: its tensor map (a kernel argument), the
  /// kernel argument it is a view of, the box's element columns, the shared
  /// offset of its mbarriers (8 bytes a slot) and each slot's fill count (a
  /// register: a one-element alloca).
  struct TensorCopyTile {
    Value map;
    unsigned arg = 0;
    int64_t boxCols = 0;
    /// The bytes one block's copies bring (whole boxes, pads included).
    int64_t txBytes = 0;
    int64_t barriers = -1;
    /// Under warp specialization, per slot an mbarrier the consumer warps
    /// arrive on once they are done with the slot (WarpRoles.cpp).
    int64_t emptyBarriers = -1;
    SmallVector<Value> fills;
    /// Under warp specialization, per slot the fills the consumer warps
    /// have released (each warp arrives once per fill).
    SmallVector<Value> released;
  };
  /// Whether `op` is an async copy into a tile tensor copies load.
  bool isTensorCopy(Operation *op);
  /// Whether every async copy of the kernel is a tensor copy.
  bool onlyTensorCopies();
  /// Decides warpSpecialized and allocates and initializes the empty
  /// mbarriers of the tensor-copied tiles (WarpRoles.cpp).
  void selectWarpSpecialization();
  /// At a tensor copy into slot `index` of `entry` whose fill count is now
  /// `fills`: the consumers' release of the slot and the producer's wait
  /// for it, each tagged with its role (WarpRoles.cpp).
  void emitSlotHandover(const TensorCopyTile &entry, Value index, Value fills);
  /// Under warp specialization, at the current insertion point: the
  /// consumers release slot `index` of `entry` (its latest fill) unless they
  /// have released it already (WarpRoles.cpp).
  void releaseTensorCopySlot(const TensorCopyTile &entry, Value index);
  /// The value of `counts` (a private counter per slot) for slot `slot`.
  Value slotCount(ArrayRef<Value> counts, Value slot);
  /// The fills of slot `index` of `entry` the consumers have released.
  Value releasedFills(const TensorCopyTile &entry, Value index);
  /// A consumer warp's release of slot `index`, whose fill count is `fills`:
  /// bar.warp.sync, lane 0 arrives on the slot's empty mbarrier.
  void arriveOnSlot(const TensorCopyTile &entry, Value index, Value fills);
  /// Both that and wgmmaReadsOnlyTensorCopies, before the rewrites
  /// (waitInPipelinedLoops): no copy wait or proxy fence precedes a wgmma.
  bool onlyTensorCopiesForWgmma = false;
  /// Whether every shared tile a wgmma reads is loaded by tensor copies (or
  /// read once into cached fragments): then no generic-proxy write precedes
  /// a wgmma's read, and no `fence.proxy.async` is needed before it.
  bool wgmmaReadsOnlyTensorCopies();
  /// The fill count of slot `slot` (an index) of `entry`.
  Value tensorCopyFills(const TensorCopyTile &entry, Value slot);
  /// By the tile's alloca (the multi-buffered block buffer).
  llvm::MapVector<Value, TensorCopyTile> tensorCopyTiles;
  /// The wait of every thread for the latest fill of slot `index` of
  /// `entry` (at the builder's point).
  void waitForTensorCopyPhase(const TensorCopyTile &entry, Value index);
  /// The waits for the tiles of one slot that tensor copies load (Q), at
  /// the builder's point.
  void waitForSingleTensorCopies();
  /// The wgmma contractions that read such a tile, and the tile.
  DenseMap<Operation *, Value> tensorCopyReads;
  /// The shared pointer to 8-byte entry `index` of the array at byte
  /// `offset` of dynamic shared memory (mbarriers).
  Value sharedEntry(int64_t offset, Value index);
  /// Consecutive `attn.async_copy`s with the same rows (K and V of one
  /// block): cp.async of the valid rows (zero-filling the others) when there
  /// are any, then a commit per copy.
  LogicalResult rewriteAsyncCopies(ArrayRef<linalg::CopyOp> copies);
  /// Allocates `buf` in shared memory (`numStages` slots of it), at the
  /// end of what is allocated, or at byte offset `at` (memory it reuses).
  void allocateSharedView(int64_t rows, int64_t cols, Type elt, Buffer &buf,
                          int64_t numStages = 1, int64_t at = -1);
  /// Pipelined loops whose prologue has its barrier.
  DenseSet<Operation *> prologueBarriers;
  LogicalResult rewriteGeneric(linalg::GenericOp op);
  LogicalResult rewriteContraction(linalg::GenericOp op);
  /// Which contractions go to wgmma (sm_90a, whole warpgroups of 16-row
  /// warps): 16-bit ones at head dims 64 and 128 (P V with V read N-major),
  /// and every Q K^T-shaped one of a kernel with scores-ahead loops; marks
  /// their operand tiles coreMatrix.
  void selectWgmmaOperands();
  /// `c += a * b^T` as wgmma.mma_async m64nNk{8,16} with both operands in
  /// shared memory (core-matrix layout) or A from registers (tf32 Q's cached
  /// fragments), one warpgroup per 64 rows; or, for 16-bit P in registers,
  /// `c += a * b` with b read N-major.
  LogicalResult contractWithWgmma(Buffer &a, Buffer &bBuf, Buffer &c, int64_t k,
                                  bool async = false);
  /// Contractions selectWgmmaOperands chose.
  DenseSet<Operation *> wgmmaContractions;
  /// Accumulators (by storage) of a wgmma issued and not yet waited for:
  /// scores-ahead contractions, waited for at their copy into S.
  DenseSet<Value> asyncAccumulators;
  void contractWithMMA(Buffer &a, Buffer &bBuf, Buffer &c, bool bTransposed,
                       int64_t k);
  /// Transposed accumulators (Buffer::transposedAcc): the register index,
  /// row (in the program's block) and column of element (dm, qn, i, j).
  int64_t transposedIndex(int64_t dm, int64_t qn, int64_t i, int64_t j) const {
    return ((dm * 2 * rowTiles + qn) * 2 + i) * 2 + j;
  }
  Value transposedRow(int64_t qn, int64_t j);
  Value transposedCol(int64_t dm, int64_t i);
  /// The store of a transposed accumulator into the 2-d global `dst` (the
  /// rows below `rows`), straight from registers in pairs of adjacent
  /// columns.
  void storeTransposedPairs(linalg::GenericOp op, Buffer &src, Value dst,
                            Value rows);
  /// The value of row buffer `row` for row qn * 8 + 2 (lane % 4) + j of the
  /// warp: a shuffle from the lane that holds it.
  Value rowValueForTransposed(const Buffer &row, int64_t qn, int64_t j);
  /// Elementwise math whose accumulators are transposed (row factors
  /// shuffled in); erases `op`.
  LogicalResult rewriteTransposedElementwise(linalg::GenericOp op,
                                             ArrayRef<Buffer *> operands);
  /// tf32 contractions whose operands are read 16 bytes at a time
  /// (Tf32Fragments.cpp): Q K^T over a renumbered head dim (16-byte loads
  /// of K), and P V into a transposed accumulator (8-byte loads of V).
  /// Marks the buffers; pads K's rows.
  void selectWideTf32Operands();
  void contractWithWideTf32(Buffer &a, Buffer &bBuf, Buffer &c,
                            bool bTransposed, int64_t k);
  DenseSet<Operation *> wideContractions;

  /// The tf32 A registers of row tile mt at k step kt of Q K^T (k wide):
  /// from the fragment cache, or read from shared memory.
  SmallVector<Value> loadTf32A(Buffer &a, int64_t mt, int64_t kt, int64_t k);
  /// The tf32 A registers of row tile mt at k step kt of a shared tile:
  /// (r, c), (r + 8, c), (r, c + 4), (r + 8, c + 4), c = lane % 4 + 8 kt.
  SmallVector<Value> loadTf32AFragment(Buffer &a, int64_t mt, int64_t kt);
  /// Shared tiles whose tf32 A fragments are read into registers once,
  /// after the copy that fills them (outside the key loops), by
  /// `cacheFragments`: the Q tile of tf32 kernels, whose fragments would
  /// otherwise be re-read from shared memory every key block.
  void selectCachedFragments();
  /// Whether tf32 A fragments of k columns fit the register budget.
  bool cachesFragments(int64_t k) const;
  /// Reads the fragments into their registers; with `refill`, again (the
  /// other branch of an `scf.if` around the key loops).
  void cacheFragments(Buffer &tile, bool refill = false);
  /// The candidates (by shared view) and their k sizes; then the register
  /// arrays that hold their fragments.
  DenseMap<Value, int64_t> fragmentTiles;
  DenseMap<Value, Buffer> fragmentCache;
  void contractWithFMA(Buffer &a, Buffer &bBuf, Buffer &c, bool bTransposed,
                       int64_t k);
  Value loadShared(Buffer &buf, Value row, Value col, int64_t width);
  /// `ldmatrix` of `num` 8x8 16-bit matrices of `buf`; this lane gives the
  /// row start (row, col). Returns `num` i32 registers.
  SmallVector<Value> loadMatrix(Buffer &buf, Value row, Value col, int num,
                                bool transpose);
  LogicalResult rewriteStore(linalg::GenericOp op, Buffer &src);
  /// The store of a row buffer (the log-sum-exp) into the 1-d global
  /// `dst`: the first lane of each quad stores its rows.
  LogicalResult rewriteRowStore(linalg::GenericOp op, Buffer &src);
  LogicalResult rewriteElementwise(linalg::GenericOp op);
  /// True for `out[i][j] = out[i][j] * in[i]` on an accumulator-layout
  /// output and a row buffer (the rescale of acc by alpha).
  bool isRowScale(linalg::GenericOp op, ArrayRef<Buffer *> operands);
  /// Row reductions (Reduction.cpp): a tree in each lane, then the quad.
  LogicalResult rewriteRowReduction(linalg::GenericOp op);
  /// Row buffers that only start at zero, are scaled by row factors and
  /// summed into in the program order `work`, and are read only after all
  /// their sums (the softmax denominator): each lane keeps the sum of its
  /// own columns, and the quad sums them before the first other read.
  void selectDeferredRowSums(ArrayRef<Operation *> work);
  /// Sums the quads' partials of the deferred row sums that `op` is the
  /// first other reader of, before `op`.
  void materializeRowSums(Operation *op);
  DenseSet<Value> deferredRowSums;
  DenseMap<Operation *, SmallVector<Value>> materializeBefore;
  /// An OR of an i1 over a whole block into a Scalar buffer: in-thread over
  /// the owned elements, then across the thread block (bar.red.or).
  LogicalResult rewriteBlockAny(linalg::GenericOp op, Buffer &out);
  /// Whether the flag that `op` (an any-reduction into a 0-d buffer) writes
  /// only guards `scf.if`s whose block math is per warp (no tile copies,
  /// shared fills, barriers, wgmma or ieee contractions), so that each warp
  /// may take its own decision.
  bool isWarpUniformFlag(linalg::GenericOp op);
  /// tanh of an f32 (a softcap): tanh.approx.f32, or for exact f32
  /// kernels from ex2.approx and an IEEE division (Distribute.cpp).
  Value emitFastTanh(Value x);
  Value emitExactTanh(Value x);
  /// Clones the body of `op` with `args` for its block arguments and
  /// `indices` for linalg.index; returns the yielded values.
  SmallVector<Value> cloneBody(linalg::GenericOp op, ValueRange args,
                               ArrayRef<Value> indices);
  /// Cooperative loop over `rows x cols` elements of a shared buffer in
  /// chunks of `vec` elements: fn(row, col).
  void forEachSharedChunk(int64_t rows, int64_t cols, int64_t vec,
                          function_ref<void(Value, Value)> fn);

  RewriterBase &b;
  gpu::GPUFuncOp kernel;
  KernelConfigAttr config;
  const ConvertAttnToNVVMOptions &options;
  /// Exact f32 contractions (`precision = ieee`): FMAs, no tensor cores.
  bool ieee;
  /// Which tiles TMA tensor copies load (options.tensorCopies, TensorCopy.cpp).
  TensorCopyMode tensorCopies;
  /// Warp specialization (options.warpSpecialize) possible in this kernel
  /// (selectWarpSpecialization, WarpRoles.cpp).
  bool warpSpecialized = false;
  Location loc = UnknownLoc::get(kernel.getContext());

  int64_t numThreads = 0, rowsPerWarp = 0, rowTiles = 0;
  Value tid, warpRow0, quadRow, quadCol, quadCol2;
  // ldmatrix row addresses: lane % 8, (lane / 8) % 2, lane / 16, lane % 16.
  Value laneMod8, laneBit3, laneHi, laneMod16;
  llvm::MapVector<Value, Buffer> buffers;
  /// Views of one slot of a multi-buffered tile, by (tile, slot index).
  DenseMap<std::pair<Value, Value>, Buffer> slotViews;
  /// Shared scratch for P when ieee contractions need it in shared memory.
  DenseMap<Value, Buffer> scratch;
  Value dynamicShared;
  int64_t sharedOffset = 0;
  /// The swizzled tiles' region (allocateSharedView): its first 1024-byte
  /// boundary, the bytes allocated in it, and the shared offset it ends at.
  Value swizzleBase;
  int64_t swizzleUsed = 0, swizzleEnd = 0;
};

/// The tile a view is of (through its subviews), and the slot of it for a
/// view of one slot of a multi-buffered tile (its first offset; null
/// otherwise).
std::pair<Value, OpFoldResult> tileAndSlot(Value v);

/// The indices into global view `view` of a block's row `row` and column
/// `col` (none for a row buffer's value): (row, col), or for the view of
/// packed query heads, (1, p, Tq [, X]), (0, row / Tq, row % Tq [, col]).
SmallVector<Value> getGlobalIndices(OpBuilder &b, Location loc, Value view,
                                    Value row, Value col = Value());

/// A linalg.generic of the form C[i][j] += A[i][k] * B[..] (Q K^T, P V).
bool isContraction(linalg::GenericOp op);

/// The indexing map (d0, d1, d2) -> (dx, dy) of a contraction operand.
inline AffineMap contractionMap(MLIRContext *ctx, unsigned x, unsigned y) {
  return AffineMap::get(
      3, 0, {getAffineDimExpr(x, ctx), getAffineDimExpr(y, ctx)}, ctx);
}

/// One `mma.sync.aligned.m16n8k{16,8}.row.col.f32.{f16,bf16,tf32}` on
/// registers: `aRegs` 4 and `bRegs` 2 values of vector<2xT> (T = f16/bf16)
/// or f32 (tf32), `c` 4 f32. Returns the 4 f32 of D.
SmallVector<Value> emitMma(OpBuilder &b, Location loc, Type elt,
                           ArrayRef<Value> aRegs, ArrayRef<Value> bRegs,
                           ArrayRef<Value> c);

/// Splits a kernel the Distributor prepared for warp specialization
/// (selectWarpSpecialization) into its two roles: after the entry's first
/// barrier, threads [0, consumerThreads) run the kernel without its copies,
/// refill barriers and other CTA barriers on a named barrier of their own,
/// and the next warpgroup runs, on one thread, only the copies and what
/// they depend on. Fails, leaving the kernel as it was, where that slice
/// would need anything but arithmetic, private registers and the copies
/// (WarpRoles.cpp).
LogicalResult splitWarpRoles(RewriterBase &rewriter, gpu::GPUFuncOp kernel,
                             int64_t consumerThreads);

/// Undoes the Distributor's preparation where splitWarpRoles failed: the
/// tagged handovers go, the refill barriers stay as plain barriers.
void dropWarpRoles(RewriterBase &rewriter, gpu::GPUFuncOp kernel);

/// Spins on `mbarrier.try_wait.parity` of the mbarrier at `barrier` (a
/// shared-memory pointer) until the phase of `parity` (i32) has completed
/// (TensorCopy.cpp). Returns the inline asm op.
Operation *spinOnParity(OpBuilder &b, Location loc, Value barrier,
                        Value parity);

} // namespace detail
} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_CONVERSION_ATTNTONVVM_DISTRIBUTOR_H
