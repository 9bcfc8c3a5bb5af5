"""Score and mask modifiers from Python callables: the tracer behind
attn_mlir.torch.attention's `score_mod=` and `mask_mod=` (SPEC.md section
1.1), and ready-made modifiers.

    score_mod(score, b, h, q_idx, kv_idx) -> the new score
    mask_mod(b, h, q_idx, kv_idx)         -> True where key kv_idx is kept

are FlexAttention's signatures. `trace(score_mod, mask_mod)` calls each
callable once with proxy values (`score` an f32, the indices `index`) and
records what it does as the body of the op's region: operators become
arith ops, torch functions (through `__torch_function__`, which torch calls
for any argument that defines it) become math / arith ops, and indexing a
captured tensor with proxies (`slopes[h]`, `doc[b, q_idx]`: torch hands
`tensor[proxy]` to the index's `__torch_function__`) becomes a
`tensor.extract` from a function argument `%capN`. A captured tensor is
anything with `.shape` and `.dtype` (int32, int64 or float32: i32, i64,
f32), typed with dynamic dims, so one kernel serves every size of it; the
kernel takes the captures in the order of `Traced.captures`: the score_mod's
in order of first use, then the mask_mod's new ones (the order of the
manifest's `captures`). Ops whose result the yield does not need are left
out, so the captures are exactly the tensors the regions read.

Arithmetic follows torch's promotion: booleans < integers < f32; integer
values are `index` (the indices, Python ints) or the i32 / i64 read from
captures, mixed as index; `/` is true division, `//` and `%` floor like
Python. Python numbers are constants of the other operand's type.

Supported: + - * / // % ** (an integer power: a constant >= 0), unary -,
abs, comparisons, & | ^ ~ << >>, and the torch functions (and the same
tensor methods) in FUNCTIONS. Anything else raises TypeError or
ValueError naming it, at trace time: Python `if` / `and` / `or` / `not` on
a traced value (use torch.where, &, |, ~), int() / float() of one, its
shape, slices or partial indexing of a capture (data-dependent shapes), a
capture used whole or of another dtype (float64: convert it to float32),
torch functions outside FUNCTIONS. No torch import: TensorSpec stands in
for a captured tensor where torch is missing (compiling ahead of time).
"""

import dataclasses
import inspect
import math
import numbers
import re
import struct

from .compiler import _float_literal

_INTS = ("index", "i64", "i32")
# The element type of each capture dtype, by name (torch.int32 -> "int32").
CAPTURE_TYPES = {"int32": "i32", "int64": "i64", "float32": "f32"}
_INT_RANGE = {"i32": 2 ** 31, "i64": 2 ** 63, "index": 2 ** 63}


class UnsupportedAttributeError(TypeError, AttributeError):
    """A tensor attribute or method a traced value does not have (a
    TypeError; also an AttributeError, so hasattr() works)."""


def _is_tensor(x):
    return not isinstance(x, _Value) and hasattr(x, "shape") and hasattr(x, "dtype")


def _dtype_name(dtype):
    text = str(dtype)
    return text[len("torch."):] if text.startswith("torch.") else text


def _describe(tensor):
    return f"the {_dtype_name(tensor.dtype)} tensor of shape {tuple(tensor.shape)}"


def _f32_literal(x):
    """`x` as an f32 constant: inf and NaN as their bits, a finite value
    too large for f32 as the infinity it rounds to (as torch converts)."""
    if math.isnan(x):
        return "0x7FC00000"
    try:
        struct.pack("<f", x)
    except OverflowError:
        x = math.copysign(math.inf, x)
    if math.isinf(x):
        return "0x7F800000" if x > 0 else "0xFF800000"
    return _float_literal(x)


class TensorSpec:
    """A stand-in for a captured tensor: `dtype` ("int32", "int64",
    "float32", or a torch dtype) and `shape`. Indexing it with traced values
    does what indexing a torch.Tensor does (it calls the index's
    `__torch_function__`), so modifiers trace without torch or data:
    `trace(alibi(TensorSpec("float32", (8,))))`."""

    def __init__(self, dtype, shape):
        self.dtype = dtype
        self.shape = tuple(shape)

    def __getitem__(self, index):
        items = index if isinstance(index, tuple) else (index,)
        for item in items:
            if isinstance(item, _Value):
                return _Value.__torch_function__(TensorSpec.__getitem__, (_Value,), (self, index))
        raise TypeError(f"TensorSpec{self.shape} holds no data: index it with traced values only")

    def __repr__(self):
        return f"TensorSpec({self.dtype!r}, {self.shape})"


class _Captures:
    """The tensors the regions of one trace read, in order of first use."""

    def __init__(self):
        self.tensors = []
        self.types = []
        self._index = {}

    def add(self, tensor, element_type):
        key = self._index.get(id(tensor))
        if key is None:
            key = self._index[id(tensor)] = len(self.tensors)
            self.tensors.append(tensor)
            self.types.append((element_type, len(tensor.shape)))
        return key


class _Region:
    """The ops one callable emits: (result, op text) in order; identical ops
    are emitted once."""

    def __init__(self, kind, fn, captures):
        name = getattr(fn, "__qualname__", None) or type(fn).__name__
        self.what = f"{kind} {name}"
        self.captures = captures
        self.ops = []
        self._memo = {}

    def error(self, cls, message):
        return cls(f"{self.what}: {message}")

    def emit(self, op, result_type):
        value = self._memo.get(op)
        if value is None:
            value = self._memo[op] = _Value(self, f"%t{len(self.ops)}", result_type)
            self.ops.append((value.name, op))
        return value

    def body(self, arguments, result):
        """The region's block: its arguments, the ops the yield needs, the
        yield."""
        live = {result.name}
        kept = []
        for name, op in reversed(self.ops):
            if name in live:
                kept.append(f"    {name} = {op}")
                live.update(re.findall(r"%t\d+", op))
        header = ", ".join(f"{a.name}: {a.type}" for a in arguments)
        return (f"  ^bb0({header}):\n" + "".join(line + "\n" for line in reversed(kept))
                + f"    attn.yield {result.name} : {result.type}\n")


def _region_of(*xs):
    for x in xs:
        if isinstance(x, _Value):
            return x.region
        if isinstance(x, (tuple, list)):
            region = _region_of(*x)
            if region is not None:
                return region
    return None


def _kind(region, x):
    """A value's type, or "bool" / "int" / "float" for a Python number."""
    if isinstance(x, _Value):
        if x.region is not region:
            raise region.error(ValueError, f"{x.name} was traced in {x.region.what}: a value "
                               "cannot go from one region (or trace) to another")
        return x.type
    if isinstance(x, bool):
        return "bool"
    if isinstance(x, numbers.Integral):
        return "int"
    if isinstance(x, numbers.Real):
        return "float"
    if _is_tensor(x):
        raise region.error(TypeError, f"{_describe(x)} is used whole: a region reads captured "
                           "tensors one element at a time; index every dimension with one "
                           "value (slopes[h], doc[b, q_idx]), or pass a Python number")
    raise region.error(TypeError, f"{type(x).__name__} values are not supported (traced "
                       "values, Python numbers and indexed tensors are)")


def _common(region, *xs):
    kinds = [_kind(region, x) for x in xs]
    if any(k in ("f32", "float") for k in kinds):
        return "f32"
    ints = [k for k in kinds if k in _INTS]
    if ints:
        return next(t for t in _INTS if t in ints)
    return "index" if "int" in kinds else "i1"


def _constant(region, x, t):
    if t == "f32":
        return region.emit(f"arith.constant {_f32_literal(float(x))} : f32", t)
    if t == "i1":
        return region.emit(f"arith.constant {'true' if x else 'false'}", t)
    x = int(x)
    if not -_INT_RANGE[t] <= x < _INT_RANGE[t]:
        raise region.error(ValueError, f"the constant {x} does not fit {t}")
    return region.emit(f"arith.constant {x} : {t}", t)


def _to(region, x, t):
    """`x` as a value of type `t` (a promotion of _common)."""
    if not isinstance(x, _Value):
        return _constant(region, x, t)
    if x.type == t:
        return x
    if x.type == "i1":
        return _select(region, x, _constant(region, 1, t), _constant(region, 0, t))
    if t == "f32":
        if x.type == "index":
            x = region.emit(f"arith.index_cast {x.name} : index to i64", "i64")
        return region.emit(f"arith.sitofp {x.name} : {x.type} to f32", t)
    if t == "index":
        return region.emit(f"arith.index_cast {x.name} : {x.type} to index", t)
    if x.type == "i32" and t == "i64":
        return region.emit(f"arith.extsi {x.name} : i32 to i64", t)
    raise region.error(TypeError, f"no conversion of {x.type} to {t}")


def _truth(region, x):
    """`x` as i1: a number is true where it is not 0."""
    if _kind(region, x) in ("i1", "bool"):
        return _to(region, x, "i1")
    return _compare(region, "ne", x, 0)


def _select(region, c, a, b):
    return region.emit(f"arith.select {c.name}, {a.name}, {b.name} : {a.type}", a.type)


_ARITH = {"add": ("arith.addf", "arith.addi"), "sub": ("arith.subf", "arith.subi"),
          "mul": ("arith.mulf", "arith.muli")}
_CMP = {"lt": ("olt", "slt", "ult"), "le": ("ole", "sle", "ule"), "gt": ("ogt", "sgt", "ugt"),
        "ge": ("oge", "sge", "uge"), "eq": ("oeq", "eq", "eq"), "ne": ("une", "ne", "ne")}
_BITWISE = {"and": "arith.andi", "or": "arith.ori", "xor": "arith.xori",
            "lshift": "arith.shli", "rshift": "arith.shrsi"}


def _operands(region, x, y, t):
    return _to(region, x, t), _to(region, y, t)


def _arith(region, name, x, y):
    t = _common(region, x, y)
    if t == "i1":
        raise region.error(TypeError, f"{name} of two booleans is not supported (use &, |, ^)")
    a, b = _operands(region, x, y, t)
    op = _ARITH[name][0 if t == "f32" else 1]
    return region.emit(f"{op} {a.name}, {b.name} : {t}", t)


def _truediv(region, x, y):
    a, b = _operands(region, x, y, "f32")
    return region.emit(f"arith.divf {a.name}, {b.name} : f32", "f32")


def _numeric(region, name, x, y):
    t = _common(region, x, y)
    if t == "i1":
        raise region.error(TypeError, f"{name} of two booleans is not supported")
    return t


def _floordiv(region, x, y):
    t = _numeric(region, "//", x, y)
    if t == "f32":
        return _unary_math(region, "floor", _truediv(region, x, y))
    a, b = _operands(region, x, y, t)
    return region.emit(f"arith.floordivsi {a.name}, {b.name} : {t}", t)


def _mod(region, x, y):
    """Python's (and torch.remainder's) modulo: the sign of the divisor."""
    t = _numeric(region, "%", x, y)
    if t == "f32":
        return _arith(region, "sub", x, _arith(region, "mul", _floordiv(region, x, y), y))
    a, b = _operands(region, x, y, t)
    r = region.emit(f"arith.remsi {a.name}, {b.name} : {t}", t)
    if isinstance(y, numbers.Integral) and y > 0:
        fix = _compare(region, "lt", r, 0)
    else:  # r != 0 and r, b of opposite signs
        fix = _bitwise(region, "and", _compare(region, "ne", r, 0),
                       _bitwise(region, "xor", _compare(region, "lt", r, 0),
                                _compare(region, "lt", b, 0)))
    return _select(region, fix, _arith(region, "add", r, b), r)


def _pow(region, x, y):
    t = _numeric(region, "**", x, y)
    if t == "f32":
        a, b = _operands(region, x, y, t)
        return region.emit(f"math.powf {a.name}, {b.name} : f32", t)
    if not isinstance(y, numbers.Integral) or isinstance(y, bool) or not 0 <= y <= 64:
        raise region.error(TypeError, "an integer power needs a constant exponent 0 .. 64 "
                           "(or make an operand a float)")
    result = _constant(region, 1, t)
    for _ in range(int(y)):
        result = _arith(region, "mul", result, x)
    return result


def _compare(region, name, x, y):
    t = _common(region, x, y)
    a, b = _operands(region, x, y, t)
    float_pred, int_pred, bool_pred = _CMP[name]
    if t == "f32":
        return region.emit(f"arith.cmpf {float_pred}, {a.name}, {b.name} : f32", "i1")
    pred = bool_pred if t == "i1" else int_pred
    return region.emit(f"arith.cmpi {pred}, {a.name}, {b.name} : {t}", "i1")


def _bitwise(region, name, x, y):
    t = _common(region, x, y)
    if t == "f32" or (t == "i1" and name in ("lshift", "rshift")):
        raise region.error(TypeError, f"{name} is not supported on {'floats' if t == 'f32' else 'booleans'}")
    if t == "i1" and name != "xor":  # a Python bool operand (and_masks' True) folds
        for known, other in ((x, y), (y, x)):
            if isinstance(known, bool):
                return _to(region, other if known == (name == "and") else known, t)
    a, b = _operands(region, x, y, t)
    return region.emit(f"{_BITWISE[name]} {a.name}, {b.name} : {t}", t)


def _neg(region, x):
    t = _kind(region, x)
    if t == "f32":
        return region.emit(f"arith.negf {x.name} : f32", t)
    if t == "i1":
        raise region.error(TypeError, "negation (-) of a boolean is not supported (use ~)")
    return _arith(region, "sub", 0, x)


def _invert(region, x):
    t = _kind(region, x)
    if t == "f32":
        raise region.error(TypeError, "~ of a float is not supported")
    return _bitwise(region, "xor", x, True if t == "i1" else -1)


def _abs(region, x):
    t = _kind(region, x)
    if t == "f32":
        return region.emit(f"math.absf {x.name} : f32", t)
    if t == "i1":
        return x
    return _select(region, _compare(region, "lt", x, 0), _neg(region, x), x)


# The float functions that are one math op each; ints and booleans go in
# as f32, as in torch.
_MATH = ("exp", "exp2", "log", "log2", "sqrt", "rsqrt", "tanh", "sin", "cos", "erf", "floor",
         "ceil")


def _unary_math(region, name, x):
    if name in ("floor", "ceil") and _kind(region, x) in _INTS:
        return x
    x = _to(region, x, "f32")
    return region.emit(f"math.{name} {x.name} : f32", "f32")


def _sigmoid(region, x):
    return _truediv(region, 1.0, _arith(region, "add", 1.0,
                                        _unary_math(region, "exp", _neg(region, _to(region, x, "f32")))))


def _extreme(region, name, x, y):
    t = _common(region, x, y)
    a, b = _operands(region, x, y, t)
    if t == "i1":
        return _bitwise(region, "and" if name == "minimum" else "or", a, b)
    op = {"f32": "arith.{}imumf", "index": "arith.{}si", "i64": "arith.{}si", "i32": "arith.{}si"}[t]
    op = op.format("min" if name == "minimum" else "max")
    return region.emit(f"{op} {a.name}, {b.name} : {t}", t)


def _where(region, condition, x, y):
    t = _common(region, x, y)
    if isinstance(condition, bool):
        return _to(region, x if condition else y, t)
    if not isinstance(condition, _Value) or condition.type != "i1":
        got = condition.type if isinstance(condition, _Value) else type(condition).__name__
        raise region.error(TypeError, f"torch.where: the condition must be a boolean (a "
                           f"comparison), got {got}")
    a, b = _operands(region, x, y, t)
    return _select(region, condition, a, b)


def _clamp(region, x, min=None, max=None):
    if min is None and max is None:
        raise region.error(TypeError, "torch.clamp needs min= or max=")
    if min is not None:
        x = _extreme(region, "maximum", x, min)
    if max is not None:
        x = _extreme(region, "minimum", x, max)
    return x


def _div(region, x, y, rounding_mode=None):
    if rounding_mode is None:
        return _truediv(region, x, y)
    if rounding_mode == "floor":
        return _floordiv(region, x, y)
    raise region.error(ValueError, f"torch.div: rounding_mode {rounding_mode!r} is not supported "
                       "(None or 'floor')")


def _logical(name):
    def apply(region, x, y=None):
        if name == "not":
            return _invert(region, _truth(region, x))
        return _bitwise(region, name, _truth(region, x), _truth(region, y))
    return apply


def _binary(fn, *names):
    def apply(region, x, y):
        return fn(region, *names, x, y)
    return apply


# torch functions (and the tensor methods of the same names) a region may
# call, each as fn(region, *args, **kwargs).
FUNCTIONS = {
    "where": _where, "abs": _abs, "neg": _neg, "negative": _neg, "sigmoid": _sigmoid,
    "minimum": _binary(_extreme, "minimum"), "maximum": _binary(_extreme, "maximum"),
    "clamp": _clamp, "add": _binary(_arith, "add"), "sub": _binary(_arith, "sub"),
    "mul": _binary(_arith, "mul"), "div": _div, "true_divide": _truediv,
    "floor_divide": _floordiv, "remainder": _mod, "pow": _pow,
    "logical_and": _logical("and"), "logical_or": _logical("or"),
    "logical_xor": _logical("xor"), "logical_not": _logical("not"),
    "bitwise_and": _binary(_bitwise, "and"), "bitwise_or": _binary(_bitwise, "or"),
    "bitwise_xor": _binary(_bitwise, "xor"), "bitwise_not": _invert,
    **{name: _binary(_compare, name) for name in _CMP},
    **{name: (lambda n: lambda region, x: _unary_math(region, n, x))(name) for name in _MATH},
}
_METHODS = {**FUNCTIONS, "float": lambda region, x: _to(region, x, "f32")}


def _call(region, what, fn, args, kwargs):
    try:
        inspect.signature(fn).bind(region, *args, **kwargs)
    except TypeError as e:
        raise region.error(TypeError, f"{what}: unsupported arguments ({e})") from None
    return fn(region, *args, **kwargs)


def _extract(region, tensor, index):
    """`tensor[index]`: a tensor.extract of a capture, every dimension
    indexed by one integer value or constant."""
    if not _is_tensor(tensor):
        raise region.error(TypeError, f"indexing a {type(tensor).__name__} is not supported "
                           "(traced values are scalars)")
    name = _dtype_name(tensor.dtype)
    element_type = CAPTURE_TYPES.get(name)
    if element_type is None:
        hint = " (convert it: t.float())" if name in ("float64", "float16", "bfloat16") else ""
        raise region.error(ValueError, f"a captured {name} tensor{hint}: captures must be int32, "
                           "int64 or float32")
    shape = tuple(tensor.shape)
    items = index if isinstance(index, tuple) else (index,)
    indices = []
    for d, item in enumerate(items):
        if isinstance(item, _Value):
            if item.type not in _INTS:
                raise region.error(TypeError, f"index {d} of {_describe(tensor)} is a value of "
                                   f"type {item.type}: indices are integers")
            indices.append(_to(region, item, "index").name)
        elif isinstance(item, numbers.Integral) and not isinstance(item, bool):
            if not 0 <= item < (shape[d] if d < len(shape) else 1):
                raise region.error(ValueError, f"index {d} of {_describe(tensor)} is the constant "
                                   f"{item}, out of range (a negative index is not supported)")
            indices.append(_constant(region, item, "index").name)
        else:
            raise region.error(TypeError, f"index {d} of {_describe(tensor)} is a "
                               f"{type(item).__name__}: slices, `...`, None, lists and tensors as "
                               "indices select several elements (a data-dependent shape); index "
                               "every dimension with one value")
    if len(indices) != len(shape) or not shape:
        raise region.error(ValueError, f"{_describe(tensor)} is indexed with {len(indices)} "
                           f"value(s): index every dimension (rank {len(shape)}, at least 1) "
                           "with one value")
    key = region.captures.add(tensor, element_type)
    dims = "x".join("?" * len(shape))
    return region.emit(f"tensor.extract %cap{key}[{', '.join(indices)}] : "
                       f"tensor<{dims}x{element_type}>", element_type)


def _unsupported_number(self, *args):
    raise self.region.error(TypeError, f"{self.name} is traced, not a Python number: int(), "
                            "float(), math functions, slice bounds and Python indices need its "
                            "value, which exists only in the kernel (use torch functions; index "
                            "captured tensors with one value per dimension)")


class _Value:
    """A traced scalar: an SSA value of the region being traced."""

    __slots__ = ("region", "name", "type")
    __array_ufunc__ = None  # numpy defers to the reflected operators
    __hash__ = object.__hash__

    def __init__(self, region, name, type_):
        self.region = region
        self.name = name
        self.type = type_

    def __repr__(self):
        return f"<traced {self.type} {self.name} of {self.region.what}>"

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        region = _region_of(*args, *kwargs.values())
        name = getattr(func, "__name__", repr(func))
        if name == "__getitem__":
            return _extract(region, *args)
        for x in (*args, *kwargs.values()):
            if _is_tensor(x):
                _kind(region, x)  # raises: a tensor used whole
        fn = FUNCTIONS.get(name)
        if fn is None:
            raise region.error(TypeError, f"torch.{name} is not supported in a region (supported: "
                               f"operators and {', '.join(sorted(FUNCTIONS))})")
        return _call(region, f"torch.{name}", fn, args, kwargs)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        fn = _METHODS.get(name)
        if fn is None:
            raise self.region.error(UnsupportedAttributeError, (
                f".{name} of a traced value is not supported: traced values are scalars (no "
                f"shape, no data); methods: {', '.join(sorted(_METHODS))}"))
        return lambda *args, **kwargs: _call(self.region, f".{name}()", fn, (self,) + args, kwargs)

    def __bool__(self):
        raise self.region.error(TypeError, (
            f"{self.name} is traced: Python `if`, `and`, `or`, `not`, bool() and chained "
            "comparisons need its value, which exists only in the kernel; use "
            "torch.where(c, a, b), &, |, ~"))

    __int__ = __float__ = __index__ = __complex__ = _unsupported_number

    def __iter__(self):
        raise self.region.error(TypeError, f"{self.name} is a traced scalar: not iterable")

    def __len__(self):
        raise self.region.error(TypeError, f"{self.name} is a traced scalar: no len()")

    def __getitem__(self, index):
        raise self.region.error(TypeError, f"{self.name} is a traced scalar: it cannot be indexed")

    def __add__(self, y): return _arith(self.region, "add", self, y)  # noqa: E704
    def __radd__(self, x): return _arith(self.region, "add", x, self)  # noqa: E704
    def __sub__(self, y): return _arith(self.region, "sub", self, y)  # noqa: E704
    def __rsub__(self, x): return _arith(self.region, "sub", x, self)  # noqa: E704
    def __mul__(self, y): return _arith(self.region, "mul", self, y)  # noqa: E704
    def __rmul__(self, x): return _arith(self.region, "mul", x, self)  # noqa: E704
    def __truediv__(self, y): return _truediv(self.region, self, y)  # noqa: E704
    def __rtruediv__(self, x): return _truediv(self.region, x, self)  # noqa: E704
    def __floordiv__(self, y): return _floordiv(self.region, self, y)  # noqa: E704
    def __rfloordiv__(self, x): return _floordiv(self.region, x, self)  # noqa: E704
    def __mod__(self, y): return _mod(self.region, self, y)  # noqa: E704
    def __rmod__(self, x): return _mod(self.region, x, self)  # noqa: E704
    def __pow__(self, y): return _pow(self.region, self, y)  # noqa: E704
    def __rpow__(self, x): return _pow(self.region, x, self)  # noqa: E704
    def __and__(self, y): return _bitwise(self.region, "and", self, y)  # noqa: E704
    def __rand__(self, x): return _bitwise(self.region, "and", x, self)  # noqa: E704
    def __or__(self, y): return _bitwise(self.region, "or", self, y)  # noqa: E704
    def __ror__(self, x): return _bitwise(self.region, "or", x, self)  # noqa: E704
    def __xor__(self, y): return _bitwise(self.region, "xor", self, y)  # noqa: E704
    def __rxor__(self, x): return _bitwise(self.region, "xor", x, self)  # noqa: E704
    def __lshift__(self, y): return _bitwise(self.region, "lshift", self, y)  # noqa: E704
    def __rlshift__(self, x): return _bitwise(self.region, "lshift", x, self)  # noqa: E704
    def __rshift__(self, y): return _bitwise(self.region, "rshift", self, y)  # noqa: E704
    def __rrshift__(self, x): return _bitwise(self.region, "rshift", x, self)  # noqa: E704
    def __lt__(self, y): return _compare(self.region, "lt", self, y)  # noqa: E704
    def __le__(self, y): return _compare(self.region, "le", self, y)  # noqa: E704
    def __gt__(self, y): return _compare(self.region, "gt", self, y)  # noqa: E704
    def __ge__(self, y): return _compare(self.region, "ge", self, y)  # noqa: E704
    def __eq__(self, y): return _compare(self.region, "eq", self, y)  # noqa: E704
    def __ne__(self, y): return _compare(self.region, "ne", self, y)  # noqa: E704
    def __neg__(self): return _neg(self.region, self)  # noqa: E704
    def __pos__(self): return self  # noqa: E704
    def __abs__(self): return _abs(self.region, self)  # noqa: E704
    def __invert__(self): return _invert(self.region, self)  # noqa: E704


@dataclasses.dataclass(frozen=True)
class Traced:
    """What trace() found: the region bodies (text for
    compiler.Signature's `score_mod` / `mask_mod`, reading the captures as
    `%cap0`, `%cap1`, ...), the captured tensors in the kernel's order and
    their (element type, rank)."""

    score_mod: str = None
    mask_mod: str = None
    captures: tuple = ()
    capture_types: tuple = ()

    def signature_fields(self):
        """The Signature arguments of the regions."""
        return dict(score_mod=self.score_mod, mask_mod=self.mask_mod,
                    captures=self.capture_types)


def trace(score_mod=None, mask_mod=None):
    """Traces the callables (see the module doc) into a Traced."""
    captures = _Captures()
    bodies = {}
    for kind, fn in (("score_mod", score_mod), ("mask_mod", mask_mod)):
        if fn is None:
            continue
        if not callable(fn):
            raise TypeError(f"{kind}: expected a callable, got {type(fn).__name__}")
        region = _Region(kind, fn, captures)
        names = ("b", "h", "q_idx", "kv_idx")
        arguments = [_Value(region, f"%{n}", "index") for n in names]
        if kind == "score_mod":
            arguments.insert(0, _Value(region, "%score", "f32"))
        result = fn(*arguments)
        if kind == "score_mod":
            if not isinstance(result, (_Value, numbers.Real)):
                raise region.error(TypeError, f"expected the new score (a traced value or a "
                                   f"number), got {type(result).__name__}")
            result = _to(region, result, "f32")
        else:
            if not (isinstance(result, bool) or (isinstance(result, _Value) and result.type == "i1")):
                got = result.type if isinstance(result, _Value) else type(result).__name__
                raise region.error(TypeError, f"expected a boolean (a comparison, &, |, ~), got "
                                   f"{got}")
            result = _to(region, result, "i1")
        bodies[kind] = region.body(arguments, result)
    # The captures the kept ops read, renumbered in order of first use.
    used = []
    for kind in ("score_mod", "mask_mod"):
        for key in re.findall(r"%cap(\d+)", bodies.get(kind, "")):
            if int(key) not in used:
                used.append(int(key))
    number = {key: i for i, key in enumerate(used)}
    for kind in bodies:
        bodies[kind] = re.sub(r"%cap(\d+)", lambda m: f"%cap{number[int(m.group(1))]}", bodies[kind])
    return Traced(score_mod=bodies.get("score_mod"), mask_mod=bodies.get("mask_mod"),
                  captures=tuple(captures.tensors[k] for k in used),
                  capture_types=tuple(captures.types[k] for k in used))


# Ready-made modifiers (FlexAttention's examples).

def causal_mask(b, h, q_idx, kv_idx):
    """FlexAttention's causal mask_mod: key kv_idx <= q_idx (top-left). The
    `causal=` argument gives the same keys through the op's attribute."""
    return q_idx >= kv_idx


def _check_window_side(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < -1:
        raise ValueError(f"{name}: expected an integer >= -1 (-1: unbounded), got {value!r}")


def sliding_window(left, right=0, as_mask_mod=False):
    """A sliding window of keys i - left .. i + right for query i (-1:
    unbounded on that side): the `window=` tuple (left, right), which the
    compiler turns into key-block bounds (prefer it), or with
    `as_mask_mod=True` the same window as a mask_mod (top-left: no
    bottom_right offset), to combine with and_masks / or_masks."""
    _check_window_side("left", left)
    _check_window_side("right", right)
    if not as_mask_mod:
        return (int(left), int(right))

    def sliding_window_mask(b, h, q_idx, kv_idx):
        keep = True
        if left >= 0:
            keep = keep & (q_idx - kv_idx <= left)
        if right >= 0:
            keep = keep & (kv_idx - q_idx <= right)
        return keep
    return sliding_window_mask


def alibi(slopes):
    """ALiBi: score + slopes[h] * (kv_idx - q_idx), `slopes` a float32
    tensor of one slope per query head."""
    if not _is_tensor(slopes) or len(slopes.shape) != 1:
        raise ValueError(f"alibi: expected a rank-1 tensor of per-head slopes, got {slopes!r}")

    def alibi_score(score, b, h, q_idx, kv_idx):
        return score + slopes[h] * (kv_idx - q_idx)
    return alibi_score


def prefix_lm(prefix_len):
    """Prefix-LM: key kv_idx is kept when kv_idx <= q_idx or kv_idx <
    prefix, `prefix_len` an int or an int tensor of one length per batch
    (prefix_len[b])."""
    per_batch = _is_tensor(prefix_len)
    if per_batch and len(prefix_len.shape) != 1:
        raise ValueError(f"prefix_lm: expected an int or a rank-1 tensor (one length per batch), "
                         f"got {_describe(prefix_len)}")
    if not per_batch and (isinstance(prefix_len, bool) or not isinstance(prefix_len, numbers.Integral)
                          or prefix_len < 0):
        raise ValueError(f"prefix_lm: expected an int >= 0 or a tensor, got {prefix_len!r}")

    def prefix_lm_mask(b, h, q_idx, kv_idx):
        prefix = prefix_len[b] if per_batch else prefix_len
        return (kv_idx <= q_idx) | (kv_idx < prefix)
    return prefix_lm_mask


def document(doc_ids):
    """Document masking: key kv_idx is kept when it is in the document of
    query q_idx: doc_ids[b, q_idx] == doc_ids[b, kv_idx] for an int tensor
    of shape (B, T) (doc_ids[q_idx] == doc_ids[kv_idx] for shape (T,), one
    packed sequence), T covering both Tq and Tk."""
    if not _is_tensor(doc_ids) or len(doc_ids.shape) not in (1, 2):
        raise ValueError(f"document: expected a rank-1 or rank-2 tensor of document ids, got "
                         f"{doc_ids!r}")

    if len(doc_ids.shape) == 1:
        def document_mask(b, h, q_idx, kv_idx):
            return doc_ids[q_idx] == doc_ids[kv_idx]
    else:
        def document_mask(b, h, q_idx, kv_idx):
            return doc_ids[b, q_idx] == doc_ids[b, kv_idx]
    return document_mask


def and_masks(*mask_mods):
    """The mask_mod keeping a key when every one of `mask_mods` does."""
    def and_mask(b, h, q_idx, kv_idx):
        keep = True
        for mask_mod in mask_mods:
            keep = keep & mask_mod(b, h, q_idx, kv_idx)
        return keep
    return and_mask


def or_masks(*mask_mods):
    """The mask_mod keeping a key when any one of `mask_mods` does."""
    def or_mask(b, h, q_idx, kv_idx):
        keep = False
        for mask_mod in mask_mods:
            keep = keep | mask_mod(b, h, q_idx, kv_idx)
        return keep
    return or_mask
