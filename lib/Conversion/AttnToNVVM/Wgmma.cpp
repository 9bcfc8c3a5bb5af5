//===- Wgmma.cpp - Q K^T and P V on Hopper's warpgroup MMA ------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
// The wgmma contractions of distributeProgram (sm_90a, whole warpgroups of
// 16-row warps): which contractions and tiles take them
// (selectWgmmaOperands), and their emission (contractWithWgmma): operands
// by descriptor from core-matrix or 128-byte-swizzled tiles, or A from
// registers (tf32 Q's cached fragments, 16-bit P) as inline PTX; 16-bit V
// read N-major. See docs/Wgmma.md.
//
//===----------------------------------------------------------------------===//

#include "Distributor.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::detail;

void Distributor::selectWgmmaOperands() {
  int64_t warps = numThreads / 32;
  SmallVector<linalg::GenericOp> generics;
  kernel.walk([&](linalg::GenericOp op) { generics.push_back(op); });
  // A kernel with scores-ahead loops (--attn-pipeline) runs its Q K^T on
  // wgmma: the schedule exists to overlap the next block's wgmma with this
  // block's math.
  bool scoresAhead = llvm::any_of(generics, [](linalg::GenericOp op) {
    return op->hasAttr(kScoresAheadAttrName);
  });
  if (config.getTarget() != "sm_90a" || ieee || rowTiles != 1 || warps % 4)
    return;
  // 16-bit contractions go to wgmma where the head dim (`dim`: k of Q K^T, n
  // of P V) is 64 or 128, the shapes tuned; any in a kernel with
  // scores-ahead loops.
  auto allowed = [&](Type elt, int64_t dim) {
    return scoresAhead || (!elt.isF32() && (dim == 64 || dim == 128));
  };
  auto dims = [ctx = kernel.getContext()](unsigned x, unsigned y) {
    return contractionMap(ctx, x, y);
  };
  DenseSet<Buffer *> operands;
  for (linalg::GenericOp op : generics) {
    if (!isContraction(op))
      continue;
    OpFoldResult aRows, bRows;
    Buffer *a = lookup(op.getDpsInputs()[0], &aRows);
    Buffer *bBuf = lookup(op.getDpsInputs()[1], &bRows);
    Buffer *c = lookup(op.getDpsInits()[0]);
    if (!a || !bBuf || !c || bBuf->layout != Layout::Shared ||
        c->layout != Layout::Acc)
      continue;
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    if (a->layout == Layout::Acc) {
      // 16-bit P V: C[i][j] += P[i][k] * V[k][j] with P converted in
      // registers and V ([k][n], n contiguous) read N-major by descriptor
      // (imm-trans-b): no transposed copy. The next block's scores, if in
      // flight, are waited for with it (wgmma groups complete in order).
      // V's rows must be whole 128-byte atoms (the swizzled layout). tf32 P V
      // stays on mma.sync: tf32 B must be K-major, and V's tile is not.
      int64_t k = op.getStaticLoopRanges()[2];
      Type vElt = bBuf->type.getElementType();
      int64_t rowBytes = bBuf->cols * 2;
      if (!(vElt.isF16() || vElt.isBF16()) || !allowed(vElt, c->cols) ||
          maps[0] != dims(0, 2) || maps[1] != dims(2, 1) ||
          maps[2] != dims(0, 1) || a->cols != k || bBuf->rows != k || k % 16 ||
          bBuf->cols != c->cols || c->cols % 8 || c->cols > 256 ||
          rowBytes % 128 || a->rows != 16 * warps ||
          getConstantIntValue(bRows) != bBuf->rows)
        continue;
      wgmmaContractions.insert(op);
      operands.insert(bBuf);
      continue;
    }
    if (a->layout != Layout::Shared)
      continue;
    // C[i][j] += A[i][k] * B[j][k]: both operands K-major, as tf32 needs.
    if (maps[0] != dims(0, 2) || maps[1] != dims(1, 2) || maps[2] != dims(0, 1))
      continue;
    Type elt = a->type.getElementType();
    if (elt != bBuf->type.getElementType() ||
        !(elt.isF32() || elt.isF16() || elt.isBF16()) ||
        !allowed(elt, op.getStaticLoopRanges()[2]))
      continue;
    int64_t kStep = elt.isF32() ? 8 : 16;
    int64_t k = op.getStaticLoopRanges()[2];
    if (a->cols != k || bBuf->cols != k || k % kStep || c->cols % 8 ||
        c->cols > 256 || a->rows != 16 * warps || bBuf->rows != c->cols ||
        getConstantIntValue(aRows) != a->rows ||
        getConstantIntValue(bRows) != bBuf->rows)
      continue;
    wgmmaContractions.insert(op);
    operands.insert(a);
    operands.insert(bBuf);
  }
  // A tile that any other block op reads keeps the padded layout, and so do
  // the contractions that read it.
  DenseSet<Buffer *> shared;
  for (linalg::GenericOp op : generics)
    if (!wgmmaContractions.contains(op))
      for (Value in : op.getDpsInputs())
        if (Buffer *buf = lookup(in); buf && operands.contains(buf))
          shared.insert(buf);
  for (Operation *op : llvm::to_vector(wgmmaContractions))
    if (shared.contains(lookup(op->getOperand(0))) ||
        shared.contains(lookup(op->getOperand(1))))
      wgmmaContractions.erase(op);
  // Tiles of 8-row groups and whole 128-byte atoms take the swizzled layout.
  auto swizzles = [](const Buffer &buf) {
    int64_t rowBytes =
        buf.cols * buf.type.getElementType().getIntOrFloatBitWidth() / 8;
    return buf.rows % 8 == 0 && rowBytes % 128 == 0;
  };
  for (Operation *op : wgmmaContractions) {
    Buffer *a = lookup(op->getOperand(0)), *bBuf = lookup(op->getOperand(1));
    if (a->layout == Layout::Acc) {
      // 16-bit V: the swizzled layout of K, read N-major.
      bBuf->coreMatrix = bBuf->swizzle = true;
      continue;
    }
    bBuf->coreMatrix = true;
    bBuf->swizzle = swizzles(*bBuf);
    if (!a->type.getElementType().isF32() ||
        !cachesFragments(
            cast<linalg::GenericOp>(op).getStaticLoopRanges()[2])) {
      a->coreMatrix = true; // tf32 Q in registers where it fits
      a->swizzle = swizzles(*a);
    }
  }
}

Value Distributor::uniformSharedAddress(Value address) {
  if (!swizzleBase || !freshSharedBase)
    return address;
  // The dynamic shared memory's address, read here from its symbol (an
  // asm with side effects: LLVM neither hoists nor merges it): ptxas then
  // builds the descriptor in uniform registers. From one value computed at
  // the entry, ptxas keeps it in an ordinary register in the mask kernels
  // and moves it and each descriptor to uniform ones before every wgmma
  // (docs/Wgmma.md, Mask-map kernels and uniform registers). Only in kernels
  // that scan a mask block map's rows: where ptxas keeps the base in a
  // uniform register anyway (the `causal` kernel, the 16-bit ones), the
  // reads cost 9 instructions a loop iteration.
  Value raw =
      LLVM::InlineAsmOp::create(
          b, loc, b.getI32Type(), ValueRange(),
          "mov.u32 $0, __dynamic_shmem__0;", "=r",
          /*has_side_effects=*/true, /*is_align_stack=*/false,
          LLVM::tailcallkind::TailCallKind::None,
          LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
          /*operand_attrs=*/ArrayAttr())
          .getResult(0);
  Value base = arith::IndexCastUIOp::create(b, loc, b.getIndexType(), raw);
  Value aligned = arith::AndIOp::create(
      b, loc, arith::AddIOp::create(b, loc, base, cIndex(1023)),
      cIndex(~int64_t(1023)));
  return arith::AddIOp::create(
      b, loc, aligned, arith::SubIOp::create(b, loc, address, swizzleBase));
}

void Distributor::fenceForAsyncProxy() {
  NVVM::FenceProxyOp::create(
      b, loc, NVVM::ProxyKind::async_shared,
      NVVM::SharedSpaceAttr::get(b.getContext(),
                                 NVVM::SharedSpace::shared_cta));
}

/// Issues `steps` wgmma.mma_async with A from registers, as inline PTX
/// (MLIR 22's nvvm.wgmma.mma_async takes A only by descriptor), on `acc`, a
/// struct of `regs` f32 accumulators tied in and out. `instruction` is the
/// opcode with its shape and types, `immediates` what follows the B
/// descriptor; the operands of step kt (four i32 A registers, then B's
/// descriptor) come from `operandsOf`. The first wgmma carries the
/// wgmma.fence: every register it reads (the accumulators' initial values,
/// A, the descriptor) is written before the fence, as the PTX ISA asks. As
/// separate ops, the NVPTX backend puts the accumulators' zeroing and the
/// descriptor's arithmetic after the fence, and ptxas then serializes every
/// wgmma of the kernel (C7511; docs/Wgmma.md, wgmma with A in registers).
/// With `operandsFirst`, every step's operands are built before the first
/// wgmma: 16-bit P's conversions between two wgmmas make ptxas inject a
/// warpgroup.arrive before the second (C7519).
static Value
issueRegisterAWgmma(OpBuilder &b, Location loc, Value acc, int64_t regs,
                    StringRef instruction, StringRef immediates, int64_t steps,
                    bool operandsFirst,
                    function_ref<SmallVector<Value>(int64_t)> operandsOf) {
  std::string asmString;
  llvm::raw_string_ostream os(asmString);
  os << instruction << " {";
  for (int64_t r = 0; r < regs; ++r)
    os << (r ? ", $" : "$") << r;
  os << "}, {$" << regs << ", $" << regs + 1 << ", $" << regs + 2 << ", $"
     << regs + 3 << "}, $" << regs + 4 << ", " << immediates << ";";
  std::string firstAsm = "wgmma.fence.sync.aligned;\n\t" + asmString;
  std::string constraints;
  for (int64_t r = 0; r < regs; ++r)
    constraints += "=f,";
  constraints += "r,r,r,r,l";
  for (int64_t r = 0; r < regs; ++r)
    constraints += "," + std::to_string(r);
  SmallVector<SmallVector<Value>> built;
  if (operandsFirst)
    for (int64_t kt = 0; kt < steps; ++kt)
      built.push_back(operandsOf(kt));
  Type structType = acc.getType();
  for (int64_t kt = 0; kt < steps; ++kt) {
    SmallVector<Value> operands = operandsFirst ? built[kt] : operandsOf(kt);
    for (int64_t r = 0; r < regs; ++r)
      operands.push_back(LLVM::ExtractValueOp::create(b, loc, acc, r));
    acc =
        LLVM::InlineAsmOp::create(
            b, loc, structType, operands, kt ? asmString : firstAsm,
            constraints,
            /*has_side_effects=*/true, /*is_align_stack=*/false,
            LLVM::tailcallkind::TailCallKind::None,
            LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
            /*operand_attrs=*/ArrayAttr())
            .getResult(0);
  }
  return acc;
}

LogicalResult Distributor::contractWithWgmma(Buffer &a, Buffer &bBuf, Buffer &c,
                                             int64_t k, bool async) {
  MLIRContext *ctx = b.getContext();
  Type elt = bBuf.type.getElementType();
  int64_t bytes = elt.getIntOrFloatBitWidth() / 8;
  int64_t e = 16 / bytes, kStep = 32 / bytes, n = c.cols;
  Type i64 = b.getI64Type(), f32 = b.getF32Type();
  // Descriptor of a K-major core-matrix tile (no swizzle): start address,
  // leading byte offset (the next core matrix along K: 128 bytes) and
  // stride byte offset (the next 8 rows), each in 16-byte units. A k step
  // (32 bytes) is two core matrices along K: +16 in the start field, which
  // cannot carry out of it (shared addresses are below 2^18).
  // A swizzled tile (Buffer::swizzle): swizzle mode 1 (128 bytes, bits
  // 62-63), stride byte offset 1024 (the next 8 rows of a 128-byte atom),
  // leading byte offset unused (a k step stays in one atom); a k step is 32
  // bytes further in the atom, and the next atom `rows * 128` bytes on.
  auto descriptor = [&](const Buffer &tile, Value base,
                        int64_t stride) -> Value {
    Value address =
        arith::IndexCastOp::create(b, loc, i64, uniformSharedAddress(base));
    Value start = arith::ShRUIOp::create(
        b, loc,
        arith::AndIOp::create(
            b, loc, address, arith::ConstantIntOp::create(b, loc, 0x3FFFF, 64)),
        arith::ConstantIntOp::create(b, loc, 4, 64));
    int64_t fields =
        tile.swizzle ? (int64_t(1) << 16) | (int64_t(1024 >> 4) << 32) |
                           (int64_t(1) << 62)
                     : (int64_t(128 >> 4) << 16) | (int64_t(stride >> 4) << 32);
    return arith::OrIOp::create(
        b, loc, start, arith::ConstantIntOp::create(b, loc, fields, 64));
  };
  auto atStep = [&](const Buffer &tile, Value desc, int64_t kt) -> Value {
    int64_t offset = tile.swizzle
                         ? kt * 32 / 128 * tile.rows * 128 + kt * 32 % 128
                         : kt * 256;
    return arith::AddIOp::create(
        b, loc, desc, arith::ConstantIntOp::create(b, loc, offset >> 4, 64));
  };
  // The m64nN f32 accumulator of a warp is its m16n8 tiles in order: thread
  // register 4 j + 2 i + jj is (row 8 i + lane / 4, col 8 j + 2 (lane % 4)
  // + jj), as accIndex(c, 0, j, i, jj) numbers them.
  int64_t regs = n / 2;
  auto structType =
      LLVM::LLVMStructType::getLiteral(ctx, SmallVector<Type>(regs, f32));
  Value acc = LLVM::UndefOp::create(b, loc, structType);
  for (int64_t r = 0; r < regs; ++r)
    acc = LLVM::InsertValueOp::create(b, loc, acc, loadPrivate(c, r), r);
  NVVM::WGMMATypes type = elt.isF32()   ? NVVM::WGMMATypes::tf32
                          : elt.isF16() ? NVVM::WGMMATypes::f16
                                        : NVVM::WGMMATypes::bf16;
  auto cached = fragmentCache.find(a.storage);
  if (a.layout == Layout::Shared && !a.coreMatrix &&
      cached == fragmentCache.end()) {
    // selectWgmmaOperands left this tile for registers, and its copy did
    // not cache it (it is not copied once, outside the key loops).
    return emitOpErrorAtLoc(kernel, "expects the tf32 A fragments of a wgmma "
                                    "contraction cached in registers");
  }
  if (a.layout == Layout::Acc) {
    // 16-bit P V: A is P, converted in registers: k step kt (16 keys) is
    // P's n tiles 2 kt and 2 kt + 1, rows r and r + 8, exactly the A
    // fragment of m64nNk16 (as for mma.sync m16n8k16). B is V's swizzled
    // tile ([key][d], d contiguous) read N-major (imm-trans-b = 1): in the
    // canonical 128-byte-swizzle N-major layout, an atom is 8 keys x 64
    // elements of d (128 bytes a key), the next 8 keys 1024 bytes on
    // (stride byte offset) and the next 64 of d `rows * 128` bytes on
    // (leading byte offset); a k step is two 8-key groups, 2048 bytes.
    Value address = arith::IndexCastOp::create(b, loc, i64,
                                               uniformSharedAddress(bBuf.base));
    Value start = arith::ShRUIOp::create(
        b, loc,
        arith::AndIOp::create(
            b, loc, address, arith::ConstantIntOp::create(b, loc, 0x3FFFF, 64)),
        arith::ConstantIntOp::create(b, loc, 4, 64));
    int64_t fields = (int64_t(bBuf.rows * 128 >> 4) << 16) |
                     (int64_t(1024 >> 4) << 32) | (int64_t(1) << 62);
    Value bDesc = arith::OrIOp::create(
        b, loc, start, arith::ConstantIntOp::create(b, loc, fields, 64));
    StringRef name = elt.isF16() ? "f16" : "bf16";
    std::string instruction = llvm::formatv(
        "wgmma.mma_async.sync.aligned.m64n{0}k16.f32.{1}.{1}", n, name);
    auto pairType = VectorType::get({2}, elt);
    acc = issueRegisterAWgmma(
        b, loc, acc, regs, instruction, "1, 1, 1, 1", k / 16,
        /*operandsFirst=*/true, [&](int64_t kt) {
          SmallVector<Value> operands;
          for (int64_t half = 0; half < 2; ++half)
            for (int64_t i = 0; i < 2; ++i) {
              Value pair[2];
              for (int64_t j = 0; j < 2; ++j)
                pair[j] = arith::TruncFOp::create(
                    b, loc, elt,
                    loadPrivate(a, accIndex(a, 0, 2 * kt + half, i, j)));
              operands.push_back(LLVM::BitcastOp::create(
                  b, loc, b.getI32Type(),
                  vector::FromElementsOp::create(b, loc, pairType, pair)));
            }
          operands.push_back(arith::AddIOp::create(
              b, loc, bDesc,
              arith::ConstantIntOp::create(b, loc, kt * 2048 >> 4, 64)));
          return operands;
        });
  } else if (cached != fragmentCache.end()) {
    // tf32 A from registers: Q's fragments (cacheFragments).
    Value bDesc = descriptor(bBuf, bBuf.base, bBuf.cols / e * 128);
    std::string instruction = llvm::formatv(
        "wgmma.mma_async.sync.aligned.m64n{0}k8.f32.tf32.tf32", n);
    acc = issueRegisterAWgmma(
        b, loc, acc, regs, instruction, "1, 1, 1", k / 8,
        /*operandsFirst=*/false, [&](int64_t kt) {
          SmallVector<Value> operands;
          for (int64_t r = 0; r < 4; ++r)
            operands.push_back(loadPrivate(cached->second, kt * 4 + r));
          for (Value &v : operands)
            v = LLVM::BitcastOp::create(b, loc, b.getI32Type(), v);
          operands.push_back(atStep(bBuf, bDesc, kt));
          return operands;
        });
  } else {
    // Warpgroup g computes rows [64 g, 64 g + 64): its A starts 8 row
    // groups of core matrices further per warpgroup.
    Value group = arith::DivUIOp::create(b, loc, tid, cIndex(128));
    int64_t groupBytes = a.swizzle ? 8 * 1024 : 8 * (a.cols / e) * 128;
    Value aDesc = descriptor(
        a,
        arith::AddIOp::create(
            b, loc, a.base,
            arith::MulIOp::create(b, loc, group, cIndex(groupBytes))),
        a.cols / e * 128);
    Value bDesc = descriptor(bBuf, bBuf.base, bBuf.cols / e * 128);
    NVVM::WgmmaFenceAlignedOp::create(b, loc);
    for (int64_t kt = 0; kt < k / kStep; ++kt)
      acc = NVVM::WgmmaMmaAsyncOp::create(
          b, loc, structType, acc, atStep(a, aDesc, kt),
          atStep(bBuf, bDesc, kt), NVVM::MMAShapeAttr::get(ctx, 64, n, kStep),
          type, type, NVVM::WGMMATypes::f32, NVVM::WGMMAScaleOut::one,
          NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one,
          NVVM::MMALayout::row, NVVM::MMALayout::col,
          /*satfinite=*/nullptr);
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  // An async one is waited for where its accumulators are first read.
  if (async)
    asyncAccumulators.insert(c.storage);
  else
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
  for (int64_t r = 0; r < regs; ++r)
    storePrivate(c, r, LLVM::ExtractValueOp::create(b, loc, acc, r));
  return success();
}
