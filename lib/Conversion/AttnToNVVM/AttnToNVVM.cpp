//===- AttnToNVVM.cpp - the convert-attn-to-nvvm pass -----------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToNVVM/AttnToNVVM.h"
#include "attn/Conversion/Passes.h"
#include "attn/Dialect/Attn/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace attn {
#define GEN_PASS_DEF_CONVERTATTNTONVVM
#include "attn/Conversion/Passes.h.inc"
} // namespace attn
} // namespace mlir

using namespace mlir;
using namespace mlir::attn;

namespace {
/// The most dynamic shared memory one block may use on `chip` (CUDA's
/// sharedMemPerBlockOptin).
static int64_t maxSharedMemoryPerBlock(StringRef chip) {
  unsigned cc = parseCudaChip(chip).value_or(0);
  if (cc >= 90)
    return 227 * 1024;
  if (cc == 80 || cc == 87)
    return 163 * 1024;
  if (cc >= 86)
    return 99 * 1024;
  if (cc >= 75)
    return 64 * 1024;
  return 48 * 1024;
}

/// The host side of the kernel's tensor map arguments (TensorCopy.cpp):
/// each built by `nvgpu.tma.create.descriptor` from the buffer the launch
/// passes for the argument it describes (upstream's convention: a generic
/// pointer to the CUtensorMap in device memory), appended to the launch's
/// operands in the kernel's order.
static void appendTensorMaps(RewriterBase &rewriter, gpu::LaunchFuncOp launch,
                             gpu::GPUFuncOp kernel) {
  auto maps = kernel->getAttrOfType<ArrayAttr>(kKernelTensorMapsAttrName);
  if (!maps)
    return;
  MLIRContext *ctx = rewriter.getContext();
  Location loc = launch.getLoc();
  SmallVector<Value> descriptors;
  for (auto map : maps.getAsRange<DictionaryAttr>()) {
    int64_t arg = cast<IntegerAttr>(map.get("arg")).getInt();
    ArrayRef<int64_t> box =
        cast<DenseI64ArrayAttr>(map.get("box")).asArrayRef();
    Value buffer = launch.getKernelOperands()[arg];
    auto type = cast<MemRefType>(buffer.getType());
    Value unranked = memref::CastOp::create(
        rewriter, loc,
        UnrankedMemRefType::get(type.getElementType(), type.getMemorySpace()),
        buffer);
    SmallVector<Value> boxValues;
    for (int64_t size : box)
      boxValues.push_back(arith::ConstantIndexOp::create(rewriter, loc, size));
    auto descriptorType = nvgpu::TensorMapDescriptorType::get(
        ctx,
        MemRefType::get(box, type.getElementType(), MemRefLayoutAttrInterface{},
                        rewriter.getI64IntegerAttr(3)),
        cast<IntegerAttr>(map.get("swizzle")).getInt() == 128
            ? nvgpu::TensorMapSwizzleKind::SWIZZLE_128B
            : nvgpu::TensorMapSwizzleKind::SWIZZLE_NONE,
        nvgpu::TensorMapL2PromoKind::L2PROMO_128B,
        nvgpu::TensorMapOOBKind::OOB_ZERO,
        nvgpu::TensorMapInterleaveKind::INTERLEAVE_NONE);
    Value descriptor = nvgpu::TmaCreateDescriptorOp::create(
        rewriter, loc, descriptorType, unranked, boxValues);
    descriptors.push_back(
        UnrealizedConversionCastOp::create(
            rewriter, loc, LLVM::LLVMPointerType::get(ctx), descriptor)
            .getResult(0));
  }
  rewriter.modifyOpInPlace(
      launch, [&] { launch.getKernelOperandsMutable().append(descriptors); });
}

/// The problem with the values of `options`, or an empty string.
static std::string checkOptions(const ConvertAttnToNVVMOptions &options) {
  if (!parseTensorCopyMode(options.tensorCopies))
    return "tensor-copies must be auto or none, got '" + options.tensorCopies +
           "'";
  return "";
}

struct ConvertAttnToNVVMPass
    : public attn::impl::ConvertAttnToNVVMBase<ConvertAttnToNVVMPass> {
  using ConvertAttnToNVVMBase::ConvertAttnToNVVMBase;

  /// The options as the struct the rest of the conversion takes (the
  /// reverse of the generated constructor from it).
  ConvertAttnToNVVMOptions getOptions() const {
    ConvertAttnToNVVMOptions options;
    options.tensorCopies = tensorCopies;
    options.warpSpecialize = warpSpecialize;
    return options;
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    ConvertAttnToNVVMOptions options = getOptions();
    if (std::string problem = checkOptions(options); !problem.empty()) {
      module.emitError("--convert-attn-to-nvvm: ") << problem;
      return signalPassFailure();
    }
    SmallVector<scf::ForallOp> grids;
    module.walk([&](scf::ForallOp grid) {
      if (grid->hasAttr(kConfigAttrName))
        grids.push_back(grid);
    });
    IRRewriter rewriter(&getContext());
    // The mask classification grids of --attn-mask-block-map: kernels
    // launched before the programs they serve.
    SmallVector<scf::ForallOp> maskMaps;
    module.walk([&](scf::ForallOp grid) {
      if (grid->hasAttr(kMaskMapAttrName))
        maskMaps.push_back(grid);
    });
    for (scf::ForallOp grid : maskMaps)
      if (failed(outlineMaskMapGrid(rewriter, grid, "attn_kernels")))
        return signalPassFailure();
    // The grids that merge split-KV's partial results: kernels launched
    // after the programs.
    SmallVector<scf::ForallOp> combines;
    module.walk([&](scf::ForallOp grid) {
      if (grid->hasAttr(kSplitCombineAttrName))
        combines.push_back(grid);
    });
    for (scf::ForallOp grid : combines)
      if (failed(outlineSplitCombineGrid(rewriter, grid, "attn_kernels")))
        return signalPassFailure();
    for (scf::ForallOp grid : grids) {
      auto config = grid->getAttrOfType<KernelConfigAttr>(kConfigAttrName);
      if (config.getTarget() == "cpu") {
        emitOpErrorAtLoc(grid,
                         "was tiled for the cpu target; tile for a GPU chip "
                         "(--attn-tile=\"target=sm_90a\")");
        return signalPassFailure();
      }
      FailureOr<gpu::GPUFuncOp> kernel =
          outlineProgramGrid(rewriter, grid, "attn_kernels");
      if (failed(kernel))
        return signalPassFailure();
      FailureOr<int64_t> shared =
          distributeProgram(rewriter, *kernel, config, options);
      if (failed(shared))
        return signalPassFailure();
      int64_t limit = maxSharedMemoryPerBlock(config.getTarget());
      if (*shared > limit) {
        // At the op's location, without the kernel printed after it.
        emitError(kernel->getLoc(), "the kernel needs ")
            << *shared
            << " bytes of shared memory (block_m = " << config.getBlockM()
            << ", block_n = " << config.getBlockN()
            << ", num_stages = " << config.getNumStages() << "); "
            << config.getTarget() << " allows " << limit
            << " per block: use fewer stages or smaller blocks";
        return signalPassFailure();
      }
      (*kernel)->setAttr(kSharedBytesAttrName,
                         rewriter.getI64IntegerAttr(*shared));
      // Tell the launch how much dynamic shared memory the kernel takes.
      module.walk([&](gpu::LaunchFuncOp launch) {
        if (launch.getKernelName() != kernel->getName())
          return;
        rewriter.setInsertionPoint(launch);
        Value bytes = arith::ConstantIntOp::create(rewriter, launch.getLoc(),
                                                   *shared, 32);
        rewriter.modifyOpInPlace(launch, [&] {
          launch.getDynamicSharedMemorySizeMutable().assign(bytes);
        });
        // A producer warpgroup (WarpRoles.cpp) widens the thread block.
        std::optional<DenseI32ArrayAttr> block =
            kernel->getKnownBlockSizeAttr();
        if (block && getConstantIntValue(launch.getBlockSizeX()) !=
                         std::optional<int64_t>((*block)[0])) {
          Value x = arith::ConstantIndexOp::create(rewriter, launch.getLoc(),
                                                   (*block)[0]);
          rewriter.modifyOpInPlace(
              launch, [&] { launch.getBlockSizeXMutable().assign(x); });
        }
        appendTensorMaps(rewriter, launch, *kernel);
      });
    }
  }
};
} // namespace

LogicalResult mlir::attn::parseConvertAttnToNVVMOptions(
    StringRef text, ConvertAttnToNVVMOptions &options,
    function_ref<void(const Twine &)> emitError) {
  ConvertAttnToNVVMPass pass(options);
  if (failed(pass.initializeOptions(text, [&](const Twine &message) {
        emitError(message);
        return failure();
      })))
    return failure();
  ConvertAttnToNVVMOptions parsed = pass.getOptions();
  if (std::string problem = checkOptions(parsed); !problem.empty()) {
    emitError(problem);
    return failure();
  }
  options = std::move(parsed);
  return success();
}

LogicalResult mlir::attn::parseConvertAttnToNVVMArguments(
    ArrayRef<std::string> args, ConvertAttnToNVVMOptions &options,
    function_ref<void(const Twine &)> emitError) {
  for (StringRef arg : args) {
    std::string problem;
    if (failed(parseConvertAttnToNVVMOptions(
            arg.ltrim('-'), options,
            [&](const Twine &message) { problem = message.str(); }))) {
      // The parser's own words, without its name; a value it could not
      // read it has reported already.
      StringRef words = StringRef(problem).trim();
      words.consume_front("<Pass-Options-Parser>: ");
      emitError("'" + arg + "'" + (words.empty() ? "" : ": " + words));
      return failure();
    }
  }
  return success();
}

std::string mlir::attn::describeConvertAttnToNVVMOptions() {
  std::string text;
  llvm::raw_string_ostream os(text);
  createConvertAttnToNVVM()->printAsTextualPipeline(os);
  return text;
}
