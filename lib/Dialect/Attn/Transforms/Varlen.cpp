//===- Varlen.cpp - packed sequences: a program's sequence ------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
// Under `cu_seqlens`, the query dimension of the program grid holds slots,
// not blocks of rows. The rows of the packed query fall into N + 2
// segments with boundaries c_0 = 0, c_t = cu_q[t-1] (t = 1 .. N + 1) and
// c_{N+2} = Tq: the rows before cu_q[0] (segment 0), sequence t - 1
// (segments 1 .. N) and the rows from cu_q[N] on (segment N + 1). Segment t
// owns the slots from first(t) = floor(c_t / block_m) + t: these rise
// strictly with t, and segment t's ceil((c_{t+1} - c_t) / block_m) blocks
// fit before first(t + 1) = floor(c_{t+1} / block_m) + t + 1. So a slot
// needs no table built before the launch: the program finds the last t with
// first(t) <= slot by a binary search (ceil(log2(N + 2)) loads of cu_q, in
// an scf.while), and computes block slot - first(t) of its segment, if it
// has that many. The grid has ceil(Tq / block_m) + N + 2 slots, at most
// N + 3 of them idle.
//
// Every value read is clamped (c_t to 0..Tq, cu_k to 0..Tk, each end to at
// least its start), so cu_seqlens that do not rise within the operands
// never make a program read or write outside them; the runtimes refuse
// such values before a launch. Segments 0 and N + 1 have no keys: their
// rows get zeros and a log-sum-exp of -inf, as a sequence without keys.
//
//===----------------------------------------------------------------------===//

#include "ProgramBuilder.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::detail;

void ProgramBuilder::buildSequenceLookup() {
  Value cuQ = op.getCuSeqlensQ(), cuK = op.getCuSeqlensK();
  Value zero = index(0), one = index(1), bm = index(blockM);
  Value totalQ = dim(op.getQuery(), 2), totalK = dim(op.getKey(), 2);
  // N + 1 offsets; segments 0 .. N + 1; boundary N + 2 is Tq.
  Value numOffsets = dim(cuQ, 0);
  Value lastOffset = arith::SubIOp::create(b, loc, numOffsets, one);
  Value end = arith::AddIOp::create(b, loc, numOffsets, one);
  auto clamp = [&](Value v, Value lo, Value hi) -> Value {
    return arith::MinSIOp::create(b, loc, arith::MaxSIOp::create(b, loc, v, lo),
                                  hi);
  };
  auto load = [&](Value offsets, Value i, Value hi) -> Value {
    Value at = clamp(i, zero, lastOffset);
    Value v = arith::IndexCastOp::create(
        b, loc, b.getIndexType(),
        memref::LoadOp::create(b, loc, offsets, ValueRange{at}));
    return clamp(v, zero, hi);
  };
  // c_t, clamped to 0..Tq.
  auto boundary = [&](Value t) -> Value {
    Value c = load(cuQ, arith::SubIOp::create(b, loc, t, one), totalQ);
    Value first =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, t, zero);
    Value last =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, t, end);
    c = arith::SelectOp::create(b, loc, first, zero, c);
    return arith::SelectOp::create(b, loc, last, totalQ, c);
  };
  auto firstSlot = [&](Value c, Value t) -> Value {
    return arith::AddIOp::create(b, loc, arith::DivUIOp::create(b, loc, c, bm),
                                 t);
  };

  // The last segment t in [0, N + 2) with first(t) <= slot: lo keeps
  // first(lo) <= slot (first(0) = 0), hi is past the answer.
  Value slot = op.getQueryBlock();
  Type indexType = b.getIndexType();
  auto search = scf::WhileOp::create(b, loc, TypeRange{indexType, indexType},
                                     ValueRange{zero, end});
  {
    OpBuilder::InsertionGuard guard(b);
    Block *before = b.createBlock(&search.getBefore(), {},
                                  {indexType, indexType}, {loc, loc});
    Value lo = before->getArgument(0), hi = before->getArgument(1);
    Value more =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                              arith::SubIOp::create(b, loc, hi, lo), one);
    scf::ConditionOp::create(b, loc, more, ValueRange{lo, hi});
    Block *after = b.createBlock(&search.getAfter(), {}, {indexType, indexType},
                                 {loc, loc});
    lo = after->getArgument(0);
    hi = after->getArgument(1);
    Value mid = arith::DivUIOp::create(
        b, loc, arith::AddIOp::create(b, loc, lo, hi), index(2));
    Value atOrBefore = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::sle, firstSlot(boundary(mid), mid), slot);
    scf::YieldOp::create(
        b, loc,
        ValueRange{arith::SelectOp::create(b, loc, atOrBefore, mid, lo),
                   arith::SelectOp::create(b, loc, atOrBefore, hi, mid)});
  }
  Value segment = search.getResult(0);

  // The segment's rows [qBegin, qEnd) and, for a sequence, its keys.
  Value qBegin = boundary(segment);
  Value qEnd = arith::MaxSIOp::create(
      b, loc, boundary(arith::AddIOp::create(b, loc, segment, one)), qBegin);
  Value local = arith::SubIOp::create(b, loc, slot, firstSlot(qBegin, segment));
  Value sequence = arith::SubIOp::create(b, loc, segment, one);
  Value kBegin = load(cuK, sequence, totalK);
  Value kEnd =
      arith::MaxSIOp::create(b, loc, load(cuK, segment, totalK), kBegin);
  Value isSequence = arith::AndIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, segment, one),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, segment,
                            numOffsets));
  Value length = arith::SubIOp::create(b, loc, qEnd, qBegin);
  // A slot with rows: 0 <= local * block_m < length.
  Value active = arith::AndIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, local, zero),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                            arith::MulIOp::create(b, loc, local, bm), length));
  queryBlock = arith::SelectOp::create(b, loc, active, local, zero);
  queryLen = arith::SelectOp::create(b, loc, active, length, zero);
  keyLen = arith::SelectOp::create(
      b, loc, arith::AndIOp::create(b, loc, active, isSequence),
      arith::SubIOp::create(b, loc, kEnd, kBegin), zero);
  queryBase = qBegin;
  keyBase = kBegin;
  regionBatch =
      clamp(sequence, zero, arith::SubIOp::create(b, loc, lastOffset, one));
}
