//===- NpyTest.cpp - Tests of the .npy reader and writer ------------------===//
//
// Part of the attn-mlir project.
//
//===----------------------------------------------------------------------===//

#include "attn/Runtime/Npy.h"

#include "gtest/gtest.h"

#include <csignal>
#include <cstdio>
#include <string>
#include <thread>

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace attn::runtime;

namespace {

/// A fresh, empty directory for one test, removed with its files afterwards.
class NpyTest : public ::testing::Test {
protected:
  void SetUp() override {
    const ::testing::TestInfo *info =
        ::testing::UnitTest::GetInstance()->current_test_info();
    dir = ::testing::TempDir() + "attn_npy_" + info->name() + "_" +
          std::to_string(getpid());
    ASSERT_EQ(mkdir(dir.c_str(), 0700), 0) << dir;
  }
  void TearDown() override {
    for (const std::string &name : listDir())
      std::remove((dir + "/" + name).c_str());
    rmdir(dir.c_str());
  }

  std::vector<std::string> listDir() const {
    std::vector<std::string> names;
    if (DIR *handle = opendir(dir.c_str())) {
      while (dirent *entry = readdir(handle)) {
        std::string name = entry->d_name;
        if (name != "." && name != "..")
          names.push_back(name);
      }
      closedir(handle);
    }
    return names;
  }

  std::string writeBytes(const std::string &name, const std::string &bytes) {
    std::string path = dir + "/" + name;
    std::FILE *file = std::fopen(path.c_str(), "wb");
    EXPECT_NE(file, nullptr);
    if (file) {
      std::fwrite(bytes.data(), 1, bytes.size(), file);
      std::fclose(file);
    }
    return path;
  }

  std::string dir;
};

/// A version 1.0 .npy image with the given header dict and data bytes.
std::string makeNpy(const std::string &dict, const std::string &data,
                    char major = 1) {
  std::string header = dict;
  size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + header.size() + 1) % 64 != 0)
    header += ' ';
  header += '\n';
  std::string bytes = "\x93NUMPY";
  bytes += major;
  bytes += '\0';
  size_t length = header.size();
  bytes += static_cast<char>(length & 0xff);
  bytes += static_cast<char>(length >> 8);
  if (major != 1)
    bytes += std::string(2, '\0');
  return bytes + header + data;
}

std::string floatBytes(std::initializer_list<float> values) {
  std::string bytes;
  for (float value : values)
    bytes.append(reinterpret_cast<const char *>(&value), sizeof(value));
  return bytes;
}

TEST_F(NpyTest, RoundTripEveryType) {
  for (ElementType type : {ElementType::F32, ElementType::F16,
                           ElementType::BF16, ElementType::I1}) {
    for (std::vector<int64_t> shape :
         {std::vector<int64_t>{5}, std::vector<int64_t>{2, 3, 4, 7}}) {
      HostTensor tensor = makeRandomTensor(shape, type, 11);
      std::string path = dir + "/t.npy";
      std::string error;
      ASSERT_TRUE(writeNpy(path, tensor, error)) << error;
      HostTensor back;
      ASSERT_TRUE(readNpy(path, back, error)) << error;
      EXPECT_EQ(back.type, type);
      EXPECT_EQ(back.shape, shape);
      EXPECT_EQ(back.data, tensor.data);
      EXPECT_EQ(listDir(), std::vector<std::string>{"t.npy"});
    }
  }
}

TEST_F(NpyTest, WrittenHeaderIsAlignedNumpyV1) {
  HostTensor tensor = makeZeroTensor({2, 3}, ElementType::F32);
  std::vector<uint8_t> bytes = serializeNpy(tensor);
  ASSERT_GE(bytes.size(), 64u);
  EXPECT_EQ(std::string(bytes.begin(), bytes.begin() + 8),
            std::string("\x93NUMPY\x01\x00", 8));
  size_t headerLength = bytes[8] | (bytes[9] << 8);
  EXPECT_EQ((10 + headerLength) % 64, 0u);
  EXPECT_EQ(bytes.size(), 10 + headerLength + 24);
  std::string header(bytes.begin() + 10, bytes.begin() + 10 + headerLength);
  EXPECT_EQ(header.rfind("{'descr': '<f4', 'fortran_order': False, "
                         "'shape': (2, 3), }",
                         0),
            0u);
  EXPECT_EQ(header.back(), '\n');

  std::vector<uint8_t> vector =
      serializeNpy(makeZeroTensor({5}, ElementType::BF16));
  std::string text(vector.begin(), vector.end());
  EXPECT_NE(text.find("'descr': '<V2'"), std::string::npos);
  EXPECT_NE(text.find("'shape': (5,)"), std::string::npos);
}

TEST_F(NpyTest, ReadsHandBuiltHeaders) {
  // Keys in another order, double quotes, no trailing comma, version 2.0.
  std::string path = writeBytes(
      "a.npy", makeNpy("{\"shape\": (1, 3), \"fortran_order\": False, "
                       "\"descr\": \"<f4\"}",
                       floatBytes({1.0f, -2.5f, 3.0f}), 2));
  HostTensor tensor;
  std::string error;
  ASSERT_TRUE(readNpy(path, tensor, error)) << error;
  EXPECT_EQ(tensor.type, ElementType::F32);
  EXPECT_EQ(tensor.shape, (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(tensor.get(1), -2.5);

  path = writeBytes("b.npy", makeNpy("{'descr': '|b1', 'fortran_order': False, "
                                     "'shape': (2,), }",
                                     std::string("\x01\x00", 2)));
  ASSERT_TRUE(readNpy(path, tensor, error)) << error;
  EXPECT_EQ(tensor.type, ElementType::I1);
  EXPECT_EQ(tensor.get(0), 1.0);
  EXPECT_EQ(tensor.get(1), 0.0);

  // ml_dtypes' bfloat16 as numpy.save writes it; 1.0 is 0x3f80.
  path = writeBytes("c.npy", makeNpy("{'descr': '<V2', 'fortran_order': False, "
                                     "'shape': (1,), }",
                                     std::string("\x80\x3f", 2), 3));
  ASSERT_TRUE(readNpy(path, tensor, error)) << error;
  EXPECT_EQ(tensor.type, ElementType::BF16);
  EXPECT_EQ(tensor.get(0), 1.0);

  path = writeBytes("d.npy", makeNpy("{'descr': '<f2', 'fortran_order': False, "
                                     "'shape': (1,), }",
                                     std::string("\x00\xc1", 2)));
  ASSERT_TRUE(readNpy(path, tensor, error)) << error;
  EXPECT_EQ(tensor.type, ElementType::F16);
  EXPECT_EQ(tensor.get(0), -2.5);
}

TEST_F(NpyTest, TruncatedFile) {
  std::string path =
      writeBytes("t.npy", makeNpy("{'descr': '<f4', 'fortran_order': False, "
                                  "'shape': (2, 2), }",
                                  floatBytes({1.0f, 2.0f, 3.0f})));
  HostTensor tensor;
  tensor.shape = {42};
  std::string error;
  EXPECT_FALSE(readNpy(path, tensor, error));
  EXPECT_EQ(error, "truncated .npy file '" + path +
                       "': expected 16 data bytes, found 12");
  EXPECT_EQ(tensor.shape, std::vector<int64_t>{42}); // Untouched.

  // A header that claims more bytes than the file has.
  std::string full = makeNpy("{'descr': '<f4', 'fortran_order': False, "
                             "'shape': (1,), }",
                             floatBytes({1.0f}));
  path = writeBytes("h.npy", full.substr(0, 40));
  EXPECT_FALSE(readNpy(path, tensor, error));
  EXPECT_NE(error.find("truncated .npy file"), std::string::npos) << error;
}

TEST_F(NpyTest, TrailingBytes) {
  std::string path =
      writeBytes("t.npy", makeNpy("{'descr': '<f4', 'fortran_order': False, "
                                  "'shape': (1,), }",
                                  floatBytes({1.0f, 2.0f})));
  HostTensor tensor;
  std::string error;
  EXPECT_FALSE(readNpy(path, tensor, error));
  EXPECT_NE(error.find("4 bytes after the data"), std::string::npos) << error;
}

TEST_F(NpyTest, BadMagic) {
  std::string path = writeBytes("m.npy", "PK\x03\x04 this is a zip file");
  HostTensor tensor;
  std::string error;
  EXPECT_FALSE(readNpy(path, tensor, error));
  EXPECT_EQ(error, "'" + path + "' is not a .npy file (bad magic string)");
  path = writeBytes("e.npy", "");
  EXPECT_FALSE(readNpy(path, tensor, error));
  EXPECT_NE(error.find("bad magic"), std::string::npos);
}

TEST_F(NpyTest, RejectsUnsupportedHeaders) {
  struct Case {
    std::string dict, data, expected;
  } cases[] = {
      {"{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }",
       std::string(16, '\0'), "Fortran order"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }",
       std::string(8, '\0'), "unsupported dtype '<f8' (expected '<f4'"},
      {"{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }",
       std::string(4, '\0'), "unsupported dtype '>f4'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (), }",
       std::string(4, '\0'), "0-d array"},
      {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }",
       std::string(4, '\0'), "structured dtypes"},
      {"{'descr': '<f4', 'fortran_order': False, }", std::string(4, '\0'),
       "no 'shape' key"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (a,), }",
       std::string(4, '\0'), "'shape' is not a tuple"},
      {"['descr']", "", "not a Python dict"},
  };
  for (const Case &c : cases) {
    std::string path = writeBytes("x.npy", makeNpy(c.dict, c.data));
    HostTensor tensor;
    std::string error;
    EXPECT_FALSE(readNpy(path, tensor, error)) << c.dict;
    EXPECT_NE(error.find(c.expected), std::string::npos)
        << c.dict << " -> " << error;
    EXPECT_NE(error.find(path), std::string::npos) << error;
  }

  std::string bytes = makeNpy("{'descr': '<f4', 'fortran_order': False, "
                              "'shape': (1,), }",
                              floatBytes({1.0f}));
  bytes[6] = 4;
  std::string path = writeBytes("v.npy", bytes);
  HostTensor tensor;
  std::string error;
  EXPECT_FALSE(readNpy(path, tensor, error));
  EXPECT_NE(error.find("unsupported format version 4.0"), std::string::npos);
}

/// Reads the .npy image `bytes` through a pipe, written by a thread that
/// would block if the reader read past what the header announces.
bool readThroughPipe(const std::string &bytes, HostTensor &out,
                     std::string &error) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  std::thread writer([&] {
    for (size_t done = 0; done < bytes.size();) {
      ssize_t count = write(fds[1], bytes.data() + done, bytes.size() - done);
      if (count <= 0)
        break; // The reader closed the pipe (EPIPE).
      done += size_t(count);
    }
    close(fds[1]);
  });
  bool read = readNpy("/dev/fd/" + std::to_string(fds[0]), out, error);
  close(fds[0]);
  writer.join();
  return read;
}

TEST_F(NpyTest, DevicesPipesAndFifos) {
  std::signal(SIGPIPE, SIG_IGN);
  HostTensor tensor;
  std::string error;
  // The magic string comes first: a device fails after its first bytes.
  for (std::string device : {"/dev/zero", "/dev/full", "/dev/urandom"}) {
    EXPECT_FALSE(readNpy(device, tensor, error));
    EXPECT_EQ(error, "'" + device + "' is not a .npy file (bad magic string)");
  }
  // A FIFO without a writer reads as empty instead of blocking.
  std::string fifo = dir + "/f.fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_FALSE(readNpy(fifo, tensor, error));
  EXPECT_EQ(error, "'" + fifo + "' is not a .npy file (bad magic string)");
  // A pipe: the announced data bytes, then a stop at the first byte more.
  std::string image = makeNpy("{'descr': '<f4', 'fortran_order': False, "
                              "'shape': (2,), }",
                              floatBytes({1.5f, -2.0f}));
  ASSERT_TRUE(readThroughPipe(image, tensor, error)) << error;
  EXPECT_EQ(tensor.shape, std::vector<int64_t>{2});
  EXPECT_EQ(tensor.get(1), -2.0);
  EXPECT_FALSE(
      readThroughPipe(image + std::string(1 << 22, 'x'), tensor, error));
  EXPECT_NE(error.find("has bytes after the data: expected 8 data bytes"),
            std::string::npos)
      << error;
  EXPECT_FALSE(
      readThroughPipe(image.substr(0, image.size() - 2), tensor, error));
  EXPECT_NE(error.find("expected 8 data bytes, found 6"), std::string::npos)
      << error;
  // A header that announces more than the memory: refused before reading.
  EXPECT_FALSE(
      readThroughPipe(makeNpy("{'descr': '<f4', 'fortran_order': False, "
                              "'shape': (1000000, 1000000, 1000), }",
                              ""),
                      tensor, error));
  EXPECT_NE(error.find("(1000000x1000000x1000xf32) needs 4e+06 GB, more than "
                       "the "),
            std::string::npos)
      << error;
  // A directory.
  EXPECT_FALSE(readNpy(dir, tensor, error));
  EXPECT_EQ(error, "cannot read '" + dir + "': Is a directory");
}

TEST_F(NpyTest, MissingFile) {
  HostTensor tensor;
  std::string error;
  EXPECT_FALSE(readNpy(dir + "/absent.npy", tensor, error));
  EXPECT_NE(error.find("cannot open '" + dir + "/absent.npy'"),
            std::string::npos)
      << error;
}

TEST_F(NpyTest, NoHalfWrittenFileWhenTheDirectoryIsMissing) {
  HostTensor tensor = makeRandomTensor({4}, ElementType::F32, 1);
  std::string path = dir + "/missing/o.npy";
  std::string error;
  EXPECT_FALSE(writeNpy(path, tensor, error));
  EXPECT_NE(error.find("cannot write '" + path + "'"), std::string::npos)
      << error;
  struct stat info;
  EXPECT_NE(stat(path.c_str(), &info), 0);
  EXPECT_TRUE(listDir().empty());
}

TEST_F(NpyTest, FailedRenameKeepsTheOldFileAndRemovesTheTemporary) {
  // The target is a non-empty directory: rename fails after the temporary
  // was fully written; it must be removed and the target left alone.
  std::string path = dir + "/out.npy";
  ASSERT_EQ(mkdir(path.c_str(), 0700), 0);
  std::string inner = path + "/keep";
  std::fclose(std::fopen(inner.c_str(), "wb"));
  HostTensor tensor = makeRandomTensor({4}, ElementType::F16, 1);
  std::string error;
  EXPECT_FALSE(writeNpy(path, tensor, error));
  EXPECT_NE(error.find("cannot write"), std::string::npos);
  EXPECT_EQ(listDir(), std::vector<std::string>{"out.npy"});
  std::remove(inner.c_str());
  rmdir(path.c_str());
}

TEST_F(NpyTest, OverwritesAnExistingFile) {
  std::string path = writeBytes("o.npy", "old contents");
  HostTensor tensor = makeRandomTensor({3, 2}, ElementType::BF16, 5);
  std::string error;
  ASSERT_TRUE(writeNpy(path, tensor, error)) << error;
  HostTensor back;
  ASSERT_TRUE(readNpy(path, back, error)) << error;
  EXPECT_EQ(back.data, tensor.data);
}

TEST_F(NpyTest, RejectsInconsistentTensor) {
  HostTensor tensor = makeZeroTensor({4}, ElementType::F32);
  tensor.data.resize(3);
  std::string error;
  EXPECT_FALSE(writeNpy(dir + "/bad.npy", tensor, error));
  EXPECT_NE(error.find("holds 3 bytes, expected 16"), std::string::npos)
      << error;
  EXPECT_TRUE(listDir().empty());
}

} // namespace
