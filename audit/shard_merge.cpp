#include "audit/shard_merge.hpp"

#include <fmt/format.h>

#include <set>

#include "audit/json_access.hpp"
#include "audit/report/compare.hpp"
#include "audit/runner.hpp"
#include "audit/validation.hpp"
#include "tests_mma/identify/identify.hpp"

namespace gp::audit {

using nlohmann::json;

namespace {

Error invalid(std::string message) { return Error{std::move(message), ErrorKind::invalid}; }

// Whether a difference between two shards is one of their validations'.
bool in_a_validation(const std::string& where) {
  const auto starts = [&](std::string_view p) { return where.starts_with(p); };
  if (starts("profile.")) return where.find(".validation") != std::string::npos;
  if (starts(std::string(kProfileValidation) + " [")) return true;
  if (starts(std::string(kMmaIdentify) + " [")) {
    const std::size_t close = where.find("] ");
    const std::string field = close == std::string::npos ? "" : where.substr(close + 2);
    return field == "verdict" || field.starts_with("parameters.validation.");
  }
  return false;
}

// Adds the unsigned counts `keys` of `from` into `into`.
void add_counts(json& into, const json& from, std::initializer_list<const char*> keys) {
  for (const char* k : keys)
    if (into.contains(k) && into[k].is_number_unsigned() && from.contains(k) && from[k].is_number_unsigned())
      into[k] = into[k].get<std::uint64_t>() + from[k].get<std::uint64_t>();
}

// The scalar profile validation's finding with the shards' counts: its verdict from the sums.
void merge_profile_validation(json& f, const json& other) {
  json& par = f["parameters"];
  const json& op = member(other, "parameters");
  add_counts(par, op, {"cases", "mismatches"});
  if (par.contains("per_operation") && op.contains("per_operation"))
    for (auto& [name, counts] : par["per_operation"].items())
      add_counts(counts, member(op["per_operation"], name), {"cases", "mismatches"});
  if (f.contains("observations") && other.contains("observations"))
    for (const json& o : other["observations"])
      if (f["observations"].size() < 48) f["observations"].push_back(o);
}

// A verdict with its validation's words ("; 3334 random tiles, 0 mismatches") at `at`, or npos.
std::size_t words_at(const std::string& verdict, const std::string& words) {
  const std::size_t at = verdict.find("; " + words);
  const std::size_t end = at == std::string::npos ? at : at + 2 + words.size();
  return at != std::string::npos && (end == verdict.size() || verdict[end] == ';') ? at + 2 : std::string::npos;
}

// The identification's finding with the shards' validation counts, its verdict saying their sums.
Expected<bool> merge_identification(json& f, const json& other, const std::string& file) {
  json& v = f["parameters"]["validation"];
  const json& w = member(member(other, "parameters"), "validation");
  const std::string ours = f.value("verdict", ""), theirs = string_member(other, "verdict");
  const std::string words = mma::validation_words(integer_member(v, "tiles"), integer_member(v, "mismatches")),
                    their_words = mma::validation_words(integer_member(w, "tiles"), integer_member(w, "mismatches"));
  const std::size_t at = words_at(ours, words), their_at = words_at(theirs, their_words);
  // The verdicts must say the same but for their validations' counts.
  if (at == std::string::npos || their_at == std::string::npos ||
      std::string(ours).erase(at, words.size()) != std::string(theirs).erase(their_at, their_words.size()))
    return invalid(fmt::format("{}: the identification says otherwise: {}", file, theirs));
  add_counts(v, w, {"tiles", "elements", "mismatches", "mismatched_tiles"});
  if (v.contains("seconds") && v["seconds"].is_number())
    v["seconds"] = v["seconds"].get<double>() + number_member(w, "seconds");
  f["verdict"] = std::string(ours).replace(
      at, words.size(), mma::validation_words(integer_member(v, "tiles"), integer_member(v, "mismatches")));
  return true;
}

}  // namespace

Expected<json> merge_shards(const std::vector<std::pair<std::string, json>>& shards) {
  if (shards.empty()) return invalid("no shard to merge");
  const auto shard_of = [](const json& doc) { return member(member(doc, "run"), "shard"); };
  const auto run_without_shard = [](const json& doc) {
    json r = member(doc, "run");
    if (r.is_object()) r.erase("shard");
    return r;
  };
  const json& first = shards.front().second;
  const std::uint64_t count = std::uint64_t(integer_member(shard_of(first), "count"));
  std::set<std::int64_t> indices;
  for (const auto& [file, doc] : shards) {
    const json& s = shard_of(doc);
    if (!s.is_object()) return invalid(file + ": not a shard of a run (run --shard I/N)");
    if (std::uint64_t(integer_member(s, "count")) != count)
      return invalid(
          fmt::format("{}: a shard of {} shards, the first file's of {}", file, integer_member(s, "count"), count));
    if (!indices.insert(integer_member(s, "index")).second)
      return invalid(fmt::format("{}: shard {} is given twice", file, integer_member(s, "index")));
    if (member(doc, "device") != member(first, "device"))
      return invalid(fmt::format("{}: another device than {}'s", file, shards.front().first));
    if (run_without_shard(doc) != run_without_shard(first))
      return invalid(fmt::format("{}: another run than {}'s (suite, tier, seed, probes)", file, shards.front().first));
    for (const Difference& d : compare_results(first, doc).differences)
      if (!in_a_validation(d.where))
        return invalid(fmt::format("{}: the shards disagree beyond their validations: {}: {} in {}, {} here", file,
                                   d.where, d.a, shards.front().first, d.b));
  }
  json merged = first;
  // The result's checks (audit/report/result_check.hpp) made profile an object and findings a list.
  if (!merged.contains("profile")) merged["profile"] = {{"scalar", json::object()}, {"mma", json::array()}};
  json& profile = merged["profile"];
  for (const char* key : {"scalar", "mma"})
    if (!profile.contains(key)) profile[key] = key == std::string_view("mma") ? json::array() : json::object();
  for (std::size_t s = 1; s < shards.size(); ++s) {
    const auto& [file, doc] = shards[s];
    for (auto& [format, unit] : profile["scalar"].items())
      if (unit.is_object() && unit.contains("validation"))
        add_counts(unit["validation"], member(member(member(member(doc, "profile"), "scalar"), format), "validation"),
                   {"cases", "mismatches"});
    json& mma = profile["mma"];
    for (std::size_t i = 0; mma.is_array() && i < mma.size(); ++i)
      if (const json& theirs = member(member(doc, "profile"), "mma");
          mma[i].is_object() && mma[i].contains("validation") && theirs.is_array() && theirs.size() > i)
        add_counts(mma[i]["validation"], member(theirs[i], "validation"), {"tiles", "mismatches", "elements"});
    json& findings = merged["findings"];
    const json& theirs = member(doc, "findings");
    if (theirs.size() != findings.size())
      return invalid(fmt::format("{}: {} findings, the first file {}", file, theirs.size(), findings.size()));
    for (std::size_t i = 0; i < findings.size(); ++i) {
      json& f = findings[i];
      const json& g = theirs[i];
      if (member(f, "probe") != member(g, "probe") || member(f, "format") != member(g, "format") ||
          member(f, "config") != member(g, "config"))
        return invalid(fmt::format("{}: finding {} is another probe's than in the first file", file, i));
      f["duration_s"] = number_member(f, "duration_s") + number_member(g, "duration_s");
      if (f.value("status", "") != "ok") continue;
      if (f["probe"] == kProfileValidation) merge_profile_validation(f, g);
      if (f["probe"] == kMmaIdentify && member(member(f, "parameters"), "validation").is_object())
        if (auto ok = merge_identification(f, g, file); !ok) return ok.error();
    }
    merged["duration_s"] = merged.value("duration_s", 0.0) + number_member(doc, "duration_s");
    merged["complete"] = merged.value("complete", false) && member(doc, "complete") == true;
  }
  // The profile validations' verdicts from their sums.
  for (json& f : merged["findings"]) {
    if (f.value("probe", "") != kProfileValidation || f.value("status", "") != "ok") continue;
    backends::ScalarProfile::Validation v{std::uint64_t(integer_member(f["parameters"], "cases")),
                                          std::uint64_t(integer_member(f["parameters"], "mismatches")),
                                          {}};
    for (const auto& [op, why] : member(f["parameters"], "not_validated", empty_object()).items())
      if (why.is_string()) v.not_validated[op] = why.get<std::string>();
    f["verdict"] = validation_verdict(v);
  }
  json run = run_without_shard(first);
  run["merged_shards"] = {{"count", count}, {"indices", indices}};
  merged["run"] = run;
  return merged;
}

}  // namespace gp::audit
