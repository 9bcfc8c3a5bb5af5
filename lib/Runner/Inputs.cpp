//===- Inputs.cpp - attn-run inputs and their validation ------------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/Runner/Inputs.h"

#include "attn/Runner/Diagnostics.h"
#include "attn/Runtime/ManifestRun.h"
#include "attn/Runtime/Npy.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::runner;

namespace rt = ::attn::runtime;

/// Prints `type` as MLIR does: "tensor<?x32x?x128xbf16>".
static std::string formatType(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

/// rt::checkFitsInMemory as an llvm::Error.
static llvm::Error checkFitsInMemory(double bytes, const std::string &what) {
  std::string error;
  if (rt::checkFitsInMemory(bytes, what, error))
    return llvm::Error::success();
  return makeError(error);
}

llvm::Expected<rt::HostTensor>
mlir::attn::runner::makeInputTensor(StringRef spec, RankedTensorType argType,
                                    uint64_t seed) {
  if (spec.starts_with("@")) {
    StringRef path = spec.drop_front();
    if (path.empty())
      return makeError("'@' must be followed by the path of a .npy file");
    rt::HostTensor tensor;
    std::string error;
    if (!rt::readNpy(path.str(), tensor, error))
      return makeError(error);
    if (llvm::Error error = checkInputType(tensor, argType))
      return std::move(error);
    return tensor;
  }

  if (spec == "random") {
    if (!argType.hasStaticShape())
      return makeError("'random' needs a static argument type, but the "
                       "function takes " +
                       formatType(argType) +
                       "; give SHAPExTYPE (such as 2x8x128x64xf16) or "
                       "@file.npy");
    std::optional<rt::ElementType> type =
        getRuntimeType(argType.getElementType());
    if (!type)
      return makeError("the function takes " + formatType(argType) +
                       ", whose element type attn-run does not support");
    std::vector<int64_t> shape(argType.getShape().begin(),
                               argType.getShape().end());
    if (llvm::Error error =
            checkFitsInMemory(static_cast<double>(argType.getNumElements()) *
                                  rt::getElementBytes(*type),
                              rt::formatShape(shape, *type)))
      return std::move(error);
    return rt::makeRandomTensor(std::move(shape), *type, seed);
  }

  std::vector<int64_t> shape;
  rt::ElementType type;
  std::string error;
  if (!rt::parseTensorSpec(std::string_view(spec.data(), spec.size()), shape,
                           type, error)) {
    if (spec.ends_with(".npy"))
      return makeError("write @" + spec + " to read a .npy file");
    return makeError(error + "; an input is SHAPExTYPE (such as "
                             "2x8x128x64xf16), @file.npy or random");
  }
  // Check the shape before allocating anything.
  rt::HostTensor tensor;
  tensor.shape = shape;
  tensor.type = type;
  if (llvm::Error error = checkInputType(tensor, argType))
    return std::move(error);
  double numElements = 1.0;
  for (int64_t dim : shape)
    numElements *= static_cast<double>(dim);
  if (llvm::Error error = checkFitsInMemory(
          numElements * rt::getElementBytes(type), spec.str()))
    return std::move(error);
  return rt::makeRandomTensor(std::move(shape), type, seed);
}

llvm::Error mlir::attn::runner::checkInputType(const rt::HostTensor &tensor,
                                               RankedTensorType argType) {
  std::vector<int64_t> dims;
  for (int64_t size : argType.getShape())
    dims.push_back(ShapedType::isDynamic(size) ? -1 : size);
  // An i32 tensor fits a si32 argument too.
  std::optional<rt::ElementType> type =
      getRuntimeType(argType.getElementType());
  std::string error;
  if (!rt::checkInputShape(tensor.shape, tensor.type, dims,
                           type == tensor.type
                               ? rt::getTypeName(tensor.type)
                               : formatType(argType.getElementType()),
                           "the function takes " + formatType(argType), error))
    return makeError(error);
  return llvm::Error::success();
}

rt::AttentionProblem RunInputs::getProblem() const {
  auto get = [&](OperandRole role) -> const rt::HostTensor * {
    int index = roleArguments[static_cast<unsigned>(role)];
    return index < 0 ? nullptr : &arguments[index];
  };
  rt::AttentionProblem problem;
  problem.query = get(OperandRole::Query);
  problem.key = get(OperandRole::Key);
  problem.value = get(OperandRole::Value);
  problem.mask = get(OperandRole::Mask);
  problem.kvLengths = get(OperandRole::KvLengths);
  problem.cuSeqlensQ = get(OperandRole::CuSeqlensQ);
  problem.cuSeqlensK = get(OperandRole::CuSeqlensK);
  problem.blockTable = get(OperandRole::BlockTable);
  problem.scale = scale;
  problem.causal = causal;
  problem.windowLeft = windowLeft;
  problem.windowRight = windowRight;
  problem.softcap = softcap;
  return problem;
}

std::vector<rt::HostTensor> RunInputs::makeResults() const {
  std::vector<rt::HostTensor> results;
  results.push_back(rt::makeZeroTensor(resultShape, resultType));
  if (!lseShape.empty())
    results.push_back(rt::makeZeroTensor(lseShape, rt::ElementType::F32));
  return results;
}

std::vector<const rt::HostTensor *> RunInputs::getArgumentPointers() const {
  std::vector<const rt::HostTensor *> pointers;
  for (const rt::HostTensor &tensor : arguments)
    pointers.push_back(&tensor);
  return pointers;
}

llvm::Expected<RunInputs>
mlir::attn::runner::prepareInputs(EntryFunction &entry,
                                  ArrayRef<std::string> specs, uint64_t seed) {
  unsigned numArgs = entry.getNumArguments();
  if (specs.size() != numArgs) {
    std::string expected;
    for (unsigned i = 0; i < numArgs; ++i) {
      if (i)
        expected += ", ";
      expected += entry.getArgumentLabel(i) + ": " +
                  formatType(entry.getArgumentType(i));
    }
    return makeError("function '" + entry.getName() + "' takes " +
                     Twine(numArgs) +
                     (numArgs == 1 ? " input (" : " inputs (") + expected +
                     "), got " + Twine(specs.size()) + " --input value" +
                     (specs.size() == 1 ? "" : "s"));
  }

  RunInputs inputs;
  int lengthsArg = entry.roleArguments[unsigned(OperandRole::KvLengths)];
  for (unsigned i = 0; i < numArgs; ++i) {
    std::string label =
        "input #" + std::to_string(i) + " (" + entry.getArgumentLabel(i) + ")";
    RankedTensorType argType = entry.getArgumentType(i);
    llvm::Expected<rt::HostTensor> tensor =
        makeInputTensor(specs[i], argType, deriveInputSeed(seed, i));
    if (!tensor)
      return makeError(label + ": " + llvm::toString(tensor.takeError()));
    inputs.arguments.push_back(std::move(*tensor));
    StringRef spec = specs[i];
    inputs.sources.push_back(spec.starts_with("@") ? spec.drop_front().str()
                                                   : std::string("random"));
  }

  inputs.roleArguments = entry.roleArguments;
  // Random kv_lengths are lengths in 0 .. Tk (the key's, once it is known;
  // P * page for a paged cache).
  int keyArg = entry.roleArguments[unsigned(OperandRole::Key)];
  int tableArg = entry.roleArguments[unsigned(OperandRole::BlockTable)];
  const rt::HostTensor &key = inputs.arguments[keyArg];
  const rt::HostTensor *table =
      tableArg >= 0 ? &inputs.arguments[tableArg] : nullptr;
  if (lengthsArg >= 0 && inputs.sources[lengthsArg] == "random") {
    rt::HostTensor &lengths = inputs.arguments[lengthsArg];
    if (lengths.type == rt::ElementType::I32 && lengths.shape.size() == 1 &&
        key.shape.size() == 4 && (!table || table->shape.size() == 2)) {
      int64_t capacity = table ? table->shape[1] * key.shape[2] : key.shape[2];
      lengths = rt::makeRandomLengths(lengths.shape[0], capacity,
                                      deriveInputSeed(seed, lengthsArg));
    }
  }
  // A random block table: distinct pages of the pool in random order
  // (makeRandomBlockTable), so that a kernel reading the wrong page fails
  // the check.
  if (table && inputs.sources[tableArg] == "random" &&
      table->type == rt::ElementType::I32 && table->shape.size() == 2 &&
      key.shape.size() == 4)
    inputs.arguments[tableArg] =
        rt::makeRandomBlockTable(table->shape[0], table->shape[1], key.shape[0],
                                 deriveInputSeed(seed, tableArg));
  // Random cu_seqlens are random lengths summing to Tq (Tk).
  for (auto [role, dataRole] :
       {std::pair{OperandRole::CuSeqlensQ, OperandRole::Query},
        {OperandRole::CuSeqlensK, OperandRole::Key}}) {
    int arg = entry.roleArguments[unsigned(role)];
    int dataArg = entry.roleArguments[unsigned(dataRole)];
    if (arg < 0 || inputs.sources[arg] != "random")
      continue;
    rt::HostTensor &offsets = inputs.arguments[arg];
    const rt::HostTensor &data = inputs.arguments[dataArg];
    if (offsets.type == rt::ElementType::I32 && offsets.shape.size() == 1 &&
        data.shape.size() == 4)
      offsets = rt::makeRandomSeqlens(offsets.shape[0], data.shape[2],
                                      deriveInputSeed(seed, arg));
  }
  inputs.scale = entry.getScale();
  inputs.causal = entry.getCausal();
  if (WindowAttr window = entry.attention.getWindowAttr()) {
    inputs.windowLeft = window.getLeft();
    inputs.windowRight = window.getRight();
  }
  if (std::optional<APFloat> softcap = entry.attention.getSoftcap())
    inputs.softcap = softcap->convertToDouble();
  rt::AttentionProblem problem = inputs.getProblem();
  std::string error;
  if (!rt::validateProblem(problem, error))
    return makeError("the inputs do not fit attn.attention: " + error);

  const rt::HostTensor &query = *problem.query;
  inputs.resultShape = {query.shape[0], query.shape[1], query.shape[2],
                        problem.value->shape[3]};
  inputs.resultType = query.type;
  if (entry.hasLse())
    inputs.lseShape = {query.shape[0], query.shape[1], query.shape[2]};
  double inputBytes = 0.0;
  for (const rt::HostTensor &tensor : inputs.arguments)
    inputBytes += static_cast<double>(tensor.getNumBytes());
  double resultBytes = static_cast<double>(rt::getElementBytes(query.type));
  for (int64_t dim : inputs.resultShape)
    resultBytes *= static_cast<double>(dim);
  double lseBytes =
      inputs.lseShape.empty() ? 0.0 : rt::getElementBytes(rt::ElementType::F32);
  for (int64_t dim : inputs.lseShape)
    lseBytes *= static_cast<double>(dim);
  if (llvm::Error error = checkFitsInMemory(
          inputBytes + resultBytes + lseBytes,
          "the inputs and the result (" +
              rt::formatShape(inputs.resultShape, inputs.resultType) + ")"))
    return std::move(error);
  auto checkResult = [&](RankedTensorType type,
                         const std::vector<int64_t> &shape,
                         rt::ElementType elementType) -> llvm::Error {
    if (type.getRank() != static_cast<int64_t>(shape.size()))
      return makeError("function '" + entry.getName() + "' returns " +
                       formatType(type) + ", expected rank " +
                       Twine(shape.size()));
    for (auto [dim, size] : llvm::enumerate(type.getShape())) {
      if (!ShapedType::isDynamic(size) && shape[dim] != size)
        return makeError("the inputs give a result of shape " +
                         rt::formatShape(shape, elementType) +
                         ", but function '" + entry.getName() + "' returns " +
                         formatType(type));
    }
    return llvm::Error::success();
  };
  if (llvm::Error error = checkResult(entry.getResultType(), inputs.resultShape,
                                      inputs.resultType))
    return std::move(error);
  if (entry.hasLse())
    if (llvm::Error error = checkResult(entry.getLseType(), inputs.lseShape,
                                        rt::ElementType::F32))
      return std::move(error);
  return inputs;
}
