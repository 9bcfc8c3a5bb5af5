//===- ManifestPieces.cpp - The pieces of a launch manifest ---------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// The methods of the manifest's pieces (Manifest.h): grid expressions as
// text, the kernels and their launch order, the version a manifest needs.
// Its JSON form and the reader are in Manifest.cpp.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/Manifest.h"

using namespace attn::runtime;

std::string GridExpr::toString() const {
  if (kind == Kind::Constant)
    return std::to_string(value);
  if (kind == Kind::Size)
    return name;
  std::string text = std::string(getOperatorName(kind)) + "(";
  for (size_t i = 0; i < operands.size(); ++i)
    text += (i ? ", " : "") + operands[i].toString();
  return text + ")";
}

unsigned KernelLaunch::getNumParamSlots() const {
  unsigned count = 0;
  for (const KernelParam &param : params)
    count += param.getNumSlots();
  return count;
}

std::string Manifest::getPtxPath() const {
  if (directory.empty() || ptx.empty() || ptx[0] == '/')
    return ptx;
  return directory + (directory.back() == '/' ? "" : "/") + ptx;
}

const OperandSpec *Manifest::getOperand(std::string_view name) const {
  return name == "query"        ? &query
         : name == "key"        ? &key
         : name == "value"      ? &value
         : name == "output"     ? &output
         : name == "lse" && lse ? &*lse
                                : nullptr;
}

const CaptureSpec *Manifest::getCapture(std::string_view name) const {
  for (size_t i = 0; i < captures.size(); ++i)
    if (name == "capture" + std::to_string(i))
      return &captures[i];
  return nullptr;
}

const WorkspaceSpec *Manifest::getWorkspace(std::string_view name) const {
  for (const WorkspaceSpec &workspace : workspaces)
    if (workspace.name == name)
      return &workspace;
  return nullptr;
}

bool Manifest::hasTensorMaps() const {
  bool found = false;
  for (const KernelLaunch *kernel : getKernels())
    for (const KernelParam &param : kernel->params)
      found |= param.kind == KernelParam::Kind::TensorMap;
  return found;
}

std::vector<const KernelLaunch *> Manifest::getKernels() const {
  std::vector<const KernelLaunch *> kernels = {this};
  for (const std::vector<KernelLaunch> *list : {&prologue, &epilogue})
    for (const KernelLaunch &kernel : *list)
      kernels.push_back(&kernel);
  return kernels;
}

std::vector<LaunchStep> Manifest::getLaunchOrder() const {
  std::vector<LaunchStep> steps;
  for (size_t i = 0; i < prologue.size(); ++i)
    steps.push_back({KernelStage::Prologue, i, 1 + i, &prologue[i]});
  steps.push_back({KernelStage::Main, 0, 0, this});
  for (size_t i = 0; i < epilogue.size(); ++i)
    steps.push_back(
        {KernelStage::Epilogue, i, 1 + prologue.size() + i, &epilogue[i]});
  return steps;
}

std::string LaunchStep::getPath() const {
  if (stage == KernelStage::Main)
    return "";
  return concat(stage == KernelStage::Prologue ? "prologue" : "epilogue", "[",
                index, "]");
}

std::string LaunchStep::describe() const {
  const char *what = stage == KernelStage::Prologue   ? "prologue kernel '"
                     : stage == KernelStage::Epilogue ? "epilogue kernel '"
                                                      : "kernel '";
  return what + kernel->kernel + "'";
}

int64_t Manifest::getVersion() const {
  if (blockTable)
    return 7;
  if (cuSeqlensQ || cuSeqlensK)
    return 6;
  if (kvLengths || !epilogue.empty())
    return 5;
  if (lse)
    return 4;
  if (hasTensorMaps())
    return 3;
  return workspaces.empty() && prologue.empty() ? 1 : 2;
}

const std::vector<std::string> &attn::runtime::getSizeNames() {
  static const std::vector<std::string> names = {"B",  "Hq", "Hkv", "Tq",
                                                 "Tk", "D",  "Dv",  "N"};
  return names;
}

bool attn::runtime::operator==(const Manifest &lhs, const Manifest &rhs) {
  return serializeManifest(lhs) == serializeManifest(rhs);
}
