//===- RegionEval.cpp - score_mod / mask_mod on the host ------------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// Each region is compiled once into a list of instructions over numbered
// slots (one per SSA value; constants are preset), so that evaluating it for
// every (row, key) pair of the reference is a loop over a switch.
//
//===----------------------------------------------------------------------===//

#include "attn/Runner/RegionEval.h"

#include "attn/Runner/Diagnostics.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::runner;

namespace rt = ::attn::runtime;

namespace {
/// A value: floats in `f`, integers in `i` as their signed value at their
/// width (an i1 true is -1).
struct Slot {
  double f = 0.0;
  int64_t i = 0;
};

enum class Code {
  FloatUnary,
  FloatBinary,
  Fma,
  FloatCopy,
  FloatClass,
  IntBinary,
  IntCast,
  IntToFloat,
  FloatToInt,
  CmpF,
  CmpI,
  Select,
  Extract,
  If
};

using IntFn = int64_t (*)(int64_t, int64_t, unsigned);

struct Instr {
  Code code;
  int result = -1, a = -1, b = -1, c = -1;
  /// The result's integer width; for casts also the operand's.
  unsigned width = 64, fromWidth = 64;
  /// Signedness of an int <-> float cast or integer extension.
  bool isSigned = true;
  uint64_t predicate = 0;
  double (*unary)(double) = nullptr;
  double (*binary)(double, double) = nullptr;
  IntFn intBinary = nullptr;
  /// tensor.extract: the source and the index slots.
  int source = -1;
  SmallVector<int> indices;
  /// scf.if: its result slots and each branch with the slots it yields.
  SmallVector<int> results, thenYield, elseYield;
  std::vector<Instr> thenBody, elseBody;
};

/// A tensor that tensor.extract reads: a function argument or a constant.
struct Source {
  int argument = -1;
  std::vector<Slot> constant;
  std::vector<int64_t> shape;
  bool isFloat = true;
  unsigned width = 64;
};
} // namespace

/// The value `v` of an integer of `width` bits, as a signed value.
static int64_t wrap(int64_t v, unsigned width) {
  if (width >= 64)
    return v;
  uint64_t bits = static_cast<uint64_t>(v) & ((uint64_t{1} << width) - 1);
  uint64_t sign = uint64_t{1} << (width - 1);
  return static_cast<int64_t>((bits ^ sign) - sign);
}

/// The same bits as an unsigned value.
static uint64_t unsignedOf(int64_t v, unsigned width) {
  if (width >= 64)
    return static_cast<uint64_t>(v);
  return static_cast<uint64_t>(v) & ((uint64_t{1} << width) - 1);
}

static unsigned widthOf(Type type) {
  if (auto integer = dyn_cast<IntegerType>(type))
    return integer.getWidth();
  return 64; // index
}

static bool isTrue(const Slot &slot) { return slot.i != 0; }

static double maximum(double x, double y) {
  if (std::isnan(x) || std::isnan(y))
    return std::numeric_limits<double>::quiet_NaN();
  if (x == y)
    return std::signbit(x) ? y : x;
  return x > y ? x : y;
}

static double minimum(double x, double y) {
  if (std::isnan(x) || std::isnan(y))
    return std::numeric_limits<double>::quiet_NaN();
  if (x == y)
    return std::signbit(x) ? x : y;
  return x < y ? x : y;
}

static const llvm::StringMap<double (*)(double)> &getUnaryFunctions() {
  static const llvm::StringMap<double (*)(double)> table = {
      {"arith.negf", [](double x) { return -x; }},
      {"math.absf", [](double x) { return std::fabs(x); }},
      {"math.ceil", [](double x) { return std::ceil(x); }},
      {"math.floor", [](double x) { return std::floor(x); }},
      {"math.round", [](double x) { return std::round(x); }},
      {"math.roundeven", [](double x) { return std::nearbyint(x); }},
      {"math.trunc", [](double x) { return std::trunc(x); }},
      {"math.sqrt", [](double x) { return std::sqrt(x); }},
      {"math.rsqrt", [](double x) { return 1.0 / std::sqrt(x); }},
      {"math.cbrt", [](double x) { return std::cbrt(x); }},
      {"math.exp", [](double x) { return std::exp(x); }},
      {"math.exp2", [](double x) { return std::exp2(x); }},
      {"math.expm1", [](double x) { return std::expm1(x); }},
      {"math.log", [](double x) { return std::log(x); }},
      {"math.log2", [](double x) { return std::log2(x); }},
      {"math.log10", [](double x) { return std::log10(x); }},
      {"math.log1p", [](double x) { return std::log1p(x); }},
      {"math.sin", [](double x) { return std::sin(x); }},
      {"math.cos", [](double x) { return std::cos(x); }},
      {"math.tan", [](double x) { return std::tan(x); }},
      {"math.asin", [](double x) { return std::asin(x); }},
      {"math.acos", [](double x) { return std::acos(x); }},
      {"math.atan", [](double x) { return std::atan(x); }},
      {"math.sinh", [](double x) { return std::sinh(x); }},
      {"math.cosh", [](double x) { return std::cosh(x); }},
      {"math.tanh", [](double x) { return std::tanh(x); }},
      {"math.asinh", [](double x) { return std::asinh(x); }},
      {"math.acosh", [](double x) { return std::acosh(x); }},
      {"math.atanh", [](double x) { return std::atanh(x); }},
      {"math.erf", [](double x) { return std::erf(x); }},
      {"math.erfc", [](double x) { return std::erfc(x); }}};
  return table;
}

static const llvm::StringMap<double (*)(double, double)> &getBinaryFunctions() {
  static const llvm::StringMap<double (*)(double, double)> table = {
      {"arith.addf", [](double x, double y) { return x + y; }},
      {"arith.subf", [](double x, double y) { return x - y; }},
      {"arith.mulf", [](double x, double y) { return x * y; }},
      {"arith.divf", [](double x, double y) { return x / y; }},
      {"arith.remf", [](double x, double y) { return std::fmod(x, y); }},
      {"arith.maximumf", maximum},
      {"arith.minimumf", minimum},
      {"arith.maxnumf", [](double x, double y) { return std::fmax(x, y); }},
      {"arith.minnumf", [](double x, double y) { return std::fmin(x, y); }},
      {"math.powf", [](double x, double y) { return std::pow(x, y); }},
      {"math.atan2", [](double x, double y) { return std::atan2(x, y); }},
      {"math.copysign",
       [](double x, double y) { return std::copysign(x, y); }}};
  return table;
}

/// Integer ops on signed values of `w` bits (the caller wraps the result);
/// division by zero, undefined in MLIR, gives 0.
static const llvm::StringMap<IntFn> &getIntFunctions() {
  using U = uint64_t;
  static const llvm::StringMap<IntFn> table = {
      {"arith.addi",
       [](int64_t a, int64_t b, unsigned) { return int64_t(U(a) + U(b)); }},
      {"arith.subi",
       [](int64_t a, int64_t b, unsigned) { return int64_t(U(a) - U(b)); }},
      {"arith.muli",
       [](int64_t a, int64_t b, unsigned) { return int64_t(U(a) * U(b)); }},
      {"arith.divsi",
       [](int64_t a, int64_t b, unsigned) {
         return b == 0 || (b == -1 && a == std::numeric_limits<int64_t>::min())
                    ? int64_t(0)
                    : a / b;
       }},
      {"arith.remsi",
       [](int64_t a, int64_t b, unsigned) {
         return b == 0 || b == -1 ? int64_t(0) : a % b;
       }},
      {"arith.floordivsi",
       [](int64_t a, int64_t b, unsigned) {
         if (b == 0 || (b == -1 && a == std::numeric_limits<int64_t>::min()))
           return int64_t(0);
         int64_t q = a / b;
         return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
       }},
      {"arith.ceildivsi",
       [](int64_t a, int64_t b, unsigned) {
         if (b == 0 || (b == -1 && a == std::numeric_limits<int64_t>::min()))
           return int64_t(0);
         int64_t q = a / b;
         return (a % b != 0 && ((a < 0) == (b < 0))) ? q + 1 : q;
       }},
      {"arith.divui",
       [](int64_t a, int64_t b, unsigned w) {
         U y = unsignedOf(b, w);
         return y == 0 ? int64_t(0) : int64_t(unsignedOf(a, w) / y);
       }},
      {"arith.remui",
       [](int64_t a, int64_t b, unsigned w) {
         U y = unsignedOf(b, w);
         return y == 0 ? int64_t(0) : int64_t(unsignedOf(a, w) % y);
       }},
      {"arith.ceildivui",
       [](int64_t a, int64_t b, unsigned w) {
         U x = unsignedOf(a, w), y = unsignedOf(b, w);
         return y == 0 ? int64_t(0) : int64_t(x / y + (x % y != 0));
       }},
      {"arith.andi", [](int64_t a, int64_t b, unsigned) { return a & b; }},
      {"arith.ori", [](int64_t a, int64_t b, unsigned) { return a | b; }},
      {"arith.xori", [](int64_t a, int64_t b, unsigned) { return a ^ b; }},
      {"arith.shli",
       [](int64_t a, int64_t b, unsigned w) {
         U s = unsignedOf(b, w);
         return s >= w ? int64_t(0) : int64_t(U(a) << s);
       }},
      {"arith.shrsi",
       [](int64_t a, int64_t b, unsigned w) {
         U s = unsignedOf(b, w);
         return s >= w ? (a < 0 ? int64_t(-1) : int64_t(0)) : a >> s;
       }},
      {"arith.shrui",
       [](int64_t a, int64_t b, unsigned w) {
         U s = unsignedOf(b, w);
         return s >= w ? int64_t(0) : int64_t(unsignedOf(a, w) >> s);
       }},
      {"arith.minsi",
       [](int64_t a, int64_t b, unsigned) { return a < b ? a : b; }},
      {"arith.maxsi",
       [](int64_t a, int64_t b, unsigned) { return a > b ? a : b; }},
      {"arith.minui",
       [](int64_t a, int64_t b, unsigned w) {
         return unsignedOf(a, w) < unsignedOf(b, w) ? a : b;
       }},
      {"arith.maxui",
       [](int64_t a, int64_t b, unsigned w) {
         return unsignedOf(a, w) > unsignedOf(b, w) ? a : b;
       }},
      {"math.absi", [](int64_t a, int64_t, unsigned) {
         return a < 0 ? int64_t(0 - U(a)) : a;
       }}};
  return table;
}

//===----------------------------------------------------------------------===//
// The compiled region
//===----------------------------------------------------------------------===//

class mlir::attn::runner::RegionProgram {
public:
  std::vector<Instr> body;
  /// One slot per value; constants preset.
  std::vector<Slot> frame;
  std::vector<Source> sources;
  SmallVector<int> arguments;
  int yield = -1;

  /// Set by Modifiers::bind.
  const std::vector<rt::HostTensor> *tensors = nullptr;
  std::string *error = nullptr;

  void run(const std::vector<Instr> &instrs);
  Slot read(const Instr &instr);
};

Slot RegionProgram::read(const Instr &instr) {
  const Source &source = sources[instr.source];
  const rt::HostTensor *tensor =
      source.argument >= 0 ? &(*tensors)[source.argument] : nullptr;
  const std::vector<int64_t> &shape = tensor ? tensor->shape : source.shape;
  int64_t linear = 0;
  for (auto [d, slot] : llvm::enumerate(instr.indices)) {
    int64_t index = frame[slot].i;
    if (index < 0 || index >= shape[d]) {
      if (error->empty())
        *error = "a region reads element " + std::to_string(index) +
                 " of dimension " + std::to_string(d) + " of a tensor of " +
                 std::to_string(shape[d]);
      return Slot();
    }
    linear = linear * shape[d] + index;
  }
  if (!tensor)
    return source.constant[linear];
  Slot slot;
  if (rt::isFloatType(tensor->type))
    slot.f = tensor->get(linear);
  else
    slot.i = wrap(tensor->getInteger(linear), source.width);
  return slot;
}

void RegionProgram::run(const std::vector<Instr> &instrs) {
  for (const Instr &instr : instrs) {
    Slot &out = instr.result >= 0 ? frame[instr.result] : frame[0];
    const Slot &a = instr.a >= 0 ? frame[instr.a] : frame[0];
    const Slot &b = instr.b >= 0 ? frame[instr.b] : frame[0];
    switch (instr.code) {
    case Code::FloatUnary:
      out.f = instr.unary(a.f);
      break;
    case Code::FloatBinary:
      out.f = instr.binary(a.f, b.f);
      break;
    case Code::Fma:
      out.f = std::fma(a.f, b.f, frame[instr.c].f);
      break;
    case Code::FloatCopy:
      out.f = a.f;
      break;
    case Code::FloatClass: {
      bool is = instr.predicate == 0   ? std::isnan(a.f)
                : instr.predicate == 1 ? std::isinf(a.f)
                                       : std::isfinite(a.f);
      out.i = is ? -1 : 0;
      break;
    }
    case Code::IntBinary:
      out.i = wrap(instr.intBinary(a.i, b.i, instr.width), instr.width);
      break;
    case Code::IntCast:
      out.i = wrap(instr.isSigned
                       ? a.i
                       : static_cast<int64_t>(unsignedOf(a.i, instr.fromWidth)),
                   instr.width);
      break;
    case Code::IntToFloat:
      out.f = instr.isSigned
                  ? static_cast<double>(a.i)
                  : static_cast<double>(unsignedOf(a.i, instr.fromWidth));
      break;
    case Code::FloatToInt: {
      // Out of range is undefined in MLIR; saturate to stay defined here.
      double t = std::trunc(a.f);
      if (std::isnan(t))
        t = 0.0;
      t = std::fmax(std::fmin(t, 9.2e18), -9.2e18);
      out.i = wrap(static_cast<int64_t>(t), instr.width);
      break;
    }
    case Code::CmpF: {
      bool unordered = std::isnan(a.f) || std::isnan(b.f);
      bool result = false;
      switch (static_cast<arith::CmpFPredicate>(instr.predicate)) {
      case arith::CmpFPredicate::AlwaysFalse:
        break;
      case arith::CmpFPredicate::AlwaysTrue:
        result = true;
        break;
      case arith::CmpFPredicate::ORD:
        result = !unordered;
        break;
      case arith::CmpFPredicate::UNO:
        result = unordered;
        break;
      case arith::CmpFPredicate::OEQ:
      case arith::CmpFPredicate::UEQ:
        result = a.f == b.f;
        break;
      case arith::CmpFPredicate::OGT:
      case arith::CmpFPredicate::UGT:
        result = a.f > b.f;
        break;
      case arith::CmpFPredicate::OGE:
      case arith::CmpFPredicate::UGE:
        result = a.f >= b.f;
        break;
      case arith::CmpFPredicate::OLT:
      case arith::CmpFPredicate::ULT:
        result = a.f < b.f;
        break;
      case arith::CmpFPredicate::OLE:
      case arith::CmpFPredicate::ULE:
        result = a.f <= b.f;
        break;
      case arith::CmpFPredicate::ONE:
      case arith::CmpFPredicate::UNE:
        result = a.f != b.f;
        break;
      }
      // Unordered predicates are true on NaN, ordered ones false.
      auto predicate = static_cast<arith::CmpFPredicate>(instr.predicate);
      if (unordered && predicate >= arith::CmpFPredicate::UEQ &&
          predicate <= arith::CmpFPredicate::UNE)
        result = true;
      else if (unordered && predicate >= arith::CmpFPredicate::OEQ &&
               predicate <= arith::CmpFPredicate::ONE)
        result = false;
      out.i = result ? -1 : 0;
      break;
    }
    case Code::CmpI: {
      uint64_t ua = unsignedOf(a.i, instr.fromWidth),
               ub = unsignedOf(b.i, instr.fromWidth);
      bool result = false;
      switch (static_cast<arith::CmpIPredicate>(instr.predicate)) {
      case arith::CmpIPredicate::eq:
        result = a.i == b.i;
        break;
      case arith::CmpIPredicate::ne:
        result = a.i != b.i;
        break;
      case arith::CmpIPredicate::slt:
        result = a.i < b.i;
        break;
      case arith::CmpIPredicate::sle:
        result = a.i <= b.i;
        break;
      case arith::CmpIPredicate::sgt:
        result = a.i > b.i;
        break;
      case arith::CmpIPredicate::sge:
        result = a.i >= b.i;
        break;
      case arith::CmpIPredicate::ult:
        result = ua < ub;
        break;
      case arith::CmpIPredicate::ule:
        result = ua <= ub;
        break;
      case arith::CmpIPredicate::ugt:
        result = ua > ub;
        break;
      case arith::CmpIPredicate::uge:
        result = ua >= ub;
        break;
      }
      out.i = result ? -1 : 0;
      break;
    }
    case Code::Select:
      out = isTrue(a) ? b : frame[instr.c];
      break;
    case Code::Extract:
      out = read(instr);
      break;
    case Code::If: {
      bool taken = isTrue(a);
      run(taken ? instr.thenBody : instr.elseBody);
      const SmallVector<int> &yielded =
          taken ? instr.thenYield : instr.elseYield;
      for (auto [result, value] : llvm::zip(instr.results, yielded))
        frame[result] = frame[value];
      break;
    }
    }
  }
}

//===----------------------------------------------------------------------===//
// Compilation
//===----------------------------------------------------------------------===//

namespace {
class Compiler {
public:
  Compiler(RegionProgram &program, Region &region, func::FuncOp func)
      : program(program), region(region), func(func) {
    program.frame.resize(1); // slot 0: scratch for ops without a result
  }

  llvm::Error compile();

private:
  int newSlot(Value value) {
    int slot = program.frame.size();
    program.frame.emplace_back();
    slots[value] = slot;
    return slot;
  }
  llvm::Expected<int> slotOf(Value value);
  llvm::Error compileBlock(Block &block, std::vector<Instr> &out,
                           SmallVector<int> *yielded);
  llvm::Error compileOp(Operation &op, std::vector<Instr> &out);
  llvm::Expected<int> sourceOf(Value tensor);
  llvm::Error unsupported(Operation &op) {
    return makeError(
        "the reference cannot evaluate '" + op.getName().getStringRef() +
        "' in a " + (region.getNumArguments() == 5 ? "score_mod" : "mask_mod"));
  }

  RegionProgram &program;
  Region &region;
  func::FuncOp func;
  llvm::DenseMap<Value, int> slots;
  llvm::DenseMap<Value, int> sourceIndex;
};
} // namespace

/// The value of a scalar constant attribute as a slot.
static std::optional<Slot> constantSlot(Attribute attr) {
  Slot slot;
  if (auto f = dyn_cast<FloatAttr>(attr)) {
    slot.f = f.getValueAsDouble();
    return slot;
  }
  if (auto i = dyn_cast<IntegerAttr>(attr)) {
    slot.i = i.getType().isIndex() ? i.getInt() : i.getValue().getSExtValue();
    return slot;
  }
  return std::nullopt;
}

llvm::Expected<int> Compiler::slotOf(Value value) {
  auto it = slots.find(value);
  if (it != slots.end())
    return it->second;
  // A scalar from above the op: a constant of the function.
  Attribute attr;
  if (auto constant = value.getDefiningOp<arith::ConstantOp>())
    attr = constant.getValue();
  std::optional<Slot> preset = attr ? constantSlot(attr) : std::nullopt;
  if (!preset)
    return makeError("the reference cannot evaluate a region that reads a "
                     "scalar which is not a constant");
  int slot = newSlot(value);
  program.frame[slot] = *preset;
  return slot;
}

llvm::Expected<int> Compiler::sourceOf(Value tensor) {
  auto it = sourceIndex.find(tensor);
  if (it != sourceIndex.end())
    return it->second;
  auto type = cast<RankedTensorType>(tensor.getType());
  Source source;
  source.isFloat = isa<FloatType>(type.getElementType());
  source.width = source.isFloat ? 64 : widthOf(type.getElementType());
  auto arg = dyn_cast<BlockArgument>(tensor);
  DenseElementsAttr dense;
  if (arg && arg.getOwner() == &func.getBody().front()) {
    source.argument = arg.getArgNumber();
  } else if (auto constant = tensor.getDefiningOp<arith::ConstantOp>();
             constant &&
             (dense = dyn_cast<DenseElementsAttr>(constant.getValue()))) {
    source.shape.assign(type.getShape().begin(), type.getShape().end());
    for (Attribute element : dense.getValues<Attribute>())
      source.constant.push_back(*constantSlot(element));
  } else {
    return makeError("the reference cannot evaluate a region that reads a "
                     "tensor which is neither an argument nor a constant");
  }
  int index = program.sources.size();
  program.sources.push_back(std::move(source));
  sourceIndex[tensor] = index;
  return index;
}

llvm::Error Compiler::compile() {
  Block &block = region.front();
  for (BlockArgument arg : block.getArguments())
    program.arguments.push_back(newSlot(arg));
  SmallVector<int> yielded;
  if (llvm::Error error = compileBlock(block, program.body, &yielded))
    return error;
  program.yield = yielded.front();
  return llvm::Error::success();
}

llvm::Error Compiler::compileBlock(Block &block, std::vector<Instr> &out,
                                   SmallVector<int> *yielded) {
  for (Operation &op : block.without_terminator())
    if (llvm::Error error = compileOp(op, out))
      return error;
  for (Value value : block.getTerminator()->getOperands()) {
    llvm::Expected<int> slot = slotOf(value);
    if (!slot)
      return slot.takeError();
    yielded->push_back(*slot);
  }
  return llvm::Error::success();
}

llvm::Error Compiler::compileOp(Operation &op, std::vector<Instr> &out) {
  StringRef name = op.getName().getStringRef();
  if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
    std::optional<Slot> preset = constantSlot(constant.getValue());
    if (!preset)
      return unsupported(op);
    program.frame[newSlot(constant)] = *preset;
    return llvm::Error::success();
  }

  Instr instr;
  SmallVector<int> operands;
  for (Value operand : op.getOperands()) {
    if (isa<RankedTensorType>(operand.getType())) {
      operands.push_back(-1);
      continue;
    }
    llvm::Expected<int> slot = slotOf(operand);
    if (!slot)
      return slot.takeError();
    operands.push_back(*slot);
  }
  if (operands.size() > 0)
    instr.a = operands[0];
  if (operands.size() > 1)
    instr.b = operands[1];
  if (operands.size() > 2)
    instr.c = operands[2];
  if (op.getNumOperands() > 0)
    instr.fromWidth = widthOf(op.getOperand(0).getType());
  if (op.getNumResults() == 1)
    instr.width = widthOf(op.getResult(0).getType());

  const auto &unary = getUnaryFunctions();
  const auto &binary = getBinaryFunctions();
  const auto &integer = getIntFunctions();
  if (auto it = unary.find(name); it != unary.end()) {
    instr.code = Code::FloatUnary;
    instr.unary = it->second;
  } else if (auto it = binary.find(name); it != binary.end()) {
    instr.code = Code::FloatBinary;
    instr.binary = it->second;
  } else if (auto it = integer.find(name); it != integer.end()) {
    instr.code = Code::IntBinary;
    instr.intBinary = it->second;
  } else if (isa<math::FmaOp>(op)) {
    instr.code = Code::Fma;
  } else if (isa<arith::ExtFOp, arith::TruncFOp>(op)) {
    instr.code = Code::FloatCopy;
  } else if (isa<math::IsNaNOp, math::IsInfOp, math::IsFiniteOp>(op)) {
    instr.code = Code::FloatClass;
    instr.predicate = isa<math::IsNaNOp>(op)   ? 0
                      : isa<math::IsInfOp>(op) ? 1
                                               : 2;
  } else if (isa<arith::IndexCastOp, arith::ExtSIOp, arith::TruncIOp>(op)) {
    instr.code = Code::IntCast;
  } else if (isa<arith::IndexCastUIOp, arith::ExtUIOp>(op)) {
    instr.code = Code::IntCast;
    instr.isSigned = false;
  } else if (isa<arith::SIToFPOp, arith::UIToFPOp>(op)) {
    instr.code = Code::IntToFloat;
    instr.isSigned = isa<arith::SIToFPOp>(op);
  } else if (isa<arith::FPToSIOp, arith::FPToUIOp>(op)) {
    instr.code = Code::FloatToInt;
  } else if (auto cmp = dyn_cast<arith::CmpFOp>(op)) {
    instr.code = Code::CmpF;
    instr.predicate = static_cast<uint64_t>(cmp.getPredicate());
  } else if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
    instr.code = Code::CmpI;
    instr.predicate = static_cast<uint64_t>(cmp.getPredicate());
  } else if (isa<arith::SelectOp>(op)) {
    instr.code = Code::Select;
  } else if (auto extract = dyn_cast<tensor::ExtractOp>(op)) {
    instr.code = Code::Extract;
    llvm::Expected<int> source = sourceOf(extract.getTensor());
    if (!source)
      return source.takeError();
    instr.source = *source;
    instr.indices.assign(operands.begin() + 1, operands.end());
  } else if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
    instr.code = Code::If;
    if (llvm::Error error =
            compileBlock(*ifOp.thenBlock(), instr.thenBody, &instr.thenYield))
      return error;
    if (ifOp.elseBlock())
      if (llvm::Error error =
              compileBlock(*ifOp.elseBlock(), instr.elseBody, &instr.elseYield))
        return error;
    for (Value result : ifOp.getResults())
      instr.results.push_back(newSlot(result));
    out.push_back(std::move(instr));
    return llvm::Error::success();
  } else {
    return unsupported(op);
  }
  if (op.getNumResults() != 1)
    return unsupported(op);
  instr.result = newSlot(op.getResult(0));
  out.push_back(std::move(instr));
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Modifiers
//===----------------------------------------------------------------------===//

Modifiers::~Modifiers() = default;

llvm::Expected<std::shared_ptr<Modifiers>>
Modifiers::compile(EntryFunction &entry) {
  auto modifiers = std::make_shared<Modifiers>();
  for (auto [region, program] :
       {std::pair{&entry.attention.getScoreMod(), &modifiers->scoreMod},
        {&entry.attention.getMaskMod(), &modifiers->maskMod}}) {
    if (region->empty())
      continue;
    *program = std::make_unique<RegionProgram>();
    Compiler compiler(**program, *region, entry.func);
    if (llvm::Error error = compiler.compile())
      return std::move(error);
  }
  return modifiers;
}

void Modifiers::bind(const std::vector<rt::HostTensor> &arguments,
                     rt::AttentionProblem &problem) {
  error.clear();
  for (RegionProgram *program : {scoreMod.get(), maskMod.get()}) {
    if (!program)
      continue;
    program->tensors = &arguments;
    program->error = &error;
  }
  if (RegionProgram *program = scoreMod.get()) {
    problem.scoreMod = [program](double s, int64_t b, int64_t h, int64_t i,
                                 int64_t j) {
      std::vector<Slot> &frame = program->frame;
      const SmallVector<int> &args = program->arguments;
      frame[args[0]].f = s;
      frame[args[1]].i = b;
      frame[args[2]].i = h;
      frame[args[3]].i = i;
      frame[args[4]].i = j;
      program->run(program->body);
      return frame[program->yield].f;
    };
  }
  if (RegionProgram *program = maskMod.get()) {
    problem.maskMod = [program](int64_t b, int64_t h, int64_t i, int64_t j) {
      std::vector<Slot> &frame = program->frame;
      const SmallVector<int> &args = program->arguments;
      frame[args[0]].i = b;
      frame[args[1]].i = h;
      frame[args[2]].i = i;
      frame[args[3]].i = j;
      program->run(program->body);
      return isTrue(frame[program->yield]);
    };
  }
}
