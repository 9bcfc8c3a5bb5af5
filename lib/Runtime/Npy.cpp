//===- Npy.cpp - Reading and writing numpy .npy files ---------------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//
//
// No library packaged for Debian reads .npy files from C++, so the format is
// read here: the magic string, the version, the header (a Python dict
// literal) and exactly the data bytes the header announces, in that order,
// so that /dev/zero, a pipe or a FIFO gives an error after a few bytes
// instead of being read whole.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/Npy.h"

#include "attn/Runtime/FileWrite.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <string_view>
#include <sys/stat.h>
#include <unistd.h>

using namespace attn::runtime;

static constexpr char kMagic[] = "\x93NUMPY";
static constexpr size_t kMagicSize = 6;
/// numpy writes headers of a few hundred bytes; a longer one is refused
/// rather than read.
static constexpr size_t kMaxHeaderBytes = size_t(1) << 20;

/// The numpy descr the writer uses for each element type. bf16 is saved as a
/// 2-byte void, which is what numpy.save writes for an ml_dtypes.bfloat16
/// array.
static const char *getDescr(ElementType type) {
  static const char *const kDescrs[] = {"<f4", "<f2", "<V2",
                                        "|b1", "<i4", "<i8"};
  return kDescrs[static_cast<int>(type)];
}

static bool parseDescr(std::string_view descr, ElementType &type) {
  if (descr == "|V2" || descr == "bfloat16")
    descr = "<V2";
  for (int i = 0; i < kNumElementTypes; ++i)
    if (descr == getDescr(ElementType(i))) {
      type = ElementType(i);
      return true;
    }
  return false;
}

//===----------------------------------------------------------------------===//
// The header
//===----------------------------------------------------------------------===//

namespace {
/// The Python dict literal of a .npy header, e.g.
/// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class HeaderParser {
public:
  explicit HeaderParser(std::string_view text) : text(text) {}

  /// Fills the three keys; false with `error` otherwise.
  bool parse(std::string &descr, bool &fortranOrder,
             std::vector<int64_t> &shape, std::string &error);

private:
  bool consume(std::string_view word) {
    while (pos < text.size() && std::string_view(" \t\r\n").find(text[pos]) !=
                                    std::string_view::npos)
      ++pos;
    if (text.substr(pos, word.size()) != word)
      return false;
    pos += word.size();
    return true;
  }
  bool parseString(std::string &value) {
    char quote = consume("'") ? '\'' : consume("\"") ? '"' : '\0';
    size_t end = quote ? text.find(quote, pos) : std::string_view::npos;
    if (end == std::string_view::npos)
      return false;
    value = std::string(text.substr(pos, end - pos));
    pos = end + 1;
    return true;
  }
  /// A tuple of non-negative integers, "(2, 3)", "(5,)" or "()".
  bool parseShape(std::vector<int64_t> &shape) {
    if (!consume("("))
      return false;
    for (shape.clear(); !consume(")");) {
      consume("");
      size_t start = pos;
      int64_t dim = 0;
      while (pos < text.size() && pos - start < 15 && text[pos] >= '0' &&
             text[pos] <= '9')
        dim = dim * 10 + (text[pos++] - '0');
      if (pos == start ||
          (pos < text.size() && text[pos] >= '0' && text[pos] <= '9'))
        return false;
      consume("L"); // Python 2 long literals.
      shape.push_back(dim);
      if (!consume(",") && !consume(")"))
        return false;
      if (text[pos - 1] == ')')
        break;
    }
    return true;
  }

  std::string_view text;
  size_t pos = 0;
};
} // namespace

bool HeaderParser::parse(std::string &descr, bool &fortranOrder,
                         std::vector<int64_t> &shape, std::string &error) {
  bool haveDescr = false, haveOrder = false, haveShape = false;
  error = "the header is not a Python dict";
  if (!consume("{"))
    return false;
  while (!consume("}")) {
    std::string key;
    if (!parseString(key) || !consume(":"))
      return false;
    if (key == "descr") {
      if (consume("["))
        return failWith(error, "structured dtypes are not supported");
      if (!(haveDescr = parseString(descr)))
        return failWith(error, "'descr' is not a string");
    } else if (key == "fortran_order") {
      fortranOrder = consume("True");
      if (!(haveOrder = fortranOrder || consume("False")))
        return failWith(error, "'fortran_order' is not True or False");
    } else if (key == "shape") {
      if (!(haveShape = parseShape(shape)))
        return failWith(error,
                        "'shape' is not a tuple of non-negative integers");
    } else {
      error = "unexpected key '" + key + "' in the header";
      return false;
    }
    if (!consume(",")) {
      if (!consume("}"))
        return false;
      break;
    }
  }
  error.clear();
  if (!haveDescr || !haveOrder || !haveShape)
    error = std::string("the header has no '") +
            (!haveDescr   ? "descr"
             : !haveOrder ? "fortran_order"
                          : "shape") +
            "' key";
  return error.empty();
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

namespace {
/// Where the bytes of a .npy image come from: a file (or pipe, or device)
/// or memory.
struct Source {
  std::FILE *file = nullptr;
  const uint8_t *bytes = nullptr;
  size_t size = 0, pos = 0;

  /// Reads up to `count` bytes; fewer at the end (or on a read error).
  size_t read(void *out, size_t count) {
    if (file)
      return std::fread(out, 1, count, file);
    count = std::min(count, size - pos);
    if (count)
      std::memcpy(out, bytes + pos, count);
    pos += count;
    return count;
  }
  /// The bytes left, where they are known: in memory and in a regular file
  /// (not in a pipe or a device).
  bool getRest(size_t &rest) {
    struct stat info;
    if (!file) {
      rest = size - pos;
      return true;
    }
    long at = std::ftell(file);
    if (fstat(fileno(file), &info) != 0 || !S_ISREG(info.st_mode) || at < 0)
      return false;
    rest = info.st_size > at ? size_t(info.st_size - at) : 0;
    return true;
  }
};
} // namespace

/// Reads one .npy image from `source`; `name` is quoted in the messages.
static bool readNpyFrom(Source &source, const std::string &name,
                        HostTensor &out, std::string &error) {
  std::string quoted = "'" + name + "'";
  auto failed = [&](const std::string &message) {
    error = source.file && std::ferror(source.file)
                ? "cannot read " + quoted + ": " + std::strerror(errno)
                : message;
    return false;
  };
  uint8_t prefix[12];
  size_t got = source.read(prefix, 8);
  if (got < kMagicSize || std::memcmp(prefix, kMagic, kMagicSize) != 0)
    return failed(quoted + " is not a .npy file (bad magic string)");
  unsigned major = prefix[6], minor = prefix[7];
  if (got == 8 && major != 1 && major != 2 && major != 3)
    return failWith(error, ".npy file ", quoted,
                    " has unsupported format version ", major, ".", minor,
                    " (expected 1.0, 2.0 or 3.0)");
  size_t lengthBytes = major == 1 ? 2 : 4;
  if (got < 8 || source.read(prefix + 8, lengthBytes) != lengthBytes)
    return failed("truncated .npy file " + quoted +
                  ": the header is incomplete");
  size_t headerLength = 0;
  for (size_t i = 0; i < lengthBytes; ++i)
    headerLength |= size_t(prefix[8 + i]) << (8 * i);
  if (headerLength > kMaxHeaderBytes)
    return failWith(error, ".npy file ", quoted, " announces a header of ",
                    headerLength, " bytes (at most ", kMaxHeaderBytes, ")");
  std::string header(headerLength, '\0');
  got = source.read(header.data(), headerLength);
  if (got < headerLength)
    return failed("truncated .npy file " + quoted + ": expected a header of " +
                  std::to_string(headerLength) + " bytes, found " +
                  std::to_string(got));

  std::string descr, headerError;
  bool fortranOrder = false;
  HostTensor tensor;
  if (!HeaderParser(header).parse(descr, fortranOrder, tensor.shape,
                                  headerError))
    return failWith(error, "invalid .npy header in ", quoted, ": ",
                    headerError);
  if (!parseDescr(descr, tensor.type))
    return failWith(error, ".npy file ", quoted, " has unsupported dtype '",
                    descr,
                    "' (expected '<f4' for f32, '<f2' for f16, '<V2' for bf16, "
                    "'|b1' for i1, '<i4' for i32 or '<i8' for i64)");
  if (fortranOrder)
    return failWith(error, ".npy file ", quoted,
                    " is in Fortran order; only C order is supported (save "
                    "numpy.ascontiguousarray(x))");
  if (tensor.shape.empty())
    return failWith(error, ".npy file ", quoted,
                    " holds a 0-d array; expected rank >= 1");

  // The data: checked against the host's memory before it is allocated,
  // and against the file's size where it has one.
  double bytes = double(getElementBytes(tensor.type));
  for (int64_t dim : tensor.shape)
    bytes *= double(dim);
  if (!checkFitsInMemory(
          bytes, ".npy file " + quoted + " (" + tensor.getShapeString() + ")",
          error))
    return false;
  size_t expected = tensor.getNumBytes(), rest = 0;
  bool sized = source.getRest(rest);
  std::string sizes = "expected " + std::to_string(expected) + " data bytes";
  if (sized && rest < expected)
    return failed("truncated .npy file " + quoted + ": " + sizes + ", found " +
                  std::to_string(rest));
  if (sized && rest > expected)
    return failWith(error, ".npy file ", quoted, " has ", rest - expected,
                    " bytes after the data: ", sizes, ", found ", rest);
  tensor.data.resize(expected);
  got = source.read(tensor.data.data(), expected);
  if (got < expected)
    return failed("truncated .npy file " + quoted + ": " + sizes + ", found " +
                  std::to_string(got));
  char extra;
  if (!sized && source.read(&extra, 1))
    return failWith(error, ".npy file ", quoted,
                    " has bytes after the data: ", sizes);
  out = std::move(tensor);
  return true;
}

bool attn::runtime::parseNpy(const uint8_t *bytes, size_t size,
                             const std::string &name, HostTensor &out,
                             std::string &error) {
  Source source;
  source.bytes = bytes;
  source.size = size;
  return readNpyFrom(source, name, out, error);
}

bool attn::runtime::readNpy(const std::string &path, HostTensor &out,
                            std::string &error) {
  // Non-blocking open: a FIFO without a writer reads as empty instead of
  // blocking; reads block again afterwards.
  int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return failWith(error, "cannot open '", path, "': ", std::strerror(errno));
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  Source source;
  source.file = fdopen(fd, "rb");
  if (!source.file) {
    error = "cannot open '" + path + "': " + std::strerror(errno);
    close(fd);
    return false;
  }
  bool ok = readNpyFrom(source, path, out, error);
  std::fclose(source.file);
  return ok;
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

std::vector<uint8_t> attn::runtime::serializeNpy(const HostTensor &tensor) {
  std::string dict = std::string("{'descr': '") + getDescr(tensor.type) +
                     "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < tensor.shape.size(); ++i)
    dict += (i ? ", " : "") + std::to_string(tensor.shape[i]);
  dict += tensor.shape.size() == 1 ? ",), }" : "), }";

  // Pad with spaces and end with '\n' so that the data starts at a multiple
  // of 64 bytes. Version 1.0 stores the header length in 2 bytes.
  size_t prefix = 10;
  size_t total = (prefix + dict.size() + 1 + 63) / 64 * 64;
  if (total - prefix > 0xffff) {
    prefix = 12;
    total = (prefix + dict.size() + 1 + 63) / 64 * 64;
  }
  size_t headerLength = total - prefix;
  dict.append(headerLength - dict.size() - 1, ' ');
  dict += '\n';

  std::vector<uint8_t> bytes(kMagic, kMagic + kMagicSize);
  bytes.push_back(prefix == 10 ? 1 : 2);
  bytes.push_back(0);
  for (size_t i = 0; i < prefix - 8; ++i)
    bytes.push_back(static_cast<uint8_t>(headerLength >> (8 * i)));
  bytes.insert(bytes.end(), dict.begin(), dict.end());
  bytes.insert(bytes.end(), tensor.data.begin(), tensor.data.end());
  return bytes;
}

bool attn::runtime::writeNpy(const std::string &path, const HostTensor &tensor,
                             std::string &error) {
  if (tensor.data.size() != tensor.getNumBytes())
    return failWith(error, "cannot write '", path, "': the ",
                    tensor.getShapeString(), " tensor holds ",
                    tensor.data.size(), " bytes, expected ",
                    tensor.getNumBytes());
  std::vector<uint8_t> bytes = serializeNpy(tensor);
  return writeWholeFile(path, bytes.data(), bytes.size(), error);
}
