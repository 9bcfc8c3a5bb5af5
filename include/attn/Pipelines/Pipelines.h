//===- Pipelines.h - named attn-mlir pass pipelines -------------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
// The flows of docs/Passes.md as named pipelines (`--attn-to-llvm-cpu`,
// later `--attn-to-nvvm`), callable from C++ by tools and embedders.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_PIPELINES_PIPELINES_H
#define ATTN_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;

namespace attn {

/// Options of `--attn-to-llvm-cpu`: the kernel config overrides of
/// `--attn-tile` (0 keeps the default chosen from dtype and head dim).
struct AttnToLLVMCPUOptions
    : public PassPipelineOptions<AttnToLLVMCPUOptions> {
  PassOptions::Option<int64_t> blockM{*this, "block-m",
                                      llvm::cl::desc("Query rows per program"),
                                      llvm::cl::init(0)};
  PassOptions::Option<int64_t> blockN{*this, "block-n",
                                      llvm::cl::desc("Keys per inner block"),
                                      llvm::cl::init(0)};
};

/// attn.attention on tensors -> tiled, online-softmax block IR -> bufferized
/// -> LLVM dialect. Every func.func gets `llvm.emit_c_interface`: a function
/// `@F(tensor..., tensor...) -> tensor` becomes callable from C as
/// `void _mlir_ciface_F(Desc4 *result, Desc *arg0, Desc *arg1, ...)` where
/// each Desc is an MLIR strided memref descriptor
/// `{T *allocated, T *aligned, int64_t offset, int64_t sizes[R],
///   int64_t strides[R]}` (identity layout, row-major). The result buffer is
/// allocated with malloc by the compiled code.
void buildAttnToLLVMCPUPipeline(OpPassManager &pm,
                                const AttnToLLVMCPUOptions &options);

/// Registers the named pipelines with the global registry.
void registerAttnPipelines();

} // namespace attn
} // namespace mlir

#endif // ATTN_PIPELINES_PIPELINES_H
