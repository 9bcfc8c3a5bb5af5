//===- Reference.cpp - Float64 reference of attn.attention ----------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/Reference.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>

using namespace attn::runtime;

// The LSE tolerances (see getTolerance): relative to 1 + |lse|.
static constexpr double kLseToleranceIEEE = 1e-5;
static constexpr double kLseToleranceTF32 = 2e-3;
static constexpr double kLseTolerance16Bit = 1e-3;
static constexpr double kLseToleranceBF16 = 8e-3;

const char *attn::runtime::getCausalName(CausalMode mode) {
  return mode == CausalMode::TopLeft       ? "top_left"
         : mode == CausalMode::BottomRight ? "bottom_right"
                                           : nullptr;
}

//===----------------------------------------------------------------------===//
// Validation
//===----------------------------------------------------------------------===//

static bool checkTensor(const HostTensor *tensor, const char *name, size_t rank,
                        const char *layout, std::string &error) {
  if (!tensor)
    return failWith(error, "the ", name, " tensor is missing");
  std::string shape = tensor->getShapeString();
  if (tensor->shape.size() != rank)
    return failWith(error, name, " has shape ", shape, ", expected rank ", rank,
                    " (", layout, ")");
  for (int64_t dim : tensor->shape) {
    if (dim < 1)
      return failWith(error, name, " has shape ", shape,
                      ", expected every dimension to be >= 1");
  }
  if (tensor->data.size() != tensor->getNumBytes())
    return failWith(error, name, " holds ", tensor->data.size(),
                    " bytes, expected ", tensor->getNumBytes(), " for shape ",
                    shape);
  return true;
}

bool attn::runtime::validateProblem(const AttentionProblem &problem,
                                    std::string &error) {
  if (!checkTensor(problem.query, "query", 4, "B x Hq x Tq x D", error) ||
      !checkTensor(problem.key, "key", 4, "B x Hkv x Tk x D", error) ||
      !checkTensor(problem.value, "value", 4, "B x Hkv x Tk x Dv", error))
    return false;
  const HostTensor &q = *problem.query, &k = *problem.key, &v = *problem.value;
  if (!isFloatType(q.type))
    return failWith(error, "query has element type ", getTypeName(q.type),
                    ", expected f32, f16 or bf16");
  for (const HostTensor *t : {&k, &v}) {
    if (t->type != q.type)
      return failWith(error, t == &k ? "key" : "value", " has element type ",
                      getTypeName(t->type), ", expected ", getTypeName(q.type),
                      " like the query");
  }
  int64_t b = q.shape[0], hq = q.shape[1], tq = q.shape[2], d = q.shape[3];
  // A paged cache: K and V are pools of NP pages (dim 0), Tk = P * page.
  const HostTensor *table = problem.blockTable;
  if (table) {
    if (table->type != ElementType::I32)
      return failWith(error, "block_table has element type ",
                      getTypeName(table->type), ", expected i32");
    if (!checkTensor(table, "block_table", 2, "B x P", error))
      return false;
    if (table->shape[0] != b)
      return failWith(error, "block_table has shape ", table->getShapeString(),
                      ", expected ", b,
                      "xP (one row of pages per batch of "
                      "the query ",
                      q.getShapeString(), ")");
    if (problem.cuSeqlensQ || problem.cuSeqlensK)
      return failWith(error, "block_table excludes cu_seqlens");
    if (k.shape[3] != d)
      return failWith(error, "key has shape ", k.getShapeString(),
                      ", expected ", formatShape({-1, -1, -1, d}, q.type),
                      " (NP x Hkv x page x D with D of the query ",
                      q.getShapeString(), ")");
  } else if (k.shape[0] != b || k.shape[3] != d)
    return failWith(error, "key has shape ", k.getShapeString(), ", expected ",
                    formatShape({b, -1, -1, d}, q.type),
                    " (B x Hkv x Tk x D with B and D of the query ",
                    q.getShapeString(), ")");
  int64_t hkv = k.shape[1], tk = k.shape[2];
  int64_t kb = k.shape[0];
  if (hq % hkv != 0)
    return failWith(error, "key has ", hkv,
                    " heads, which does not divide the query's ", hq,
                    " heads (Hq % Hkv must be 0)");
  if (v.shape[0] != kb || v.shape[1] != hkv || v.shape[2] != tk)
    return failWith(error, "value has shape ", v.getShapeString(),
                    ", expected ", formatShape({kb, hkv, tk, -1}, q.type),
                    " (B x Hkv x Tk x Dv with B, Hkv and Tk of the key ",
                    k.getShapeString(), ")");
  if (problem.mask) {
    const HostTensor &m = *problem.mask;
    std::string shape = m.getShapeString();
    if (m.shape.size() != 2 && m.shape.size() != 4)
      return failWith(error, "mask has shape ", shape,
                      ", expected rank 2 (Tq x Tk) or 4 (B x Hq x Tq x Tk)");
    if (!checkTensor(&m, "mask", m.shape.size(), "", error))
      return false;
    int64_t keys = table ? table->shape[1] * tk : tk;
    std::vector<int64_t> full = {b, hq, tq, keys};
    size_t offset = 4 - m.shape.size();
    for (size_t i = 0; i < m.shape.size(); ++i) {
      int64_t want = full[offset + i];
      if (m.shape[i] != 1 && m.shape[i] != want)
        return failWith(error, "mask has shape ", shape,
                        ", which does not broadcast to B x Hq x Tq x Tk = ", b,
                        "x", hq, "x", tq, "x", keys, ": dimension ", i, " is ",
                        m.shape[i], ", expected 1 or ", want);
    }
  }
  if (const HostTensor *lengths = problem.kvLengths) {
    if (lengths->type != ElementType::I32)
      return failWith(error, "kv_lengths has element type ",
                      getTypeName(lengths->type), ", expected i32");
    if (!checkTensor(lengths, "kv_lengths", 1, "B", error))
      return false;
    if (lengths->shape[0] != b)
      return failWith(error, "kv_lengths has shape ", lengths->getShapeString(),
                      ", expected ", formatShape({b}, ElementType::I32),
                      " (one length per batch of the query ",
                      q.getShapeString(), ")");
  }
  if (table) {
    // The entries a batch uses (its first ceil(n_b / page)) name pages of
    // the pool.
    int64_t pages = table->shape[1], page = tk, pool = k.shape[0];
    for (int64_t bi = 0; bi < b; ++bi) {
      int64_t keys = pages * page;
      if (problem.kvLengths)
        keys = std::clamp<int64_t>(problem.kvLengths->getInteger(bi), 0, keys);
      for (int64_t p = 0, e = (keys + page - 1) / page; p < e; ++p) {
        int64_t id = table->getInteger(bi * pages + p);
        if (id < 0 || id >= pool)
          return failWith(error, "block_table[", bi, ", ", p, "] = ", id,
                          " is not a page of the pool (0..", pool - 1, ", key ",
                          k.getShapeString(), ")");
      }
    }
  }
  if (bool(problem.cuSeqlensQ) != bool(problem.cuSeqlensK))
    return failWith(error,
                    "cu_seqlens_q and cu_seqlens_k go together, got "
                    "only ",
                    problem.cuSeqlensQ ? "cu_seqlens_q" : "cu_seqlens_k");
  if (problem.cuSeqlensQ) {
    if (b != 1)
      return failWith(error, "query has shape ", q.getShapeString(),
                      ", expected batch 1 with cu_seqlens (the sequences are "
                      "packed along Tq and Tk)");
    if (problem.mask || problem.kvLengths)
      return failWith(error, "cu_seqlens exclude ",
                      problem.mask ? "a mask" : "kv_lengths");
    if (!validateSeqlens(*problem.cuSeqlensQ, "cu_seqlens_q", tq, error) ||
        !validateSeqlens(*problem.cuSeqlensK, "cu_seqlens_k", tk, error))
      return false;
    if (problem.cuSeqlensQ->shape[0] != problem.cuSeqlensK->shape[0])
      return failWith(error, "cu_seqlens_q has shape ",
                      problem.cuSeqlensQ->getShapeString(),
                      " and cu_seqlens_k ",
                      problem.cuSeqlensK->getShapeString(),
                      ", expected one length (N + 1)");
  }
  if (!std::isfinite(problem.scale) || problem.scale <= 0.0)
    return failWith(error, "scale must be finite and > 0, got ",
                    formatString("%g", problem.scale));
  if (problem.windowLeft < -1 || problem.windowRight < -1)
    return failWith(error, "window left and right must be >= -1, got ",
                    problem.windowLeft, " and ", problem.windowRight);
  if (!std::isfinite(problem.softcap) || problem.softcap < 0.0)
    return failWith(error, "softcap must be finite and > 0 (0: none), got ",
                    formatString("%g", problem.softcap));
  return true;
}

bool attn::runtime::validateSeqlens(const HostTensor &offsets, const char *name,
                                    int64_t total, std::string &error) {
  if (offsets.type != ElementType::I32)
    return failWith(error, name, " has element type ",
                    getTypeName(offsets.type), ", expected i32");
  if (!checkTensor(&offsets, name, 1, "N + 1", error))
    return false;
  int64_t count = offsets.shape[0];
  if (count < 2)
    return failWith(error, name, " has shape ", offsets.getShapeString(),
                    ", expected N + 1 >= 2 offsets (N >= 1 sequences)");
  int64_t previous = 0;
  for (int64_t s = 0; s < count; ++s) {
    int64_t value = offsets.getInteger(s);
    if (value < previous || value > total)
      return failWith(
          error, name, "[", s, "] = ", value, " ",
          value > total ? "is past the packed length " : "is below ",
          value > total ? total : previous,
          s == 0 || value > total
              ? ""
              : formatString(" (%s[%lld]): the offsets must not decrease", name,
                             static_cast<long long>(s - 1)));
    previous = value;
  }
  return true;
}

int64_t attn::runtime::getNumRows(const AttentionProblem &problem) {
  const std::vector<int64_t> &shape = problem.query->shape;
  return shape[0] * shape[1] * shape[2];
}

//===----------------------------------------------------------------------===//
// Reference computation
//===----------------------------------------------------------------------===//

namespace {
/// The key and value rows of one (batch, kv head), converted to double.
struct KeyValueSlice {
  int64_t batch = -1, head = -1;
  std::vector<double> keys, values;
};
} // namespace

static void loadSlice(const HostTensor &tensor, int64_t base, int64_t count,
                      std::vector<double> &out) {
  out.resize(count);
  for (int64_t i = 0; i < count; ++i)
    out[i] = tensor.get(base + i);
}

void attn::runtime::referenceRows(const AttentionProblem &problem,
                                  const std::vector<int64_t> &rows,
                                  std::vector<double> &out,
                                  std::vector<double> *lse) {
  const HostTensor &q = *problem.query, &k = *problem.key, &v = *problem.value;
  const HostTensor *mask = problem.mask;
  const int64_t hq = q.shape[1], totalQ = q.shape[2], d = q.shape[3];
  const int64_t hkv = k.shape[1], dv = v.shape[3];
  // A paged cache: logical key j of batch b is row j % page of page
  // blockTable[b, j / page] (clamped to the pool, as the kernels do).
  const HostTensor *table = problem.blockTable;
  const int64_t page = k.shape[2], numPages = k.shape[0];
  const int64_t capacity = table ? table->shape[1] * page : k.shape[2];
  const int64_t group = hq / hkv;
  const double negInf = -std::numeric_limits<double>::infinity();

  // Mask strides after broadcasting to B x Hq x Tq x Tk (0 where size 1).
  int64_t maskStride[4] = {0, 0, 0, 0};
  if (mask) {
    size_t rank = mask->shape.size(), offset = 4 - rank;
    int64_t stride = 1;
    for (size_t i = rank; i-- > 0;) {
      maskStride[offset + i] = mask->shape[i] == 1 ? 0 : stride;
      stride *= mask->shape[i];
    }
  }

  out.assign(rows.size() * dv, 0.0);
  if (lse)
    lse->assign(rows.size(), negInf);
  KeyValueSlice slice;
  std::vector<double> query(d), scores(capacity), accumulator(dv);
  std::vector<char> visible(capacity);
  for (size_t n = 0; n < rows.size(); ++n) {
    const int64_t row = rows[n];
    const int64_t packedRow = row % totalQ, h = (row / totalQ) % hq;
    int64_t i = packedRow, b = row / (totalQ * hq), tq = totalQ;
    const int64_t g = h / group;
    // The batch's key count: Tk, or its clamped kv_lengths entry; keys from
    // keyBase on in the key tensor.
    int64_t tk =
        problem.kvLengths
            ? std::clamp<int64_t>(problem.kvLengths->getInteger(b), 0, capacity)
            : capacity;
    int64_t keyBase = 0, memoryBatch = b;
    if (problem.cuSeqlensQ) {
      // Packed sequences: the sequence s holding the row (b = s), its rows
      // and keys; a row of no sequence stays zero.
      const HostTensor &cuQ = *problem.cuSeqlensQ, &cuK = *problem.cuSeqlensK;
      int64_t numSeqs = cuQ.shape[0] - 1, s = 0;
      while (s < numSeqs && cuQ.getInteger(s + 1) <= packedRow)
        ++s;
      if (s == numSeqs || packedRow < cuQ.getInteger(s))
        continue;
      b = s;
      i = packedRow - cuQ.getInteger(s);
      tq = cuQ.getInteger(s + 1) - cuQ.getInteger(s);
      keyBase = cuK.getInteger(s);
      tk = cuK.getInteger(s + 1) - keyBase;
    }
    if (slice.batch != b || slice.head != g) {
      slice.batch = b;
      slice.head = g;
      if (table) {
        slice.keys.resize(tk * d);
        slice.values.resize(tk * dv);
        for (int64_t j = 0; j < tk; ++j) {
          int64_t id = std::clamp<int64_t>(
              table->getInteger(b * table->shape[1] + j / page), 0,
              numPages - 1);
          int64_t at = (id * hkv + g) * page + j % page;
          for (int64_t c = 0; c < d; ++c)
            slice.keys[j * d + c] = k.get(at * d + c);
          for (int64_t c = 0; c < dv; ++c)
            slice.values[j * dv + c] = v.get(at * dv + c);
        }
      } else {
        int64_t base = (memoryBatch * hkv + g) * capacity + keyBase;
        loadSlice(k, base * d, tk * d, slice.keys);
        loadSlice(v, base * dv, tk * dv, slice.values);
      }
    }
    loadSlice(q, row * d, d, query);

    // Scores of the visible keys and their maximum. NaN scores are left out
    // of the maximum; they still reach the sum below and make it NaN.
    const int64_t off = problem.causal == CausalMode::BottomRight ? tk - tq : 0;
    int64_t lastVisible = tk - 1;
    if (problem.causal != CausalMode::None)
      lastVisible = std::min(lastVisible, i + off);
    if (problem.windowRight >= 0)
      lastVisible = std::min(lastVisible, i + off + problem.windowRight);
    const int64_t begin =
        problem.windowLeft >= 0
            ? std::clamp<int64_t>(i + off - problem.windowLeft, 0, tk)
            : 0;
    const int64_t end = std::max<int64_t>(lastVisible + 1, begin);
    bool anyVisible = false;
    double maxScore = negInf;
    for (int64_t j = begin; j < end; ++j) {
      visible[j] = 0;
      double bias = 0.0;
      if (mask) {
        double m = mask->get(b * maskStride[0] + h * maskStride[1] +
                             i * maskStride[2] + j * maskStride[3]);
        if (mask->type == ElementType::I1 ? m == 0.0 : m == negInf)
          continue; // The key is removed.
        if (mask->type != ElementType::I1)
          bias = m;
      }
      if (problem.maskMod && !problem.maskMod(b, h, i, j))
        continue;
      double dot = 0.0;
      const double *key = slice.keys.data() + j * d;
      for (int64_t c = 0; c < d; ++c)
        dot += query[c] * key[c];
      double s = problem.scale * dot;
      if (problem.softcap > 0.0)
        s = problem.softcap * std::tanh(s / problem.softcap);
      s += bias;
      if (problem.scoreMod)
        s = problem.scoreMod(s, b, h, i, j);
      if (s == negInf)
        continue; // A kept key whose final score is -inf counts as masked.
      scores[j] = s;
      visible[j] = 1;
      anyVisible = true;
      if (scores[j] > maxScore)
        maxScore = scores[j];
    }
    if (!anyVisible)
      continue; // All keys masked out: the row stays zero, its LSE -inf.

    double sum = 0.0;
    std::fill(accumulator.begin(), accumulator.end(), 0.0);
    for (int64_t j = begin; j < end; ++j) {
      if (!visible[j])
        continue;
      double weight = std::exp(scores[j] - maxScore);
      sum += weight;
      const double *value = slice.values.data() + j * dv;
      for (int64_t c = 0; c < dv; ++c)
        accumulator[c] += weight * value[c];
    }
    for (int64_t c = 0; c < dv; ++c)
      out[n * dv + c] = accumulator[c] / sum;
    // log(sum_j exp(s_j)) = m + log(sum_j exp(s_j - m)); NaN scores (left out
    // of m) make the sum, and so the LSE, NaN.
    if (lse)
      (*lse)[n] = maxScore + std::log(sum);
  }
}

std::vector<int64_t> attn::runtime::selectCheckRows(int64_t numRows,
                                                    int64_t maxRows,
                                                    uint64_t seed) {
  std::vector<int64_t> rows;
  if (numRows <= 0 || maxRows <= 0)
    return rows;
  if (numRows <= maxRows) {
    rows.resize(numRows);
    std::iota(rows.begin(), rows.end(), 0);
    return rows;
  }
  if (maxRows == 1)
    return {0};
  // Floyd's algorithm: maxRows - 2 distinct rows out of the interior
  // [1, numRows - 2], each subset equally likely.
  std::set<int64_t> chosen;
  SplitMix64 rng(seed);
  int64_t interior = numRows - 2, wanted = maxRows - 2;
  for (int64_t j = interior - wanted; j < interior; ++j) {
    int64_t pick = static_cast<int64_t>(rng.nextBelow(j + 1));
    if (!chosen.insert(pick + 1).second)
      chosen.insert(j + 1);
  }
  rows.push_back(0);
  rows.insert(rows.end(), chosen.begin(), chosen.end());
  rows.push_back(numRows - 1);
  return rows;
}

//===----------------------------------------------------------------------===//
// Comparison
//===----------------------------------------------------------------------===//

// Tolerances, by output type. The reference is exact (float64); the kernel
// accumulates in f32, so the error is dominated by how the inputs of the two
// matmuls and the output are rounded:
//
//   type        unit roundoff        relL2   maxAbs  why
//   f32 ieee    2^-24 ~ 6.0e-8       1e-5    1e-4    f32 rounding of S, exp and
//                                                    a long f32 sum over Tk
//   f32 tf32    2^-11 ~ 4.9e-4       2e-3    1e-2    Q, K, P and V rounded to
//                                                    tf32 (10-bit mantissa) in
//                                                    the tensor-core matmuls
//   f16         2^-11 ~ 4.9e-4       2e-3    1e-2    output rounded to f16; P
//                                                    rounded to f16 before P*V
//   bf16        2^-8  ~ 3.9e-3       1e-2    5e-2    output rounded to bf16; P
//                                                    rounded to bf16 before P*V
//
// relL2 is a few unit roundoffs of the type that the matmul inputs and the
// output are rounded to; maxAbs leaves room for the largest single-element
// rounding in outputs of magnitude up to about 1 (random inputs in [-1, 1)).
//
// The log-sum-exp (SPEC.md section 1.2) is f32 whatever the inputs: the
// kernel keeps each row's running maximum m and sum l in f32 and writes
// m + log(l). Its error is that of the scores (tf32: Q and K rounded) plus
// the rounding of l and of the P the kernel sums (16-bit kernels may sum the
// P they round for P*V), each a relative error of l, so an absolute error of
// the LSE; m + log(l) adds one f32 rounding of |lse|. So the check is
// |lse - ref| <= tol.lse * (1 + |ref|): 1e-5 for IEEE f32, 2e-3 for tf32
// (Q and K rounded), 1e-3 for f16 and 8e-3 for bf16 (the P a 16-bit kernel
// may sum). The CPU target's worst is 4.2e-7 on every dtype (it rounds
// neither; docs/Testing.md has the measurement); the bounds are the GPU's.

Tolerance attn::runtime::getTolerance(ElementType type, bool tf32) {
  switch (type) {
  case ElementType::F16:
    return {2e-3, 1e-2, kLseTolerance16Bit};
  case ElementType::BF16:
    return {1e-2, 5e-2, kLseToleranceBF16};
  case ElementType::F32:
  case ElementType::I1:
  case ElementType::I32:
  case ElementType::I64:
    break;
  }
  return tf32 ? Tolerance{2e-3, 1e-2, kLseToleranceTF32}
              : Tolerance{1e-5, 1e-4, kLseToleranceIEEE};
}

CheckResult attn::runtime::compareRows(const HostTensor &output,
                                       const std::vector<int64_t> &rows,
                                       const std::vector<double> &reference,
                                       int64_t dv, Tolerance tol) {
  CheckResult result;
  auto fail = [&](std::string reason) {
    result.pass = false;
    result.reason = std::move(reason);
    return result;
  };
  if (rows.empty() || dv <= 0)
    return fail("no values to check");
  if (reference.size() != rows.size() * static_cast<size_t>(dv))
    return fail("the reference holds " + std::to_string(reference.size()) +
                " values, expected " + std::to_string(rows.size() * dv));
  int64_t numElements = output.getNumElements();
  if (output.data.size() != output.getNumBytes())
    return fail("the output holds the wrong number of bytes for its shape");
  for (int64_t row : rows)
    if (row < 0 || (row + 1) * dv > numElements)
      return fail("row " + std::to_string(row) + " is outside the " +
                  output.getShapeString() + " output");

  double diffSquares = 0.0, refSquares = 0.0;
  for (size_t n = 0; n < rows.size(); ++n) {
    for (int64_t c = 0; c < dv; ++c) {
      double ref = reference[n * dv + c];
      double out = output.get(rows[n] * dv + c);
      if (std::isnan(ref)) {
        result.nanMismatches += !std::isnan(out);
        continue;
      }
      if (std::isinf(ref)) {
        result.nanMismatches += out != ref;
        continue;
      }
      if (!std::isfinite(out)) {
        ++result.nonFiniteOutputs;
        continue;
      }
      double diff = std::fabs(out - ref);
      diffSquares += diff * diff;
      refSquares += ref * ref;
      result.maxAbs = std::max(result.maxAbs, diff);
    }
  }
  result.checkedRows = static_cast<int64_t>(rows.size());
  result.relL2 =
      std::sqrt(diffSquares) / (refSquares > 0.0 ? std::sqrt(refSquares) : 1.0);

  std::string reason;
  auto add = [&](const std::string &phrase) {
    reason += (reason.empty() ? "" : "; ") + phrase;
  };
  if (result.nonFiniteOutputs)
    add(std::to_string(result.nonFiniteOutputs) +
        " non-finite values where the reference is finite");
  if (result.nanMismatches)
    add(std::to_string(result.nanMismatches) +
        " values that differ from a NaN/Inf reference");
  if (!(result.relL2 <= tol.relL2))
    add(formatString("rel_l2 %.1e > %.1e", result.relL2, tol.relL2));
  if (!(result.maxAbs <= tol.maxAbs))
    add(formatString("max_abs %.1e > %.1e", result.maxAbs, tol.maxAbs));
  result.pass = reason.empty();
  result.reason = reason;
  return result;
}

void attn::runtime::compareLseRows(const HostTensor &lse,
                                   const std::vector<int64_t> &rows,
                                   const std::vector<double> &reference,
                                   Tolerance tol, CheckResult &result) {
  LseCheckResult &check = result.lse.emplace();
  auto add = [&](const std::string &phrase) {
    result.reason += (result.reason.empty() ? "" : "; ") + phrase;
    result.pass = false;
  };
  if (lse.type != ElementType::F32)
    return add("the LSE has element type " +
               std::string(getTypeName(lse.type)) + ", expected f32");
  if (reference.size() != rows.size())
    return add("the LSE reference holds " + std::to_string(reference.size()) +
               " values, expected " + std::to_string(rows.size()));
  if (lse.data.size() != lse.getNumBytes())
    return add("the LSE holds the wrong number of bytes for its shape");
  for (int64_t row : rows)
    if (row < 0 || row >= lse.getNumElements())
      return add("row " + std::to_string(row) + " is outside the " +
                 lse.getShapeString() + " LSE");

  for (size_t n = 0; n < rows.size(); ++n) {
    double ref = reference[n], out = lse.get(rows[n]);
    if (!std::isfinite(ref)) {
      // -inf (no kept key) or NaN: the same, exactly.
      check.mismatches += std::isnan(ref) ? !std::isnan(out) : out != ref;
      continue;
    }
    if (!std::isfinite(out)) {
      ++check.nonFiniteOutputs;
      continue;
    }
    double diff = std::fabs(out - ref);
    check.maxAbs = std::max(check.maxAbs, diff);
    check.maxErr = std::max(check.maxErr, diff / (1.0 + std::fabs(ref)));
  }
  if (check.nonFiniteOutputs)
    add(std::to_string(check.nonFiniteOutputs) +
        " non-finite LSE values where the reference is finite");
  if (check.mismatches)
    add(std::to_string(check.mismatches) +
        " LSE values that differ from a -inf/NaN reference");
  if (!(check.maxErr <= tol.lse))
    add(formatString("lse_max_err %.1e > %.1e", check.maxErr, tol.lse));
}

std::string attn::runtime::formatCheckLine(const CheckResult &result) {
  std::string line =
      formatString("check: %s rel_l2=%.3e max_abs=%.3e",
                   result.pass ? "PASS" : "FAIL", result.relL2, result.maxAbs);
  if (result.lse)
    line += formatString(" lse_max_abs=%.3e lse_max_err=%.3e",
                         result.lse->maxAbs, result.lse->maxErr);
  if (!result.pass)
    line += " (" + result.reason + ")";
  return line;
}
