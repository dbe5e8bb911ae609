// Where the kernels' compiled code is kept (backends/kernel_code.hpp): file names made from labels
// (sanitised, unique, cut with a hash when long), files written whole or not at all, and a write
// that fails a warning, never an exception or an error.
#include "backends/kernel_code.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include "backends/expr.hpp"

namespace gp::backends {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

fs::path fresh_folder(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("gpuparanoia-kernel-code-{}-{}", name, ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(KernelCodeNames, DeviceIdsKeepTheirCharactersButColons) {
  EXPECT_EQ(file_stem("vulkan:0+rte"), "vulkan_0+rte");
  EXPECT_EQ(file_stem("opencl:0:1+fast-relaxed-math"), "opencl_0_1+fast-relaxed-math");
  EXPECT_EQ(file_stem("cuda:0"), "cuda_0");
}

TEST(KernelCodeNames, LabelsAreSanitisedAndToldApartByAHash) {
  const std::string add = file_stem("in0 + in1 [binary32 -> binary32]");
  EXPECT_TRUE(add.starts_with("in0_+_in1__binary32_-__binary32_-")) << add;
  EXPECT_EQ(add.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+-"),
            std::string::npos)
      << add;
  EXPECT_EQ(file_stem("in0 + in1 [binary32 -> binary32]"), add);  // the same label, the same name
  // Labels that sanitise alike: each its own name.
  const std::set<std::string> alike = {file_stem("a_b"), file_stem("a:b"), file_stem("a b"),
                                       file_stem("16x16x16:binary16,binary16,binary32,binary32"),
                                       file_stem("16x16x16:binary16:binary16,binary32,binary32")};
  EXPECT_EQ(alike.size(), 5u);
  // The IR's operations, which sanitise alike but for their operator ("+", "-", "*", "/").
  std::set<std::string> names;
  for (const Node n : {Node::add, Node::sub, Node::mul, Node::div})
    for (const model::Format* f : {&model::binary16, &model::binary32, &model::binary64})
      names.insert(file_stem(binary(n, *f).to_string()));
  EXPECT_EQ(names.size(), 12u);
  EXPECT_TRUE(names.contains(add));
  EXPECT_EQ(file_stem("add(x/y) é").substr(0, 12), "add_x_y____-");  // é: two bytes
}

TEST(KernelCodeNames, LongLabelsAreCutAndStayApart) {
  const std::string long_label(1000, 'x'), other = long_label + "y";
  const std::string a = file_stem(long_label), b = file_stem(other);
  EXPECT_LT(a.size() + std::string(".executables.txt").size(), 255u);
  EXPECT_TRUE(a.starts_with(std::string(160, 'x'))) << a;
  EXPECT_NE(a, b);  // cut, yet told apart by the hash of the whole
}

TEST(KernelCode, OffKeepsNothing) {
  const KernelCode off;
  EXPECT_FALSE(off.on());
  EXPECT_TRUE(off.keep("in0 + in1", ".spv", "x"));
  EXPECT_FALSE(KernelCode({}, "vulkan:0").on());
}

TEST(KernelCode, FilesAreWrittenWholeInTheDevicesFolder) {
  const fs::path dir = fresh_folder("whole");
  const KernelCode code(dir / "code", "opencl:0:0+denorms-are-zero");
  EXPECT_EQ(code.folder(), dir / "code" / "opencl_0_0+denorms-are-zero");
  const std::string bytes(
      "\x7f"
      "ELF\0\1\2",
      7);
  ASSERT_TRUE(code.keep("16x8x16:binary16,binary16,binary32,binary32", ".sm_90.cubin", "old"));
  ASSERT_TRUE(code.keep("16x8x16:binary16,binary16,binary32,binary32", ".sm_90.cubin", bytes));  // replaced
  const fs::path file = code.folder() / (file_stem("16x8x16:binary16,binary16,binary32,binary32") + ".sm_90.cubin");
  EXPECT_EQ(read(file), bytes);
  EXPECT_EQ(std::distance(fs::directory_iterator(code.folder()), {}), 1);  // no temporary left
  fs::remove_all(dir);
}

TEST(KernelCode, AFailedWriteIsAWarning) {
  const fs::path dir = fresh_folder("failed");
  std::ofstream(dir / "a-file") << "not a folder";
  const KernelCode code(dir / "a-file", "vulkan:0");  // its folder cannot be made
  ::testing::internal::CaptureStderr();
  const bool kept = code.keep("in0 + in1 [binary32 -> binary32]", ".spv", "x");
  const std::string warning = ::testing::internal::GetCapturedStderr();
  EXPECT_FALSE(kept);
  EXPECT_NE(warning.find("warning"), std::string::npos) << warning;
  EXPECT_NE(warning.find("in0 + in1"), std::string::npos) << warning;  // which kernel
  EXPECT_NE(warning.find("a-file"), std::string::npos) << warning;     // and where
  fs::remove_all(dir);
}

}  // namespace
}  // namespace gp::backends
