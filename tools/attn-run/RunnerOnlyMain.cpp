//===- RunnerOnlyMain.cpp - attn-run without LLVM/MLIR --------------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
//   attn-run MANIFEST.json --input=SPEC ... [--seed=N] [--check]
//            [--bench [--iters=N] [--explain]] [--output=@o.npy
//            [--output=@lse.npy]] [--json]
//
// The attn-run of a runner-only build (ATTN_RUNNER_ONLY=ON): it runs the PTX
// and launch manifest that `attn-translate --attn-to-ptx` or
// `attn-run --target=cuda --emit-kernel=DIR` wrote, on machines with CUDA but
// no LLVM/MLIR. Option parsing and printing only; the work is
// attn::runtime::runManifest (attn/Runtime/ManifestRun.h). Errors are one
// line on stderr starting with "attn-run: error: " and exit code 1; a failing
// --check also exits 1.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/ManifestRun.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

using namespace attn::runtime;

static const char *const kUsage =
    "USAGE: attn-run MANIFEST.json --input=SPEC ... [options]\n"
    "\n"
    "Runs the PTX kernel of a launch manifest (attn-translate --attn-to-ptx,\n"
    "attn-run --emit-kernel) on a CUDA device, checks it against a float64\n"
    "reference and times it. (Runner-only build: no LLVM/MLIR.)\n"
    "\n"
    "OPTIONS:\n"
    "  --input=SPEC     one per operand, in the order query, key, value[, "
    "mask]\n"
    "                   [, kv_lengths][, cu_seqlens_q, cu_seqlens_k]\n"
    "                   [, block_table][, captures]:\n"
    "                   SHAPExTYPE (random data, e.g. 2x32x1024x128xbf16;\n"
    "                   kv_lengths get lengths in 0..Tk, cu_seqlens random\n"
    "                   lengths summing to Tq or Tk, a block_table distinct\n"
    "                   pages of the pool), @file.npy, or random (the\n"
    "                   compiled static shape)\n"
    "  --seed=N         seed of the random inputs and of the rows --check "
    "samples\n"
    "  --check          compare with the float64 reference; the last line is\n"
    "                   'check: PASS ...' or 'check: FAIL ...' (exit code 1)\n"
    "  --bench          time it: 'bench: median_ms=... tflops=... "
    "floor_ms=...'\n"
    "  --iters=N        timed runs of --bench (default 20), after at least 5\n"
    "                   warm-up runs and 250 ms of GPU time\n"
    "  --explain        with --bench: FLOPs, bytes, floors, fraction of the\n"
    "                   floor, registers, shared memory, spills, occupancy,\n"
    "                   the config, and the known causes that apply\n"
    "                   ('explain: key=value' lines; docs/Explain.md)\n"
    "  --output=@F.npy  write a result to a .npy file: one per result, in\n"
    "                   result order (the output, then the log-sum-exp of a\n"
    "                   kernel that writes one); fewer is fine\n"
    "  --json           print one JSON object instead of the text lines\n"
    "  --target=cuda    accepted for symmetry with the full attn-run\n"
    "\n"
    "CUDA_VISIBLE_DEVICES selects the device (the first visible one runs).\n";

static int fail(const std::string &message) {
  std::cout.flush();
  std::cerr << "attn-run: error: " << message << "\n";
  return EXIT_FAILURE;
}

static bool parseUnsigned(const std::string &text, uint64_t max,
                          uint64_t &value) {
  if (text.empty() || text[0] < '0' || text[0] > '9')
    return false;
  errno = 0;
  char *end = nullptr;
  unsigned long long parsed = std::strtoull(text.c_str(), &end, 10);
  if (errno || *end || parsed > max)
    return false;
  value = parsed;
  return true;
}

int main(int argc, char **argv) {
  ManifestRunOptions options;
  std::string target = "cuda";
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.size() < 2 || arg[0] != '-') {
      if (!options.manifestPath.empty())
        return fail("one manifest only: '" + options.manifestPath + "' and '" +
                    arg + "'");
      options.manifestPath = arg;
      continue;
    }
    // --name, --name=value or --name value (one dash works too).
    std::string name = arg.substr(arg[1] == '-' ? 2 : 1);
    std::string value;
    bool hasValue = false;
    if (size_t equals = name.find('='); equals != std::string::npos) {
      value = name.substr(equals + 1);
      name.resize(equals);
      hasValue = true;
    }
    if (name == "help" || name == "h") {
      std::cout << kUsage;
      return EXIT_SUCCESS;
    }
    if (name == "check" || name == "bench" || name == "json" ||
        name == "explain") {
      if (hasValue)
        return fail("--" + name + " takes no value");
      (name == "check"     ? options.check
       : name == "bench"   ? options.bench
       : name == "explain" ? options.explain
                           : options.json) = true;
      continue;
    }
    if (name != "input" && name != "seed" && name != "iters" &&
        name != "output" && name != "target")
      return fail("unknown option '" + arg + "' (see --help)");
    if (!hasValue) {
      if (i + 1 == argc)
        return fail("--" + name + " needs a value");
      value = argv[++i];
    }
    uint64_t number = 0;
    if (name == "input") {
      options.inputs.push_back(value);
    } else if (name == "output") {
      if (value.empty() || value[0] != '@')
        return fail("--output takes @FILE.npy, as in --output=@o.npy, got '" +
                    value + "'");
      options.outputs.push_back(value);
    } else if (name == "target") {
      target = value;
    } else if (name == "seed") {
      if (!parseUnsigned(value, UINT64_MAX, number))
        return fail("--seed must be an unsigned integer, got '" + value + "'");
      options.seed = number;
    } else {
      if (!parseUnsigned(value, UINT32_MAX, number))
        return fail("--iters must be an unsigned integer, got '" + value + "'");
      options.iterations = static_cast<unsigned>(number);
    }
  }
  if (options.explain && !options.bench)
    return fail(kExplainNeedsBench);
  if (target != "cuda")
    return fail("this attn-run (a runner-only build, without MLIR) runs on "
                "--target=cuda only, got '" +
                target + "'");
  if (options.manifestPath.empty())
    return fail("give a launch manifest (.json) to run (see --help)");

  bool passed = true;
  std::string error;
  if (!runManifest(options, std::cout, passed, error))
    return fail(error);
  return passed ? EXIT_SUCCESS : EXIT_FAILURE;
}
