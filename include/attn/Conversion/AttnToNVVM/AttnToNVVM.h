//===- AttnToNVVM.h - block-level attention IR to GPU kernels ---*- C++ -*-===//
//
// Part of the attn-mlir project.
//
// The two halves of `--convert-attn-to-nvvm`, callable on their own:
//
//  1. outlineProgramGrid: the program grid (`scf.forall` over batch, head and
//     query block, made by --attn-tile) becomes a `gpu.func` in a
//     `gpu.module`, one thread block per program, launched by
//     `gpu.launch_func` from the host function.
//  2. distributeProgram: inside that kernel, the block buffers and the block
//     math (`linalg` ops on block buffers, made by --attn-online-softmax) are
//     mapped onto warps and threads: K/V/Q tiles to padded shared memory,
//     score and accumulator blocks to mma.sync accumulator fragments in
//     registers, row statistics to per-row registers, contractions to
//     `nvgpu.mma.sync`, row reductions to quad shuffles.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_ATTNTONVVM_ATTNTONVVM_H
#define ATTN_CONVERSION_ATTNTONVVM_ATTNTONVVM_H

#include "attn/Conversion/AttnToNVVM/Options.h"
#include "attn/Dialect/Attn/IR/AttnOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace attn {

/// Name of the `gpu.func` attribute listing, for each kernel argument, the
/// index of the host function argument it is (kResultArgCode - r: result r
/// of the host function, 0 the output, 1 the log-sum-exp;
/// kWorkspaceArgCode - k above kTensorMapArgCode: the workspace named by
/// entry k of `attn.kernel_workspaces`; kTensorMapArgCode - k: the tensor map
/// of entry k of `attn.kernel_tensor_maps`).
inline constexpr llvm::StringLiteral kKernelArgsAttrName = "attn.kernel_args";
inline constexpr int32_t kResultArgCode = -1;
inline constexpr int32_t kWorkspaceArgCode = -100;
inline constexpr llvm::StringLiteral kKernelWorkspacesAttrName =
    "attn.kernel_workspaces";
/// Name of the `gpu.func` attribute listing the TMA descriptors (tensor maps)
/// it takes: for each, `{arg = i, box = array<i64: ...>, swizzle = s}`, the
/// kernel argument (a memref) it describes, the box it copies (outermost
/// first) and the swizzle in bytes. The argument itself is a generic pointer
/// to the 128-byte CUtensorMap in device memory (upstream's convention for
/// `nvgpu.tma.create.descriptor`).
inline constexpr llvm::StringLiteral kKernelTensorMapsAttrName =
    "attn.kernel_tensor_maps";
/// The kKernelArgsAttrName code of the first tensor map (entry k: this - k).
inline constexpr int32_t kTensorMapArgCode = -1000;
/// Name of the `gpu.func` attribute holding its dynamic shared memory bytes.
inline constexpr llvm::StringLiteral kSharedBytesAttrName =
    "attn.shared_memory_bytes";

/// The role of an op the Distributor emits for warp specialization
/// (WarpRoles.cpp): "producer" (only the producer warpgroup runs it) or
/// "consumer" (only the consumers do).
inline constexpr llvm::StringLiteral kWarpRoleAttrName = "attn.warp_role";
/// Marks a `gpu.barrier` whose only purpose is that every thread is done
/// with the slots the copies after it refill (a pipelined loop's head, a
/// prologue's barrier): under warp specialization the empty mbarriers
/// order the refill instead.
inline constexpr llvm::StringLiteral kRefillBarrierAttrName =
    "attn.refill_barrier";
/// Marks the wait of a read for a tensor-copied slot's phase (TensorCopy.cpp),
/// which warp specialization finds the program's last reads by.
inline constexpr llvm::StringLiteral kTensorCopyWaitAttrName =
    "attn.tensor_copy_wait";

/// Outlines `grid` (which must carry `attn.config`) into a kernel of
/// `gpu.module` `moduleName` and replaces it by a `gpu.launch_func`: one
/// thread block runs one program, query block gridDim.x - 1 - blockIdx.x,
/// head blockIdx.y, batch blockIdx.z.
FailureOr<gpu::GPUFuncOp> outlineProgramGrid(RewriterBase &rewriter,
                                             scf::ForallOp grid,
                                             StringRef moduleName);

/// Outlines the classification grid of `--attn-mask-block-map` (tagged
/// `attn.mask_block_map`) into a kernel of `gpu.module` `moduleName`: one
/// thread block of 128 threads per map entry (grid x = key block, y = query
/// block, z = mask batch * mask head); the threads split the block's
/// (row, key) pairs, OR their flags across the block (`bar.red.or`) and
/// thread 0 stores the class. Replaces the grid by a `gpu.launch_func`.
FailureOr<gpu::GPUFuncOp> outlineMaskMapGrid(RewriterBase &rewriter,
                                             scf::ForallOp grid,
                                             StringRef moduleName);

/// Outlines the grid that merges split-KV's partial results (tagged
/// `attn.split_combine`, buildSplitCombine) into a kernel of `gpu.module`
/// `moduleName`, launched after the programs: one block of 128 threads per
/// query row (grid x = query row, y = head, z = batch), the threads taking
/// the value columns, thread 0 the row's log-sum-exp. Replaces the grid by a
/// `gpu.launch_func`.
FailureOr<gpu::GPUFuncOp> outlineSplitCombineGrid(RewriterBase &rewriter,
                                                  scf::ForallOp grid,
                                                  StringRef moduleName);

/// Rewrites each block-map row scan of `kernel` (`attn.block_row_scan`)
/// into a loop over steps of 32 blocks, one class per lane, combined with
/// two warp ballots a step (part of distributeProgram).
LogicalResult distributeBlockRowScans(RewriterBase &rewriter,
                                      gpu::GPUFuncOp kernel);

/// Which tiles TMA tensor copies load (--convert-attn-to-nvvm's
/// tensor-copies): none; or `auto`, K and V of the 16-bit wgmma kernels, and
/// Q, K and V of the tf32 ones where V's padded rows go by a tensor copy too
/// (their f32 K alone was slower).
enum class TensorCopyMode { None, Auto };

/// The mode named `name` ("none", "auto"), or nothing.
std::optional<TensorCopyMode> parseTensorCopyMode(StringRef name);

/// Maps the block-level IR inside `kernel` onto warps and threads, with
/// what `options` allows beyond the plain mapping (exact f32 contractions
/// where the kernel carries `precision = ieee`). Returns the dynamic shared
/// memory it needs in bytes.
FailureOr<int64_t> distributeProgram(RewriterBase &rewriter,
                                     gpu::GPUFuncOp kernel,
                                     KernelConfigAttr config,
                                     const ConvertAttnToNVVMOptions &options);

} // namespace attn
} // namespace mlir

#endif // ATTN_CONVERSION_ATTNTONVVM_ATTNTONVVM_H
