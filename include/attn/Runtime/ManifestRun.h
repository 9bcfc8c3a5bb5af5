//===- ManifestRun.h - attn-run on a PTX + launch manifest ------*- C++ -*-===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// The runner without MLIR: what `attn-run MANIFEST.json` does in a
// runner-only build (ATTN_RUNNER_ONLY), and in the full attn-run when its
// input is a manifest instead of a .mlir file.
//
//   attn-run f.json --input=2x32x1024x128xbf16 --input=... [--input=MASK]
//            [--seed=N] [--check] [--bench [--iters=N]] [--output=@o.npy]
//            [--explain] [--json]
//
// The inputs are the kernel's operands in the order query, key, value and,
// when the kernel was compiled with one, mask: SHAPExTYPE (random data),
// @file.npy, or random (the compiled shape, which must then be static).
// Their shapes must match the manifest's (dynamic dimensions are free) and
// each other (SPEC.md section 1). The reference of --check takes the scale,
// causal mode and precision from the manifest's attributes; the report is
// the one of the full attn-run (RunReport.h). All checks of the command
// line and the inputs come before the CUDA device is opened.
//
// MLIR-free; launching needs cuda.h at build time (ATTN_HAS_CUDA_DRIVER),
// else runManifest fails with a message saying so.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNTIME_MANIFESTRUN_H
#define ATTN_RUNTIME_MANIFESTRUN_H

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

/// The options of one run on a manifest (attn-run's command line).
struct ManifestRunOptions {
  /// The launch manifest; its "ptx" names the PTX file.
  std::string manifestPath;
  /// One `--input` value per operand: query, key, value[, mask].
  std::vector<std::string> inputs;
  /// Seed of the random inputs and of the rows sampled by the check.
  uint64_t seed = 0;
  bool check = false;
  bool bench = false;
  /// Timed runs of --bench.
  unsigned iterations = 20;
  /// `--output`: the .npy file to write (a leading '@' is dropped).
  std::string output;
  /// With bench: the explain report (Explain.h) of the timed kernel.
  bool explain = false;
  /// Print one JSON object instead of text lines.
  bool json = false;
  /// The CUDA device (as numbered under CUDA_VISIBLE_DEVICES).
  int device = 0;
};

/// Runs `options` and prints the report to `os`. Returns false with a
/// one-line `error` (without the "attn-run: " prefix) on failure; otherwise
/// `passed` is false only when --check was given and failed.
bool runManifest(const ManifestRunOptions &options, std::ostream &os,
                 bool &passed, std::string &error);

} // namespace runtime
} // namespace attn

#endif // ATTN_RUNTIME_MANIFESTRUN_H
