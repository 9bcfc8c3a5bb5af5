//===- Npy.cpp - Reading and writing numpy .npy files ---------------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/Npy.h"

#include "attn/Runtime/FileWrite.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <sys/stat.h>

using namespace attn::runtime;

static constexpr char kMagic[] = "\x93NUMPY";
static constexpr size_t kMagicSize = 6;

/// The numpy descr the writer uses for each element type. bf16 is saved as a
/// 2-byte void, which is what numpy.save writes for an ml_dtypes.bfloat16
/// array.
static const char *getDescr(ElementType type) {
  switch (type) {
  case ElementType::F32:
    return "<f4";
  case ElementType::F16:
    return "<f2";
  case ElementType::BF16:
    return "<V2";
  case ElementType::I1:
    return "|b1";
  case ElementType::I32:
    return "<i4";
  case ElementType::I64:
    return "<i8";
  }
  return "";
}

static bool parseDescr(std::string_view descr, ElementType &type) {
  if (descr == "<f4")
    type = ElementType::F32;
  else if (descr == "<f2")
    type = ElementType::F16;
  else if (descr == "|b1")
    type = ElementType::I1;
  else if (descr == "<i4")
    type = ElementType::I32;
  else if (descr == "<i8")
    type = ElementType::I64;
  else if (descr == "<V2" || descr == "|V2" || descr == "bfloat16")
    type = ElementType::BF16;
  else
    return false;
  return true;
}

//===----------------------------------------------------------------------===//
// Header parsing
//===----------------------------------------------------------------------===//

namespace {
/// A parser for the Python dict literal of a .npy header, e.g.
/// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class HeaderParser {
public:
  explicit HeaderParser(std::string_view text) : text(text) {}

  bool parse(std::string &descr, bool &fortranOrder,
             std::vector<int64_t> &shape, std::string &error);

private:
  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' ||
                                 text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
  }
  bool consume(char c) {
    skipSpace();
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  bool consumeWord(std::string_view word) {
    skipSpace();
    if (text.substr(pos, word.size()) != word)
      return false;
    pos += word.size();
    return true;
  }
  bool parseString(std::string &value);
  bool parseShape(std::vector<int64_t> &shape, std::string &error);

  std::string_view text;
  size_t pos = 0;
};
} // namespace

bool HeaderParser::parseString(std::string &value) {
  skipSpace();
  if (pos >= text.size() || (text[pos] != '\'' && text[pos] != '"'))
    return false;
  char quote = text[pos++];
  size_t end = text.find(quote, pos);
  if (end == std::string_view::npos)
    return false;
  value = std::string(text.substr(pos, end - pos));
  pos = end + 1;
  return true;
}

bool HeaderParser::parseShape(std::vector<int64_t> &shape, std::string &error) {
  if (!consume('(')) {
    error = "'shape' is not a tuple";
    return false;
  }
  shape.clear();
  while (!consume(')')) {
    skipSpace();
    size_t start = pos;
    int64_t dim = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      if (pos - start >= 15) {
        error = "'shape' has a dimension that is too large";
        return false;
      }
      dim = dim * 10 + (text[pos++] - '0');
    }
    if (pos == start) {
      error = "'shape' is not a tuple of non-negative integers";
      return false;
    }
    consume('L'); // Python 2 long literals.
    shape.push_back(dim);
    if (!consume(',')) {
      if (!consume(')')) {
        error = "'shape' is not a tuple of non-negative integers";
        return false;
      }
      break;
    }
  }
  return true;
}

bool HeaderParser::parse(std::string &descr, bool &fortranOrder,
                         std::vector<int64_t> &shape, std::string &error) {
  bool haveDescr = false, haveOrder = false, haveShape = false;
  if (!consume('{')) {
    error = "the header is not a Python dict";
    return false;
  }
  while (!consume('}')) {
    std::string key;
    if (!parseString(key) || !consume(':')) {
      error = "the header is not a Python dict";
      return false;
    }
    if (key == "descr") {
      skipSpace();
      if (pos < text.size() && text[pos] == '[') {
        error = "structured dtypes are not supported";
        return false;
      }
      if (!parseString(descr)) {
        error = "'descr' is not a string";
        return false;
      }
      haveDescr = true;
    } else if (key == "fortran_order") {
      if (consumeWord("True")) {
        fortranOrder = true;
      } else if (consumeWord("False")) {
        fortranOrder = false;
      } else {
        error = "'fortran_order' is not True or False";
        return false;
      }
      haveOrder = true;
    } else if (key == "shape") {
      if (!parseShape(shape, error))
        return false;
      haveShape = true;
    } else {
      error = "unexpected key '" + key + "' in the header";
      return false;
    }
    if (!consume(',')) {
      if (!consume('}')) {
        error = "the header is not a Python dict";
        return false;
      }
      break;
    }
  }
  if (!haveDescr || !haveOrder || !haveShape) {
    error = std::string("the header has no '") +
            (!haveDescr   ? "descr"
             : !haveOrder ? "fortran_order"
                          : "shape") +
            "' key";
    return false;
  }
  return true;
}

/// Parses the header of a .npy image: on success `dataOffset` is where the
/// element data starts and `shape`/`type` describe it.
static bool parseNpyHeader(const uint8_t *bytes, size_t size,
                           const std::string &name, std::vector<int64_t> &shape,
                           ElementType &type, size_t &dataOffset,
                           std::string &error) {
  std::string quoted = "'" + name + "'";
  if (size < kMagicSize || std::memcmp(bytes, kMagic, kMagicSize) != 0) {
    error = quoted + " is not a .npy file (bad magic string)";
    return false;
  }
  if (size < 10) {
    error = "truncated .npy file " + quoted + ": the header is incomplete";
    return false;
  }
  unsigned major = bytes[6], minor = bytes[7];
  size_t headerLength, headerStart;
  if (major == 1) {
    headerLength = bytes[8] | (size_t(bytes[9]) << 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12) {
      error = "truncated .npy file " + quoted + ": the header is incomplete";
      return false;
    }
    headerLength = bytes[8] | (size_t(bytes[9]) << 8) |
                   (size_t(bytes[10]) << 16) | (size_t(bytes[11]) << 24);
    headerStart = 12;
  } else {
    error = ".npy file " + quoted + " has unsupported format version " +
            std::to_string(major) + "." + std::to_string(minor) +
            " (expected 1.0, 2.0 or 3.0)";
    return false;
  }
  if (headerLength > size - headerStart) {
    error = "truncated .npy file " + quoted + ": expected a header of " +
            std::to_string(headerLength) + " bytes, found " +
            std::to_string(size - headerStart);
    return false;
  }

  std::string_view header(reinterpret_cast<const char *>(bytes) + headerStart,
                          headerLength);
  std::string descr, headerError;
  bool fortranOrder = false;
  if (!HeaderParser(header).parse(descr, fortranOrder, shape, headerError)) {
    error = "invalid .npy header in " + quoted + ": " + headerError;
    return false;
  }
  if (!parseDescr(descr, type)) {
    error = ".npy file " + quoted + " has unsupported dtype '" + descr +
            "' (expected '<f4' for f32, '<f2' for f16, '<V2' for bf16, "
            "'|b1' for i1, '<i4' for i32 or '<i8' for i64)";
    return false;
  }
  if (fortranOrder) {
    error = ".npy file " + quoted +
            " is in Fortran order; only C order is supported (save "
            "numpy.ascontiguousarray(x))";
    return false;
  }
  if (shape.empty()) {
    error = ".npy file " + quoted + " holds a 0-d array; expected rank >= 1";
    return false;
  }

  // Guard the byte count against overflow before comparing it with the file.
  size_t expected = getElementBytes(type);
  bool tooLarge = false;
  for (int64_t dim : shape)
    if (dim == 0)
      expected = 0;
  for (int64_t dim : shape) {
    if (dim != 0 && expected > size / static_cast<size_t>(dim))
      tooLarge = true;
    else
      expected *= static_cast<size_t>(dim);
  }
  dataOffset = headerStart + headerLength;
  size_t found = size - dataOffset;
  if (tooLarge || found < expected) {
    error = "truncated .npy file " + quoted + ": expected " +
            (tooLarge ? "more than " + std::to_string(size)
                      : std::to_string(expected)) +
            " data bytes, found " + std::to_string(found);
    return false;
  }
  if (found > expected) {
    error = ".npy file " + quoted + " has " + std::to_string(found - expected) +
            " bytes after the data: expected " + std::to_string(expected) +
            " data bytes, found " + std::to_string(found);
    return false;
  }
  return true;
}

bool attn::runtime::parseNpy(const uint8_t *bytes, size_t size,
                             const std::string &name, HostTensor &out,
                             std::string &error) {
  std::vector<int64_t> shape;
  ElementType type;
  size_t dataOffset;
  if (!parseNpyHeader(bytes, size, name, shape, type, dataOffset, error))
    return false;
  out.type = type;
  out.shape = std::move(shape);
  out.data.assign(bytes + dataOffset, bytes + size);
  return true;
}

bool attn::runtime::readNpy(const std::string &path, HostTensor &out,
                            std::string &error) {
  // A directory opens on POSIX (and reports a huge size); refuse it first.
  struct stat info;
  if (stat(path.c_str(), &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR) {
    error = "cannot read '" + path + "': " + std::strerror(EISDIR);
    return false;
  }
  std::FILE *file = std::fopen(path.c_str(), "rb");
  if (!file) {
    error = "cannot open '" + path + "': " + std::strerror(errno);
    return false;
  }
  // Read in chunks (a pipe has no size); the reserve, with room for the
  // final short read, avoids reallocating a regular file's contents.
  constexpr size_t kChunk = size_t(1) << 20;
  std::vector<uint8_t> bytes;
  if (std::fseek(file, 0, SEEK_END) == 0) {
    long fileSize = std::ftell(file);
    if (fileSize > 0)
      bytes.reserve(static_cast<size_t>(fileSize) + kChunk);
    std::rewind(file);
  }
  bool readError = false;
  while (true) {
    size_t oldSize = bytes.size();
    bytes.resize(oldSize + kChunk);
    size_t got = std::fread(bytes.data() + oldSize, 1, kChunk, file);
    bytes.resize(oldSize + got);
    if (got < kChunk) {
      readError = std::ferror(file) != 0;
      break;
    }
  }
  int savedErrno = errno;
  std::fclose(file);
  if (readError) {
    error = "cannot read '" + path + "': " + std::strerror(savedErrno);
    return false;
  }

  std::vector<int64_t> shape;
  ElementType type;
  size_t dataOffset;
  if (!parseNpyHeader(bytes.data(), bytes.size(), path, shape, type, dataOffset,
                      error))
    return false;
  // Drop the header in place rather than copying the data.
  bytes.erase(bytes.begin(), bytes.begin() + dataOffset);
  out.type = type;
  out.shape = std::move(shape);
  out.data = std::move(bytes);
  return true;
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

std::vector<uint8_t> attn::runtime::serializeNpy(const HostTensor &tensor) {
  std::string dict = std::string("{'descr': '") + getDescr(tensor.type) +
                     "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < tensor.shape.size(); ++i) {
    if (i)
      dict += ", ";
    dict += std::to_string(tensor.shape[i]);
  }
  if (tensor.shape.size() == 1)
    dict += ",";
  dict += "), }";

  // Pad with spaces and end with '\n' so that the data starts at a multiple
  // of 64 bytes. Version 1.0 stores the header length in 2 bytes.
  size_t prefix = 10;
  unsigned major = 1;
  size_t total = (prefix + dict.size() + 1 + 63) / 64 * 64;
  if (total - prefix > 0xffff) {
    prefix = 12;
    major = 2;
    total = (prefix + dict.size() + 1 + 63) / 64 * 64;
  }
  size_t headerLength = total - prefix;
  dict.append(headerLength - dict.size() - 1, ' ');
  dict += '\n';

  std::vector<uint8_t> bytes;
  bytes.reserve(total + tensor.data.size());
  bytes.insert(bytes.end(), kMagic, kMagic + kMagicSize);
  bytes.push_back(static_cast<uint8_t>(major));
  bytes.push_back(0);
  for (size_t i = 0; i < prefix - 8; ++i)
    bytes.push_back(static_cast<uint8_t>(headerLength >> (8 * i)));
  bytes.insert(bytes.end(), dict.begin(), dict.end());
  bytes.insert(bytes.end(), tensor.data.begin(), tensor.data.end());
  return bytes;
}

bool attn::runtime::writeNpy(const std::string &path, const HostTensor &tensor,
                             std::string &error) {
  if (tensor.data.size() != tensor.getNumBytes()) {
    error = "cannot write '" + path + "': the " + tensor.getShapeString() +
            " tensor holds " + std::to_string(tensor.data.size()) +
            " bytes, expected " + std::to_string(tensor.getNumBytes());
    return false;
  }
  std::vector<uint8_t> bytes = serializeNpy(tensor);
  return writeWholeFile(path, bytes.data(), bytes.size(), error);
}
