//===- Reference.h - Float64 reference of attn.attention --------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// An independent float64 implementation of the semantics of
// `attn.attention` (SPEC.md sections 1 and 1.1), used by `attn-run --check`. It
// shares no code with the compiler: it evaluates the formula row by row,
// directly from the stored input values, with no tiling and no online
// softmax. Also here: the choice of rows to check, the tolerances, and the
// comparison that prints the `check:` line.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_REFERENCE_H
#define ATTN_RUNTIME_REFERENCE_H

#include "attn/Runtime/HostTensor.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace attn {
namespace runtime {

/// Causal masking: key j is visible from query i when j <= i (TopLeft) or
/// j <= i + Tk - Tq (BottomRight).
enum class CausalKind { None, TopLeft, BottomRight };

/// One attention problem. Shapes: query B x Hq x Tq x D, key B x Hkv x Tk x D,
/// value B x Hkv x Tk x Dv; the optional mask has rank 2 (Tq' x Tk') or 4
/// (B' x H' x Tq' x Tk') where each dimension is 1 or the full size. A float
/// mask is added to the score (-inf removes the key); an i1 mask keeps the
/// key where true. Mask and causal combine.
///
/// The variants of SPEC.md section 1.1: a window keeps key j for query i when
/// i + off - windowLeft <= j <= i + off + windowRight (off = Tk - Tq under
/// BottomRight causal, else 0; -1 leaves a side unbounded); softcap > 0 turns
/// a score s into softcap * tanh(s / softcap) before the bias; scoreMod(s, b,
/// h, i, j) gives the final score and maskMod(b, h, i, j) whether the key is
/// kept (the caller evaluates the op's regions). A kept key whose final
/// score is -inf counts as masked.
struct AttentionProblem {
  const HostTensor *query = nullptr;
  const HostTensor *key = nullptr;
  const HostTensor *value = nullptr;
  const HostTensor *mask = nullptr;
  double scale = 1.0;
  CausalKind causal = CausalKind::None;
  int64_t windowLeft = -1, windowRight = -1;
  double softcap = 0.0;
  std::function<double(double s, int64_t b, int64_t h, int64_t i, int64_t j)>
      scoreMod = {};
  std::function<bool(int64_t b, int64_t h, int64_t i, int64_t j)> maskMod = {};
};

/// Checks shapes, element types, data sizes and the scale. On failure
/// returns false and sets `error` to a one-line message naming the operand
/// and the expected shape.
bool validateProblem(const AttentionProblem &problem, std::string &error);

/// Number of output rows, B * Hq * Tq, of a valid problem.
int64_t getNumRows(const AttentionProblem &problem);

/// Computes output rows in float64. Row r = ((b * Hq) + h) * Tq + i. `out`
/// receives rows.size() * Dv values, row after row. A row whose keys are all
/// masked out (by causal, an i1 mask, or -inf biases) is zero; NaN and Inf in
/// the inputs propagate as IEEE arithmetic does, within the rows that see
/// them. The problem must be valid.
void referenceRows(const AttentionProblem &problem,
                   const std::vector<int64_t> &rows, std::vector<double> &out);

/// Returns all rows when numRows <= maxRows; otherwise a sorted sample of
/// maxRows distinct rows that always holds the first and the last row (only
/// the first when maxRows == 1), the same for the same arguments on every
/// platform.
std::vector<int64_t> selectCheckRows(int64_t numRows, int64_t maxRows,
                                     uint64_t seed);

/// Pass thresholds of the comparison: relative L2 error over the checked
/// values and the largest absolute error.
struct Tolerance {
  double relL2;
  double maxAbs;
};

/// Returns the tolerance for outputs of `type`; `tf32` applies to f32 only.
Tolerance getTolerance(ElementType type, bool tf32);

/// The outcome of compareRows.
struct CheckResult {
  bool pass = false;
  /// ||out - ref||_2 / ||ref||_2 over the values whose reference is finite
  /// (the absolute norm when ||ref||_2 == 0).
  double relL2 = 0.0;
  /// max |out - ref| over the same values.
  double maxAbs = 0.0;
  int64_t checkedRows = 0;
  /// Values whose reference is NaN or +-Inf and whose output is not the same
  /// kind of non-finite value.
  int64_t nanMismatches = 0;
  /// Values whose output is NaN or Inf while the reference is finite.
  int64_t nonFiniteOutputs = 0;
  /// Why the check failed; empty on PASS.
  std::string reason;
};

/// Compares rows of `output` (B x Hq x Tq x Dv, row r starting at element
/// r * dv) with `reference` as filled by referenceRows for the same `rows`.
CheckResult compareRows(const HostTensor &output,
                        const std::vector<int64_t> &rows,
                        const std::vector<double> &reference, int64_t dv,
                        Tolerance tol);

/// Returns `check: PASS rel_l2=1.234e-05 max_abs=6.000e-05` or
/// `check: FAIL rel_l2=... max_abs=... (<reason>)`.
std::string formatCheckLine(const CheckResult &result);

} // namespace runtime
} // namespace attn

#endif // ATTN_RUNTIME_REFERENCE_H
