//===- Outline.cpp - program grid to gpu.func + gpu.launch_func -*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToNVVM/AttnToNVVM.h"
#include "attn/Dialect/Attn/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
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
  if (!def || !isPure(def) || def->getNumRegions() != 0)
    return failure();
  for (Value operand : def->getOperands())
    if (failed(cloneDefinition(b, operand, mapping)))
      return failure();
  b.clone(*def, mapping);
  return success();
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

FailureOr<gpu::GPUFuncOp> mlir::attn::outlineProgramGrid(RewriterBase &rewriter,
                                                         scf::ForallOp grid,
                                                         StringRef moduleName) {
  auto config = grid->getAttrOfType<KernelConfigAttr>(kConfigAttrName);
  if (!config)
    return rewriter.notifyMatchFailure(grid, "not a program grid");
  if (grid.getRank() != 3 || !grid.isNormalized())
    return grid.emitOpError("expects a normalized 3-D program grid "
                            "(batch, head, query block)");
  auto func = grid->getParentOfType<func::FuncOp>();
  auto module = grid->getParentOfType<ModuleOp>();
  if (!func || !module)
    return grid.emitOpError("expects the program grid inside a func.func");

  // Kernel arguments: the buffers the programs use, host arguments first.
  SetVector<Value> above;
  getUsedValuesDefinedAbove(grid.getRegion(), above);
  for (OpFoldResult ub : grid.getMixedUpperBound())
    if (auto v = dyn_cast<Value>(ub))
      above.insert(v);
  SmallVector<Value> buffers;
  for (Value v : above)
    if (isa<MemRefType>(v.getType()))
      buffers.push_back(v);
  auto argIndex = [&](Value v) -> int64_t {
    // Inputs reach the grid as strided views (memref.cast) of the arguments.
    while (auto castOp = v.getDefiningOp<memref::CastOp>())
      v = castOp.getSource();
    auto arg = dyn_cast<BlockArgument>(v);
    if (arg && arg.getOwner() == &func.getBody().front())
      return arg.getArgNumber();
    return -1;
  };
  llvm::stable_sort(buffers, [&](Value a, Value b) {
    int64_t ia = argIndex(a), ib = argIndex(b);
    return (ia < 0 ? INT64_MAX : ia) < (ib < 0 ? INT64_MAX : ib);
  });
  SmallVector<int32_t> hostArgs;
  SmallVector<Type> argTypes;
  for (Value v : buffers) {
    hostArgs.push_back(argIndex(v));
    argTypes.push_back(v.getType());
  }

  // The kernel.
  Location loc = grid.getLoc();
  gpu::GPUModuleOp gpuModule =
      getOrCreateGPUModule(rewriter, module, moduleName);
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToEnd(gpuModule.getBody());
  int32_t threads = static_cast<int32_t>(32 * config.getNumWarps());
  auto kernel =
      gpu::GPUFuncOp::create(rewriter, loc, (func.getName() + "_kernel").str(),
                             rewriter.getFunctionType(argTypes, {}));
  kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                  rewriter.getUnitAttr());
  kernel.setKnownBlockSizeAttr(rewriter.getDenseI32ArrayAttr({threads, 1, 1}));
  kernel->setAttr(kKernelArgsAttrName, rewriter.getDenseI32ArrayAttr(hostArgs));
  kernel->setAttr(kConfigAttrName, config);
  if (Attribute precision = grid->getAttr(kPrecisionAttrName))
    kernel->setAttr(kPrecisionAttrName, precision);
  SymbolTable(gpuModule).insert(kernel);

  Block &entry = kernel.getBody().front();
  rewriter.setInsertionPointToStart(&entry);
  IRMapping mapping;
  for (auto [value, arg] : llvm::zip(buffers, entry.getArguments()))
    mapping.map(value, arg);
  for (Value v : above) {
    if (isa<MemRefType>(v.getType()))
      continue;
    if (failed(cloneDefinition(rewriter, v, mapping)))
      return grid.emitOpError("uses a value the kernel cannot recompute: ")
             << v;
  }

  // Program coordinates: query block = gridDim.x - 1 - blockIdx.x (the
  // last query blocks, the heaviest under a causal or block-sparse mask,
  // are dispatched first, so the light ones fill the tail), blockIdx.y =
  // b * Hq + h.
  SmallVector<OpFoldResult> ubs = grid.getMixedUpperBound();
  Value heads;
  if (auto v = dyn_cast<Value>(ubs[1]))
    heads = mapping.lookup(v);
  else
    heads = arith::ConstantIndexOp::create(rewriter, loc,
                                           *getConstantIntValue(ubs[1]));
  // In 32 bits, zero-extended: the index then keeps the non-negative
  // 32-bit range of a block id for LLVM (as an index subtraction it did not,
  // and 64-bit address math made ptxas spill in an f32 D64 kernel).
  Type i32 = rewriter.getI32Type();
  auto toI32 = [&](Value v) {
    return arith::IndexCastUIOp::create(rewriter, loc, i32, v).getResult();
  };
  Value bx = arith::IndexCastUIOp::create(
      rewriter, loc, rewriter.getIndexType(),
      arith::SubIOp::create(
          rewriter, loc,
          toI32(gpu::GridDimOp::create(rewriter, loc, gpu::Dimension::x)),
          arith::AddIOp::create(
              rewriter, loc,
              toI32(gpu::BlockIdOp::create(rewriter, loc, gpu::Dimension::x)),
              arith::ConstantIntOp::create(rewriter, loc, 1, 32))));
  // b = y / Hq and h = y % Hq in 32 bits too (a 64-bit division by a
  // dynamic head count is a long subroutine).
  Value by = toI32(gpu::BlockIdOp::create(rewriter, loc, gpu::Dimension::y));
  Value heads32 = toI32(heads);
  auto toIndex = [&](Value v) {
    return arith::IndexCastUIOp::create(rewriter, loc, rewriter.getIndexType(),
                                        v)
        .getResult();
  };
  Value batch = toIndex(arith::DivUIOp::create(rewriter, loc, by, heads32));
  Value head = toIndex(arith::RemUIOp::create(rewriter, loc, by, heads32));
  SmallVector<Value> ivs = grid.getInductionVars();
  mapping.map(ivs[0], batch);
  mapping.map(ivs[1], head);
  mapping.map(ivs[2], bx);
  for (Operation &op : grid.getBody()->without_terminator())
    rewriter.clone(op, mapping);
  gpu::ReturnOp::create(rewriter, loc);

  // The launch, in place of the grid.
  rewriter.setInsertionPoint(grid);
  auto toValue = [&](OpFoldResult ofr) -> Value {
    return getValueOrCreateConstantIndexOp(rewriter, loc, ofr);
  };
  Value gridX = toValue(ubs[2]);
  Value gridY =
      arith::MulIOp::create(rewriter, loc, toValue(ubs[0]), toValue(ubs[1]));
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  Value blockX = arith::ConstantIndexOp::create(rewriter, loc, threads);
  // The shared memory size is known after distribution; 0 until then.
  Value shared = arith::ConstantIntOp::create(rewriter, loc, 0, 32);
  gpu::LaunchFuncOp::create(rewriter, loc, kernel, {gridX, gridY, one},
                            {blockX, one, one}, shared, buffers);
  rewriter.eraseOp(grid);
  return kernel;
}
