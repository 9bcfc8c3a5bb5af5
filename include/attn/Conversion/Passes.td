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

    With `wgmma` on an `sm_90a` kernel whose warps form whole warpgroups of
    16-row warps, `Q K^T` is instead one `wgmma.mma_async` m64nNk{8,16} per
    k step for each warpgroup, K read from shared memory in the core-matrix
    layout (128-byte swizzled where rows are whole 128-byte atoms: one L2
    request per 8 lanes of its copies) and Q too, or, for tf32 with head
    dim 64-128, Q's fragments from registers. tf32 `P V` also runs on
    wgmma: P from the accumulator registers of S, V copied into a
    transposed, K-major core-matrix tile. Each is issued and waited for in
    place, except the next block's scores of an `--attn-pipeline`
    scores-ahead loop (`attn.scores_ahead`): those are waited for where they
    are copied into S, after this block's softmax and `P V` (which then
    stays on `mma.sync` for tf32). A kernel with such loops runs its `Q K^T`
    on wgmma without the `wgmma` option; `--attn-to-nvvm` schedules them by
    default for f32 kernels at head dim 64-128 and 16-bit ones at head dim
    128 (`scores-ahead=auto`): the seed's kernels are 4-4.5% faster for it
    at T=512 (docs/Wgmma.md).

    With `wgmma-16bit` (the default), 16-bit kernels on `sm_90a` whose warps
    form whole warpgroups of 16-row warps, at head dims 64 and 128, run both
    products on wgmma without the `wgmma` option: `Q K^T` by descriptors,
    `P V` with P converted in registers as wgmma's A and V read N-major by
    descriptor from its 128-byte swizzled tile (no transposed copy), each
    issued and waited for in place (the next block's scores of a
    scores-ahead loop complete with it).

    Each kernel records the host arguments it takes (`attn.kernel_args`) and
    its dynamic shared memory (`attn.shared_memory_bytes`) for the launch
    manifest.
  }];
  let options = [
    Option<"wgmma", "wgmma", "bool", /*default=*/"false",
           "Q K^T (and tf32 P V) on wgmma (sm_90a) where the kernel's "
           "shape allows it">,
    Option<"wgmmaSixteenBit", "wgmma-16bit", "bool", /*default=*/"true",
           "On sm_90a: 16-bit Q K^T and P V on wgmma in place where the "
           "kernel's warps form whole warpgroups of 16-row warps (P from "
           "registers, V read N-major by descriptor): 1.2-1.5x faster than "
           "mma.sync on the H200 (docs/Wgmma.md); false keeps mma.sync">,
    Option<"tensorCopies", "tensor-copies", "std::string",
           /*default=*/"\"auto\"",
           "On sm_90+: which tiles (the 128-byte swizzled ones only wgmma "
           "reads, tf32's Q and padded V) one thread loads with TMA tensor "
           "copies (cp.async.bulk.tensor) onto an mbarrier per slot, the "
           "kernel then taking a tensor map argument per tile (manifest "
           "version 3): 'auto' (the default: K and V of the 16-bit wgmma "
           "kernels, and Q, K and V of the tf32 ones, whose V tile of "
           "padded rows goes by one box a block and whose Q, swizzled as "
           "K, by one box per 128-byte atom; 0-11% faster), 'all' "
           "(also a tf32 K tile whose V cannot go so, slower alone; 'true' "
           "says the same), or 'none' ('false'); docs/Wgmma.md">,
    Option<"warpSpecialize", "warp-specialize", "bool", /*default=*/"false",
           "On sm_90a, in a kernel whose async copies are all tensor copies "
           "and whose warps form whole warpgroups: a second, producer "
           "warpgroup issues the copies (setmaxnreg moves its registers to "
           "the consumers) and the consumers release each slot on an "
           "'empty' mbarrier instead of a thread block barrier "
           "(docs/Wgmma.md, 'A producer warpgroup'; opt-in, measured slower)">
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
