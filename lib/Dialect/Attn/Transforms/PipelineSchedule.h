//===- PipelineSchedule.h - the schedule of --attn-pipeline -----*- C++ -*-===//
//
// Part of the attn-mlir project.
//
// Shared by Pipeline.cpp (the schedule and expansion of the key loops) and
// ScoresAhead.cpp (the loops that compute the next block's scores ahead).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_DIALECT_ATTN_TRANSFORMS_PIPELINESCHEDULE_H
#define ATTN_LIB_DIALECT_ATTN_TRANSFORMS_PIPELINESCHEDULE_H

#include "attn/Dialect/Attn/Transforms/Transforms.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/SetVector.h"

namespace mlir {
namespace attn {
namespace detail {

/// The block tile `v` is, or views: a 2-d `memref.alloca`.
memref::AllocaOp tileOf(Value v);

/// The ops of `loop`'s body that are `loads` or that they depend on.
SetVector<Operation *> loadSlice(scf::ForOp loop, ArrayRef<Operation *> loads);

/// The tiles `loads` copy into, in order.
SmallVector<Operation *> copiedTiles(ArrayRef<Operation *> loads);

/// Annotates the top-level ops of `loop`'s body with their `stage` (each
/// op has one) and the loop with `numStages`. An op that a later stage also
/// uses is cloned for that stage (users before operands, so that a clone's
/// operands get cloned in turn): no value crosses stages.
void annotateStages(RewriterBase &rewriter, scf::ForOp loop,
                    DenseMap<Operation *, int64_t> stage, int64_t numStages);

/// The scores contraction `scores-ahead` moves one block ahead: right after
/// the loads (pure ops between), `S = 0; S += A * K^T` with S a register
/// block (a 2-d alloca), K a tile the loads fill and A not one; nothing
/// else in the loop reads K's tile.
struct ScoresAhead {
  linalg::FillOp fill;
  linalg::GenericOp contraction;
  /// The loads of K's tile (stage 0); the other loads are stage 1.
  SmallVector<Operation *> keyLoads;
};

/// The scores contraction of `loop` (whose body starts with `loads`) that
/// scores-ahead can move, if it has one.
std::optional<ScoresAhead> findScoresAhead(scf::ForOp loop,
                                           ArrayRef<Operation *> loads);

/// Whether `mode` asks for `loop` to compute its scores ahead: with Tf32,
/// when its tiles are f32 and its program's Q K^T runs on wgmma (the GPU
/// lowering's conditions: sm_90a, 16-row warps in whole warpgroups, not
/// `precision = ieee`), where the next block's scores run on while this
/// block's math does; on mma.sync the schedule alone only costs registers.
/// (scheduleKeyLoops also asks a head dim of 64-128 of Tf32.)
bool wantsScoresAhead(scf::ForOp loop, ArrayRef<Operation *> loads,
                      ScoresAheadMode mode);

/// The stages of a scores-ahead loop (see scheduleKeyLoops): K's loads and
/// what they need in stage 0; the other loads, the scores of the next block
/// (into a second register block) and what they need in stage 1; the rest
/// in stage 2; then, in stage 1 at the end, the copy of the next block's
/// scores into S. Ops that later stages also use are cloned. Annotates the
/// loop with `attn.pipeline_stages = 3` and `attn.scores_ahead`.
void annotateScoresAhead(RewriterBase &rewriter, scf::ForOp loop,
                         ArrayRef<Operation *> loads, ScoresAhead ahead);

/// The rows `copy` copies into its tile (a constant for a whole tile), or
/// null if unknown.
OpFoldResult copiedRows(linalg::CopyOp copy);

/// `copy` limited to its first `select(pred, rows, 0)` rows: a copy of an
/// iteration past the end copies nothing. Returns the new copy (null for a
/// destination not of rank 2).
Operation *predicateCopy(RewriterBase &rewriter, linalg::CopyOp copy,
                         Value pred);

/// `loop` (whose body starts with `loads`) continues the scores-ahead loop
/// `before` in a chain: when `loop`'s first block is whole, `before`'s K
/// loads ran on into it and the last iteration of `before` computed its
/// scores into the scores tile, which nothing writes until `loop` does.
/// Puts `loop`'s zero fill and contraction of that tile (the same Q K^T)
/// under `scf.if` (tagged `attn.scores_handed`), off in its first iteration
/// when `before` ran and that block is whole. Returns false (and changes
/// nothing) when `loop` has no such contraction.
bool handOverScores(RewriterBase &rewriter, scf::ForOp before,
                    ScoresAhead ahead, scf::ForOp loop,
                    ArrayRef<Operation *> loads);

} // namespace detail
} // namespace attn
} // namespace mlir

#endif // ATTN_LIB_DIALECT_ATTN_TRANSFORMS_PIPELINESCHEDULE_H
