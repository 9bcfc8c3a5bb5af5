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

#endif // ATTN_CONVERSION_PASSES_TD
