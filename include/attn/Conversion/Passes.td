//===- Passes.td - attn conversion passes ------------------*- tablegen -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_PASSES_TD
#define ATTN_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertAttnToLLVMCPU : Pass<"convert-attn-to-llvm-cpu", "ModuleOp"> {
  let summary = "Lower the bufferized block-level attention IR to LLVM for the host";
  let description = [{
    Takes the block-level IR that `--attn-tile` and `--attn-online-softmax`
    produce, once bufferized, and lowers it to the LLVM dialect for the host:
    the program grid (`scf.forall`) becomes nested loops, the block math
    (`linalg.generic`, `linalg.fill`, `linalg.copy` on block buffers) becomes
    loops, each program's buffers live in one stack scope, bf16 conversions
    are expanded to integer arithmetic, and every function gets a C
    interface (`_mlir_ciface_<name>`, memref descriptors by pointer) for
    `attn-run` and other hosts.

    The same block IR feeds the GPU lowering, so the tiling, the online
    softmax, the masks and the tails that a GPU runs are the ones this path
    executes and checks on machines without a GPU.
  }];
  let dependentDialects = [
    "::mlir::LLVM::LLVMDialect", "::mlir::cf::ControlFlowDialect",
    "::mlir::scf::SCFDialect", "::mlir::memref::MemRefDialect",
    "::mlir::affine::AffineDialect", "::mlir::arith::ArithDialect"
  ];
}

def ConvertAttnToNVVM : Pass<"convert-attn-to-nvvm", "ModuleOp"> {
  let summary = "Map the bufferized block-level attention IR onto GPU threads";
  let description = [{
    Turns each program grid (the `scf.forall` of `--attn-tile`, expanded by
    `--attn-online-softmax` and bufferized) into a kernel: a `gpu.func` in
    the `gpu.module` `attn_kernels`, one thread block of `32 * num_warps`
    threads per program, launched by a `gpu.launch_func` that replaces the
    grid. Inside the kernel the block buffers and the block math are mapped
    onto warps and threads with explicit fragment layouts:

    - Q, K and V tiles in dynamic shared memory, rows padded by 16 bytes
      (64 for tf32 K), filled with 16-byte vector loads (tails zeroed);
    - the score block S/P and the accumulator in registers, in the
      `mma.sync` m16n8 accumulator layout (each warp owns 16-row tiles);
    - the running max and sum in registers, one value per owned row;
    - `Q K^T` and `P V` as `nvvm.mma.sync` (m16n8k16 for f16/bf16, tf32
      m16n8k8 for f32; FMAs for f32 with `precision = ieee`), P converted to
      the input type in registers and fed to `P V` directly; tf32 K
      fragments read in 16-byte loads over a renumbered head dim, and tf32
      `P V` transposed (O^T = V^T P^T: P's registers as they sit, V in
      8-byte loads; docs/GPU.md);
    - row max and row sum as in-thread reductions plus two quad shuffles;
    - `exp2` as `ex2.approx`; masks on diagonal and tail blocks only, as the
      block IR says.

    On `sm_90a`, in a kernel whose warps form whole warpgroups of 16-row
    warps, wgmma takes over:

    - 16-bit kernels at head dims 64 and 128 run both products on wgmma:
      `Q K^T` by descriptors, `P V` with P converted in registers as
      wgmma's A and V read N-major by descriptor from its 128-byte swizzled
      tile (no transposed copy), each issued and waited for in place;
    - a kernel with `--attn-pipeline` scores-ahead loops
      (`attn.scores_ahead`; by default the f32 kernels at head dim 64-128
      and the 16-bit ones at head dim 128) runs its `Q K^T` on wgmma, the
      next block's scores waited for where they are copied into S, after
      this block's softmax and `P V` (which stays on `mma.sync` for tf32:
      tf32 wgmma reads B K-major only).

    wgmma operands live in shared memory in the core-matrix layout
    (128-byte swizzled where rows are whole 128-byte atoms: one L2 request
    per 8 lanes of their copies), or, for tf32 Q at head dim 64-128, as
    fragments in registers. On sm_90+ the tiles that only wgmma reads, and
    the tf32 kernels' Q and padded V, come by TMA tensor copies
    (`tensor-copies`).

    Each kernel records the host arguments it takes (`attn.kernel_args`) and
    its dynamic shared memory (`attn.shared_memory_bytes`) for the launch
    manifest.
  }];
  let options = [
    Option<"tensorCopies", "tensor-copies", "std::string",
           /*default=*/"\"auto\"",
           "On sm_90+: 'auto' loads the tiles only wgmma reads (K and V of "
           "the 16-bit wgmma kernels) and the tf32 kernels' Q, K and V with "
           "TMA tensor copies (cp.async.bulk.tensor, one thread, onto an "
           "mbarrier per slot; the kernel takes a tensor map per tile, "
           "manifest version 3); 'none' keeps every thread's cp.async, and "
           "the launch encodes no tensor map">,
    Option<"warpSpecialize", "warp-specialize", "bool", /*default=*/"false",
           "On sm_90a, in a kernel whose async copies are all tensor copies "
           "and whose warps form whole warpgroups: a producer warpgroup "
           "issues the copies (setmaxnreg moves its registers to the "
           "consumers) and the consumers release each slot on an 'empty' "
           "mbarrier instead of a thread block barrier (opt-in; the base of "
           "the warp-specialized schedule)">
  ];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::nvgpu::NVGPUDialect",
    "::mlir::vector::VectorDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect"
  ];
}

#endif // ATTN_CONVERSION_PASSES_TD
