// The GPU APIs are opened at run time: the program has no load-time dependency on a driver's
// library, starts without any, reports each missing one as a backend problem naming the library,
// and the commands that need no device never load one.
#include <elf.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "unittests/cli_run.hpp"

namespace gp {
namespace {

// The libraries of the GPU APIs, and of libepoxy, which would open them.
constexpr const char* kGpuLibraries[] = {"libvulkan", "libOpenCL", "libEGL",  "libGL",   "libGLX",
                                         "libOpenGL", "libepoxy",  "libcuda", "libnvrtc"};

// The DT_NEEDED entries of a 64-bit little-endian ELF file, or why they cannot be read.
std::vector<std::string> needed_libraries(const std::filesystem::path& file, std::string& why) {
  std::ifstream in(file, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto at = [&](std::size_t offset, auto& value) {
    if (offset > bytes.size() || bytes.size() - offset < sizeof value) return false;
    std::memcpy(&value, bytes.data() + offset, sizeof value);
    return true;
  };
  Elf64_Ehdr header;
  if (!at(0, header) || std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_ident[EI_DATA] != ELFDATA2LSB) {
    why = "not a 64-bit little-endian ELF file";
    return {};
  }
  std::vector<Elf64_Shdr> sections(header.e_shnum);
  for (std::size_t i = 0; i < sections.size(); ++i)
    if (!at(header.e_shoff + i * sizeof(Elf64_Shdr), sections[i])) {
      why = "truncated section headers";
      return {};
    }
  std::vector<std::string> needed;
  for (const Elf64_Shdr& s : sections) {
    if (s.sh_type != SHT_DYNAMIC || s.sh_link >= sections.size()) continue;
    const Elf64_Shdr& strings = sections[s.sh_link];
    for (std::size_t off = s.sh_offset; off + sizeof(Elf64_Dyn) <= s.sh_offset + s.sh_size; off += sizeof(Elf64_Dyn)) {
      Elf64_Dyn entry;
      if (!at(off, entry) || entry.d_tag == DT_NULL) break;
      if (entry.d_tag == DT_NEEDED && entry.d_un.d_val < strings.sh_size)
        needed.emplace_back(bytes.c_str() + strings.sh_offset + entry.d_un.d_val);
    }
    return needed;
  }
  why = "no dynamic section (a static executable)";
  return {};
}

TEST(RuntimeLoading, NoGpuLibraryIsNeededAtLoadTime) {
  std::string why;
  const std::vector<std::string> needed = needed_libraries(GPUPARANOIA_BINARY, why);
  if (needed.empty()) {
    GTEST_SKIP() << GPUPARANOIA_BINARY << ": " << why;
  }
  EXPECT_NE(std::find_if(needed.begin(), needed.end(), [](const std::string& n) { return n.starts_with("libc.so"); }),
            needed.end())
      << "the dynamic section was not read right";
  for (const std::string& n : needed)
    for (const char* gpu : kGpuLibraries)
      EXPECT_FALSE(n.starts_with(std::string(gpu) + ".")) << n << " is needed at load time";
}

// With every GPU library missing (each variable names a file that is not there), `devices` lists the
// reference devices, names each missing library, and succeeds.
TEST(RuntimeLoading, MissingLibrariesAreReportedNotFatal) {
  const std::string missing = "/nonexistent/gpuparanoia-test";
  std::string env;
  for (const char* api : {"VULKAN", "OPENCL", "EGL", "CUDA"})
    env += fmt::format("GPUPARANOIA_{}_LIBRARY={}/{}.so ", api, missing, api);
  const testing::CliRun run = testing::run_cli("devices", "gpuparanoia-no-gpu-libraries", env);
  EXPECT_EQ(run.exit_status, 0) << run.tail();
  EXPECT_NE(run.output.find("ref:ieee-binary32"), std::string::npos) << run.output;
  for (const char* api : {"VULKAN", "OPENCL", "EGL", "CUDA"})
    EXPECT_NE(run.output.find(fmt::format("{}/{}.so", missing, api)), std::string::npos)
        << "no problem names GPUPARANOIA_" << api << "_LIBRARY's file:\n"
        << run.output;
  for (const char* backend : {"vulkan:", "opencl:", "opengl:", "cuda:"})
    EXPECT_EQ(run.output.find(std::string(backend) + "0"), std::string::npos) << backend << " listed:\n" << run.output;
}

// The library files the dynamic linker loaded while a command ran (glibc's LD_DEBUG=libs), among the
// GPU APIs'.
std::vector<std::string> gpu_libraries_loaded(const std::string& output) {
  std::vector<std::string> loaded;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);)
    if (const auto at = line.find("calling init: "); at != std::string::npos)
      for (const char* gpu : kGpuLibraries)
        if (line.find(std::string("/") + gpu + ".") != std::string::npos) loaded.push_back(line.substr(at + 14));
  return loaded;
}

TEST(RuntimeLoading, CommandsWithoutDevicesLoadNoDriver) {
  // LD_DEBUG works for this program (glibc, not set-uid) where `devices` shows the dynamic linker's
  // trace: checked first, so that a quiet trace below means something.
  const testing::CliRun devices = testing::run_cli("devices", "gpuparanoia-loads-devices", "LD_DEBUG=libs");
  if (devices.output.find("calling init: ") == std::string::npos) {
    GTEST_SKIP() << "no LD_DEBUG trace:\n" << devices.tail();
  }
  // The trace shows a driver's library where `devices` lists its devices.
  const std::vector<std::string> by_devices = gpu_libraries_loaded(devices.output);
  if (devices.output.find("vulkan:0") != std::string::npos) {
    EXPECT_TRUE(std::any_of(by_devices.begin(), by_devices.end(), [](const std::string& f) {
      return f.find("/libvulkan.") != std::string::npos;
    })) << devices.tail();
  }

  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "gpuparanoia-loads-nothing";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "operands.txt") << "3f800000 3f800000\n";
  const testing::CliRun run =
      testing::run_cli("run --device ref:ieee-binary32 --quick --json {json}", "gpuparanoia-loads-run");
  ASSERT_TRUE(run.result.is_object()) << run.tail();
  std::ofstream(dir / "a.json") << run.result.dump();

  const std::string operands = (dir / "operands.txt").string(), result = (dir / "a.json").string();
  for (const std::string& args :
       std::initializer_list<std::string>{fmt::format("model scalar --format binary32 --op add < '{}'", operands),
                                          fmt::format("compare '{}' '{}'", result, result),
                                          fmt::format("table '{}'", result), "selfcheck --quick --seed 1"}) {
    const testing::CliRun r = testing::run_cli(args, "gpuparanoia-loads-nothing-run", "LD_DEBUG=libs");
    EXPECT_EQ(r.exit_status, 0) << args << "\n" << r.tail();
    EXPECT_NE(r.output.find("calling init: "), std::string::npos) << args << ": no trace";
    EXPECT_EQ(gpu_libraries_loaded(r.output), std::vector<std::string>{}) << args;
  }
}

}  // namespace
}  // namespace gp
