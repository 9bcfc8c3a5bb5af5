//===- FileWrite.cpp - Whole-file reads and writes ------------------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/FileWrite.h"

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

using namespace attn::runtime;

/// Writes the bytes to an open file and closes it; errno of the first
/// failure, or 0.
static int writeAndClose(std::FILE *file, const void *data, size_t size) {
  errno = 0;
  int failure = 0;
  if (size && std::fwrite(data, 1, size, file) != size)
    failure = errno ? errno : EIO;
  if (std::fflush(file) != 0 && !failure)
    failure = errno ? errno : EIO;
  if (std::fclose(file) != 0 && !failure)
    failure = errno ? errno : EIO;
  return failure;
}

bool attn::runtime::isSpecialFile(const std::string &path) {
  struct stat info;
  if (stat(path.c_str(), &info) != 0)
    return false;
  return !S_ISREG(info.st_mode);
}

bool attn::runtime::writeWholeFile(const std::string &path, const void *data,
                                   size_t size, std::string &error) {
  auto fail = [&](int code) {
    error = "cannot write '" + path + "': " + std::strerror(code);
    return false;
  };
  std::string target = path;
  struct stat link;
  if (lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
    // Through the link: its target is replaced, the link stays. A dangling
    // link is written in place (fopen creates its target).
    char resolved[PATH_MAX];
    if (realpath(path.c_str(), resolved))
      target = resolved;
    else if (errno == ENOENT)
      target.clear();
    else
      return fail(errno);
  }
  struct stat info;
  bool exists = !target.empty() && stat(target.c_str(), &info) == 0;
  if (target.empty() || (exists && !S_ISREG(info.st_mode))) {
    if (exists && S_ISDIR(info.st_mode))
      return fail(EISDIR);
    std::FILE *file = std::fopen(path.c_str(), "wb");
    if (!file)
      return fail(errno);
    if (int failure = writeAndClose(file, data, size))
      return fail(failure);
    return true;
  }
  std::string temporary =
      target + ".tmp." + std::to_string(static_cast<long>(getpid()));
  std::FILE *file = std::fopen(temporary.c_str(), "wb");
  if (!file)
    return fail(errno);
  int failure = writeAndClose(file, data, size);
  if (!failure && std::rename(temporary.c_str(), target.c_str()) != 0)
    failure = errno;
  if (failure) {
    std::remove(temporary.c_str());
    return fail(failure);
  }
  return true;
}

bool attn::runtime::readWholeFile(const std::string &path, std::string &out,
                                  std::string &error) {
  std::FILE *file = std::fopen(path.c_str(), "rb");
  if (!file) {
    error = std::strerror(errno);
    return false;
  }
  char buffer[65536];
  size_t count;
  out.clear();
  while ((count = std::fread(buffer, 1, sizeof(buffer), file)) > 0)
    out.append(buffer, count);
  bool failed = std::ferror(file);
  int code = errno;
  std::fclose(file);
  if (failed)
    error = std::strerror(code);
  return !failed;
}
