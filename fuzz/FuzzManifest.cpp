//===- FuzzManifest.cpp - libFuzzer target: launch manifests ----*- C++ -*-===//
//
// Part of the attn-mlir project.
//
// attn-fuzz-manifest: arbitrary text through parseManifest (which verifies).
// A manifest it accepts must serialize and parse back to an equal manifest,
// and its grid and workspaces evaluate (or fail cleanly) for a few problem
// sizes, extreme ones included.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/Manifest.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

using namespace attn::runtime;

static constexpr size_t kMaxInputBytes = 64 * 1024;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > kMaxInputBytes)
    return -1;
  std::string text(reinterpret_cast<const char *>(data), size), error;
  Manifest manifest;
  if (!parseManifest(text, manifest, error))
    return 0;
  Manifest again;
  if (!parseManifest(serializeManifest(manifest), again, error) ||
      again != manifest)
    abort();

  constexpr int64_t kHuge = INT64_MAX;
  for (const ProblemSizes &sizes :
       {ProblemSizes{2, 8, 2, 1000, 1000, 128, 128},
        ProblemSizes{1, 1, 1, 1, 1, 1, 1},
        ProblemSizes{kHuge, kHuge, kHuge, kHuge, kHuge, kHuge, kHuge}}) {
    unsigned grid[3];
    (void)evaluateGrid(manifest, sizes, grid, error);
    for (const LaunchStep &step : manifest.getLaunchOrder())
      (void)evaluateGrid(step, sizes, grid, error);
    for (const WorkspaceSpec &workspace : manifest.workspaces) {
      std::vector<int64_t> shape;
      int64_t bytes;
      (void)evaluateWorkspace(workspace, sizes, shape, bytes, error);
    }
  }
  return 0;
}
