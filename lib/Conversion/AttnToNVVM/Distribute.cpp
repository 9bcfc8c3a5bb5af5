//===- Distribute.cpp - block buffers and block math onto threads -*- C++ -*-//
//
// Part of the attn-mlir project.
//
// Maps the block-level IR of one program (block buffers + linalg ops made by
// --attn-online-softmax) onto the warps and threads of a thread block:
//
//  - 2-D buffers written by a contraction (scores S/P, accumulator) live in
//    registers in the mma.sync m16n8 accumulator layout: warp w owns rows
//    [w * rowsPerWarp, (w + 1) * rowsPerWarp); in each 16x8 tile, lane l
//    holds rows l/4 and l/4 + 8, columns 2*(l%4) and 2*(l%4) + 1;
//  - 1-D row buffers (m, l, alpha) live in registers: each lane holds the
//    values of its rows (replicated over the 4 lanes of a quad);
//  - other 2-D buffers (Q, K, V tiles) live in shared memory, rows padded by
//    16 bytes so that the fragment loads of 8 rows hit 8 different banks;
//  - contractions become nvvm.mma.sync (m16n8k16 for f16/bf16, m16n8k8 tf32
//    for f32), or FMAs for f32 with ieee precision; P is converted to the
//    input type in registers and fed to P*V directly; tf32 Q fragments are
//    read into registers once, after Q's copy;
//  - row reductions reduce in-thread, then over the quad with shuffles
//    (Reduction.cpp; the softmax denominator's only once, after the key
//    loops);
//  - a mask tensor's block-skip flag is an OR over the warp (vote.sync)
//    where the block math it guards is per warp, else over the thread
//    block (bar.red.or);
//  - elementwise block math is cloned per owned element; a row scale of
//    the accumulator (acc *= alpha) runs only when some row of the warp
//    has alpha != 1 (a warp vote: scaling by 1 is the identity).
//
// Per-thread register arrays are private `memref.alloca`s indexed only with
// constants, which LLVM promotes to registers. Tile loads and fills are in
// Copy.cpp, their cp.async form in Pipeline.cpp, contractions in
// Contraction.cpp; the output's store is in Copy.cpp too.
//
//===----------------------------------------------------------------------===//

#include "Distributor.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::detail;

Buffer *Distributor::lookup(Value v, OpFoldResult *rows, int64_t *cols) {
  // Through the views: the outermost one gives the rows and columns; a view
  // of one slot of a multi-buffered tile gives the slot.
  OpFoldResult viewRows;
  std::optional<int64_t> viewCols;
  Value slot;
  while (true) {
    // Packed query heads view a block's rows as (1, p, Tq [, X]): the rows
    // are the view's source's.
    if (auto expand = v.getDefiningOp<memref::ExpandShapeOp>()) {
      v = expand.getSrc();
      continue;
    }
    auto sub = v.getDefiningOp<memref::SubViewOp>();
    if (!sub)
      break;
    bool ofSlots = sub.getSourceType().getRank() == 3;
    if (!viewRows) {
      SmallVector<OpFoldResult> sizes = sub.getMixedSizes();
      viewRows = sizes[ofSlots ? 1 : 0];
      if (sizes.size() > (ofSlots ? 2u : 1u))
        viewCols = getConstantIntValue(sizes[ofSlots ? 2 : 1]);
    }
    if (ofSlots)
      slot = getValueOrCreateConstantIndexOp(b, loc, sub.getMixedOffsets()[0]);
    v = sub.getSource();
  }
  auto it = buffers.find(v);
  if (it == buffers.end())
    return nullptr;
  Buffer *buf = &it->second;
  if (rows)
    *rows = viewRows ? viewRows : b.getIndexAttr(buf->rows);
  if (cols)
    *cols = viewCols.value_or(buf->cols);
  if (!slot || buf->slots == 1 || !buf->storage)
    return buf;
  auto [view, inserted] = slotViews.try_emplace({v, slot}, *buf);
  if (inserted) {
    // Slot `slot` at base + slot * stageBytes, computed where the slot is.
    OpBuilder::InsertionGuard guard(b);
    if (Operation *def = slot.getDefiningOp())
      b.setInsertionPointAfter(def);
    else
      b.setInsertionPointToStart(slot.getParentBlock());
    view->second.stage = slot;
    view->second.base = arith::AddIOp::create(
        b, loc, buf->base,
        arith::MulIOp::create(b, loc, slot, cIndex(buf->stageBytes)));
  }
  return &view->second;
}

bool mlir::attn::detail::isContraction(linalg::GenericOp op) {
  auto iters = op.getIteratorTypesArray();
  return op.getNumDpsInputs() == 2 && op.getNumDpsInits() == 1 &&
         iters.size() == 3 && iters[2] == utils::IteratorType::reduction;
}

LogicalResult Distributor::classify() {
  kernel.walk([&](memref::AllocaOp alloca) {
    MemRefType type = alloca.getType();
    if (!type.hasStaticShape() || type.getRank() > 3)
      return;
    Buffer buf;
    buf.type = type;
    if (type.getRank() == 3) {
      // A tile multi-buffered by --attn-pipeline: one slot per stage.
      buf.slots = type.getDimSize(0);
      buf.type =
          MemRefType::get(type.getShape().drop_front(), type.getElementType());
      buf.rows = type.getDimSize(1);
      buf.cols = type.getDimSize(2);
      buf.layout = Layout::Shared;
      buffers[alloca.getResult()] = buf;
      return;
    }
    if (type.getRank() == 0) {
      buf.layout = Layout::Scalar;
      buffers[alloca.getResult()] = buf;
      return;
    }
    buf.rows = type.getDimSize(0);
    buf.cols = type.getRank() == 2 ? type.getDimSize(1) : 1;
    buf.layout = type.getRank() == 1 ? Layout::Row : Layout::Shared;
    buffers[alloca.getResult()] = buf;
  });
  kernel.walk([&](linalg::GenericOp op) {
    if (!isContraction(op))
      return;
    if (Buffer *out = lookup(op.getDpsInits()[0]))
      out->layout = Layout::Acc;
  });
  // A block copied from an accumulator block (the next key block's scores
  // into S, --attn-pipeline's scores-ahead) is one too.
  kernel.walk([&](linalg::CopyOp op) {
    Buffer *from = lookup(op.getDpsInputs()[0]);
    Buffer *to = lookup(op.getDpsInits()[0]);
    if (from && to && from->layout == Layout::Acc && to->slots == 1 &&
        to->rows == from->rows && to->cols == from->cols &&
        op.getDpsInits()[0].getDefiningOp<memref::AllocaOp>())
      to->layout = Layout::Acc;
  });
  // A block read elementwise into an accumulator block of its shape (the
  // mask terms added to S) is laid out like it, in registers.
  kernel.walk([&](linalg::GenericOp op) {
    if (isContraction(op) || op.getNumDpsInits() != 1)
      return;
    Buffer *out = lookup(op.getDpsInits()[0]);
    if (!out || out->layout != Layout::Acc)
      return;
    for (Value in : op.getDpsInputs())
      if (Buffer *buf = lookup(in); buf && buf->layout == Layout::Shared &&
                                    buf->slots == 1 && buf->rows == out->rows &&
                                    buf->cols == out->cols &&
                                    in.getDefiningOp<memref::AllocaOp>())
        buf->layout = Layout::Acc;
  });
  for (auto &[value, buf] : buffers) {
    if (buf.layout == Layout::Scalar) {
      if (!buf.type.getElementType().isInteger(1))
        return emitOpErrorAtLoc(kernel, "expects 0-d block buffers of i1, got ")
               << buf.type;
      continue;
    }
    if (buf.rows != config.getBlockM() && buf.layout != Layout::Shared)
      return emitOpErrorAtLoc(kernel,
                              "expects register blocks of block_m rows");
    if (buf.layout == Layout::Acc && buf.cols % 8 != 0)
      return emitOpErrorAtLoc(kernel,
                              "expects accumulator blocks with a multiple "
                              "of 8 columns, got ")
             << buf.type;
    if (buf.layout == Layout::Shared && buf.cols % 16 != 0)
      return emitOpErrorAtLoc(kernel,
                              "supports head dims and key blocks that are "
                              "multiples of 16 on the GPU, got a block ")
             << buf.type;
  }
  return success();
}

Value Distributor::emitFastTanh(Value x) {
  return LLVM::InlineAsmOp::create(
             b, loc, x.getType(), ValueRange{x}, "tanh.approx.f32 $0, $1;",
             "=f,f", /*has_side_effects=*/false, /*is_align_stack=*/false,
             LLVM::tailcallkind::TailCallKind::None,
             LLVM::AsmDialectAttr::get(b.getContext(),
                                       LLVM::AsmDialect::AD_ATT),
             /*operand_attrs=*/ArrayAttr())
      .getResult(0);
}

Value Distributor::emitExactTanh(Value x) {
  Type f32 = x.getType();
  auto constant = [&](double value) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(value));
  };
  Value negative =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, constant(0));
  Value magnitude = arith::SelectOp::create(
      b, loc, negative, arith::NegFOp::create(b, loc, x), x);
  Value scaled = arith::MulFOp::create(b, loc, magnitude,
                                       constant(2.0 * 1.4426950408889634));
  Value power =
      LLVM::CallIntrinsicOp::create(
          b, loc, f32, b.getStringAttr("llvm.nvvm.ex2.approx.ftz.f32"),
          ValueRange{scaled})
          .getResult(0);
  Value one = constant(1.0);
  Value result = arith::SubFOp::create(
      b, loc, one,
      arith::DivFOp::create(b, loc, constant(2.0),
                            arith::AddFOp::create(b, loc, power, one)));
  return arith::SelectOp::create(b, loc, negative,
                                 arith::NegFOp::create(b, loc, result), result);
}

SmallVector<Value> Distributor::cloneBody(linalg::GenericOp op, ValueRange args,
                                          ArrayRef<Value> indices) {
  IRMapping mapping;
  Block *body = op.getBlock();
  for (auto [arg, value] : llvm::zip(body->getArguments(), args))
    mapping.map(arg, value);
  Type f32 = b.getF32Type();
  for (Operation &inner : body->without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
      mapping.map(index.getResult(), indices[index.getDim()]);
      continue;
    }
    // exp2 on the special-function unit (ex2.approx), not libdevice.
    if (auto exp2 = dyn_cast<math::Exp2Op>(inner);
        exp2 && exp2.getType() == f32) {
      Value x = mapping.lookupOrDefault(exp2.getOperand());
      auto call = LLVM::CallIntrinsicOp::create(
          b, loc, f32, b.getStringAttr("llvm.nvvm.ex2.approx.ftz.f32"),
          ValueRange{x});
      mapping.map(exp2.getResult(), call.getResult(0));
      continue;
    }
    // tanh (a softcap) on the special-function unit as well: one
    // tanh.approx.f32 (relative error 2^-11, the order of the 16-bit and
    // tf32 inputs' rounding) instead of libdevice's tanhf and its registers.
    // `precision = ieee`: 1 - 2 / (2^(2 log2(e) |x|) + 1) with the sign of
    // x, on ex2.approx (relative error 2^-22) and an IEEE division.
    if (auto tanh = dyn_cast<math::TanhOp>(inner);
        tanh && tanh.getType() == f32) {
      Value x = mapping.lookupOrDefault(tanh.getOperand());
      mapping.map(tanh.getResult(), ieee ? emitExactTanh(x) : emitFastTanh(x));
      continue;
    }
    // |x| of an integer as a select: NVVM's lowering has no absi of index.
    if (auto abs = dyn_cast<math::AbsIOp>(inner)) {
      Value x = mapping.lookupOrDefault(abs.getOperand());
      Value zero =
          arith::ConstantOp::create(b, loc, b.getZeroAttr(x.getType()));
      Value negative =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x, zero);
      mapping.map(
          abs.getResult(),
          arith::SelectOp::create(b, loc, negative,
                                  arith::SubIOp::create(b, loc, zero, x), x));
      continue;
    }
    // fmod as libdevice's __nv_fmodf: NVVM has no frem.
    if (auto rem = dyn_cast<arith::RemFOp>(inner);
        rem && rem.getType() == f32) {
      auto module = rem->getParentOfType<gpu::GPUModuleOp>();
      auto fmod = module.lookupSymbol<LLVM::LLVMFuncOp>("__nv_fmodf");
      if (!fmod) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(module.getBody());
        fmod = LLVM::LLVMFuncOp::create(
            b, loc, "__nv_fmodf", LLVM::LLVMFunctionType::get(f32, {f32, f32}));
      }
      auto call = LLVM::CallOp::create(
          b, loc, fmod,
          ValueRange{mapping.lookupOrDefault(rem.getLhs()),
                     mapping.lookupOrDefault(rem.getRhs())});
      mapping.map(rem.getResult(), call.getResult());
      continue;
    }
    // fma as one FFMA (llvm.intr.fma), not libdevice's __nv_fmaf.
    if (auto fma = dyn_cast<math::FmaOp>(inner)) {
      auto fused =
          LLVM::FMAOp::create(b, loc, mapping.lookupOrDefault(fma.getA()),
                              mapping.lookupOrDefault(fma.getB()),
                              mapping.lookupOrDefault(fma.getC()));
      mapping.map(fma.getResult(), fused.getResult());
      continue;
    }
    b.clone(inner, mapping);
  }
  SmallVector<Value> results;
  for (Value v : body->getTerminator()->getOperands())
    results.push_back(mapping.lookupOrDefault(v));
  return results;
}

LogicalResult Distributor::rewriteGeneric(linalg::GenericOp op) {
  if (isContraction(op))
    return rewriteContraction(op);
  Value out = op.getDpsInits()[0];
  Buffer *outBuf = lookup(out);
  if (!outBuf) {
    // A store of a register block into global memory.
    Buffer *src =
        op.getNumDpsInputs() == 1 ? lookup(op.getDpsInputs()[0]) : nullptr;
    if (src && src->layout == Layout::Row)
      return rewriteRowStore(op, *src);
    if (!src || src->layout != Layout::Acc)
      return op.emitOpError("expects block math on block buffers");
    return rewriteStore(op, *src);
  }
  if (outBuf->layout == Layout::Scalar)
    return rewriteBlockAny(op, *outBuf);
  auto iters = op.getIteratorTypesArray();
  if (iters.size() == 2 && iters[1] == utils::IteratorType::reduction)
    return rewriteRowReduction(op);
  return rewriteElementwise(op);
}

bool Distributor::isRowScale(linalg::GenericOp op,
                             ArrayRef<Buffer *> operands) {
  if (op.getNumLoops() != 2 || op.getNumDpsInputs() != 1 ||
      op.getNumDpsInits() != 1 || operands[0]->layout != Layout::Row ||
      operands[1]->layout != Layout::Acc)
    return false;
  Block *body = op.getBlock();
  auto mul = dyn_cast<arith::MulFOp>(body->front());
  if (!mul || !mul.getType().isF32() ||
      &body->front() != body->getTerminator()->getPrevNode() ||
      body->getTerminator()->getOperand(0) != mul.getResult())
    return false;
  Value in = body->getArgument(0), out = body->getArgument(1);
  return (mul.getLhs() == in && mul.getRhs() == out) ||
         (mul.getLhs() == out && mul.getRhs() == in);
}

LogicalResult Distributor::rewriteElementwise(linalg::GenericOp op) {
  SmallVector<Buffer *> operands;
  for (OpOperand &operand : op->getOpOperands()) {
    Buffer *buf = lookup(operand.get());
    if (!buf || buf->layout == Layout::Shared)
      return op.emitOpError("expects register block operands");
    operands.push_back(buf);
  }
  b.setInsertionPoint(op);
  // x * 1 == x exactly (NaN, infinities and signed zeros included), so the
  // warp may skip the multiplies when all of its rows' factors are 1. The
  // vote and branch pay where the rescale outweighs the per-score work of
  // a key block (more accumulator columns than keys: D128 with 32-key
  // blocks); at D64 with 64-key blocks they split the loop body's schedule
  // (docs/GPU.md, The online softmax on the GPU).
  if (isRowScale(op, operands) && operands[1]->cols > config.getBlockN()) {
    Value one = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0));
    Value scales = arith::ConstantIntOp::create(b, loc, 0, 1);
    for (int64_t r = 0; r < rowTiles * 2; ++r)
      scales = arith::OrIOp::create(
          b, loc, scales,
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE,
                                loadPrivate(*operands[0], r), one));
    Value fullMask = arith::ConstantIntOp::create(b, loc, -1, 32);
    Value any = NVVM::VoteSyncOp::create(b, loc, b.getI1Type(), fullMask,
                                         scales, NVVM::VoteSyncKind::any);
    auto ifOp = scf::IfOp::create(b, loc, any, /*withElseRegion=*/false);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  }
  if (llvm::any_of(operands, [](Buffer *buf) { return buf->transposedAcc; }))
    return rewriteTransposedElementwise(op, operands);
  unsigned numLoops = op.getNumLoops();
  int64_t cols = numLoops == 2 ? op.getStaticLoopRanges()[1] : 1;
  int64_t nTiles = numLoops == 2 ? cols / 8 : 1;
  for (int64_t mt = 0; mt < rowTiles; ++mt) {
    for (int64_t i = 0; i < 2; ++i) {
      Value row = rowOfLane(mt, i);
      for (int64_t nt = 0; nt < nTiles; ++nt) {
        for (int64_t j = 0; j < (numLoops == 2 ? 2 : 1); ++j) {
          Value col = numLoops == 2 ? colOfLane(nt, j) : Value();
          auto index = [&](Buffer *buf) {
            return buf->layout == Layout::Row ? mt * 2 + i
                                              : accIndex(*buf, mt, nt, i, j);
          };
          SmallVector<Value> args;
          for (Buffer *buf : operands)
            args.push_back(loadPrivate(*buf, index(buf)));
          SmallVector<Value> results = cloneBody(op, args, {row, col});
          for (auto [k, result] : llvm::enumerate(results)) {
            Buffer *buf = operands[op.getNumDpsInputs() + k];
            storePrivate(*buf, index(buf), result);
          }
        }
      }
    }
  }
  b.eraseOp(op);
  return success();
}

bool Distributor::isWarpUniformFlag(linalg::GenericOp op) {
  // The readers of the flag: scf.if conditions whose regions hold only
  // per-warp work. Block-wide work: tile copies and fills of shared memory
  // (the one-stage K/V loads), wgmma (warpgroups), and ieee contractions
  // that pass P through shared memory.
  Value flag = op.getDpsInits()[0];
  for (Operation *user : flag.getUsers()) {
    // Writers: fills and the ORs into it (this one and any other, e.g. a
    // triangular and a mixed mask block's, which are reduced alike).
    auto writer = dyn_cast<DestinationStyleOpInterface>(user);
    if (writer && isa<linalg::FillOp, linalg::GenericOp>(user) &&
        llvm::is_contained(writer.getDpsInits(), flag))
      continue;
    auto load = dyn_cast<memref::LoadOp>(user);
    if (!load)
      return false;
    for (Operation *reader : load->getUsers()) {
      auto ifOp = dyn_cast<scf::IfOp>(reader);
      if (!ifOp || ifOp.getCondition() != load.getResult())
        return false;
      WalkResult blockWide = ifOp->walk([&](Operation *inner) {
        if (isa<gpu::BarrierOp>(inner))
          return WalkResult::interrupt();
        if (isa<linalg::CopyOp, linalg::FillOp>(inner)) {
          // Register copies (m into m_new) and fills are per thread.
          Buffer *buf =
              lookup(cast<DestinationStyleOpInterface>(inner).getDpsInits()[0]);
          if (!buf || buf->layout == Layout::Shared)
            return WalkResult::interrupt();
        }
        if (auto generic = dyn_cast<linalg::GenericOp>(inner)) {
          if (!isContraction(generic))
            return WalkResult::advance();
          Buffer *a = lookup(generic.getDpsInputs()[0]);
          if (wgmmaContractions.contains(generic) ||
              (ieee && (!a || a->layout == Layout::Acc)))
            return WalkResult::interrupt();
        }
        return WalkResult::advance();
      });
      if (blockWide.wasInterrupted())
        return false;
    }
  }
  return true;
}

LogicalResult Distributor::rewriteBlockAny(linalg::GenericOp op, Buffer &out) {
  Buffer *in =
      op.getNumDpsInputs() == 1 ? lookup(op.getDpsInputs()[0]) : nullptr;
  auto yield = cast<linalg::YieldOp>(op.getBlock()->getTerminator());
  auto combiner = yield.getValues()[0].getDefiningOp<arith::OrIOp>();
  Value acc = op.getBlock()->getArguments().back();
  bool overRows = in && in->layout == Layout::Row && op.getNumLoops() == 1;
  if (!in || (in->layout != Layout::Acc && !overRows) || !combiner ||
      (combiner.getLhs() != acc && combiner.getRhs() != acc))
    return op.emitOpError("expects an i1 OR over a register block or a row "
                          "block into a 0-d buffer");
  b.setInsertionPoint(op);
  // Each thread ORs the elements it owns in the accumulator layout (the
  // scores pass reads the same mask elements right after; a row-major
  // mapping measured more spills in the ptxas matrix), or over rows the
  // rows it holds.
  Value partial = loadPrivate(out, 0);
  for (int64_t mt = 0; mt < rowTiles; ++mt)
    for (int64_t i = 0; i < 2; ++i) {
      if (overRows) {
        partial =
            cloneBody(op, ValueRange{loadPrivate(*in, mt * 2 + i), partial},
                      {rowOfLane(mt, i)})[0];
        continue;
      }
      for (int64_t nt = 0; nt < in->cols / 8; ++nt)
        for (int64_t j = 0; j < 2; ++j)
          partial = cloneBody(
              op,
              ValueRange{loadPrivate(*in, accIndex(*in, mt, nt, i, j)),
                         partial},
              {rowOfLane(mt, i), colOfLane(nt, j)})[0];
    }
  // Then the warp ORs its lanes' predicates, where every op that the flag
  // guards works on the warp's own rows (each warp then skips the blocks
  // that are masked for its rows, with no barrier); else the thread block
  // ORs them.
  // (Under warp specialization every such flag is the consumers' OR over
  // all of them, as it was for the causal diagonal blocks' one flag: voted
  // per warp, their skips made ptxas spill the seed's `causal` consumers at
  // 216 registers, 16 / 200 bytes; an OR over more rows only skips less.)
  bool warpUniform = isWarpUniformFlag(op) && !warpSpecialized;
  // An OR over the program known to be true (a causal diagonal block of
  // its loop's range): no thread-block reduction for it.
  // (Under warp specialization, a flag that would be the warp's stays the
  // consumers' OR, marked or not.)
  if (!warpUniform && op->hasAttr(kProgramLiveAttrName) &&
      !(warpSpecialized && isWarpUniformFlag(op))) {
    storePrivate(out, 0, arith::ConstantIntOp::create(b, loc, 1, 1));
    b.eraseOp(op);
    return success();
  }
  if (warpUniform) {
    Value fullMask = arith::ConstantIntOp::create(b, loc, -1, 32);
    storePrivate(out, 0,
                 NVVM::VoteSyncOp::create(b, loc, b.getI1Type(), fullMask,
                                          partial, NVVM::VoteSyncKind::any));
    b.eraseOp(op);
    return success();
  }
  Type i32 = b.getI32Type();
  Value predicate = arith::ExtUIOp::create(b, loc, i32, partial);
  auto any =
      NVVM::BarrierOp::create(b, loc, TypeRange{i32}, Value(), Value(),
                              NVVM::BarrierReductionAttr::get(
                                  b.getContext(), NVVM::BarrierReduction::OR),
                              predicate);
  Value zero = arith::ConstantIntOp::create(b, loc, 0, 32);
  storePrivate(out, 0,
               arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                     any.getRes(), zero));
  b.eraseOp(op);
  return success();
}

FailureOr<int64_t> Distributor::run() {
  loc = kernel.getLoc();
  int64_t blockM = config.getBlockM(), warps = config.getNumWarps();
  numThreads = 32 * warps;
  if (blockM % (16 * warps) != 0)
    return emitOpErrorAtLoc(kernel,
                            "expects block_m to be a multiple of 16 * "
                            "num_warps (each warp owns whole m16 tiles), "
                            "got block_m = ")
           << blockM << ", num_warps = " << warps;
  rowsPerWarp = blockM / warps;
  rowTiles = rowsPerWarp / 16;
  if (failed(classify()))
    return failure();

  // Thread geometry.
  Block &entry = kernel.getBody().front();
  b.setInsertionPointToStart(&entry);
  tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value warp = arith::DivUIOp::create(b, loc, tid, cIndex(32));
  Value lane = arith::RemUIOp::create(b, loc, tid, cIndex(32));
  warpRow0 = arith::MulIOp::create(b, loc, warp, cIndex(rowsPerWarp));
  quadRow = arith::DivUIOp::create(b, loc, lane, cIndex(4));
  quadCol = arith::RemUIOp::create(b, loc, lane, cIndex(4));
  quadCol2 = arith::MulIOp::create(b, loc, quadCol, cIndex(2));
  laneMod8 = arith::RemUIOp::create(b, loc, lane, cIndex(8));
  laneBit3 = arith::RemUIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, lane, cIndex(8)), cIndex(2));
  laneHi = arith::DivUIOp::create(b, loc, lane, cIndex(16));
  laneMod16 = arith::RemUIOp::create(b, loc, lane, cIndex(16));

  // Q K^T and tf32 P V on wgmma where they can be: their shared tiles in
  // core-matrix layout.
  selectWgmmaOperands();
  // tf32 mma.sync operands read 16 bytes at a time where they can be.
  selectWideTf32Operands();

  // Storage: shared views, register arrays, ieee P scratch (in the kernel's
  // entry block, where LLVM promotes the register arrays).
  auto workgroup =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  dynamicShared = gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                      MemRefLayoutAttrInterface{}, workgroup));
  Type f32 = b.getF32Type();
  // Row tiles by tensor copies, aligned with the swizzled tiles.
  selectRowTensorCopies();
  // Swizzled tiles first, together, then the realigned ones
  // (allocateSharedView).
  for (bool swizzled : {true, false})
    for (auto &[value, buf] : buffers)
      if (buf.layout == Layout::Shared &&
          (swizzled ? buf.swizzle : buf.realigned))
        allocateSharedView(buf.rows, buf.cols, buf.type.getElementType(), buf,
                           buf.slots);
  for (auto &[value, buf] : buffers) {
    if (buf.layout == Layout::Shared && (buf.swizzle || buf.realigned))
      continue;
    if (buf.layout == Layout::Shared) {
      allocateSharedView(buf.rows, buf.cols, buf.type.getElementType(), buf,
                         buf.slots);
    } else if (buf.layout == Layout::Scalar) {
      buf.storage = memref::AllocaOp::create(
          b, loc, MemRefType::get({1}, buf.type.getElementType()));
    } else {
      int64_t n = buf.layout == Layout::Acc ? rowTiles * (buf.cols / 8) * 4
                                            : rowTiles * 2;
      buf.storage = memref::AllocaOp::create(b, loc, MemRefType::get({n}, f32));
    }
  }
  if (ieee) {
    SmallVector<linalg::GenericOp> contractions;
    kernel.walk([&](linalg::GenericOp op) {
      if (isContraction(op))
        contractions.push_back(op);
    });
    for (linalg::GenericOp op : contractions) {
      Buffer *a = lookup(op.getDpsInputs()[0]);
      if (a && a->layout == Layout::Acc && !scratch.count(a->storage)) {
        Buffer s;
        s.layout = Layout::Shared;
        s.type = MemRefType::get({a->rows, a->cols}, f32);
        s.rows = a->rows;
        s.cols = a->cols;
        allocateSharedView(a->rows, a->cols, f32, s);
        scratch[a->storage] = s;
      }
    }
  }

  // tf32 Q fragments read once, into registers, after Q's copy.
  selectCachedFragments();
  // K tiles by TMA tensor copies where asked and possible.
  if (failed(selectTensorCopies()))
    return failure();
  // A producer warpgroup for them, where asked and possible (WarpRoles.cpp).
  selectWarpSpecialization();

  // The loops --attn-pipeline expanded wait for their tiles at their head;
  // prefetched Q tiles are waited for before the first one.
  waitInPipelinedLoops();
  selectPrologueWaits();
  cachePrefetchedFragments();

  // Rewrite the block math in program order.
  SmallVector<Operation *> work;
  kernel.walk([&](Operation *op) {
    if (isa<linalg::FillOp, linalg::CopyOp, linalg::GenericOp>(op))
      work.push_back(op);
    // Reads of a 0-d flag (the condition of a block skip).
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      auto it = buffers.find(load.getMemRef());
      if (it != buffers.end() && it->second.layout == Layout::Scalar)
        work.push_back(op);
    }
  });
  // Softmax denominators summed per lane in the key loops.
  selectDeferredRowSums(work);
  DenseSet<Operation *> done;
  for (Operation *op : work) {
    if (done.contains(op))
      continue;
    materializeRowSums(op);
    LogicalResult result = success();
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      b.setInsertionPoint(load);
      b.replaceOp(load, loadPrivate(buffers[load.getMemRef()], 0));
      continue;
    }
    if (auto fill = dyn_cast<linalg::FillOp>(op))
      result = rewriteFill(fill);
    else if (auto copy = dyn_cast<linalg::CopyOp>(op))
      result = copy->hasAttr(kAsyncCopyAttrName)
                   ? rewriteAsyncCopyRun(copy, done)
                   : rewriteCopyRun(copy, done);
    else
      result = rewriteGeneric(cast<linalg::GenericOp>(op));
    if (failed(result))
      return failure();
  }

  // The original block buffers and their views are dead now (users before
  // the views they use).
  SetVector<Operation *> dead;
  for (auto &[value, buf] : buffers) {
    dead.insert(value.getDefiningOp());
    for (size_t i = dead.size() - 1; i < dead.size(); ++i)
      for (Operation *user : dead[i]->getUsers())
        if (isa<memref::SubViewOp, memref::ExpandShapeOp>(user))
          dead.insert(user);
  }
  for (Operation *op : llvm::reverse(dead)) {
    if (!op->use_empty())
      return op->emitOpError("block buffer still in use after distribution");
    b.eraseOp(op);
  }
  // Back-to-back barriers are one barrier (a refill barrier only if both
  // were).
  SmallVector<gpu::BarrierOp> redundant;
  kernel.walk([&](gpu::BarrierOp barrierOp) {
    if (isa_and_nonnull<gpu::BarrierOp>(barrierOp->getPrevNode()))
      redundant.push_back(barrierOp);
  });
  for (gpu::BarrierOp barrierOp : redundant) {
    Operation *kept = barrierOp->getPrevNode();
    if (!barrierOp->hasAttr(kRefillBarrierAttrName))
      kept->removeAttr(kRefillBarrierAttrName);
    b.eraseOp(barrierOp);
  }
  // The producer warpgroup and the consumers, where the copies' slice
  // allows; else the kernel as it was.
  if (warpSpecialized && failed(splitWarpRoles(b, kernel, numThreads)))
    dropWarpRoles(b, kernel);
  return sharedOffset;
}

FailureOr<int64_t>
mlir::attn::distributeProgram(RewriterBase &rewriter, gpu::GPUFuncOp kernel,
                              KernelConfigAttr config,
                              const ConvertAttnToNVVMOptions &options) {
  std::optional<TensorCopyMode> tensorCopies =
      parseTensorCopyMode(options.tensorCopies);
  if (!tensorCopies)
    return emitError(kernel.getLoc(), "tensor-copies must be auto or none, "
                                      "got '")
           << options.tensorCopies << "'";
  auto precision = kernel->getAttrOfType<PrecisionKindAttr>(kPrecisionAttrName);
  bool ieee = precision && precision.getValue() == PrecisionKind::IEEE;
  // A kernel that scans a mask block map's rows (RowScan.cpp) reads the
  // shared memory's base afresh for its wgmma descriptors
  // (Distributor::uniformSharedAddress).
  bool scansRows = false;
  kernel.walk([&](scf::ForOp loop) {
    scansRows |= loop->hasAttr(kBlockRowScanAttrName);
  });
  if (failed(distributeBlockRowScans(rewriter, kernel)))
    return failure();
  Distributor distributor(rewriter, kernel, config, options, ieee,
                          *tensorCopies);
  distributor.freshSharedBase = scansRows;
  return distributor.run();
}
