//===- Paged.cpp - a paged KV cache: a key block's page ---------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
// Under `block_table` (B x P, i32), K and V are pools of NP pages of `page`
// keys (NP x Hkv x page x D) and logical key j of batch b lies in page
// block_table[b, j / page], row j % page. `--attn-tile` makes block_n
// divide the page, so a key block [col0, col0 + block_n) lies within one
// page: the program reads one table entry per block and loads the block as
// the 2-d view K[id, h, col0 % page : ..., :], which the GPU lowering turns
// into one TMA box at (id, h, col0 % page, 0) like any other K/V block. The
// entry is clamped to 0..NP-1, so a bad id never reads outside the pool
// (its results are unspecified); blocks past a batch's key count
// (kv_lengths) are never visited, so their entries are never read.
//
//===----------------------------------------------------------------------===//

#include "ProgramBuilder.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::detail;

std::pair<Value, Value> ProgramBuilder::buildPageLookup(Value col0) {
  Value table = op.getBlockTable();
  Value page = index(getPageSize());
  // The table's column, clamped to P - 1: a pipelined loop loads a block
  // ahead, past the last one.
  Value slot = arith::MinUIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, col0, page),
      arith::SubIOp::create(b, loc, dim(table, 1), index(1)));
  auto entry =
      memref::LoadOp::create(b, loc, table, ValueRange{op.getBatch(), slot});
  entry->setAttr(kPageLookupAttrName, b.getUnitAttr());
  Value id =
      arith::IndexCastOp::create(b, loc, b.getIndexType(), entry.getResult());
  Value lastPage = arith::SubIOp::create(b, loc, dim(op.getKey(), 0), index(1));
  id = arith::MinSIOp::create(
      b, loc, arith::MaxSIOp::create(b, loc, id, index(0)), lastPage);
  return {id, arith::RemUIOp::create(b, loc, col0, page)};
}
