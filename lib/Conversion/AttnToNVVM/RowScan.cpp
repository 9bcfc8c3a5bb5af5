//===- RowScan.cpp - a block-map row scan, 32 classes a warp step -*- C++ -*-=//
//
// Part of the attn-mlir project.
//
// The scan of a program's block-map row (`attn.block_row_scan`, built by
// `--attn-online-softmax` for pipelined programs under a mask tensor) reads
// one class per iteration. Run as written by every thread, that is a loop of
// dependent steps (NJ byte loads and their selects) before the program's
// first K/V copy can be addressed, in every program (docs/GPU.md, Mask
// tensors: the block map). Here each lane of a warp
// loads one class of a step of 32 (a single 32-byte sector), and the
// step's live and not-zero lanes are two ballots: the first live block is
// the lowest set bit of the first non-empty live ballot, one past the last
// is the highest set bit of the last one plus one, and the zero run ends at
// the lowest not-zero bit at or after the first live block; a third ballot's
// population count adds up the triangular blocks. A row of up to 32 blocks
// (T <= 1024 with 32-key blocks) takes one step.
//
//===----------------------------------------------------------------------===//

#include "attn/Conversion/AttnToNVVM/AttnToNVVM.h"
#include "attn/Dialect/Attn/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::attn;

/// The class load of a scan loop: the one `memref.load` of its body, whose
/// last index is the loop's induction variable (as an index).
static memref::LoadOp findClassLoad(scf::ForOp loop) {
  memref::LoadOp found;
  int count = 0;
  loop.getBody()->walk([&](memref::LoadOp load) {
    found = load;
    ++count;
  });
  if (count != 1)
    return {};
  auto cast = found.getIndices().back().getDefiningOp<arith::IndexCastOp>();
  if (!cast || cast.getIn() != loop.getInductionVar())
    return {};
  return found;
}

static LogicalResult rewriteRowScan(RewriterBase &rewriter, scf::ForOp loop) {
  memref::LoadOp classLoad = findClassLoad(loop);
  Type i32 = rewriter.getI32Type();
  if (!classLoad || loop.getNumResults() != 4 ||
      !llvm::all_of(loop.getResultTypes(), [&](Type t) { return t == i32; }) ||
      !matchPattern(loop.getLowerBound(), m_Zero()) ||
      !matchPattern(loop.getStep(), m_One()))
    return emitOpErrorAtLoc(loop,
                            "expects a block-map row scan: an i32 loop from "
                            "0 by 1 over one class load, yielding (first, "
                            "last, zero-run end, triangular count)");
  Location loc = loop.getLoc();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(loop);
  auto c32 = [&](OpBuilder &b, int64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, v, 32);
  };
  Value count = loop.getUpperBound();
  auto removed = static_cast<int64_t>(MaskBlockClass::Removed);
  // The first step's classes are read as early as the map row's indices
  // allow, ahead of the program's other work (Q's copy): the step's ballots
  // wait for them after it, not before. Lanes past the row's length read
  // nothing; lanes past `count` drop theirs in the first step.
  Value map = classLoad.getMemRef();
  SmallVector<Value> rowIndices(classLoad.getIndices().drop_back());
  Value lane, firstClass;
  {
    OpBuilder::InsertionGuard early(rewriter);
    Block *block = loop->getBlock();
    Operation *after = nullptr;
    SmallVector<Value> operands(rowIndices);
    operands.push_back(map);
    for (Value v : operands) {
      Operation *def = v.getDefiningOp();
      Operation *inBlock = def ? block->findAncestorOpInBlock(*def) : nullptr;
      if (inBlock && (!after || after->isBeforeInBlock(inBlock)))
        after = inBlock;
    }
    if (after)
      rewriter.setInsertionPointAfter(after);
    else
      rewriter.setInsertionPointToStart(block);
    lane = NVVM::LaneIdOp::create(rewriter, loc, i32);
    int64_t rank = cast<MemRefType>(map.getType()).getRank();
    Value rowLength = arith::IndexCastOp::create(
        rewriter, loc, i32,
        memref::DimOp::create(rewriter, loc, map, rank - 1));
    Value inRow = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::slt, lane, rowLength);
    auto read =
        scf::IfOp::create(rewriter, loc, TypeRange{rewriter.getI8Type()}, inRow,
                          /*withElseRegion=*/true);
    rewriter.setInsertionPointToStart(read.thenBlock());
    SmallVector<Value> indices(rowIndices);
    indices.push_back(arith::IndexCastOp::create(
        rewriter, loc, rewriter.getIndexType(), lane));
    scf::YieldOp::create(
        rewriter, loc,
        memref::LoadOp::create(rewriter, loc, map, indices).getResult());
    rewriter.setInsertionPointToStart(read.elseBlock());
    scf::YieldOp::create(
        rewriter, loc,
        arith::ConstantIntOp::create(rewriter, loc, removed, 8).getResult());
    firstClass = read.getResult(0);
  }
  Value fullMask = c32(rewriter, -1);
  auto zeroTerms = static_cast<int64_t>(MaskBlockClass::Zero);
  auto triangularTerms = static_cast<int64_t>(MaskBlockClass::Triangular);

  auto scan = scf::ForOp::create(
      rewriter, loc, c32(rewriter, 0), count, c32(rewriter, 32),
      ValueRange{count, c32(rewriter, 0), count, c32(rewriter, 0)},
      [&](OpBuilder &b, Location l, Value base, ValueRange range) {
        Value first = range[0], last = range[1], zeroEnd = range[2];
        // Lane j of the step: block base + j, its class (Removed past the
        // row).
        Value j = arith::AddIOp::create(b, l, base, lane);
        Value inside =
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, j, count);
        Value later = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne,
                                            base, c32(b, 0));
        auto read =
            scf::IfOp::create(b, l, TypeRange{b.getI8Type()},
                              arith::AndIOp::create(b, l, inside, later),
                              /*withElseRegion=*/true);
        {
          OpBuilder::InsertionGuard inner(b);
          b.setInsertionPointToStart(read.thenBlock());
          SmallVector<Value> indices(rowIndices);
          indices.push_back(
              arith::IndexCastOp::create(b, l, b.getIndexType(), j));
          Value cls = memref::LoadOp::create(b, l, map, indices);
          scf::YieldOp::create(b, l, cls);
          // The first step (base 0): the early read.
          b.setInsertionPointToStart(read.elseBlock());
          scf::YieldOp::create(
              b, l,
              arith::SelectOp::create(
                  b, l, inside, firstClass,
                  arith::ConstantIntOp::create(b, l, removed, 8))
                  .getResult());
        }
        Value cls = read.getResult(0);
        auto ballot = [&](Value predicate) -> Value {
          return NVVM::VoteSyncOp::create(
              b, l, i32, fullMask, predicate,
              NVVM::VoteSyncKindAttr::get(b.getContext(),
                                          NVVM::VoteSyncKind::ballot));
        };
        Value live = ballot(arith::CmpIOp::create(
            b, l, arith::CmpIPredicate::ne, cls,
            arith::ConstantIntOp::create(b, l, removed, 8)));
        Value notZero = ballot(arith::AndIOp::create(
            b, l, inside,
            arith::CmpIOp::create(
                b, l, arith::CmpIPredicate::ne, cls,
                arith::ConstantIntOp::create(b, l, zeroTerms, 8))));
        Value zero = c32(b, 0);
        Value anyLive =
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, live, zero);
        auto lowestBit = [&](Value mask) -> Value {
          return arith::AddIOp::create(
              b, l, base,
              LLVM::CountTrailingZerosOp::create(b, l, i32, mask, false));
        };
        // The first live block: the lowest bit of the first live step.
        Value notYet =
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, first, count);
        Value newFirst = arith::SelectOp::create(
            b, l, arith::AndIOp::create(b, l, notYet, anyLive), lowestBit(live),
            first);
        // One past the last: past the highest bit of the last live step.
        Value past = arith::SubIOp::create(
            b, l, arith::AddIOp::create(b, l, base, c32(b, 32)),
            LLVM::CountLeadingZerosOp::create(b, l, i32, live, false));
        Value newLast = arith::SelectOp::create(b, l, anyLive, past, last);
        // The zero run's end: the lowest not-zero bit from the first live
        // block on (every bit of the steps after the one that found it).
        Value from = arith::MaxSIOp::create(
            b, l, arith::SubIOp::create(b, l, newFirst, base), zero);
        from = arith::MinSIOp::create(b, l, from, c32(b, 31));
        Value below = arith::SubIOp::create(
            b, l, arith::ShLIOp::create(b, l, c32(b, 1), from), c32(b, 1));
        Value ends = arith::AndIOp::create(
            b, l, notZero, arith::XOrIOp::create(b, l, below, fullMask));
        Value started = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt,
                                              newFirst, count);
        Value running = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq,
                                              zeroEnd, count);
        Value anyEnd =
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, ends, zero);
        Value endsHere = arith::AndIOp::create(
            b, l, arith::AndIOp::create(b, l, started, running), anyEnd);
        Value newZeroEnd =
            arith::SelectOp::create(b, l, endsHere, lowestBit(ends), zeroEnd);
        Value triangular = ballot(arith::CmpIOp::create(
            b, l, arith::CmpIPredicate::eq, cls,
            arith::ConstantIntOp::create(b, l, triangularTerms, 8)));
        Value numTriangular = arith::AddIOp::create(
            b, l, range[3], LLVM::CtPopOp::create(b, l, i32, triangular));
        scf::YieldOp::create(
            b, l, ValueRange{newFirst, newLast, newZeroEnd, numTriangular});
      });
  rewriter.replaceOp(loop, scan.getResults());
  return success();
}

LogicalResult mlir::attn::distributeBlockRowScans(RewriterBase &rewriter,
                                                  gpu::GPUFuncOp kernel) {
  SmallVector<scf::ForOp> scans;
  kernel.walk([&](scf::ForOp loop) {
    if (loop->hasAttr(kBlockRowScanAttrName))
      scans.push_back(loop);
  });
  for (scf::ForOp loop : scans)
    if (failed(rewriteRowScan(rewriter, loop)))
      return failure();
  return success();
}
