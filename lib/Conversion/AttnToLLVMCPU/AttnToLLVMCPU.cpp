//===- AttnToLLVMCPU.cpp - block-level IR to LLVM for the host --*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_CONVERTATTNTOLLVMCPU
#include "attn/Conversion/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;

void mlir::attn::buildHostLoweringPassPipeline(OpPassManager &pm) {
  // Programs and block math become loops.
  pm.addNestedPass<func::FuncOp>(createForallToForLoopPass());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createCanonicalizerPass());
  // bf16 <-> f32 as integer arithmetic: no soft-float runtime needed.
  arith::ArithExpandOpsPassOptions expandOptions;
  expandOptions.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expandOptions));
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertMathToLLVMPass());
  // Math ops of a score_mod that LLVM has no intrinsic for (math.erf,
  // math.atan2, ...) become libm calls, which the host process provides.
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

/// Block buffers larger than this go on the heap: large blocks (up to the
/// config verifier's 4096 x 4096) would overflow a thread's stack.
static constexpr int64_t kMaxStackBufferBytes = 64 * 1024;

/// On the host the programs of a grid run one after another, so the block
/// buffers of a program (static `memref.alloca`s in an `scf.forall` body) can
/// be allocated once, before the grid, instead of once per program.
static void hoistProgramBuffers(ModuleOp module) {
  module.walk([](scf::ForallOp grid) {
    SmallVector<memref::AllocaOp> buffers;
    grid.getBody()->walk([&](memref::AllocaOp alloca) {
      if (alloca.getType().hasStaticShape() && alloca.getOperands().empty())
        buffers.push_back(alloca);
    });
    for (memref::AllocaOp alloca : buffers)
      alloca->moveBefore(grid);
  });
}

/// Moves the static buffers over kMaxStackBufferBytes to the heap: a
/// `memref.alloc` in the alloca's place and a `memref.dealloc` before its
/// block's terminator (every use is in that block's ops after it).
static void moveLargeBuffersToHeap(ModuleOp module) {
  SmallVector<memref::AllocaOp> large;
  module.walk([&](memref::AllocaOp alloca) {
    MemRefType type = alloca.getType();
    if (!type.hasStaticShape() || !alloca.getOperands().empty())
      return;
    int64_t bytes = type.getNumElements() *
                    llvm::divideCeil(type.getElementTypeBitWidth(), 8);
    if (bytes > kMaxStackBufferBytes)
      large.push_back(alloca);
  });
  IRRewriter rewriter(module.getContext());
  for (memref::AllocaOp alloca : large) {
    rewriter.setInsertionPoint(alloca);
    auto heap = memref::AllocOp::create(
        rewriter, alloca.getLoc(), alloca.getType(), alloca.getAlignmentAttr());
    rewriter.setInsertionPoint(alloca->getBlock()->getTerminator());
    memref::DeallocOp::create(rewriter, alloca.getLoc(), heap);
    rewriter.replaceOp(alloca, heap);
  }
}

namespace {
struct ConvertAttnToLLVMCPUPass
    : public attn::impl::ConvertAttnToLLVMCPUBase<ConvertAttnToLLVMCPUPass> {
  using ConvertAttnToLLVMCPUBase::ConvertAttnToLLVMCPUBase;

  void getDependentDialects(DialectRegistry &registry) const override {
    ConvertAttnToLLVMCPUBase::getDependentDialects(registry);
    OpPassManager pm(ModuleOp::getOperationName());
    attn::buildHostLoweringPassPipeline(pm);
    pm.getDependentDialects(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // A C entry point per function: `_mlir_ciface_<name>` taking memref
    // descriptors by pointer (result first).
    module.walk([&](func::FuncOp func) {
      if (!func.isExternal())
        func->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                      UnitAttr::get(&getContext()));
    });
    hoistProgramBuffers(module);
    moveLargeBuffersToHeap(module);
    OpPassManager pm(ModuleOp::getOperationName());
    attn::buildHostLoweringPassPipeline(pm);
    if (failed(runPipeline(pm, module)))
      return signalPassFailure();
  }
};
} // namespace
