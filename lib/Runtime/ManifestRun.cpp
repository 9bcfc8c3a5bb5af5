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

bool attn::runtime::checkRunFlags(const RunFlags &flags,
                                  std::vector<std::string> &outputPaths,
                                  std::string &error) {
  if (flags.bench && flags.iterations == 0)
    return failWith(error, "--iters must be at least 1");
  if (flags.explain && !flags.bench)
    return failWith(error, kExplainNeedsBench);
  std::vector<std::string> paths;
  for (const std::string &output : flags.outputs) {
    std::string path = output;
    if (!path.empty() && path[0] == '@')
      path.erase(0, 1);
    if (path.empty())
      return failWith(error,
                      "--output needs a file name, as in --output=@o.npy");
    std::filesystem::path directory = std::filesystem::path(path).parent_path();
    std::error_code ec;
    if (!directory.empty() && !std::filesystem::is_directory(directory, ec))
      return failWith(error, "cannot write '", path, "': no directory '",
                      directory.string(), "'");
    for (const std::string &earlier : paths)
      if (earlier == path)
        return failWith(
            error, "--output '", path,
            "' is given twice; each result needs a file of its own");
    paths.push_back(std::move(path));
  }
  outputPaths = std::move(paths);
  return true;
}

bool attn::runtime::checkOutputCount(
    const std::vector<std::string> &outputPaths, const std::string &what,
    const std::vector<std::string> &results, std::string &error) {
  if (outputPaths.size() <= results.size())
    return true;
  std::string listed;
  for (const std::string &result : results)
    listed += (listed.empty() ? "" : ", ") + result;
  return failWith(error, "--output is given ", outputPaths.size(),
                  " times, but ", what, " has ", results.size(), " result",
                  results.size() == 1 ? "" : "s", " (", listed,
                  "); give one --output per result, in result order");
}

bool attn::runtime::checkInputShape(const std::vector<int64_t> &shape,
                                    ElementType type,
                                    const std::vector<int64_t> &dims,
                                    const std::string &expectedType,
                                    const std::string &taker,
                                    std::string &error) {
  std::string given = "got " + formatShape(shape, type);
  if (shape.size() != dims.size())
    return failWith(error, given, " (rank ", shape.size(), "), but ", taker,
                    " (rank ", dims.size(), ")");
  for (size_t dim = 0; dim < shape.size(); ++dim)
    if (dims[dim] >= 0 && shape[dim] != dims[dim])
      return failWith(error, given, ", but ", taker, " (dimension ", dim,
                      " is ", shape[dim], ", expected ", dims[dim], ")");
  if (getTypeName(type) != expectedType)
    return failWith(error, given, ", but ", taker, " (element type ",
                    getTypeName(type), ", expected ", expectedType, ")");
  return true;
}

/// checkInputShape against an operand's compiled shape and type.
static bool checkInput(const HostTensor &tensor, const Input &input,
                       std::string &error) {
  return checkInputShape(
      tensor.shape, tensor.type, input.compiled, getTypeName(input.type),
      "the kernel takes " + formatShape(input.compiled, input.type), error);
}

/// Reads an --input value; random data is left for later.
static bool parseInput(const std::string &spec, Input &input,
                       std::string &error) {
  if (spec.rfind("@", 0) == 0) {
    input.source = spec.substr(1);
    if (input.source.empty())
      return failWith(error, "'@' must be followed by the path of a .npy file");
    return readNpy(input.source, input.tensor, error) &&
           checkInput(input.tensor, input, error);
  }
  input.isRandom = true;
  input.source = "random";
  input.tensor.type = input.type;
  if (spec == "random") {
    for (int64_t dim : input.compiled) {
      if (dim < 0)
        return failWith(
            error, "'random' needs a static shape, but the kernel takes ",
            formatShape(input.compiled, input.type),
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
  return checkInput(input.tensor, input, error);
}

bool attn::runtime::runManifest(const ManifestRunOptions &options,
                                std::ostream &os, bool &passed,
                                std::string &error) {
  passed = true;
  std::vector<std::string> outputPaths;
  if (!checkRunFlags(options, outputPaths, error))
    return false;

  Manifest manifest;
  std::string ptx;
  if (!readManifestFile(options.manifestPath, manifest, error))
    return false;
  if (options.check &&
      (manifest.attributes.scoreMod || manifest.attributes.maskMod))
    return failWith(
        error, "--check: kernel '", manifest.kernel,
        "' has a score_mod or mask_mod region, which its manifest does "
        "not carry; check it with the attn-run built with MLIR, which "
        "evaluates the regions");
  if (!readWholeFile(manifest.getPtxPath(), ptx, error))
    return failWith(error, "cannot read '", manifest.getPtxPath(),
                    "': ", error);

  // The inputs, checked one by one, then together.
  std::vector<Input> inputs = {
      {"q", manifest.query.shape, manifest.elementType},
      {"k", manifest.key.shape, manifest.elementType},
      {"v", manifest.value.shape, manifest.elementType}};
  if (manifest.mask)
    inputs.push_back(
        {"mask", manifest.mask->shape, manifest.mask->elementType});
  if (manifest.kvLengths)
    inputs.push_back({"kv_lengths", manifest.kvLengths->shape,
                      manifest.kvLengths->elementType});
  size_t firstOffsets = inputs.size();
  if (manifest.cuSeqlensQ) {
    inputs.push_back({"cu_seqlens_q", manifest.cuSeqlensQ->shape,
                      manifest.cuSeqlensQ->elementType});
    inputs.push_back({"cu_seqlens_k", manifest.cuSeqlensK->shape,
                      manifest.cuSeqlensK->elementType});
  }
  size_t tableIndex = inputs.size();
  if (manifest.blockTable)
    inputs.push_back({"block_table", manifest.blockTable->shape,
                      manifest.blockTable->elementType});
  for (size_t i = 0; i < manifest.captures.size(); ++i)
    inputs.push_back({"capture" + std::to_string(i), manifest.captures[i].shape,
                      manifest.captures[i].elementType});
  std::string name =
      manifest.function.empty() ? manifest.kernel : manifest.function;
  std::vector<std::string> resultNames = {
      "o: " + formatShape(manifest.output.shape, manifest.elementType)};
  if (manifest.lse)
    resultNames.push_back("lse: " +
                          formatShape(manifest.lse->shape, ElementType::F32));
  if (!checkOutputCount(outputPaths, "kernel '" + name + "'", resultNames,
                        error))
    return false;
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
  // The problem points to the inputs; their random data comes once every
  // check passed.
  AttentionProblem problem;
  problem.query = &inputs[0].tensor;
  problem.key = &inputs[1].tensor;
  problem.value = &inputs[2].tensor;
  problem.mask = manifest.mask ? &inputs[3].tensor : nullptr;
  Input *kvLengths =
      manifest.kvLengths ? &inputs[manifest.mask ? 4 : 3] : nullptr;
  problem.kvLengths = kvLengths ? &kvLengths->tensor : nullptr;
  Input *offsetsQ = manifest.cuSeqlensQ ? &inputs[firstOffsets] : nullptr;
  Input *offsetsK = manifest.cuSeqlensQ ? &inputs[firstOffsets + 1] : nullptr;
  if (offsetsQ) {
    problem.cuSeqlensQ = &offsetsQ->tensor;
    problem.cuSeqlensK = &offsetsK->tensor;
  }
  Input *blockTable = manifest.blockTable ? &inputs[tableIndex] : nullptr;
  problem.blockTable = blockTable ? &blockTable->tensor : nullptr;
  for (size_t i = inputs.size() - manifest.captures.size(); i < inputs.size();
       ++i)
    problem.captures.push_back(&inputs[i].tensor);
  const std::vector<int64_t> &q = problem.query->shape;
  std::vector<int64_t> outputShape = {q[0], q[1], q[2],
                                      problem.value->shape[3]};
  // The log-sum-exp result: f32 B x Hq x Tq (empty: none).
  std::vector<int64_t> lseShape;
  if (manifest.lse)
    lseShape = {q[0], q[1], q[2]};
  ProblemSizes sizes;
  if (!inferProblemSizes(manifest, problem, outputShape, sizes, error))
    return failWith(error, "the inputs do not fit kernel '", name,
                    "': ", error);
  double bytes = 0.0;
  for (const Input &input : inputs)
    bytes += double(input.tensor.getNumBytes());
  bytes += double(sizes.B) * sizes.Hq * sizes.Tq *
           (sizes.Dv * getElementBytes(manifest.elementType) +
            (manifest.lse ? getElementBytes(ElementType::F32) : 0));
  if (!checkFitsInMemory(bytes,
                         "the inputs and the result (" +
                             formatShape(outputShape, manifest.elementType) +
                             ")",
                         error))
    return false;

#if !ATTN_HAS_CUDA_DRIVER
  return failWith(error,
                  "this attn-run was built without the CUDA driver header "
                  "cuda.h and cannot launch kernels (configure with CUDA_HOME "
                  "set)");
#else
  KernelRunner runner;
  if (!runner.open(/*ordinal=*/0, error) || !runner.load(manifest, ptx, error))
    return false;
  // Random kv_lengths are lengths in 0 .. Tk; random cu_seqlens random
  // lengths summing to Tq (Tk); a random block_table distinct pages of the
  // pool in random order.
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].isRandom)
      continue;
    uint64_t seed = deriveInputSeed(options.seed, unsigned(i));
    if (&inputs[i] == kvLengths)
      inputs[i].tensor = makeRandomLengths(sizes.B, sizes.Tk, seed);
    else if (&inputs[i] == offsetsQ || &inputs[i] == offsetsK)
      inputs[i].tensor = makeRandomSeqlens(
          sizes.N + 1, &inputs[i] == offsetsQ ? sizes.Tq : sizes.Tk, seed);
    else if (&inputs[i] == blockTable)
      inputs[i].tensor = makeRandomBlockTable(
          sizes.B, blockTable->tensor.shape[1], problem.key->shape[0], seed);
    else
      inputs[i].tensor =
          makeRandomTensor(inputs[i].tensor.shape, inputs[i].tensor.type, seed);
  }
  problem.scale = manifest.attributes.scale.value_or(1.0 / std::sqrt(sizes.D));
  problem.causal = manifest.attributes.causal;
  if (manifest.attributes.window) {
    problem.windowLeft = manifest.attributes.window->first;
    problem.windowRight = manifest.attributes.window->second;
  }
  problem.softcap = manifest.attributes.softcap.value_or(0.0);
  if (!validateProblem(problem, error))
    return failWith(error, "the inputs do not fit attn.attention: ", error);
  bool tf32 = manifest.elementType == ElementType::F32 &&
              manifest.attributes.precision != PrecisionMode::IEEE;

  RunSummary summary;
  summary.function = name;
  summary.target = "cuda";
  for (const Input &input : inputs)
    summary.arguments.push_back(
        {input.label, input.tensor.shape, input.tensor.type, input.source});
  summary.resultShape = outputShape;
  summary.resultType = manifest.elementType;
  summary.lseShape = lseShape;
  summary.scale = problem.scale;
  summary.causal = problem.causal;
  summary.tf32 = tf32;
  summary.outputPaths = outputPaths;
  if (!options.json)
    os << formatHeaderLine(summary) << "\n" << std::flush;

  // The results in result order: the output, then the log-sum-exp.
  std::vector<HostTensor> results;
  results.push_back(makeZeroTensor(outputShape, manifest.elementType));
  if (manifest.lse)
    results.push_back(makeZeroTensor(lseShape, ElementType::F32));
  HostTensor &result = results[0];
  HostTensor *lse = manifest.lse ? &results[1] : nullptr;
  if (!runner.run(problem, result, lse, error))
    return false;
  // Written before the check so that a failing result can be inspected.
  for (size_t i = 0; i < outputPaths.size(); ++i)
    if (!writeNpy(outputPaths[i], results[i], error))
      return false;
  if (options.check)
    summary.check = checkOutput(problem, result, tf32, options.seed, lse);
  if (options.bench) {
    std::vector<double> timesMs;
    if (!runner.time(problem, result, kCudaBenchWarmupRuns, options.iterations,
                     timesMs, error))
      return false;
    summary.bench =
        summarizeBench(timesMs, problem, result,
                       runner.getDeviceInfo(manifest.elementType, tf32), lse);
    if (options.explain) {
      ExplainResult explained;
      if (!runner.explain(problem, result, summary.bench->medianMs, tf32,
                          explained.facts, error))
        return false;
      explained.report = computeExplain(explained.facts);
      summary.explain = std::move(explained);
    }
  }
  os << (options.json ? formatJson(summary) + "\n" : formatResultLines(summary))
     << std::flush;
  passed = !summary.check || summary.check->result.pass;
  return true;
#endif
}
