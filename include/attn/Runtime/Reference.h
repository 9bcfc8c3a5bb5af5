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
#include <optional>
#include <string>
#include <vector>

namespace attn {
namespace runtime {

/// Causal masking: key j is visible from query i when j <= i (TopLeft) or
/// j <= i + Tk - Tq (BottomRight).
enum class CausalMode { None, TopLeft, BottomRight };

/// "top_left", "bottom_right" (nullptr for None).
const char *getCausalName(CausalMode mode);

/// One attention problem (SPEC.md section 1): the optional mask has rank 2
/// or 4, each dimension 1 or the full size; a float mask is added to the
/// score, an i1 mask keeps the key where true; mask and causal combine.
///
/// The variants of SPEC.md section 1.1: a window keeps key j for query i when
/// i + off - windowLeft <= j <= i + off + windowRight (off = Tk - Tq under
/// BottomRight causal, else 0; -1 leaves a side unbounded); softcap > 0 turns
/// a score s into softcap * tanh(s / softcap) before the bias; scoreMod(s, b,
/// h, i, j) gives the final score and maskMod(b, h, i, j) whether the key is
/// kept (the caller evaluates the op's regions). A kept key whose final
/// score is -inf counts as masked.
///
/// The optional kvLengths (i32 of shape [B], FlashAttention's
/// cache_seqlens) gives batch b its own key count n_b = clamp(kvLengths[b],
/// 0, Tk): keys j >= n_b do not exist, and n_b stands for Tk everywhere, in
/// the BottomRight offset (n_b - Tq) too; a batch with none gives zero rows
/// (log-sum-exp -inf).
///
/// The optional cuSeqlensQ and cuSeqlensK (both i32 of shape [N + 1],
/// FlashAttention's varlen cu_seqlens; B = 1) pack N sequences along Tq and
/// Tk: sequence s is the attention of query rows cuSeqlensQ[s] ..
/// cuSeqlensQ[s+1]-1 over keys cuSeqlensK[s] .. cuSeqlensK[s+1]-1, with i
/// and j within the sequence and b = s everywhere (causal, window, the
/// BottomRight offset, the regions); query rows of no sequence give zero
/// rows (log-sum-exp -inf). validateProblem checks that the offsets rise
/// from 0 or more to at most Tq (Tk).
///
/// The optional blockTable (i32 of shape [B, P], vLLM's and FlashAttention's
/// block_table) makes key and value pools of NP pages (NP x Hkv x page x D):
/// logical key j of batch b is K[blockTable[b, j / page], g, j % page, :],
/// Tk = P * page. validateProblem checks that the entries a batch uses (the
/// first ceil(n_b / page), n_b its key count) are pages of the pool.
struct AttentionProblem {
  const HostTensor *query = nullptr;
  const HostTensor *key = nullptr;
  const HostTensor *value = nullptr;
  const HostTensor *mask = nullptr;
  double scale = 1.0;
  CausalMode causal = CausalMode::None;
  int64_t windowLeft = -1, windowRight = -1;
  double softcap = 0.0;
  std::function<double(double s, int64_t b, int64_t h, int64_t i, int64_t j)>
      scoreMod = {};
  std::function<bool(int64_t b, int64_t h, int64_t i, int64_t j)> maskMod = {};
  /// The tensors the regions read, as a kernel takes them (capture0, ...);
  /// the reference reads them through the callbacks.
  std::vector<const HostTensor *> captures;
  /// The per-batch key counts (see above), or nullptr. Last, so that the
  /// aggregate initializers of the fields above stay as they were.
  const HostTensor *kvLengths = nullptr;
  /// Packed sequences (see above), both or neither.
  const HostTensor *cuSeqlensQ = nullptr, *cuSeqlensK = nullptr;
  /// A paged KV cache (see above), or nullptr.
  const HostTensor *blockTable = nullptr;
};

/// Checks packed sequences' offsets (cu_seqlens) against the packed length
/// `total`: i32 of shape [N + 1], N >= 1, rising (non-decreasing) from 0 or
/// more to at most `total`; `name` starts each message.
bool validateSeqlens(const HostTensor &offsets, const char *name, int64_t total,
                     std::string &error);

/// Checks shapes, element types, data sizes and the scale, naming the
/// operand and the expected shape.
bool validateProblem(const AttentionProblem &problem, std::string &error);

/// B * Hq * Tq.
int64_t getNumRows(const AttentionProblem &problem);

/// Output rows r = ((b * Hq) + h) * Tq + i in float64, Dv values each, of a
/// valid problem. A row whose keys are all masked out is zero; NaN and Inf
/// propagate as IEEE arithmetic does, within the rows that see them. With
/// `lse`, also each row's log-sum-exp (SPEC.md section 1.2): the natural log
/// of the sum over the kept keys of exp(s), from the same final scores s;
/// -inf for a row with no kept key.
void referenceRows(const AttentionProblem &problem,
                   const std::vector<int64_t> &rows, std::vector<double> &out,
                   std::vector<double> *lse = nullptr);

/// All rows when numRows <= maxRows; else maxRows distinct rows, sorted,
/// with the first and the last, the same on every platform.
std::vector<int64_t> selectCheckRows(int64_t numRows, int64_t maxRows,
                                     uint64_t seed);

/// Pass thresholds: relative L2 error and largest absolute error of the
/// output; for the log-sum-exp, the largest |lse - ref| / (1 + |ref|).
struct Tolerance {
  double relL2, maxAbs;
  double lse = 0.0;
};

/// The tolerance for outputs of `type` (`tf32`: f32 only).
Tolerance getTolerance(ElementType type, bool tf32);

/// The log-sum-exp part of a CheckResult.
struct LseCheckResult {
  /// max |lse - ref| and max |lse - ref| / (1 + |ref|) over the rows whose
  /// reference is finite.
  double maxAbs = 0.0, maxErr = 0.0;
  /// Rows whose reference is -inf or NaN and whose value is not the same;
  /// non-finite values of rows whose reference is finite.
  int64_t mismatches = 0, nonFiniteOutputs = 0;
};

/// The outcome of compareRows.
struct CheckResult {
  bool pass = false;
  /// ||out - ref|| / ||ref|| and max |out - ref| over the values whose
  /// reference is finite (the absolute norm when ||ref|| == 0).
  double relL2 = 0.0, maxAbs = 0.0;
  int64_t checkedRows = 0;
  /// Non-finite references the output does not match, and non-finite
  /// outputs of finite references.
  int64_t nanMismatches = 0, nonFiniteOutputs = 0;
  /// Set when the log-sum-exp was checked too (compareLseRows).
  std::optional<LseCheckResult> lse;
  /// Why the check failed; empty on PASS.
  std::string reason;
};

/// Compares `rows` of `output` with referenceRows' values for them.
CheckResult compareRows(const HostTensor &output,
                        const std::vector<int64_t> &rows,
                        const std::vector<double> &reference, int64_t dv,
                        Tolerance tol);

/// Compares `rows` of the f32 log-sum-exp `lse` (B x Hq x Tq) with
/// referenceRows' values for them and adds the outcome to `result`: a finite
/// reference passes within `tol.lse * (1 + |ref|)`; -inf (a row with no kept
/// key) and NaN must be matched exactly.
void compareLseRows(const HostTensor &lse, const std::vector<int64_t> &rows,
                    const std::vector<double> &reference, Tolerance tol,
                    CheckResult &result);

/// `check: PASS rel_l2=1.234e-05 max_abs=6.000e-05`, with
/// ` lse_max_abs=... lse_max_err=...` when the log-sum-exp was checked, or
/// FAIL (reason).
std::string formatCheckLine(const CheckResult &result);

} // namespace runtime
} // namespace attn

#endif // ATTN_RUNTIME_REFERENCE_H
