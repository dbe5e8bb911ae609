// The judgement of candidate models (audit/verdict.hpp), on hand-made candidates: each conclusion,
// the wording of what the survivors share and where they differ, and the listing of every answer.
#include <gtest/gtest.h>

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "audit/verdict.hpp"

namespace gp {
namespace {

using nlohmann::json;

// An answer in a type of its own, as the probes' are (audit/answer.hpp).
struct Carries {
  std::optional<int> bits;
};
json answer_fields(const Carries& c) {
  return {{"carry_bits", c.bits ? json(*c.bits) : json(nullptr)}, {"rounding", "rz"}};
}
std::string say_carries(const Carries& c) { return "carry bits " + (c.bits ? std::to_string(*c.bits) : "none"); }

const audit::Question kCarries{"CARRIES", "the carry-out bits", audit::typed(say_carries)};

audit::Candidate carry(int bits, std::string model = "fda") {
  return {model, {{"F", bits}}, audit::Answer(Carries{bits})};
}

TEST(Judge, OneAnswerIsStated) {
  const std::vector<audit::Candidate> c = {carry(3), carry(3, "fdrda")};
  const audit::Judgement j = audit::judge(kCarries, c);
  EXPECT_EQ(j.conclusion, audit::Conclusion::stated);
  EXPECT_EQ(j.verdict, "CARRIES: carry bits 3");
  audit::Finding f;
  audit::apply(j, f);
  EXPECT_EQ(f.parameters["conclusion"], "stated");
  EXPECT_EQ(f.parameters["carry_bits"], 3);
  EXPECT_EQ(f.parameters["candidates"].size(), 2u);
  EXPECT_EQ(f.parameters["survivors"], 2);
  // The finding keeps the judgement typed, for the probe's own code after it.
  ASSERT_TRUE(f.judgement);
  EXPECT_EQ(f.judgement->conclusion, audit::Conclusion::stated);
  EXPECT_EQ(f.judgement->answer.as<Carries>().bits, 3);
}

// A long list of survivors: every distinct model and answer is listed, then more up to 24, and the
// count says how many there were.
TEST(Judge, ListsSomeSurvivorsAndCountsAll) {
  std::vector<audit::Candidate> c;
  for (int i = 0; i < 40; ++i) c.push_back(carry(3, i % 2 ? "fdrda" : "fda"));
  for (int b : {5, 6}) c.push_back(carry(b));
  const audit::Judgement j = audit::judge(kCarries, c);
  EXPECT_EQ(j.conclusion, audit::Conclusion::inconclusive);
  audit::Finding f;
  audit::apply(j, f);
  EXPECT_EQ(f.parameters["survivors"], 42);
  EXPECT_EQ(f.parameters["candidates"].size(), 24u);
  std::set<std::string> listed;
  for (const auto& x : f.parameters["candidates"]) listed.insert(x["model"].get<std::string>() + x["answer"].dump());
  EXPECT_EQ(listed.size(), 4u);  // fda 3, fdrda 3, fda 5, fda 6
}

// Integer values that differ read as runs; what every answer shares is named.
TEST(Judge, SeveralAnswersAreInconclusiveWithRanges) {
  std::vector<audit::Candidate> c;
  for (int b : {3, 5, 6, 7, 8, 11}) c.push_back(carry(b));
  c.push_back({"fda", {}, audit::Answer(Carries{std::nullopt})});
  const audit::Judgement j = audit::judge(kCarries, c);
  EXPECT_EQ(j.conclusion, audit::Conclusion::inconclusive);
  EXPECT_EQ(j.verdict,
            "inconclusive: the carry-out bits: the candidates that reproduce these outputs agree on rounding rz but "
            "differ in carry_bits (3 or 5..8 or 11 or null)");
}

TEST(Judge, NoApplicableAnswerIsNotApplicable) {
  const std::vector<audit::Candidate> c = {{"fma chain", {}, audit::Answer()}};
  const audit::Judgement j = audit::judge(kCarries, c);
  EXPECT_EQ(j.conclusion, audit::Conclusion::not_applicable);
  EXPECT_EQ(j.verdict.rfind("not applicable: the carry-out bits is not a property", 0), 0u) << j.verdict;
}

// The closest three that read differently: the same text twice is said once.
TEST(Judge, NoSurvivorNamesTheClosest) {
  const std::vector<audit::Miss> m = {{"fda F 3", 2, "1 + 2^-24: device 3f800000, model 3f800001"},
                                      {"fda F 3", 2, "1 + 2^-24: device 3f800000, model 3f800001"}};
  const audit::Judgement j = audit::judge(kCarries, {}, m);
  EXPECT_EQ(j.conclusion, audit::Conclusion::unexplained);
  EXPECT_EQ(j.verdict,
            "CARRIES: no candidate of the model reproduces these outputs; closest: fda F 3 (2 wrong, first "
            "1 + 2^-24: device 3f800000, model 3f800001)");
}

// A closest candidate that reproduces this probe's outputs failed others of the unit: the verdict
// says so, and claims nothing false of these outputs.
TEST(Judge, NoSurvivorButSomeReproduceTheseOutputs) {
  const std::vector<audit::Miss> m = {{"tree rne", 0, ""},
                                      {"fda F 3", 2, "1 + 2^-24: device 3f800000, model 3f800001"}};
  const audit::Judgement j = audit::judge(kCarries, {}, m);
  EXPECT_EQ(j.conclusion, audit::Conclusion::unexplained);
  EXPECT_EQ(j.verdict,
            "CARRIES: no candidate of the model reproduces every output of the unit; closest: tree rne (right "
            "here, wrong on other outputs of the unit); fda F 3 (2 wrong, first 1 + 2^-24: device 3f800000, "
            "model 3f800001)");
}

// Every distinct answer is listed, however many there are: a reader (or a test) finds each one.
TEST(Judge, EveryAnswerLeftIsListed) {
  std::vector<audit::Candidate> c;
  for (int b = 0; b < 60; ++b) c.push_back(carry(b));
  const audit::Judgement j = audit::judge(kCarries, c);
  std::set<int> listed;
  for (const json& x : j.candidates) listed.insert(x["answer"]["carry_bits"].get<int>());
  EXPECT_EQ(listed.size(), 60u);
  EXPECT_NE(j.verdict.find("carry_bits (0..59)"), std::string::npos) << j.verdict;
}

}  // namespace
}  // namespace gp
