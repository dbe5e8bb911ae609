#include "audit/verdict.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace gp::audit {
namespace {

// Survivors listed in a finding: one per distinct (model, answer) first, then more up to this many.
constexpr std::size_t kListed = 24;

std::string value_text(const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

std::string joined(const std::vector<std::string>& v, std::string_view sep = ", ") {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? std::string(sep) : "") + v[i];
  return out;
}

// Distinct model names, in order of first appearance, at most four (then "...").
std::string models_of(std::span<const Candidate> cs) {
  std::vector<std::string> names;
  for (const Candidate& c : cs)
    if (std::find(names.begin(), names.end(), c.model) == names.end()) names.push_back(c.model);
  if (names.size() > 4) {
    names.resize(4);
    names.push_back("...");
  }
  return joined(names);
}

}  // namespace

std::string render(const nlohmann::json& answer) {
  if (!answer.is_object()) return value_text(answer);
  std::vector<std::string> parts;
  for (const auto& [k, v] : answer.items()) parts.push_back(k + " " + value_text(v));
  return joined(parts);
}

Judgement judge(const Question& q, std::span<const Candidate> survivors, std::span<const Miss> misses) {
  Judgement j;
  // The survivors to list: every distinct (model, answer) first.
  {
    std::set<std::string> seen;
    std::vector<const Candidate*> order;
    for (const Candidate& c : survivors)
      if (seen.insert(c.model + '\n' + c.answer.dump()).second) order.push_back(&c);
    for (const Candidate& c : survivors)
      if (order.size() < kListed && std::find(order.begin(), order.end(), &c) == order.end()) order.push_back(&c);
    for (std::size_t i = 0; i < order.size() && i < kListed; ++i)
      j.candidates.push_back({{"model", order[i]->model}, {"parameters", order[i]->parameters}, {"answer", order[i]->answer}});
  }
  if (survivors.empty()) {
    j.conclusion = Conclusion::unexplained;
    j.verdict = q.head + ": no candidate of the model reproduces these outputs";
    std::vector<std::string> closest;
    for (std::size_t i = 0; i < misses.size() && i < 3; ++i)
      closest.push_back(fmt::format("{} ({} wrong, first {})", misses[i].model, misses[i].wrong, misses[i].first));
    if (!closest.empty()) j.verdict += "; closest: " + joined(closest, "; ");
    return j;
  }
  std::map<std::string, nlohmann::json> answers;  // distinct non-null answers
  std::vector<Candidate> inapplicable;
  for (const Candidate& c : survivors) {
    if (c.answer.is_null()) inapplicable.push_back(c);
    else answers.emplace(c.answer.dump(), c.answer);
  }
  if (answers.empty()) {
    j.conclusion = Conclusion::not_applicable;
    j.verdict = fmt::format("not applicable: {} is not a property of the units that reproduce these outputs ({})",
                            q.about, models_of(survivors));
    return j;
  }
  if (answers.size() == 1 && inapplicable.empty()) {
    j.conclusion = Conclusion::stated;
    j.answer = answers.begin()->second;
    j.verdict = q.head + ": " + q.say(j.answer);
    return j;
  }
  // What the applicable answers share and where they differ.
  j.conclusion = Conclusion::inconclusive;
  std::vector<std::string> shared, differ;
  std::map<std::string, std::set<std::string>> values;
  std::set<std::string> keys;
  for (const auto& [_, a] : answers) {
    if (!a.is_object()) {
      values["answer"].insert(value_text(a));
      keys.insert("answer");
      continue;
    }
    for (const auto& [k, v] : a.items()) keys.insert(k);
  }
  for (const std::string& k : keys) {
    if (k == "answer") continue;
    for (const auto& [_, a] : answers) values[k].insert(a.is_object() && a.contains(k) ? value_text(a[k]) : "none");
  }
  for (const std::string& k : keys) {
    const auto& vs = values[k];
    std::vector<std::string> list(vs.begin(), vs.end());
    if (list.size() == 1) shared.push_back(k + " " + list.front());
    else differ.push_back(k + " (" + joined(list, " or ") + ")");
  }
  j.verdict = fmt::format("inconclusive: {}: the candidates that reproduce these outputs", q.about);
  if (!shared.empty()) j.verdict += " agree on " + joined(shared);
  if (!differ.empty()) j.verdict += std::string(shared.empty() ? "" : " but") + " differ in " + joined(differ, "; ");
  if (!inapplicable.empty())
    j.verdict += fmt::format("{}and for some ({}) the question does not apply", differ.empty() ? "; " : "; ",
                             models_of(inapplicable));
  return j;
}

void apply(const Judgement& j, Finding& f) {
  f.verdict = j.verdict;
  static constexpr const char* kNames[] = {"stated", "inconclusive", "not applicable", "unexplained"};
  f.parameters["conclusion"] = kNames[int(j.conclusion)];
  f.parameters["candidates"] = j.candidates;
  if (j.conclusion == Conclusion::stated && j.answer.is_object())
    for (const auto& [k, v] : j.answer.items()) f.parameters[k] = v;
}

}  // namespace gp::audit
