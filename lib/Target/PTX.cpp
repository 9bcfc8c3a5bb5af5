//===- PTX.cpp - attn.attention to PTX and a launch manifest ----*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/Target/PTX.h"

#include "attn/Conversion/AttnToNVVM/AttnToNVVM.h"
#include "attn/Dialect/Attn/IR/AttnAttrs.h"
#include "attn/Dialect/Attn/Transforms/Transforms.h"
#include "attn/Pipelines/Pipelines.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Pipelines/Passes.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;
using namespace mlir::attn;
namespace rt = ::attn::runtime;

/// The runtime's name for an element type of the op's tensors.
static rt::ElementType toRuntimeType(Type type) {
  if (type.isF16())
    return rt::ElementType::F16;
  if (type.isBF16())
    return rt::ElementType::BF16;
  if (type.isInteger(1))
    return rt::ElementType::I1;
  if (type.isInteger(32))
    return rt::ElementType::I32;
  if (type.isInteger(64))
    return rt::ElementType::I64;
  return rt::ElementType::F32;
}

static std::vector<int64_t> toShape(RankedTensorType type) {
  std::vector<int64_t> shape;
  for (int64_t d : type.getShape())
    shape.push_back(ShapedType::isDynamic(d) ? -1 : d);
  return shape;
}

/// A fresh module with one function `name(q, k, v[, mask], captures...) ->
/// (o[, lse])` around a copy of `op`: one kernel argument per operand and per
/// tensor its regions read, whatever the original function shared or reordered.
/// Scalars the regions read from above must be constants (cloned in).
static FailureOr<OwningOpRef<ModuleOp>> buildCanonicalModule(AttentionOp op,
                                                             StringRef name) {
  OpBuilder b(op.getContext());
  Location loc = op.getLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  SmallVector<Type> inputs = {op.getQuery().getType(), op.getKey().getType(),
                              op.getValue().getType()};
  if (op.getMask())
    inputs.push_back(op.getMask().getType());
  if (op.getKvLengths())
    inputs.push_back(op.getKvLengths().getType());
  if (op.getCuSeqlensQ()) {
    inputs.push_back(op.getCuSeqlensQ().getType());
    inputs.push_back(op.getCuSeqlensK().getType());
  }
  if (op.getBlockTable())
    inputs.push_back(op.getBlockTable().getType());
  SmallVector<Value> captured = op.getCapturedTensors();
  for (Value tensor : captured)
    inputs.push_back(tensor.getType());
  auto func = func::FuncOp::create(
      b, loc, name, b.getFunctionType(inputs, TypeRange(op->getResultTypes())));
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  IRMapping mapping;
  unsigned numOperands = op->getNumOperands();
  for (auto [i, tensor] : llvm::enumerate(captured))
    mapping.map(tensor, entry->getArgument(numOperands + i));
  SetVector<Value> above;
  getUsedValuesDefinedAbove(op->getRegions(), above);
  for (Value value : above) {
    if (mapping.contains(value))
      continue;
    Operation *def = value.getDefiningOp();
    if (!def || !def->hasTrait<OpTrait::ConstantLike>())
      return op.emitOpError("reads a value from above that is neither a "
                            "tensor nor a constant; the GPU kernel takes "
                            "tensors only: ")
             << value;
    b.clone(*def, mapping);
  }
  // Operands by position, not by value: the original may pass one value as
  // several operands (self-attention).
  Operation *copy = b.clone(*op, mapping);
  for (unsigned i = 0; i < numOperands; ++i)
    copy->setOperand(i, entry->getArgument(i));
  func::ReturnOp::create(b, loc, copy->getResults());
  return module;
}

/// `lhs op rhs`, folded when both are constants, as the compiler's index
/// arithmetic folds (createOrFold).
static rt::GridExpr fold(rt::GridExpr::Kind kind, rt::GridExpr lhs,
                         rt::GridExpr rhs) {
  rt::GridExpr expr = rt::GridExpr::binary(kind, lhs, rhs);
  int64_t value;
  std::string error;
  if (lhs.kind == rt::GridExpr::Kind::Constant &&
      rhs.kind == rt::GridExpr::Kind::Constant &&
      rt::evaluateGridExpr(expr, rt::ProblemSizes(), value, error))
    return rt::GridExpr::constant(value);
  return expr;
}

/// The split count of a split-KV kernel (`attn.key_splits = array<i64:
/// min_keys, programs>`), exactly buildNumKeySplits' arithmetic (KeySplit.cpp)
/// on the op's sizes, static ones as constants: the main kernel takes it from
/// gridDim.x and the combine kernel recomputes it from the sizes, so the
/// launch must evaluate the same formula. None for a kernel without splits.
static std::optional<rt::GridExpr>
getNumKeySplits(AttentionOp op, gpu::GPUFuncOp kernel, int64_t packing) {
  auto splits = kernel->getAttrOfType<DenseI64ArrayAttr>(kKeySplitsAttrName);
  if (!splits || splits.size() != 2)
    return std::nullopt;
  auto size = [](RankedTensorType type, int64_t dim, const char *name) {
    return type.isDynamicDim(dim)
               ? rt::GridExpr::size(name)
               : rt::GridExpr::constant(type.getDimSize(dim));
  };
  using Kind = rt::GridExpr::Kind;
  RankedTensorType query = op.getQuery().getType();
  // Tk: the logical keys, P * page for a paged cache (the manifest's Tk).
  rt::GridExpr keys = size(op.getKey().getType(), 2, "Tk");
  if (Value table = op.getBlockTable()) {
    auto tableType = cast<RankedTensorType>(table.getType());
    keys = tableType.isDynamicDim(1)
               ? rt::GridExpr::size("Tk")
               : rt::GridExpr::constant(tableType.getDimSize(1) *
                                        op.getPageSize());
  }
  rt::GridExpr byKeys =
      fold(Kind::CeilDiv, keys, rt::GridExpr::constant(splits[0]));
  rt::GridExpr heads =
      packing > 1 ? rt::GridExpr::constant(query.getDimSize(1) / packing)
                  : size(query, 1, "Hq");
  rt::GridExpr perProgram = fold(Kind::Mul, size(query, 0, "B"), heads);
  rt::GridExpr byPrograms =
      fold(Kind::CeilDiv, rt::GridExpr::constant(splits[1]), perProgram);
  return fold(Kind::Min, byKeys, byPrograms);
}

llvm::Expected<std::string> mlir::attn::getPTXFeatures(StringRef chip) {
  std::optional<unsigned> number = parseCudaChip(chip);
  if (!number)
    return llvm::createStringError(
        "--chip: expected sm_XY with an optional 'a' or 'f' suffix, such as "
        "sm_90a, got '" +
        chip + "'");
  if (*number < kMinCudaChip)
    return llvm::createStringError("--chip: the kernels need sm_" +
                                   llvm::Twine(kMinCudaChip) +
                                   " or newer, got '" + chip + "'");
  if (!isKnownCudaChip(chip))
    return llvm::createStringError("--chip: LLVM's NVPTX backend does not "
                                   "know '" +
                                   chip + "' (it knows " + getKnownCudaChips() +
                                   ")");
  return *number >= 100 ? std::string() : PTXOptions().features;
}

FailureOr<KernelArtifact> mlir::attn::compileToPTX(ModuleOp module,
                                                   StringRef funcName,
                                                   const PTXOptions &options) {
  auto func = module.lookupSymbol<func::FuncOp>(funcName);
  if (!func)
    return mlir::emitError(module.getLoc(), "no function '")
           << funcName << "' to compile";
  SmallVector<AttentionOp> ops;
  func.walk([&](AttentionOp op) { ops.push_back(op); });
  if (ops.size() != 1)
    return mlir::emitError(func.getLoc(),
                           "expects exactly one attn.attention to compile "
                           "to a kernel, found ")
           << ops.size();
  AttentionOp op = ops.front();
  FailureOr<OwningOpRef<ModuleOp>> canonical =
      buildCanonicalModule(op, funcName);
  if (failed(canonical))
    return failure();
  OwningOpRef<ModuleOp> work = std::move(*canonical);

  // Stage 1: attn-mlir's own passes, down to a gpu.module of kernels.
  AttnToNVVMOptions pipelineOptions;
  pipelineOptions.chip = options.chip;
  pipelineOptions.features = options.features;
  pipelineOptions.optLevel = options.optLevel;
  pipelineOptions.blockM = options.overrides.blockM;
  pipelineOptions.blockN = options.overrides.blockN;
  pipelineOptions.numWarps = options.overrides.numWarps;
  pipelineOptions.numStages = options.overrides.numStages;
  pipelineOptions.splitPrograms = options.splitPrograms;
  pipelineOptions.scoresAhead = options.scoresAhead;
  pipelineOptions.maskBlockMap = options.maskBlockMap;
  pipelineOptions.convert = options.nvvm;
  PassManager kernels(module.getContext());
  buildAttnToGPUKernelsPipeline(kernels, pipelineOptions);
  if (failed(kernels.run(*work)))
    return failure();
  // The attention kernel (attn.config), the kernels launched before it
  // (the mask classification of --attn-mask-block-map) and after it
  // (split-KV's combine).
  SmallVector<gpu::GPUFuncOp> mains, prologues, epilogues;
  work->walk([&](gpu::GPUFuncOp f) {
    if (f->hasAttr(kConfigAttrName))
      mains.push_back(f);
    else if (f->hasAttr(kMaskMapAttrName))
      prologues.push_back(f);
    else if (f->hasAttr(kSplitCombineAttrName))
      epilogues.push_back(f);
  });
  if (mains.size() != 1)
    return mlir::emitError(func.getLoc(), "expected one GPU kernel, got ")
           << mains.size();
  gpu::GPUFuncOp kernel = mains.front();
  auto config = kernel->getAttrOfType<KernelConfigAttr>(kConfigAttrName);
  auto shared = kernel->getAttrOfType<IntegerAttr>(kSharedBytesAttrName);
  auto blockSize = kernel.getKnownBlockSize();
  if (!config || !shared || !blockSize)
    return mlir::emitError(kernel.getLoc(),
                           "kernel lacks its launch attributes");

  // The manifest, from the op and the kernel.
  rt::Manifest manifest;
  manifest.kernel = kernel.getName().str();
  manifest.ptx = (funcName + ".ptx").str();
  manifest.chip = options.chip;
  manifest.function = funcName.str();
  manifest.elementType = toRuntimeType(op.getElementType());
  manifest.query.shape = toShape(op.getQuery().getType());
  manifest.key.shape = toShape(op.getKey().getType());
  manifest.value.shape = toShape(op.getValue().getType());
  manifest.output.shape = toShape(op.getOutput().getType());
  if (Value lse = op.getLse())
    manifest.lse =
        rt::OperandSpec{toShape(cast<RankedTensorType>(lse.getType()))};
  if (Value mask = op.getMask()) {
    auto maskType = cast<RankedTensorType>(mask.getType());
    manifest.mask = rt::MaskSpec{toRuntimeType(maskType.getElementType()),
                                 toShape(maskType)};
  }
  if (Value lengths = op.getKvLengths())
    manifest.kvLengths =
        rt::MaskSpec{rt::ElementType::I32,
                     toShape(cast<RankedTensorType>(lengths.getType()))};
  if (op.getCuSeqlensQ()) {
    manifest.cuSeqlensQ = rt::MaskSpec{
        rt::ElementType::I32,
        toShape(cast<RankedTensorType>(op.getCuSeqlensQ().getType()))};
    manifest.cuSeqlensK = rt::MaskSpec{
        rt::ElementType::I32,
        toShape(cast<RankedTensorType>(op.getCuSeqlensK().getType()))};
  }
  if (Value table = op.getBlockTable())
    manifest.blockTable =
        rt::BlockTableSpec{{rt::ElementType::I32,
                            toShape(cast<RankedTensorType>(table.getType()))},
                           op.getPageSize()};
  manifest.attributes.scale =
      static_cast<double>(static_cast<float>(op.getScaleValue()));
  if (std::optional<CausalKind> causal = op.getCausalKind())
    manifest.attributes.causal = *causal == CausalKind::TopLeft
                                     ? rt::CausalMode::TopLeft
                                     : rt::CausalMode::BottomRight;
  if (std::optional<PrecisionKind> precision = op.getPrecision())
    manifest.attributes.precision = *precision == PrecisionKind::IEEE
                                        ? rt::PrecisionMode::IEEE
                                        : rt::PrecisionMode::TF32;
  if (WindowAttr window = op.getWindowAttr())
    manifest.attributes.window = {window.getLeft(), window.getRight()};
  if (std::optional<APFloat> softcap = op.getSoftcap())
    manifest.attributes.softcap = softcap->convertToDouble();
  manifest.attributes.scoreMod = !op.getScoreMod().empty();
  manifest.attributes.maskMod = !op.getMaskMod().empty();
  manifest.config.blockM = config.getBlockM();
  manifest.config.blockN = config.getBlockN();
  manifest.config.numWarps = config.getNumWarps();
  manifest.config.numStages = config.getNumStages();
  for (int i = 0; i < 3; ++i)
    manifest.block[i] = static_cast<unsigned>((*blockSize)[i]);
  // Grid (outlineProgramGrid): x = query blocks (or key splits), y = query
  // heads, z = batch; with GQA decode packing y = Hq / p, each program
  // taking the rows of its p query heads.
  int64_t blockM = config.getBlockM();
  int64_t packing = getQueryHeadPacking(op, blockM);
  std::optional<rt::GridExpr> numSplits = getNumKeySplits(op, kernel, packing);
  int64_t packedRows = packing * op.getQuery().getType().getDimSize(2);
  manifest.grid[0] =
      numSplits     ? *numSplits
      : packing > 1 ? rt::GridExpr::constant((packedRows + blockM - 1) / blockM)
                    : rt::GridExpr::ceilDiv(rt::GridExpr::size("Tq"),
                                            rt::GridExpr::constant(blockM));
  // Packed sequences: ceil(Tq / block_m) + N + 2 slots (Tile.cpp).
  if (op.getCuSeqlensQ())
    manifest.grid[0] = rt::GridExpr::binary(
        rt::GridExpr::Kind::Add, manifest.grid[0],
        rt::GridExpr::binary(rt::GridExpr::Kind::Add, rt::GridExpr::size("N"),
                             rt::GridExpr::constant(2)));
  manifest.grid[1] = packing > 1
                         ? rt::GridExpr::constant(
                               op.getQuery().getType().getDimSize(1) / packing)
                         : rt::GridExpr::size("Hq");
  manifest.grid[2] = rt::GridExpr::size("B");
  manifest.sharedMemoryBytes = shared.getInt();
  int64_t maskRank =
      op.getMask() ? cast<RankedTensorType>(op.getMask().getType()).getRank()
                   : 0;
  // The tensors the regions read, after the operands.
  int32_t numOperands = static_cast<int32_t>(op->getNumOperands());
  for (Value tensor : op.getCapturedTensors()) {
    auto type = cast<RankedTensorType>(tensor.getType());
    manifest.captures.push_back(
        rt::CaptureSpec{toRuntimeType(type.getElementType()), toShape(type)});
  }
  // Kernel arguments to manifest params (Outline.cpp's attn.kernel_args).
  auto toParams = [&](gpu::GPUFuncOp f) {
    // The op's operands in order: query, key, value, then the optional
    // mask and kv_lengths where present.
    SmallVector<std::pair<const char *, unsigned>> roles = {
        {"query", 4}, {"key", 4}, {"value", 4}};
    if (op.getMask())
      roles.push_back({"mask", static_cast<unsigned>(maskRank)});
    if (op.getKvLengths())
      roles.push_back({"kv_lengths", 1});
    if (op.getCuSeqlensQ()) {
      roles.push_back({"cu_seqlens_q", 1});
      roles.push_back({"cu_seqlens_k", 1});
    }
    if (op.getBlockTable())
      roles.push_back({"block_table", 2});
    std::vector<rt::KernelParam> params;
    auto workspaces = f->getAttrOfType<ArrayAttr>(kKernelWorkspacesAttrName);
    auto tensorMaps = f->getAttrOfType<ArrayAttr>(kKernelTensorMapsAttrName);
    ArrayRef<int32_t> hostArgs =
        f->getAttrOfType<DenseI32ArrayAttr>(kKernelArgsAttrName).asArrayRef();
    for (int32_t hostArg : hostArgs) {
      if (hostArg <= kTensorMapArgCode) {
        // A tensor map of the operand a memref argument passes.
        auto map =
            cast<DictionaryAttr>(tensorMaps[kTensorMapArgCode - hostArg]);
        int32_t of = hostArgs[cast<IntegerAttr>(map.get("arg")).getInt()];
        auto box = cast<DenseI64ArrayAttr>(map.get("box")).asArrayRef();
        params.push_back(rt::KernelParam::tensorMap(
            of == kResultArgCode ? "output" : roles[of].first,
            std::vector<int64_t>(box.begin(), box.end()),
            static_cast<unsigned>(
                cast<IntegerAttr>(map.get("swizzle")).getInt())));
      } else if (hostArg == kResultArgCode) {
        params.push_back(rt::KernelParam::memref("output", 4));
      } else if (hostArg == kResultArgCode - 1) {
        params.push_back(rt::KernelParam::memref("lse", 3));
      } else if (hostArg <= kWorkspaceArgCode) {
        auto name = cast<StringAttr>(workspaces[kWorkspaceArgCode - hostArg]);
        auto type = cast<MemRefType>(f.getArgumentTypes()[params.size()]);
        params.push_back(rt::KernelParam::workspace(
            name.str(), static_cast<unsigned>(type.getRank())));
      } else if (hostArg >= numOperands) {
        int64_t index = hostArg - numOperands;
        params.push_back(rt::KernelParam::memref(
            "capture" + std::to_string(index),
            static_cast<unsigned>(manifest.captures[index].shape.size())));
      } else {
        params.push_back(rt::KernelParam::memref(roles[hostArg].first,
                                                 roles[hostArg].second));
      }
    }
    return params;
  };
  manifest.params = toParams(kernel);

  // The mask block map (--attn-mask-block-map): MB x MH x ceil(Tq / block_m)
  // x ceil(Tk / block_n) bytes, MB and MH 1 where the mask broadcasts over
  // batch or heads, else B and Hq (static sizes as compiled).
  for (gpu::GPUFuncOp prologue : prologues) {
    auto mapConfig =
        prologue->getAttrOfType<KernelConfigAttr>(kMaskMapAttrName);
    auto mapType = cast<MemRefType>(prologue.getArgumentTypes().back());
    auto outer = [&](int64_t d, const char *size) {
      return mapType.isDynamicDim(d)
                 ? rt::GridExpr::size(size)
                 : rt::GridExpr::constant(mapType.getDimSize(d));
    };
    rt::GridExpr queryBlocks =
        rt::GridExpr::ceilDiv(rt::GridExpr::size("Tq"),
                              rt::GridExpr::constant(mapConfig.getBlockM()));
    rt::GridExpr keyBlocks =
        rt::GridExpr::ceilDiv(rt::GridExpr::size("Tk"),
                              rt::GridExpr::constant(mapConfig.getBlockN()));
    rt::WorkspaceSpec workspace;
    workspace.name = "mask_block_map";
    workspace.elementBytes = 1;
    workspace.shape = {outer(0, "B"), outer(1, "Hq"), queryBlocks, keyBlocks};
    if (!manifest.getWorkspace(workspace.name))
      manifest.workspaces.push_back(workspace);
    rt::PrologueKernel launch;
    launch.kernel = prologue.getName().str();
    auto size = prologue.getKnownBlockSize();
    for (int i = 0; i < 3; ++i)
      launch.block[i] = static_cast<unsigned>((*size)[i]);
    // Grid: x = key block, y = query block, z = MB * MH (outlineMaskMapGrid).
    launch.grid[0] = keyBlocks;
    launch.grid[1] = queryBlocks;
    launch.grid[2] = mapType.hasStaticShape() || (!mapType.isDynamicDim(0) &&
                                                  !mapType.isDynamicDim(1))
                         ? rt::GridExpr::constant(mapType.getDimSize(0) *
                                                  mapType.getDimSize(1))
                         : rt::GridExpr::mul(outer(0, "B"), outer(1, "Hq"));
    launch.sharedMemoryBytes = 0;
    launch.params = toParams(prologue);
    manifest.prologue.push_back(std::move(launch));
  }

  // Split-KV: the partial results, S x B x Hq x Tq [x Dv] f32 (Tile.cpp),
  // static sizes as compiled, and the combine kernel after the programs.
  if (numSplits) {
    auto addWorkspace = [&](StringRef name) -> LogicalResult {
      ArrayRef<int32_t> args =
          kernel->getAttrOfType<DenseI32ArrayAttr>(kKernelArgsAttrName)
              .asArrayRef();
      auto names = kernel->getAttrOfType<ArrayAttr>(kKernelWorkspacesAttrName);
      for (auto [i, arg] : llvm::enumerate(args)) {
        if (arg > kWorkspaceArgCode || arg <= kTensorMapArgCode ||
            cast<StringAttr>(names[kWorkspaceArgCode - arg]).getValue() != name)
          continue;
        auto type = cast<MemRefType>(kernel.getArgumentTypes()[i]);
        static const char *const kDims[] = {nullptr, "B", "Hq", "Tq", "Dv"};
        rt::WorkspaceSpec workspace;
        workspace.name = name.str();
        workspace.elementBytes = type.getElementTypeBitWidth() / 8;
        workspace.shape.push_back(*numSplits);
        for (int64_t d = 1; d < type.getRank() && d < 5; ++d)
          workspace.shape.push_back(
              type.isDynamicDim(d)
                  ? rt::GridExpr::size(kDims[d])
                  : rt::GridExpr::constant(type.getDimSize(d)));
        manifest.workspaces.push_back(std::move(workspace));
        return success();
      }
      return kernel.emitOpError("split-KV kernel without its workspace '")
             << name << "'";
    };
    if (failed(addWorkspace("split_output")) ||
        failed(addWorkspace("split_lse")))
      return failure();
  }
  for (gpu::GPUFuncOp epilogue : epilogues) {
    rt::EpilogueKernel launch;
    launch.kernel = epilogue.getName().str();
    auto size = epilogue.getKnownBlockSize();
    if (!size)
      return mlir::emitError(epilogue.getLoc(),
                             "kernel lacks its launch attributes");
    for (int i = 0; i < 3; ++i)
      launch.block[i] = static_cast<unsigned>((*size)[i]);
    // Grid (outlineSplitCombineGrid): x = query row, y = head, z = batch.
    launch.grid[0] = rt::GridExpr::size("Tq");
    launch.grid[1] = rt::GridExpr::size("Hq");
    launch.grid[2] = rt::GridExpr::size("B");
    launch.sharedMemoryBytes = 0;
    launch.params = toParams(epilogue);
    manifest.epilogue.push_back(std::move(launch));
  }

  // Stage 2: MLIR's lowering to NVVM and serialization to PTX.
  useShortSharedPointers();
  gpu::GPUToNVVMPipelineOptions nvvmOptions;
  nvvmOptions.cubinChip = options.chip;
  nvvmOptions.cubinFeatures = options.features;
  nvvmOptions.cubinFormat = "isa";
  nvvmOptions.optLevel = options.optLevel;
  PassManager lowering(module.getContext());
  gpu::buildLowerToNVVMPassPipeline(lowering, nvvmOptions);
  if (failed(lowering.run(*work)))
    return failure();
  KernelArtifact artifact;
  work->walk([&](gpu::BinaryOp binary) {
    for (Attribute attr : binary.getObjects())
      if (auto object = dyn_cast<gpu::ObjectAttr>(attr))
        artifact.ptx = object.getObject().str();
  });
  if (artifact.ptx.empty())
    return mlir::emitError(func.getLoc(), "serialization produced no PTX");
  std::string error;
  if (!rt::verifyManifest(manifest, error))
    return mlir::emitError(func.getLoc(), "invalid launch manifest: ") << error;
  artifact.manifest = std::move(manifest);
  return artifact;
}
