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

#include "attn/Conversion/AttnToNVVM/Options.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;

namespace attn {

/// Options of `--attn-to-llvm-cpu`: the kernel config overrides of
/// `--attn-tile` (0 keeps the default chosen from dtype and head dim).
struct AttnToLLVMCPUOptions : public PassPipelineOptions<AttnToLLVMCPUOptions> {
  PassOptions::Option<int64_t> blockM{*this, "block-m",
                                      llvm::cl::desc("Query rows per program"),
                                      llvm::cl::init(0)};
  PassOptions::Option<int64_t> blockN{*this, "block-n",
                                      llvm::cl::desc("Keys per inner block"),
                                      llvm::cl::init(0)};
  PassOptions::Option<int64_t> numStages{
      *this, "num-stages",
      llvm::cl::desc("K/V pipeline stages (the loop runs in order on the CPU)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> splitPrograms{
      *this, "split-programs",
      llvm::cl::desc("--attn-tile's split-KV for a static Tq of one query "
                     "block: the programs the key splits aim for (0: none; "
                     "-1: the target's default, 0 on the host and 264 on GPUs)"),
      llvm::cl::init(-1)};
  PassOptions::Option<std::string> scoresAhead{
      *this, "scores-ahead",
      llvm::cl::desc("--attn-pipeline's scores-ahead: 'none', 'tf32' or "
                     "'all' (the host runs the schedule in order)"),
      llvm::cl::init("none")};
  PassOptions::Option<bool> maskBlockMap{
      *this, "mask-block-map",
      llvm::cl::desc("Classify a mask tensor's blocks once per launch "
                     "(--attn-mask-block-map)"),
      llvm::cl::init(true)};
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

/// The PTX ISA of `--attn-to-nvvm`'s `features` by default (up to sm_9x;
/// from sm_100 on, the chip's minimum).
constexpr const char *kDefaultPTXFeatures = "+ptx80";

/// Options of `--attn-to-nvvm`: the pipeline's own, and those of
/// `--convert-attn-to-nvvm` (`convert`; in the pipeline's text under their
/// own names, read by the pass's parser).
struct AttnToNVVMOptions : public PassPipelineOptions<AttnToNVVMOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("CUDA chip (sm_80, sm_90a, ...)"),
      llvm::cl::init("sm_90a")};
  PassOptions::Option<std::string> features{
      *this, "features",
      llvm::cl::desc("PTX features (PTX ISA version; by default +ptx80 up to "
                     "sm_9x, from sm_100 on the chip's minimum)"),
      llvm::cl::init(kDefaultPTXFeatures)};
  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("Serialization: isa (PTX), bin (cubin, runs ptxas) or "
                     "fatbin"),
      llvm::cl::init("isa")};
  PassOptions::Option<int> optLevel{*this, "opt-level",
                                    llvm::cl::desc("LLVM optimization level"),
                                    llvm::cl::init(3)};
  PassOptions::Option<int64_t> blockM{*this, "block-m",
                                      llvm::cl::desc("Query rows per program"),
                                      llvm::cl::init(0)};
  PassOptions::Option<int64_t> blockN{*this, "block-n",
                                      llvm::cl::desc("Keys per inner block"),
                                      llvm::cl::init(0)};
  PassOptions::Option<int64_t> numWarps{*this, "num-warps",
                                        llvm::cl::desc("Warps per program"),
                                        llvm::cl::init(0)};
  PassOptions::Option<int64_t> numStages{*this, "num-stages",
                                         llvm::cl::desc("K/V pipeline stages"),
                                         llvm::cl::init(0)};
  PassOptions::Option<int64_t> splitPrograms{
      *this, "split-programs",
      llvm::cl::desc("--attn-tile's split-KV for a static Tq of one query "
                     "block: the programs the key splits aim for (0: none; "
                     "-1: the target's default, 0 on the host and 264 on GPUs)"),
      llvm::cl::init(-1)};
  PassOptions::Option<std::string> scoresAhead{
      *this, "scores-ahead",
      llvm::cl::desc("--attn-pipeline's scores-ahead: the next key block's "
                     "Q K^T on wgmma in flight across this block's softmax "
                     "and P V. 'auto' (f32 programs that can run on wgmma: "
                     "sm_90a, 16-row warps in whole warpgroups, and 16-bit "
                     "ones at head dim 128), 'tf32' (the f32 ones only), "
                     "'all' or 'none'"),
      llvm::cl::init("auto")};
  PassOptions::Option<bool> maskBlockMap{
      *this, "mask-block-map",
      llvm::cl::desc("Classify a mask tensor's blocks once per launch "
                     "(--attn-mask-block-map)"),
      llvm::cl::init(true)};
  /// --convert-attn-to-nvvm's options (Conversion/Passes.td).
  ConvertAttnToNVVMOptions convert;

  /// Parses the pipeline's text: its own options, then the rest as
  /// --convert-attn-to-nvvm's into `convert`.
  LogicalResult parseFromString(StringRef text,
                                raw_ostream &errorStream = llvm::errs());
};

/// The part of `--attn-to-nvvm` that is attn-mlir's own: tile for `chip`,
/// online softmax, bufferize, map onto threads (`--convert-attn-to-nvvm`).
/// The result holds a `gpu.module` of kernels still in gpu/nvgpu/arith.
void buildAttnToGPUKernelsPipeline(OpPassManager &pm,
                                   const AttnToNVVMOptions &options);

/// attn.attention -> PTX: buildAttnToGPUKernelsPipeline, then MLIR's
/// lowering to NVVM and `gpu-module-to-binary`; the result holds a
/// `gpu.binary` with the PTX (format isa) and the host code lowered to LLVM.
void buildAttnToNVVMPipeline(OpPassManager &pm,
                             const AttnToNVVMOptions &options);

/// Makes the NVPTX backend address shared memory with 32-bit pointers
/// (LLVM's `-nvptx-short-ptr`, process-wide): every shared-memory address a
/// kernel keeps live takes one register instead of two, which is what lets
/// the f32 kernels fit their fragments (seed kernel: 252 -> 168 registers).
/// Called by buildAttnToNVVMPipeline and compileToPTX.
void useShortSharedPointers();

/// Registers the named pipelines with the global registry.
void registerAttnPipelines();

} // namespace attn
} // namespace mlir

#endif // ATTN_PIPELINES_PIPELINES_H
