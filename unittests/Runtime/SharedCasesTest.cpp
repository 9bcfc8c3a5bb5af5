//===- SharedCasesTest.cpp - Cases shared with the Python package ---------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// The cases of python/tests/shared_cases.json through the C++ runtime.
// python/tests/test_shared_cases.py runs the same cases through the Python
// package: manifests read with the same messages, grids and workspaces
// evaluated alike, the same peak table and the same explain report.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/Explain.h"
#include "attn/Runtime/Manifest.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>

using namespace attn::runtime;
using nlohmann::json;

namespace {

const json &getCases() {
  // ATTN_SOURCE_DIR names the checkout where the binary runs on another
  // machine than the one that built it.
  static const json cases = [] {
    const char *root = std::getenv("ATTN_SOURCE_DIR");
    std::ifstream file(root ? std::string(root) +
                                  "/python/tests/shared_cases.json"
                            : std::string(ATTN_SHARED_CASES));
    return json::parse(file);
  }();
  return cases;
}

ProblemSizes getSizes(const json &sizes) {
  return {sizes["B"],  sizes["Hq"], sizes["Hkv"], sizes["Tq"],
          sizes["Tk"], sizes["D"],  sizes["Dv"]};
}

TEST(SharedCasesTest, Manifests) {
  for (const json &test : getCases()["manifest_cases"]) {
    SCOPED_TRACE(test["name"].get<std::string>());
    json data = getCases()["manifests"][test["manifest"].get<std::string>()];
    json sets = test.value("set", json::object());
    json removes = test.value("remove", json::array());
    for (const auto &[pointer, value] : sets.items())
      data[json::json_pointer(pointer)] = value;
    for (const std::string pointer : removes) {
      json::json_pointer path(pointer);
      json &parent = data[path.parent_pointer()];
      if (parent.is_array())
        parent.erase(std::stoul(path.back()));
      else
        parent.erase(path.back());
    }
    Manifest manifest;
    std::string error;
    bool parsed = parseManifest(data.dump(), manifest, error);
    if (test.contains("error")) {
      EXPECT_FALSE(parsed);
      EXPECT_EQ(error, test["error"]);
      continue;
    }
    ASSERT_TRUE(parsed) << error;
    if (!test.contains("sizes"))
      continue;
    ProblemSizes sizes = getSizes(test["sizes"]);
    unsigned grid[3];
    if (test.contains("grid")) {
      ASSERT_TRUE(evaluateGrid(manifest, sizes, grid, error)) << error;
      EXPECT_EQ(std::vector<unsigned>(grid, grid + 3), test["grid"]);
    }
    if (test.contains("grid_error")) {
      EXPECT_FALSE(evaluateGrid(manifest, sizes, grid, error));
      EXPECT_EQ(error, test["grid_error"]);
    }
    json prologueGrids = test.value("prologue_grids", json::array());
    for (size_t i = 0; i < prologueGrids.size(); ++i) {
      ASSERT_TRUE(evaluateGrid(manifest.prologue[i], sizes, grid, error));
      EXPECT_EQ(std::vector<unsigned>(grid, grid + 3), prologueGrids[i]);
    }
    json epilogueGrids = test.value("epilogue_grids", json::array());
    std::vector<LaunchStep> steps = manifest.getLaunchOrder();
    ASSERT_LE(epilogueGrids.size(), manifest.epilogue.size());
    for (size_t i = 0; i < epilogueGrids.size(); ++i) {
      const LaunchStep &step = steps[manifest.prologue.size() + 1 + i];
      ASSERT_TRUE(evaluateGrid(step, sizes, grid, error)) << error;
      EXPECT_EQ(std::vector<unsigned>(grid, grid + 3), epilogueGrids[i]);
    }
    for (const WorkspaceSpec &workspace : manifest.workspaces) {
      std::vector<int64_t> shape;
      int64_t bytes;
      bool evaluated = evaluateWorkspace(workspace, sizes, shape, bytes, error);
      if (test.contains("workspace_error")) {
        EXPECT_FALSE(evaluated);
        EXPECT_EQ(error, test["workspace_error"]);
      } else if (test.contains("workspace_bytes")) {
        ASSERT_TRUE(evaluated) << error;
        EXPECT_EQ(bytes, test["workspace_bytes"][workspace.name]);
      }
    }
  }
}

TEST(SharedCasesTest, Peaks) {
  for (const json &test : getCases()["peak_cases"]) {
    ElementType type;
    ASSERT_TRUE(parseElementType(test["dtype"].get<std::string>(), type));
    std::string note;
    EXPECT_EQ(
        getPeakTflops(test["chip"], test["device"], type,
                      test["tf32"] ? PrecisionMode::TF32 : PrecisionMode::IEEE,
                      note),
        test["tflops"].get<double>())
        << test;
    EXPECT_EQ(note, test["note"]);
  }
}

/// ExplainFacts from the JSON of the Python package's dataclasses.
ExplainFacts getFacts(const json &in) {
  auto type = [](const json &name) {
    ElementType out = ElementType::F32;
    EXPECT_TRUE(parseElementType(name.get<std::string>(), out));
    return out;
  };
  ExplainFacts facts;
  facts.sizes = getSizes(in["sizes"]);
  facts.type = type(in["dtype"]);
  facts.tf32 = in["tf32"];
  facts.causal = in["causal"].is_null()       ? CausalMode::None
                 : in["causal"] == "top_left" ? CausalMode::TopLeft
                                              : CausalMode::BottomRight;
  facts.maskElements = in["mask_elements"];
  facts.maskType = type(in["mask_dtype"]);
  in["mask_blocks"].get_to(facts.maskBlocks);
  in["causal_rows"].get_to(facts.causalRows);
  facts.medianMs = in["median_ms"];
  const json &d = in["device"];
  facts.device = {d["name"],
                  d["arch"],
                  d["multiprocessors"],
                  d["clock_khz"],
                  d["bandwidth_bytes_per_s"],
                  d["peak_tflops"],
                  d["peak_note"],
                  d["max_threads_per_sm"],
                  d["max_blocks_per_sm"],
                  d["registers_per_sm"],
                  d["shared_bytes_per_sm"]};
  const json &k = in["kernel"], &tc = k["tensor_cores"];
  ExplainKernel &kernel = facts.kernel;
  kernel = {k["name"],
            k["threads_per_block"],
            k["grid_blocks"],
            k["registers"],
            k["local_bytes"],
            k["static_shared_bytes"],
            k["dynamic_shared_bytes"],
            k["active_blocks_per_sm"],
            k["block_m"],
            k["block_n"],
            k["num_warps"],
            k["num_stages"],
            {}};
  kernel.tensorCores = {tc["source"] == "sass"  ? TensorCoreSource::Sass
                        : tc["source"] == "ptx" ? TensorCoreSource::Ptx
                                                : TensorCoreSource::None,
                        tc["count"], tc["detail"], tc["warpgroup_count"]};
  for (const json &o : in["operands"])
    facts.operands.push_back({o["name"], o["sizes"], o["strides"],
                              o["element_bytes"], o["address"]});
  return facts;
}

TEST(SharedCasesTest, Explain) {
  for (const json &test : getCases()["explain_cases"]) {
    SCOPED_TRACE(test["name"].get<std::string>());
    ExplainFacts facts = getFacts(test["facts"]);
    ExplainReport report = computeExplain(facts);
    std::string lines;
    for (const json &line : test["lines"])
      lines += line.get<std::string>() + "\n";
    EXPECT_EQ(formatExplainLines(facts, report), lines);
    EXPECT_EQ(json::parse(explainToJson(facts, report)), test["json"]);
  }
}

} // namespace
