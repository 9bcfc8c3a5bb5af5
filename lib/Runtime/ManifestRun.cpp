//===- ManifestRun.cpp - attn-run on a PTX + launch manifest --------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/ManifestRun.h"

#include "attn/Runtime/FileWrite.h"
#include "attn/Runtime/Manifest.h"
#include "attn/Runtime/Npy.h"
#include "attn/Runtime/RunReport.h"
#if ATTN_HAS_CUDA_DRIVER
#include "attn/Runtime/CudaRunner.h"
#endif

#include <cmath>
#include <filesystem>
#include <utility>

using namespace attn::runtime;

namespace {
/// One operand of the kernel and the --input value given for it.
struct Input {
  Input(std::string label, std::vector<int64_t> compiled, ElementType type)
      : label(std::move(label)), compiled(std::move(compiled)), type(type) {}

  /// "q", "k", "v", "mask", "capture0", ...
  std::string label;
  /// The compiled shape (-1: dynamic) and element type.
  std::vector<int64_t> compiled;
  ElementType type;
  /// The tensor; random data is generated only after every check passed.
  HostTensor tensor;
  bool isRandom = false;
  /// "random" or the .npy path.
  std::string source;
};
} // namespace

/// Checks a given shape and type against an operand's compiled ones.
static bool checkInput(const std::vector<int64_t> &shape, ElementType type,
                       const Input &input, std::string &error) {
  std::string given = formatShape(shape, type);
  std::string expected = formatShape(input.compiled, input.type);
  if (shape.size() != input.compiled.size())
    return failWith(error, "got ", given, " (rank ", shape.size(),
                    "), but the kernel takes ", expected, " (rank ",
                    input.compiled.size(), ")");
  for (size_t dim = 0; dim < shape.size(); ++dim) {
    if (input.compiled[dim] >= 0 && shape[dim] != input.compiled[dim])
      return failWith(error, "got ", given, ", but the kernel takes ", expected,
                      " (dimension ", dim, " is ", shape[dim], ", expected ",
                      input.compiled[dim], ")");
  }
  if (type != input.type)
    return failWith(error, "got " + given + ", but the kernel takes " +
                               expected + " (element type " +
                               getTypeName(type) + ", expected " +
                               getTypeName(input.type) + ")");
  return true;
}

/// Reads an --input value; random data is left for later.
static bool parseInput(const std::string &spec, Input &input,
                       std::string &error) {
  if (spec.rfind("@", 0) == 0) {
    input.source = spec.substr(1);
    if (input.source.empty())
      return failWith(error, "'@' must be followed by the path of a .npy file");
    return readNpy(input.source, input.tensor, error) &&
           checkInput(input.tensor.shape, input.tensor.type, input, error);
  }
  input.isRandom = true;
  input.source = "random";
  input.tensor.type = input.type;
  if (spec == "random") {
    for (int64_t dim : input.compiled) {
      if (dim < 0)
        return failWith(
            error,
            "'random' needs a static shape, but the kernel takes " +
                formatShape(input.compiled, input.type) +
                "; give SHAPExTYPE (such as 2x8x128x64xf16) or @file.npy");
    }
    input.tensor.shape = input.compiled;
    return true;
  }
  if (!parseTensorSpec(spec, input.tensor.shape, input.tensor.type, error)) {
    if (spec.size() > 4 && spec.compare(spec.size() - 4, 4, ".npy") == 0)
      error = "write @" + spec + " to read a .npy file";
    else
      error += "; an input is SHAPExTYPE (such as 2x8x128x64xf16), "
               "@file.npy or random";
    return false;
  }
  return checkInput(input.tensor.shape, input.tensor.type, input, error);
}

bool attn::runtime::runManifest(const ManifestRunOptions &options,
                                std::ostream &os, bool &passed,
                                std::string &error) {
  passed = true;
  if (options.explain && !options.bench)
    return failWith(error, kExplainNeedsBench);
  if (options.bench && options.iterations == 0)
    return failWith(error, "--iters must be at least 1");
  std::string outputPath = options.output;
  if (!outputPath.empty() && outputPath[0] == '@')
    outputPath.erase(0, 1);
  if (!options.output.empty() && outputPath.empty())
    return failWith(error, "--output needs a file name, as in --output=@o.npy");
  std::filesystem::path directory =
      std::filesystem::path(outputPath).parent_path();
  std::error_code ec;
  if (!directory.empty() && !std::filesystem::is_directory(directory, ec))
    return failWith(error, "cannot write '" + outputPath + "': no directory '" +
                               directory.string() + "'");

  Manifest manifest;
  std::string ptx;
  if (!readManifestFile(options.manifestPath, manifest, error))
    return false;
  if (options.check &&
      (manifest.attributes.scoreMod || manifest.attributes.maskMod))
    return failWith(
        error,
        "--check: kernel '" + manifest.kernel +
            "' has a score_mod or mask_mod region, which its manifest does "
            "not carry; check it with the attn-run built with MLIR, which "
            "evaluates the regions");
  if (!readWholeFile(manifest.getPtxPath(), ptx, error))
    return failWith(error,
                    "cannot read '" + manifest.getPtxPath() + "': " + error);

  // The inputs, checked one by one, then together.
  std::vector<Input> inputs = {
      {"q", manifest.query.shape, manifest.elementType},
      {"k", manifest.key.shape, manifest.elementType},
      {"v", manifest.value.shape, manifest.elementType}};
  if (manifest.mask)
    inputs.push_back(
        {"mask", manifest.mask->shape, manifest.mask->elementType});
  for (size_t i = 0; i < manifest.captures.size(); ++i)
    inputs.push_back({"capture" + std::to_string(i), manifest.captures[i].shape,
                      manifest.captures[i].elementType});
  std::string name =
      manifest.function.empty() ? manifest.kernel : manifest.function;
  if (options.inputs.size() != inputs.size()) {
    std::string expected;
    for (const Input &input : inputs)
      expected += std::string(expected.empty() ? "" : ", ") + input.label +
                  ": " + formatShape(input.compiled, input.type);
    error = concat("kernel '", name, "' takes ", inputs.size(), " inputs (",
                   expected, "), got ", options.inputs.size(), " --input value",
                   (options.inputs.size() == 1 ? "" : "s"));
    return false;
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!parseInput(options.inputs[i], inputs[i], error))
      return failWith(error, "input #", i, " (", inputs[i].label, "): ", error);
  }
  OperandShapes shapes;
  shapes.query = inputs[0].tensor.shape;
  shapes.key = inputs[1].tensor.shape;
  shapes.value = inputs[2].tensor.shape;
  shapes.output = {shapes.query[0], shapes.query[1], shapes.query[2],
                   shapes.value[3]};
  shapes.hasMask = manifest.mask.has_value();
  if (shapes.hasMask)
    shapes.mask = inputs[3].tensor.shape;
  ProblemSizes sizes;
  if (!inferProblemSizes(manifest, shapes, sizes, error))
    return failWith(error,
                    "the inputs do not fit kernel '" + name + "': " + error);
  double bytes = 0.0;
  for (const Input &input : inputs)
    bytes += double(input.tensor.getNumBytes());
  bytes += double(sizes.B) * sizes.Hq * sizes.Tq * sizes.Dv *
           getElementBytes(manifest.elementType);
  if (!checkFitsInMemory(bytes,
                         "the inputs and the result (" +
                             formatShape(shapes.output, manifest.elementType) +
                             ")",
                         error))
    return false;

#if ATTN_HAS_CUDA_DRIVER
  KernelRunner runner;
  if (!runner.open(options.device, error) || !runner.load(manifest, ptx, error))
    return false;
#else
  error = "this attn-run was built without the CUDA driver header cuda.h "
          "and cannot launch kernels (configure with CUDA_HOME set)";
  return false;
#endif

  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].isRandom)
      inputs[i].tensor =
          makeRandomTensor(inputs[i].tensor.shape, inputs[i].tensor.type,
                           deriveInputSeed(options.seed, unsigned(i)));
  AttentionProblem problem;
  problem.query = &inputs[0].tensor;
  problem.key = &inputs[1].tensor;
  problem.value = &inputs[2].tensor;
  problem.mask = manifest.mask ? &inputs[3].tensor : nullptr;
  for (size_t i = inputs.size() - manifest.captures.size(); i < inputs.size();
       ++i)
    problem.captures.push_back(&inputs[i].tensor);
  problem.scale = manifest.attributes.scale.value_or(1.0 / std::sqrt(sizes.D));
  problem.causal = manifest.attributes.causal;
  if (manifest.attributes.window) {
    problem.windowLeft = manifest.attributes.window->first;
    problem.windowRight = manifest.attributes.window->second;
  }
  problem.softcap = manifest.attributes.softcap.value_or(0.0);
  if (!validateProblem(problem, error))
    return failWith(error, "the inputs do not fit attn.attention: " + error);
  bool tf32 = manifest.elementType == ElementType::F32 &&
              manifest.attributes.precision != PrecisionMode::IEEE;

  RunSummary summary;
  summary.function = name;
  summary.target = "cuda";
  for (const Input &input : inputs)
    summary.arguments.push_back(
        {input.label, input.tensor.shape, input.tensor.type, input.source});
  summary.resultShape = shapes.output;
  summary.resultType = manifest.elementType;
  summary.scale = problem.scale;
  summary.causal = problem.causal;
  summary.tf32 = tf32;
  summary.outputPath = outputPath;
  if (!options.json)
    os << formatHeaderLine(summary) << "\n" << std::flush;

  HostTensor result = makeZeroTensor(shapes.output, manifest.elementType);
#if ATTN_HAS_CUDA_DRIVER
  if (!runner.run(problem, result, error))
    return false;
#endif
  // Written before the check so that a failing result can be inspected.
  if (!outputPath.empty() && !writeNpy(outputPath, result, error))
    return false;
  if (options.check)
    summary.check = checkOutput(problem, result, tf32, options.seed);
#if ATTN_HAS_CUDA_DRIVER
  if (options.bench) {
    std::vector<double> timesMs;
    if (!runner.time(problem, result, kCudaBenchWarmupRuns, options.iterations,
                     timesMs, error))
      return false;
    summary.bench =
        summarizeBench(std::move(timesMs), problem, result,
                       runner.getDeviceInfo(manifest.elementType, tf32));
    if (options.explain) {
      ExplainResult explained;
      if (!runner.explain(problem, result, summary.bench->medianMs, tf32,
                          explained.facts, error))
        return false;
      explained.report = computeExplain(explained.facts);
      summary.explain = std::move(explained);
    }
  }
#endif

  if (options.json)
    os << formatJson(summary) << "\n";
  else
    os << formatResultLines(summary);
  os << std::flush;
  passed = !summary.check || summary.check->result.pass;
  return true;
}
