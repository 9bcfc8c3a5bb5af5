//===- AttnDialect.td - attn dialect definition ------------*- tablegen -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNDIALECT_TD
#define ATTN_DIALECT_ATTN_IR_ATTNDIALECT_TD

include "mlir/IR/OpBase.td"

def Attn_Dialect : Dialect {
  let name = "attn";
  let cppNamespace = "::mlir::attn";
  let summary = "Attention as one op, and the block-level IR it is compiled through";
  let description = [{
    The `attn` dialect holds `attn.attention`, a whole scaled-dot-product
    attention over 4-D tensors (batch, heads, sequence, head dim) with GQA,
    causal masking and an optional additive or boolean mask, and the
    block-level ops that the compiler tiles it into before lowering to the GPU
    (NVVM) or the host (LLVM).
  }];
  let useDefaultAttributePrinterParser = 1;
  // The score_mod and mask_mod regions hold arith, math, scf and tensor ops
  // (memref at block level).
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

class Attn_Op<string mnemonic, list<Trait> traits = []>
    : Op<Attn_Dialect, mnemonic, traits>;

#endif // ATTN_DIALECT_ATTN_IR_ATTNDIALECT_TD
