//===- AttnAttrs.td - attn dialect attributes --------------*- tablegen -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNATTRS_TD
#define ATTN_DIALECT_ATTN_IR_ATTNATTRS_TD

include "attn/Dialect/Attn/IR/AttnDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Causal alignment
//===----------------------------------------------------------------------===//

def Attn_CausalKind : I32EnumAttr<"CausalKind", "causal mask alignment", [
    // Query i sees key j when j <= i (PyTorch's is_causal).
    I32EnumAttrCase<"TopLeft", 0, "top_left">,
    // Query i sees key j when j <= i + Tk - Tq (FlashAttention's).
    I32EnumAttrCase<"BottomRight", 1, "bottom_right">
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::attn";
}

def Attn_CausalAttr : EnumAttr<Attn_Dialect, Attn_CausalKind, "causal"> {
  let summary = "causal masking and its alignment when Tq != Tk";
  let assemblyFormat = "`<` $value `>`";
}

//===----------------------------------------------------------------------===//
// Matmul precision for f32 inputs
//===----------------------------------------------------------------------===//

def Attn_PrecisionKind : I32EnumAttr<"PrecisionKind",
    "matmul precision for f32 inputs", [
    // Tensor cores' f32 mode: operands rounded to tf32 (10-bit mantissa).
    I32EnumAttrCase<"TF32", 0, "tf32">,
    // Full IEEE f32 products and sums.
    I32EnumAttrCase<"IEEE", 1, "ieee">
  ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::attn";
}

def Attn_PrecisionAttr : EnumAttr<Attn_Dialect, Attn_PrecisionKind,
                                  "precision"> {
  let summary = "matmul precision for f32 inputs (tf32 or ieee)";
  let assemblyFormat = "`<` $value `>`";
}

//===----------------------------------------------------------------------===//
// Sliding window
//===----------------------------------------------------------------------===//

def Attn_WindowAttr : AttrDef<Attn_Dialect, "Window"> {
  let mnemonic = "window";
  let summary = "the keys a query row sees around its diagonal";
  let description = [{
    Query i sees key j when `i + off - left <= j <= i + off + right`, with
    `off` the causal offset (`Tk - Tq` under
    `#attn.causal<bottom_right>`, else 0). -1 leaves that side unbounded.

    ```mlir
    #attn.window<left = 1024, right = 0>
    ```
  }];
  let parameters = (ins "int64_t":$left, "int64_t":$right);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// Kernel config
//===----------------------------------------------------------------------===//

def Attn_KernelConfigAttr : AttrDef<Attn_Dialect, "KernelConfig"> {
  let mnemonic = "config";
  let summary = "the kernel parameters chosen for one attention";
  let description = [{
    Chosen once by `--attn-tile` (from the element type, the head dims and
    the target; see `selectKernelConfig`), overridable by its options, and
    read by every later pass:

    - `block_m`: query rows per program (one program per batch, head and
      query block);
    - `block_n`: keys per step of the loop over key/value blocks;
    - `num_warps`, `num_stages`: warps per program and shared-memory stages
      of the K/V pipeline (GPU targets);
    - `target`: `cpu` or a CUDA chip `sm_XY` with an optional `a` or `f`
      suffix, sm_80 or newer (such as `sm_90a`).

    On a CUDA chip each warp owns whole 16-row tiles of the program and the
    scores come in 8-column tiles: `block_m` must be a multiple of
    16 * `num_warps` and `block_n` a multiple of 8. The verifier names the
    field; `--attn-tile` reports a config its options would make invalid
    at the `attn.attention` it was for.

    ```mlir
    #attn.config<block_m = 64, block_n = 64, num_warps = 4, num_stages = 2, target = "sm_90a">
    ```
  }];
  let parameters = (ins "int64_t":$block_m, "int64_t":$block_n,
                        "int64_t":$num_warps, "int64_t":$num_stages,
                        StringRefParameter<"target name">:$target);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // ATTN_DIALECT_ATTN_IR_ATTNATTRS_TD
