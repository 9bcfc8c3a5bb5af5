//===- ManifestRun.h - attn-run on a PTX + launch manifest ------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// What `attn-run MANIFEST.json` does, in the runner-only build
// (ATTN_RUNNER_ONLY) and in the full attn-run:
//
//   attn-run f.json --input=2x32x1024x128xbf16 --input=... [--input=MASK]
//            [--seed=N] [--check] [--bench [--iters=N]] [--output=@o.npy
//            [--output=@lse.npy]] [--explain] [--json]
//
// The inputs are query, key, value and, when the kernel has them, the mask,
// the kv_lengths, the cu_seqlens, the block_table and the captures:
// SHAPExTYPE (random data; random kv_lengths are lengths in 0 .. Tk, random
// cu_seqlens random lengths summing to Tq or Tk, a random block_table
// distinct pages of the pool), @file.npy, or random (a static compiled
// shape).
// The results are the output and, when the kernel writes one (the manifest's
// "lse"), the log-sum-exp; each --output writes one of them, in that order.
// The reference of --check takes the scale, causal mode and precision from
// the manifest; the report is the full attn-run's (RunReport.h). The command
// line and the inputs are checked before the CUDA device is opened.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_MANIFESTRUN_H
#define ATTN_RUNTIME_MANIFESTRUN_H

#include "attn/Runtime/HostTensor.h"

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace attn {
namespace runtime {

/// The error of --explain without --bench (attn-run's tools say it too).
constexpr const char *kExplainNeedsBench =
    "--explain needs --bench: it explains the measured time";
/// The error of --explain on another target than cuda.
constexpr const char *kExplainNeedsCuda =
    "--explain needs --target=cuda: it reads registers, shared memory and "
    "occupancy from the CUDA driver";

/// Untimed launches before the timed ones of --bench on a GPU.
constexpr unsigned kCudaBenchWarmupRuns = 5;

/// The options of attn-run that do not depend on what runs: a function of
/// an MLIR module (Runner.h) or a kernel of a launch manifest.
struct RunFlags {
  /// One `--input` value per input, in order.
  std::vector<std::string> inputs;
  /// Of the random inputs and of the rows sampled by the check.
  uint64_t seed = 0;
  bool check = false, bench = false, explain = false, json = false;
  unsigned iterations = 20;
  /// `--output`, one per result in result order (iree-run-module's
  /// convention; fewer than the results is fine): the .npy files to write
  /// (a leading '@' is dropped).
  std::vector<std::string> outputs;
};

/// Checks `flags` before anything runs: --iters with --bench, --explain
/// with --bench, and --output files whose directories exist, which it sets
/// `outputPaths` to (empty for none).
bool checkRunFlags(const RunFlags &flags, std::vector<std::string> &outputPaths,
                   std::string &error);

/// Fails when more --output files are given than `what` ("function 'f'",
/// "kernel 'k'") has results, which `results` lists ("o: 2x4x9x8xf16").
bool checkOutputCount(const std::vector<std::string> &outputPaths,
                      const std::string &what,
                      const std::vector<std::string> &results,
                      std::string &error);

/// Checks an input of `shape` and `type` against what `taker` takes ("the
/// kernel takes ?x4x?x64xbf16"): its rank, the dimensions of `dims` that are
/// static (>= 0) and the element type named `expectedType`.
bool checkInputShape(const std::vector<int64_t> &shape, ElementType type,
                     const std::vector<int64_t> &dims,
                     const std::string &expectedType, const std::string &taker,
                     std::string &error);

/// The options of one run on a manifest (attn-run's command line); the
/// inputs are query, key, value[, mask][, kv_lengths][, cu_seqlens_q,
/// cu_seqlens_k][, block_table][, capture0, ...].
struct ManifestRunOptions : RunFlags {
  std::string manifestPath;
};

/// Runs `options` and prints the report to `os`; `passed` is false when
/// --check failed.
bool runManifest(const ManifestRunOptions &options, std::ostream &os,
                 bool &passed, std::string &error);

} // namespace runtime
} // namespace attn

#endif // ATTN_RUNTIME_MANIFESTRUN_H
