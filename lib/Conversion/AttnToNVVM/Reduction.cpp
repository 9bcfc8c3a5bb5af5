//===- Reduction.cpp - row reductions over the quad ------------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
// Row reductions of distributeProgram. A row of an accumulator-layout block
// is spread over the 4 lanes of a quad, 2 elements per 8-column tile each:
// every lane combines its elements, then the quad combines with two XOR
// shuffles. The row max combines as a balanced tree (exact in any order; 3
// dependent steps instead of 7 for 8 elements); sums run in column order
// (a tree is slower at head dim 64; docs/GPU.md, The online softmax on the
// GPU).
//
// Deferred row sums: the softmax denominator l is only ever scaled by a
// row-uniform factor (l *= alpha) and added to (l += rowsum(P)) inside the
// key loops, and read after them. Both updates are linear, so each lane
// keeps the sum of its own columns and the quad sums the 4 partials once,
// before the first other read (FlashAttention-2 keeps its l the same way):
// two shuffles and two adds fewer per row and key block. The lane's sum is
// emitted just before P V, after the accumulator's rescale branch, where
// ptxas interleaves it with the MMAs; before the branch, head dim 128 is
// slower (docs/GPU.md, The online softmax on the GPU).
//
//===----------------------------------------------------------------------===//

#include "Distributor.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::detail;

/// The block buffer `v` is a view of (or `v` itself).
static Value rootOf(Value v) {
  while (auto sub = v.getDefiningOp<memref::SubViewOp>())
    v = sub.getSource();
  return v;
}

/// True when the body of `op` is `yield(combiner(a, b))` of its two block
/// arguments, in either order.
template <typename CombinerOp>
static bool isBinaryBody(linalg::GenericOp op) {
  Block *body = op.getBlock();
  if (body->getNumArguments() != 2 || body->getOperations().size() != 2)
    return false;
  auto combiner = dyn_cast<CombinerOp>(body->front());
  if (!combiner || body->getTerminator()->getOperand(0) != combiner)
    return false;
  Value x = body->getArgument(0), y = body->getArgument(1);
  return (combiner->getOperand(0) == x && combiner->getOperand(1) == y) ||
         (combiner->getOperand(0) == y && combiner->getOperand(1) == x);
}

static bool isRowReduction(linalg::GenericOp op) {
  auto iters = op.getIteratorTypesArray();
  return iters.size() == 2 && iters[1] == utils::IteratorType::reduction &&
         op.getNumDpsInputs() == 1 && op.getNumDpsInits() == 1;
}

void Distributor::selectDeferredRowSums(ArrayRef<Operation *> work) {
  for (auto &entry : buffers) {
    Value value = entry.first;
    if (entry.second.layout != Layout::Row)
      continue;
    // Classify the ops that touch the row buffer, in program order.
    SmallVector<Operation *> sums, others;
    bool ok = true;
    for (Operation *op : work) {
      if (!llvm::any_of(op->getOperands(),
                        [&](Value v) { return rootOf(v) == value; }))
        continue;
      auto generic = dyn_cast<linalg::GenericOp>(op);
      auto fill = dyn_cast<linalg::FillOp>(op);
      bool isInit =
          op->getNumOperands() > 0 && rootOf(op->getOperands().back()) == value;
      auto readsOnlyAsInit = [&]() {
        return llvm::none_of(op->getOperands().drop_back(),
                             [&](Value v) { return rootOf(v) == value; });
      };
      if (fill && matchPattern(fill.getDpsInputs()[0], m_AnyZeroFloat())) {
        // Zero is a valid partial sum and a valid sum.
        continue;
      }
      if (generic && isInit && readsOnlyAsInit() && isRowReduction(generic) &&
          isBinaryBody<arith::AddFOp>(generic)) {
        sums.push_back(op);
        continue;
      }
      if (generic && isInit && readsOnlyAsInit() &&
          generic.getNumLoops() == 1 && generic.getNumDpsInputs() == 1 &&
          isBinaryBody<arith::MulFOp>(generic)) {
        // l *= alpha: alpha is the same on the 4 lanes of a quad.
        continue;
      }
      others.push_back(op);
    }
    if (sums.empty() || others.empty())
      continue;
    // The quad sums the partials once, before the first other read: that
    // read must follow every partial sum and run exactly once, ahead of
    // (dominating) every later read.
    Operation *first = others.front();
    for (Operation *parent = first->getParentOp(); parent != kernel;
         parent = parent->getParentOp())
      if (isa<LoopLikeOpInterface>(parent))
        ok = false;
    for (Operation *op : others)
      if (!first->getBlock()->findAncestorOpInBlock(*op))
        ok = false;
    if (!ok || llvm::find(work, sums.back()) > llvm::find(work, first))
      continue;
    deferredRowSums.insert(value);
    materializeBefore[first].push_back(value);
  }
}

void Distributor::materializeRowSums(Operation *op) {
  auto it = materializeBefore.find(op);
  if (it == materializeBefore.end())
    return;
  b.setInsertionPoint(op);
  for (Value value : it->second) {
    Buffer &buf = buffers[value];
    for (int64_t r = 0; r < rowTiles * 2; ++r) {
      Value partial = loadPrivate(buf, r);
      for (int32_t offset : {1, 2}) {
        Value other = gpu::ShuffleOp::create(b, loc, partial, offset, 32,
                                             gpu::ShuffleMode::XOR)
                          .getShuffleResult();
        partial = arith::AddFOp::create(b, loc, partial, other);
      }
      storePrivate(buf, r, partial);
    }
  }
}

LogicalResult Distributor::rewriteRowReduction(linalg::GenericOp op) {
  Buffer *in = lookup(op.getDpsInputs()[0]);
  Buffer *out = lookup(op.getDpsInits()[0]);
  Block *body = op.getBlock();
  if (!in || !out || in->layout != Layout::Acc || out->layout != Layout::Row ||
      body->getOperations().size() != 2)
    return op.emitOpError("expects a row reduction of a register block by "
                          "one binary combiner");
  bool deferred = deferredRowSums.contains(rootOf(op.getDpsInits()[0]));
  b.setInsertionPoint(op);
  if (deferred) {
    // Where P V consumes the same block (after the accumulator's rescale
    // branch), so that the adds interleave with its MMAs.
    Value block = rootOf(op.getDpsInputs()[0]);
    Value sum = rootOf(op.getDpsInits()[0]);
    for (Operation *next = op->getNextNode(); next;
         next = next->getNextNode()) {
      auto generic = dyn_cast<linalg::GenericOp>(next);
      if (generic && isContraction(generic) &&
          rootOf(generic.getDpsInputs()[0]) == block) {
        b.setInsertionPoint(generic);
        break;
      }
      if (llvm::any_of(next->getOperands(), [&](Value v) {
            return rootOf(v) == block || rootOf(v) == sum;
          }))
        break;
    }
  }
  auto combine = [&](Value element, Value partial) {
    return cloneBody(op, ValueRange{element, partial}, {})[0];
  };
  int64_t nTiles = in->cols / 8;
  for (int64_t mt = 0; mt < rowTiles; ++mt) {
    for (int64_t i = 0; i < 2; ++i) {
      SmallVector<Value> level;
      for (int64_t nt = 0; nt < nTiles; ++nt)
        for (int64_t j = 0; j < 2; ++j)
          level.push_back(loadPrivate(*in, accIndex(*in, mt, nt, i, j)));
      if (isBinaryBody<arith::MaximumFOp>(op)) {
        // Max: a balanced tree.
        while (level.size() > 1) {
          SmallVector<Value> next;
          for (size_t e = 0; e + 1 < level.size(); e += 2)
            next.push_back(combine(level[e + 1], level[e]));
          if (level.size() % 2)
            next.push_back(level.back());
          level = std::move(next);
        }
      } else {
        // Other combiners (the sum of P) in column order.
        Value chain = level.front();
        for (Value element : ArrayRef(level).drop_front())
          chain = combine(element, chain);
        level = {chain};
      }
      Value partial = level.front();
      // The 4 lanes of a quad hold the same row (a deferred sum keeps this
      // lane's part: materializeRowSums).
      if (!deferred) {
        for (int32_t offset : {1, 2}) {
          Value other = gpu::ShuffleOp::create(b, loc, partial, offset, 32,
                                               gpu::ShuffleMode::XOR)
                            .getShuffleResult();
          partial = combine(other, partial);
        }
      }
      Value init = loadPrivate(*out, mt * 2 + i);
      storePrivate(*out, mt * 2 + i, combine(partial, init));
    }
  }
  b.eraseOp(op);
  return success();
}
