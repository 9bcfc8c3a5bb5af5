//===- Outline.cpp - program grid to gpu.func + gpu.launch_func -*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToNVVM/AttnToNVVM.h"
#include "attn/Dialect/Attn/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;
using namespace mlir::attn;

/// Clones into the kernel the pure computation of `value` from kernel
/// arguments (constants, memref.dim of an argument, index arithmetic).
static LogicalResult cloneDefinition(OpBuilder &b, Value value,
                                     IRMapping &mapping) {
  if (mapping.contains(value))
    return success();
  Operation *def = value.getDefiningOp();
  if (!def || !isMemoryEffectFree(def) || def->getNumRegions() != 0)
    return failure();
  for (Value operand : def->getOperands())
    if (failed(cloneDefinition(b, operand, mapping)))
      return failure();
  b.clone(*def, mapping);
  return success();
}

/// The buffers a grid's body uses (host arguments first, in their order;
/// then the output and workspaces), the values it uses that the kernel
/// recomputes, and each buffer's role for the launch manifest.
struct KernelArguments {
  SmallVector<Value> buffers;
  SmallVector<Type> types;
  SmallVector<int32_t> hostArgs;
  SmallVector<Attribute> workspaces;
  SetVector<Value> above;

  /// Sets kKernelArgsAttrName (and kKernelWorkspacesAttrName) on `kernel`.
  void annotate(OpBuilder &b, gpu::GPUFuncOp kernel) const {
    kernel->setAttr(kKernelArgsAttrName, b.getDenseI32ArrayAttr(hostArgs));
    if (!workspaces.empty())
      kernel->setAttr(kKernelWorkspacesAttrName, b.getArrayAttr(workspaces));
  }
  /// Maps the buffers to the arguments of `entry` and clones the rest.
  LogicalResult mapInto(OpBuilder &b, Block &entry, IRMapping &mapping) const {
    for (auto [value, arg] : llvm::zip(buffers, entry.getArguments()))
      mapping.map(value, arg);
    for (Value v : above)
      if (!isa<MemRefType>(v.getType()) &&
          failed(cloneDefinition(b, v, mapping)))
        return failure();
    return success();
  }
};

static KernelArguments collectKernelArguments(scf::ForallOp grid,
                                              func::FuncOp func) {
  KernelArguments args;
  getUsedValuesDefinedAbove(grid.getRegion(), args.above);
  for (OpFoldResult ub : grid.getMixedUpperBound())
    if (auto v = dyn_cast<Value>(ub))
      args.above.insert(v);
  // Buffers: those the body uses, and those whose sizes it uses (the index
  // values the kernel recomputes from memref.dim of a buffer).
  SetVector<Value> buffers;
  SmallVector<Value> worklist(args.above.begin(), args.above.end());
  DenseSet<Value> seen;
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    if (isa<MemRefType>(v.getType())) {
      buffers.insert(v);
      continue;
    }
    if (Operation *def = v.getDefiningOp())
      if (isMemoryEffectFree(def) && def->getNumRegions() == 0)
        llvm::append_range(worklist, def->getOperands());
  }
  args.buffers.assign(buffers.begin(), buffers.end());
  auto argIndex = [&](Value v) -> int64_t {
    // Inputs reach the grid as strided views (memref.cast) of the arguments.
    while (auto castOp = v.getDefiningOp<memref::CastOp>())
      v = castOp.getSource();
    auto arg = dyn_cast<BlockArgument>(v);
    if (arg && arg.getOwner() == &func.getBody().front())
      return arg.getArgNumber();
    return -1;
  };
  // By argument number, the others last, each in its first order (a sort on
  // (number, position): std::stable_sort's buffer is deprecated in C++17's
  // libstdc++ and warned about).
  SmallVector<std::tuple<int64_t, size_t, Value>> order;
  for (auto [position, v] : llvm::enumerate(args.buffers)) {
    int64_t index = argIndex(v);
    order.push_back({index < 0 ? INT64_MAX : index, position, v});
  }
  llvm::sort(order, [](const auto &a, const auto &b) {
    return std::tie(std::get<0>(a), std::get<1>(a)) <
           std::tie(std::get<0>(b), std::get<1>(b));
  });
  for (auto [position, entry] : llvm::enumerate(order))
    args.buffers[position] = std::get<2>(entry);
  // The buffers the host function returns: its results, by position.
  auto resultIndex = [&](Value v) -> int32_t {
    for (Block &block : func.getBody())
      if (auto ret = dyn_cast<func::ReturnOp>(block.getTerminator()))
        for (auto [i, result] : llvm::enumerate(ret.getOperands())) {
          while (auto castOp = result.getDefiningOp<memref::CastOp>())
            result = castOp.getSource();
          if (result == v)
            return static_cast<int32_t>(i);
        }
    return 0;
  };
  for (Value v : args.buffers) {
    int32_t hostArg = static_cast<int32_t>(argIndex(v));
    Operation *def = v.getDefiningOp();
    if (auto name = def ? def->getAttrOfType<StringAttr>(kWorkspaceAttrName)
                        : StringAttr()) {
      hostArg =
          kWorkspaceArgCode - static_cast<int32_t>(args.workspaces.size());
      args.workspaces.push_back(name);
    } else if (hostArg < 0) {
      hostArg = kResultArgCode - resultIndex(v);
    }
    args.hostArgs.push_back(hostArg);
    args.types.push_back(v.getType());
  }
  return args;
}

/// The gpu.module named `name` at the top of `module`, created if needed.
static gpu::GPUModuleOp getOrCreateGPUModule(OpBuilder &b, ModuleOp module,
                                             StringRef name) {
  if (auto existing = module.lookupSymbol<gpu::GPUModuleOp>(name))
    return existing;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(module.getBody());
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  b.getUnitAttr());
  return gpu::GPUModuleOp::create(b, module.getLoc(), name);
}

/// Creates the kernel `grid` becomes: `<func>_<suffix>` in gpu.module
/// `moduleName`, with `threads` threads and `args`; leaves `rewriter` at the
/// start of its body and `mapping` from the grid's values to the kernel's.
static FailureOr<gpu::GPUFuncOp>
createKernel(RewriterBase &rewriter, scf::ForallOp grid, func::FuncOp func,
             StringRef moduleName, StringRef suffix, int32_t threads,
             const KernelArguments &args, IRMapping &mapping) {
  gpu::GPUModuleOp gpuModule = getOrCreateGPUModule(
      rewriter, func->getParentOfType<ModuleOp>(), moduleName);
  rewriter.setInsertionPointToEnd(gpuModule.getBody());
  auto kernel = gpu::GPUFuncOp::create(
      rewriter, grid.getLoc(), (func.getName() + "_" + suffix).str(),
      rewriter.getFunctionType(args.types, {}));
  kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                  rewriter.getUnitAttr());
  kernel.setKnownBlockSizeAttr(rewriter.getDenseI32ArrayAttr({threads, 1, 1}));
  args.annotate(rewriter, kernel);
  SymbolTable(gpuModule).insert(kernel);
  Block &entry = kernel.getBody().front();
  rewriter.setInsertionPointToStart(&entry);
  if (failed(args.mapInto(rewriter, entry, mapping)))
    return emitOpErrorAtLoc(grid, "uses a value the kernel cannot recompute");
  return kernel;
}

/// The layout the caller's strides need: every stride and the offset
/// dynamic but, with `unitLastStride`, the last stride, 1 (the manifest's
/// memref parameters).
static MemRefType withCallerStrides(MemRefType type,
                                    bool unitLastStride = true) {
  SmallVector<int64_t> strides(type.getRank(), ShapedType::kDynamic);
  if (!strides.empty() && unitLastStride)
    strides.back() = 1;
  return MemRefType::get(
      type.getShape(), type.getElementType(),
      StridedLayoutAttr::get(type.getContext(), ShapedType::kDynamic, strides),
      type.getMemorySpace());
}

/// The results (the output, the log-sum-exp), which the host function
/// allocates (identity layout), are written through the strides the caller
/// passes, as the inputs are read: a (B, T, H, Dv) buffer viewed as (B, H,
/// T, Dv) takes no copy. (With the identity layout, the static row stride
/// Dv was used whatever the caller passed.) The log-sum-exp (rank 3, one f32
/// per row) takes any strides: (B, Tq, Hq) storage viewed as (B, Hq, Tq)
/// has its rows Hq apart. Returns their positions.
static SmallVector<unsigned> useCallerStrides(KernelArguments &args) {
  SmallVector<unsigned> outputs;
  for (auto [i, hostArg] : llvm::enumerate(args.hostArgs)) {
    auto type = dyn_cast<MemRefType>(args.types[i]);
    if (hostArg <= kResultArgCode && hostArg > kWorkspaceArgCode && type &&
        type.getLayout().isIdentity()) {
      args.types[i] =
          withCallerStrides(type, /*unitLastStride=*/type.getRank() != 3);
      outputs.push_back(i);
    }
  }
  return outputs;
}

/// Puts each of `stores` under `tid == 0`: a value every thread of the block
/// computed, stored once.
static void storeFromThreadZero(RewriterBase &rewriter, Location loc, Value tid,
                                ArrayRef<memref::StoreOp> stores) {
  for (memref::StoreOp store : stores) {
    rewriter.setInsertionPoint(store);
    Value first =
        arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, tid,
                              arith::ConstantIndexOp::create(rewriter, loc, 0));
    auto ifOp = scf::IfOp::create(rewriter, loc, first, /*withElse=*/false);
    rewriter.moveOpBefore(store, ifOp.thenBlock()->getTerminator());
  }
}

/// Re-infers the result types of the views of `value` (subviews, and the
/// expand_shape and collapse_shape of GQA decode packing; transitively),
/// whose type was made less static.
static void refineViewTypes(Value value) {
  for (Operation *user : value.getUsers()) {
    if (auto subview = dyn_cast<memref::SubViewOp>(user);
        subview && subview.getSource() == value) {
      subview.getResult().setType(memref::SubViewOp::inferRankReducedResultType(
          subview.getType().getShape(), subview.getSourceType(),
          subview.getMixedOffsets(), subview.getMixedSizes(),
          subview.getMixedStrides()));
      refineViewTypes(subview.getResult());
    } else if (auto expand = dyn_cast<memref::ExpandShapeOp>(user)) {
      FailureOr<MemRefType> type = memref::ExpandShapeOp::computeExpandedType(
          expand.getSrcType(), expand.getResultType().getShape(),
          expand.getReassociationIndices());
      if (failed(type))
        continue;
      expand.getResult().setType(*type);
      refineViewTypes(expand.getResult());
    } else if (auto collapse = dyn_cast<memref::CollapseShapeOp>(user)) {
      collapse.getResult().setType(
          memref::CollapseShapeOp::computeCollapsedType(
              collapse.getSrcType(), collapse.getReassociationIndices()));
      refineViewTypes(collapse.getResult());
    }
  }
}

FailureOr<gpu::GPUFuncOp> mlir::attn::outlineProgramGrid(RewriterBase &rewriter,
                                                         scf::ForallOp grid,
                                                         StringRef moduleName) {
  auto config = grid->getAttrOfType<KernelConfigAttr>(kConfigAttrName);
  if (!config)
    return rewriter.notifyMatchFailure(grid, "not a program grid");
  if (grid.getRank() != 3 || !grid.isNormalized())
    return emitOpErrorAtLoc(grid, "expects a normalized 3-D program grid "
                                  "(batch, head, query block)");
  auto func = grid->getParentOfType<func::FuncOp>();
  auto module = grid->getParentOfType<ModuleOp>();
  if (!func || !module)
    return emitOpErrorAtLoc(grid,
                            "expects the program grid inside a func.func");

  KernelArguments args = collectKernelArguments(grid, func);
  Location loc = grid.getLoc();
  OpBuilder::InsertionGuard guard(rewriter);
  SmallVector<unsigned> outputs = useCallerStrides(args);
  int32_t threads = static_cast<int32_t>(32 * config.getNumWarps());
  IRMapping mapping;
  FailureOr<gpu::GPUFuncOp> created = createKernel(
      rewriter, grid, func, moduleName, "kernel", threads, args, mapping);
  if (failed(created))
    return failure();
  gpu::GPUFuncOp kernel = *created;
  kernel->setAttr(kConfigAttrName, config);
  if (Attribute precision = grid->getAttr(kPrecisionAttrName))
    kernel->setAttr(kPrecisionAttrName, precision);
  if (Attribute splits = grid->getAttr(kKeySplitsAttrName))
    kernel->setAttr(kKeySplitsAttrName, splits);

  SmallVector<OpFoldResult> ubs = grid.getMixedUpperBound();
  // Coordinates in 32 bits, zero-extended: the index then keeps the
  // non-negative 32-bit range of a block id for LLVM (as an index subtraction
  // it did not, and 64-bit address math made ptxas spill in an f32 D64
  // kernel).
  Type i32 = rewriter.getI32Type();
  auto toI32 = [&](Value v) {
    return arith::IndexCastUIOp::create(rewriter, loc, i32, v).getResult();
  };
  auto toIndex = [&](Value v) {
    return arith::IndexCastUIOp::create(rewriter, loc, rewriter.getIndexType(),
                                        v)
        .getResult();
  };
  // Query block = gridDim.x - 1 - blockIdx.x: the last query blocks, the
  // heaviest under a causal or block-sparse mask, are dispatched first, so
  // the light ones fill the tail. Head = blockIdx.y, batch = blockIdx.z:
  // the launch order of y = b * Hq + h, within CUDA's limits of 65535
  // heads and 65535 batches (a y of b * Hq capped B * Hq at 65535: B =
  // 2048 at Hq = 32 could not launch), and no division.
  SmallVector<Value> ivs = grid.getInductionVars();
  Value nx = toI32(gpu::GridDimOp::create(rewriter, loc, gpu::Dimension::x));
  Value cx = toI32(gpu::BlockIdOp::create(rewriter, loc, gpu::Dimension::x));
  Value one32 = arith::ConstantIntOp::create(rewriter, loc, 1, 32);
  mapping.map(ivs[2], toIndex(arith::SubIOp::create(
                          rewriter, loc, nx,
                          arith::AddIOp::create(rewriter, loc, cx, one32))));
  mapping.map(
      ivs[0],
      toIndex(toI32(gpu::BlockIdOp::create(rewriter, loc, gpu::Dimension::z))));
  mapping.map(
      ivs[1],
      toIndex(toI32(gpu::BlockIdOp::create(rewriter, loc, gpu::Dimension::y))));
  // Split programs take the split count from the launch (gridDim.x), not
  // from their own evaluation of the rule: the launch's is the one whose
  // workspaces the combine kernel reads.
  if (grid->hasAttr(kKeySplitsAttrName))
    if (auto numSplits = dyn_cast<Value>(ubs[2]))
      mapping.map(numSplits, toIndex(nx));
  for (Operation &op : grid.getBody()->without_terminator())
    rewriter.clone(op, mapping);
  gpu::ReturnOp::create(rewriter, loc);
  for (unsigned i : outputs)
    refineViewTypes(kernel.getArgument(i));

  // The launch, in place of the grid.
  rewriter.setInsertionPoint(grid);
  for (unsigned i : outputs)
    args.buffers[i] =
        memref::CastOp::create(rewriter, loc, args.types[i], args.buffers[i]);
  auto toValue = [&](OpFoldResult ofr) -> Value {
    return getValueOrCreateConstantIndexOp(rewriter, loc, ofr);
  };
  // (query blocks, Hq, B).
  Value gridX = toValue(ubs[2]), gridY = toValue(ubs[1]),
        gridZ = toValue(ubs[0]);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  Value blockX = arith::ConstantIndexOp::create(rewriter, loc, threads);
  // The shared memory size is known after distribution; 0 until then.
  Value shared = arith::ConstantIntOp::create(rewriter, loc, 0, 32);
  gpu::LaunchFuncOp::create(rewriter, loc, kernel, {gridX, gridY, gridZ},
                            {blockX, one, one}, shared, args.buffers);
  rewriter.eraseOp(grid);
  return kernel;
}

FailureOr<gpu::GPUFuncOp> mlir::attn::outlineMaskMapGrid(RewriterBase &rewriter,
                                                         scf::ForallOp grid,
                                                         StringRef moduleName) {
  auto config = grid->getAttrOfType<KernelConfigAttr>(kMaskMapAttrName);
  if (!config)
    return rewriter.notifyMatchFailure(grid, "not a mask classification grid");
  if (grid.getRank() != 4 || !grid.isNormalized())
    return emitOpErrorAtLoc(grid,
                            "expects a normalized 4-D classification grid "
                            "(mask batch, mask head, query block, key block)");
  auto func = grid->getParentOfType<func::FuncOp>();
  auto module = grid->getParentOfType<ModuleOp>();
  if (!func || !module)
    return emitOpErrorAtLoc(grid, "expects the grid inside a func.func");

  KernelArguments args = collectKernelArguments(grid, func);
  Location loc = grid.getLoc();
  OpBuilder::InsertionGuard guard(rewriter);
  constexpr int32_t threads = 128;
  IRMapping mapping;
  FailureOr<gpu::GPUFuncOp> created = createKernel(
      rewriter, grid, func, moduleName, "mask_map", threads, args, mapping);
  if (failed(created))
    return failure();
  gpu::GPUFuncOp kernel = *created;
  kernel->setAttr(kMaskMapAttrName, config);

  // Entry coordinates: x = key block, y = query block, z = b * MH + h.
  SmallVector<OpFoldResult> ubs = grid.getMixedUpperBound();
  auto inKernel = [&](OpFoldResult ofr) -> Value {
    if (auto v = dyn_cast<Value>(ofr))
      return mapping.lookup(v);
    return arith::ConstantIndexOp::create(rewriter, loc,
                                          *getConstantIntValue(ofr));
  };
  Value heads = inKernel(ubs[1]);
  Value bz = gpu::BlockIdOp::create(rewriter, loc, gpu::Dimension::z);
  SmallVector<Value> ivs = grid.getInductionVars();
  mapping.map(ivs[0], arith::DivUIOp::create(rewriter, loc, bz, heads));
  mapping.map(ivs[1], arith::RemUIOp::create(rewriter, loc, bz, heads));
  mapping.map(ivs[2], gpu::BlockIdOp::create(rewriter, loc, gpu::Dimension::y));
  mapping.map(ivs[3], gpu::BlockIdOp::create(rewriter, loc, gpu::Dimension::x));
  Value tid = gpu::ThreadIdOp::create(rewriter, loc, gpu::Dimension::x);
  for (Operation &op : grid.getBody()->without_terminator())
    rewriter.clone(op, mapping);
  gpu::ReturnOp::create(rewriter, loc);

  // The threads split each block loop (thread t takes pairs t, t + 128, ...)
  // and OR its results across the thread block; thread 0 stores.
  SmallVector<scf::ForOp> loops;
  kernel.walk([&](scf::ForOp loop) {
    if (loop->hasAttr(kBlockReduceAttrName))
      loops.push_back(loop);
  });
  Type i32 = rewriter.getI32Type();
  for (scf::ForOp loop : loops) {
    rewriter.setInsertionPoint(loop);
    Value step = arith::ConstantIndexOp::create(rewriter, loc, threads);
    std::optional<int64_t> pairs = getConstantIntValue(loop.getUpperBound());
    int64_t unrollBy = 1;
    if (pairs && *pairs % threads == 0 &&
        matchPattern(loop.getLowerBound(), m_Zero()) &&
        matchPattern(loop.getStep(), m_One())) {
      // A whole number of pairs per thread: the loop over them, unrolled by
      // up to 16, so that a thread's mask reads are in flight together (as
      // written, one or four at a time: a memory latency per step, before
      // the attention kernel can start).
      int64_t perThread = *pairs / threads;
      rewriter.modifyOpInPlace(loop, [&] {
        loop.getUpperBoundMutable().assign(
            arith::ConstantIndexOp::create(rewriter, loc, perThread));
      });
      Value iv = loop.getInductionVar();
      OpBuilder::InsertionGuard inner(rewriter);
      rewriter.setInsertionPointToStart(loop.getBody());
      auto offset = arith::MulIOp::create(rewriter, loc, iv, step);
      Value pair = arith::AddIOp::create(rewriter, loc, tid, offset);
      rewriter.replaceAllUsesExcept(iv, pair, offset);
      unrollBy = std::min<int64_t>(perThread, 16);
    } else {
      rewriter.modifyOpInPlace(loop, [&] {
        loop.getLowerBoundMutable().assign(tid);
        loop.getStepMutable().assign(step);
      });
    }
    rewriter.setInsertionPointAfter(loop);
    for (Value result : loop.getResults()) {
      if (!result.getType().isInteger(1))
        return emitOpErrorAtLoc(loop, "expects i1 OR results in a block loop");
      Value predicate = arith::ExtUIOp::create(rewriter, loc, i32, result);
      auto any = NVVM::BarrierOp::create(
          rewriter, loc, TypeRange{i32}, Value(), Value(),
          NVVM::BarrierReductionAttr::get(rewriter.getContext(),
                                          NVVM::BarrierReduction::OR),
          predicate);
      Value zero = arith::ConstantIntOp::create(rewriter, loc, 0, 32);
      Value anyBit = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::ne, any.getRes(), zero);
      rewriter.replaceAllUsesExcept(result, anyBit, predicate.getDefiningOp());
    }
    // After the OR, which the unrolled loop's results then feed.
    if (unrollBy > 1 &&
        failed(loopUnrollByFactor(loop, static_cast<uint64_t>(unrollBy))))
      return emitOpErrorAtLoc(loop, "could not unroll the block loop");
  }
  SmallVector<memref::StoreOp> stores;
  kernel.walk([&](memref::StoreOp store) { stores.push_back(store); });
  storeFromThreadZero(rewriter, loc, tid, stores);

  // The launch, in place of the grid.
  rewriter.setInsertionPoint(grid);
  auto toValue = [&](OpFoldResult ofr) -> Value {
    return getValueOrCreateConstantIndexOp(rewriter, loc, ofr);
  };
  Value gridZ =
      arith::MulIOp::create(rewriter, loc, toValue(ubs[0]), toValue(ubs[1]));
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  Value blockX = arith::ConstantIndexOp::create(rewriter, loc, threads);
  Value shared = arith::ConstantIntOp::create(rewriter, loc, 0, 32);
  gpu::LaunchFuncOp::create(rewriter, loc, kernel,
                            {toValue(ubs[3]), toValue(ubs[2]), gridZ},
                            {blockX, one, one}, shared, args.buffers);
  rewriter.eraseOp(grid);
  kernel->setAttr(kSharedBytesAttrName, rewriter.getI64IntegerAttr(0));
  return kernel;
}

FailureOr<gpu::GPUFuncOp>
mlir::attn::outlineSplitCombineGrid(RewriterBase &rewriter, scf::ForallOp grid,
                                    StringRef moduleName) {
  if (!grid->hasAttr(kSplitCombineAttrName))
    return rewriter.notifyMatchFailure(grid, "not a split combine grid");
  if (grid.getRank() != 3 || !grid.isNormalized())
    return emitOpErrorAtLoc(grid, "expects a normalized 3-D combine grid "
                                  "(batch, head, query row)");
  auto func = grid->getParentOfType<func::FuncOp>();
  if (!func || !grid->getParentOfType<ModuleOp>())
    return emitOpErrorAtLoc(grid, "expects the grid inside a func.func");

  KernelArguments args = collectKernelArguments(grid, func);
  Location loc = grid.getLoc();
  OpBuilder::InsertionGuard guard(rewriter);
  SmallVector<unsigned> outputs = useCallerStrides(args);
  constexpr int32_t threads = 128;
  IRMapping mapping;
  FailureOr<gpu::GPUFuncOp> created = createKernel(
      rewriter, grid, func, moduleName, "combine", threads, args, mapping);
  if (failed(created))
    return failure();
  gpu::GPUFuncOp kernel = *created;
  kernel->setAttr(kSplitCombineAttrName, rewriter.getUnitAttr());

  // x = query row, y = head, z = batch.
  SmallVector<Value> ivs = grid.getInductionVars();
  mapping.map(ivs[0], gpu::BlockIdOp::create(rewriter, loc, gpu::Dimension::z));
  mapping.map(ivs[1], gpu::BlockIdOp::create(rewriter, loc, gpu::Dimension::y));
  mapping.map(ivs[2], gpu::BlockIdOp::create(rewriter, loc, gpu::Dimension::x));
  Value tid = gpu::ThreadIdOp::create(rewriter, loc, gpu::Dimension::x);
  Value step = arith::ConstantIndexOp::create(rewriter, loc, threads);
  for (Operation &op : grid.getBody()->without_terminator())
    rewriter.clone(op, mapping);
  gpu::ReturnOp::create(rewriter, loc);
  for (unsigned i : outputs)
    refineViewTypes(kernel.getArgument(i));

  // The threads split the column loop; the row's other stores (its
  // log-sum-exp) are thread 0's.
  kernel.walk([&](scf::ForOp loop) {
    if (!loop->hasAttr(kThreadLoopAttrName))
      return;
    rewriter.modifyOpInPlace(loop, [&] {
      loop.getLowerBoundMutable().assign(tid);
      loop.getStepMutable().assign(step);
    });
  });
  SmallVector<memref::StoreOp> rowStores;
  kernel.walk([&](memref::StoreOp store) {
    if (!store->getParentOfType<scf::ForOp>())
      rowStores.push_back(store);
  });
  storeFromThreadZero(rewriter, loc, tid, rowStores);

  // The launch, in place of the grid: (Tq, Hq, B) blocks.
  rewriter.setInsertionPoint(grid);
  for (unsigned i : outputs)
    args.buffers[i] =
        memref::CastOp::create(rewriter, loc, args.types[i], args.buffers[i]);
  SmallVector<OpFoldResult> ubs = grid.getMixedUpperBound();
  auto toValue = [&](OpFoldResult ofr) -> Value {
    return getValueOrCreateConstantIndexOp(rewriter, loc, ofr);
  };
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  Value blockX = arith::ConstantIndexOp::create(rewriter, loc, threads);
  Value shared = arith::ConstantIntOp::create(rewriter, loc, 0, 32);
  gpu::LaunchFuncOp::create(rewriter, loc, kernel,
                            {toValue(ubs[2]), toValue(ubs[1]), toValue(ubs[0])},
                            {blockX, one, one}, shared, args.buffers);
  rewriter.eraseOp(grid);
  return kernel;
}
