// The host CPU a result records, and the comparison the regression test skips by: like with like.
#include <gtest/gtest.h>

#include <algorithm>

#include "audit/host_cpu.hpp"
#include "audit/result.hpp"
#include "unittests/reference_devices.hpp"

namespace gp::audit {
namespace {

using nlohmann::json;

TEST(HostCpu, ReadsThisMachine) {
  const HostCpu& h = host_cpu();
  EXPECT_FALSE(h.arch.empty());
  EXPECT_TRUE(std::is_sorted(h.features.begin(), h.features.end()));
#if defined(__x86_64__)
  // The features kept agree with the compiler's own detection; SSE2, which every x86-64 CPU has,
  // is not one of them.
  EXPECT_FALSE(h.model.empty());
  auto has = [&](const char* f) { return std::find(h.features.begin(), h.features.end(), f) != h.features.end(); };
  EXPECT_EQ(has("fma"), bool(__builtin_cpu_supports("fma")));
  EXPECT_EQ(has("avx2"), bool(__builtin_cpu_supports("avx2")));
  EXPECT_EQ(has("avx512f"), bool(__builtin_cpu_supports("avx512f")));
  EXPECT_FALSE(has("sse2"));
#endif
}

TEST(HostCpu, EveryResultRecordsIt) {
  ResultDocument doc(testing::reference_device("nvidia-g70"), "test", json::object());
  json host = doc.json()["host"];
  EXPECT_EQ(host.value("hostname", ""), host_name());  // the node of a fleet
  host.erase("hostname");
  EXPECT_EQ(host, to_json(host_cpu()));
  EXPECT_EQ(host_differs(doc.json()["host"]), "");
}

TEST(HostCpu, OtherFeaturesAreNotComparable) {
  json there = to_json(host_cpu());
  there["cpu"] = "another model with the same features";
  EXPECT_EQ(host_differs(there), "") << "the model name is not compared";
  there["features"].push_back("avx512_fp16_imaginary");
  const std::string why = host_differs(there);
  EXPECT_NE(why.find("avx512_fp16_imaginary"), std::string::npos) << why;
  there = to_json(host_cpu());
  there["arch"] = "riscv64";
  EXPECT_NE(host_differs(there).find("riscv64"), std::string::npos);
  EXPECT_NE(host_differs(json()), "") << "a result without a host is not comparable";
  EXPECT_NE(host_differs(json{{"cpu", "x"}}), "");
}

}  // namespace
}  // namespace gp::audit
