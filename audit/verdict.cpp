#include "audit/verdict.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <map>
#include <set>

namespace gp::audit {
namespace {

// Survivors listed in a finding: every distinct (model, answer), then more up to this many.
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

// The values a key takes among the answers: integers as sorted runs ("3 or 5..9"), then the others.
std::string alternatives(const std::set<std::string>& vs) {
  std::vector<long long> ints;
  std::vector<std::string> others;
  for (const std::string& v : vs) {
    std::size_t used = 0;
    long long x = 0;
    try {
      x = std::stoll(v, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (!v.empty() && used == v.size())
      ints.push_back(x);
    else
      others.push_back(v);
  }
  std::sort(ints.begin(), ints.end());
  std::vector<std::string> runs;
  for (std::size_t i = 0; i < ints.size();) {
    std::size_t k = i;
    while (k + 1 < ints.size() && ints[k + 1] == ints[k] + 1) ++k;
    if (k >= i + 2)
      runs.push_back(fmt::format("{}..{}", ints[i], ints[k]));
    else
      for (std::size_t m = i; m <= k; ++m) runs.push_back(std::to_string(ints[m]));
    i = k + 1;
  }
  runs.insert(runs.end(), others.begin(), others.end());
  return joined(runs, " or ");
}

// The survivors to list: every distinct (model, answer), so that every answer left is on the
// list, then more up to kListed.
nlohmann::json listed_candidates(std::span<const Candidate> survivors) {
  std::set<std::string> seen;
  std::vector<const Candidate*> order;
  for (const Candidate& c : survivors)
    if (seen.insert(c.model + '\n' + c.answer.key()).second) order.push_back(&c);
  for (const Candidate& c : survivors)
    if (order.size() < kListed && std::find(order.begin(), order.end(), &c) == order.end()) order.push_back(&c);
  nlohmann::json listed = nlohmann::json::array();
  for (const Candidate* c : order)
    listed.push_back({{"model", c->model}, {"parameters", c->parameters}, {"answer", c->answer.fields()}});
  return listed;
}

// No survivor: what the closest candidates got wrong.
std::string unexplained_verdict(const Question& q, std::span<const Miss> misses) {
  // The closest may reproduce this probe's outputs and fail others of the same unit (an MMA
  // configuration's candidates answer for all its probes' observations together).
  const bool these_fit = std::any_of(misses.begin(), misses.end(), [](const Miss& m) { return m.wrong == 0; });
  std::string verdict = q.head + (these_fit ? ": no candidate of the model reproduces every output of the unit"
                                            : ": no candidate of the model reproduces these outputs");
  // The three closest that read differently: candidates that differ only where the outputs do not
  // look (a parameter the description leaves out) would say the same thing thrice.
  std::vector<std::string> closest;
  for (std::size_t i = 0; i < misses.size() && closest.size() < 3; ++i) {
    std::string m = misses[i].wrong
                        ? fmt::format("{} ({} wrong, first {})", misses[i].model, misses[i].wrong, misses[i].first)
                        : fmt::format("{} (right here, wrong on other outputs of the unit)", misses[i].model);
    if (std::find(closest.begin(), closest.end(), m) == closest.end()) closest.push_back(std::move(m));
  }
  if (!closest.empty()) verdict += "; closest: " + joined(closest, "; ");
  return verdict;
}

// Several applicable answers: what they share and where they differ, and the models for which the
// question does not apply.
std::string inconclusive_verdict(const Question& q, const std::map<std::string, Answer>& answers,
                                 const std::vector<Candidate>& inapplicable) {
  std::vector<std::string> shared, differ;
  std::map<std::string, std::set<std::string>> values;
  std::set<std::string> keys;
  for (const auto& [_, answer] : answers) {
    const nlohmann::json& a = answer.fields();
    if (!a.is_object()) {
      values["answer"].insert(value_text(a));
      keys.insert("answer");
      continue;
    }
    for (const auto& [k, v] : a.items()) keys.insert(k);
  }
  for (const std::string& k : keys) {
    if (k == "answer") continue;
    for (const auto& [_, answer] : answers) {
      const nlohmann::json& a = answer.fields();
      values[k].insert(a.is_object() && a.contains(k) ? value_text(a[k]) : "none");
    }
  }
  for (const std::string& k : keys) {
    const auto& vs = values[k];
    if (vs.size() == 1)
      shared.push_back(k + " " + *vs.begin());
    else
      differ.push_back(k + " (" + alternatives(vs) + ")");
  }
  std::string verdict = fmt::format("inconclusive: {}: the candidates that reproduce these outputs", q.about);
  if (!shared.empty()) verdict += " agree on " + joined(shared);
  if (!differ.empty()) verdict += std::string(shared.empty() ? "" : " but") + " differ in " + joined(differ, "; ");
  if (!inapplicable.empty())
    verdict += fmt::format("{}and for some ({}) the question does not apply", differ.empty() ? "; " : "; ",
                           models_of(inapplicable));
  return verdict;
}

}  // namespace

std::string render(const nlohmann::json& fields) {
  if (!fields.is_object()) return value_text(fields);
  std::vector<std::string> parts;
  for (const auto& [k, v] : fields.items()) parts.push_back(k + " " + value_text(v));
  return joined(parts);
}

Judgement judge(const Question& q, std::span<const Candidate> survivors, std::span<const Miss> misses) {
  Judgement j;
  j.survivors = survivors.size();
  j.candidates = listed_candidates(survivors);
  if (survivors.empty()) {
    j.conclusion = Conclusion::unexplained;
    j.verdict = unexplained_verdict(q, misses);
    return j;
  }
  std::map<std::string, Answer> answers;  // distinct answers, by their fields
  std::vector<Candidate> inapplicable;
  for (const Candidate& c : survivors) {
    if (!c.answer.applies())
      inapplicable.push_back(c);
    else
      answers.emplace(c.answer.key(), c.answer);
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
  j.conclusion = Conclusion::inconclusive;
  j.verdict = inconclusive_verdict(q, answers, inapplicable);
  return j;
}

void apply(const Judgement& j, Finding& f) {
  f.verdict = j.verdict;
  static constexpr const char* kNames[] = {"stated", "inconclusive", "not applicable", "unexplained"};
  f.parameters["conclusion"] = kNames[int(j.conclusion)];
  f.parameters["candidates"] = j.candidates;
  f.parameters["survivors"] = j.survivors;
  if (j.conclusion == Conclusion::stated && j.answer.fields().is_object())
    for (const auto& [k, v] : j.answer.fields().items()) f.parameters[k] = v;
  f.judgement = j;
}

}  // namespace gp::audit
