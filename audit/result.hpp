// The result document of one device's run (JSON schema gpuparanoia-result/1),
// kept up to date as the run goes and written atomically, so that a crash keeps what was done.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "audit/finding.hpp"
#include "backends/device.hpp"
#include "backends/file_write.hpp"

namespace gp::audit {

inline constexpr std::string_view kSchema = "gpuparanoia-result/1";

nlohmann::json to_json(const Finding& f);
nlohmann::json to_json(const backends::DeviceInfo& info, const backends::Capabilities& caps);

// How often a run's document is rewritten while it goes: often enough that a crash loses little,
// seldom enough that a full run (thousands of findings, megabytes of JSON) does not rewrite it
// thousands of times.
inline constexpr std::chrono::seconds kRewriteInterval{5};

class ResultDocument {
 public:
  ResultDocument(const backends::Device& device, std::string tool_version, nlohmann::json run_settings);
  // Appends a finding, and rewrites the files when the last write is older than kRewriteInterval.
  void add(const Finding& f);
  // Sets profile.scalar[format] (before the finding that changed it is added, so that a mirrored
  // document sees both in one event).
  void set_scalar_profile(const std::string& format, const backends::ScalarProfile& p);
  // profile.scalar as the document holds it (a resumed run's), read back.
  Expected<backends::ScalarProfiles> scalar_profiles() const;
  // Replaces the i-th finding added (an MMA probe's, once its verdict is decided); no profile part.
  void replace(std::size_t i, const Finding& f);
  void replace(std::size_t i, nlohmann::json finding);
  std::size_t findings() const { return doc_["findings"].size(); }
  // Whether a finding of `probe` (any probe when empty) has `target` as its format or configuration
  // ("" for neither): a run that resumes a document skips the work it holds.
  bool holds(std::string_view probe, std::string_view target) const { return held(probe, target) != nullptr; }
  // The first such finding, or null.
  const nlohmann::json* held(std::string_view probe, std::string_view target) const;

  // A device's run in a child process (cli/contained_run.hpp) mirrors its document into the
  // parent's: each change is an event, {"add": finding} or {"replace": i, "finding": finding}, with
  // the profile as it stands after it ({"profile": ...} alone at the end).
  void on_change(std::function<void(const nlohmann::json& event)> listener) { listener_ = std::move(listener); }
  // Applies a child's event; an Error for what is not one.
  Expected<bool> apply(const nlohmann::json& event);
  // Takes the findings and profile of the parent's document, to resume its run after a crash.
  void resume(const nlohmann::json& doc);
  // The document's profile, for the MMA entries the identification adds.
  nlohmann::json& profile() { return doc_["profile"]; }
  // Stamps the duration and "complete": true, and rewrites the files (a mirrored document sends its
  // last profile).
  void finish();
  // Stamps the duration, "complete": false and "interrupted": the signal's name ("SIGINT"), and
  // rewrites the files.
  void interrupt(std::string_view signal);
  // Adds a file the document is written to (--json and --out both), and writes it now: an Error
  // naming the path when that fails, so that a run can refuse to start. A target that is not a
  // regular file is only opened now, and written once at the end.
  Expected<bool> write_to(std::filesystem::path path);
  // The first write that failed, if any: the run goes on (its report still reaches stdout, a later
  // write may succeed), and ends with the exit code of a failed write.
  const std::optional<Error>& write_error() const { return write_error_; }
  const nlohmann::json& json() const { return doc_; }

 private:
  struct Output {
    std::filesystem::path path;
    bool in_place;  // not a regular file (/dev/stdout, a pipe): written once, at the end
  };
  void stamp_duration();
  void write_outputs(bool at_end);
  void changed(nlohmann::json event);
  nlohmann::json doc_;
  std::function<void(const nlohmann::json&)> listener_;
  std::chrono::steady_clock::time_point start_, last_write_;
  std::vector<Output> outputs_;
  std::optional<Error> write_error_;
};

// The document as text. Driver text that is not UTF-8 (a build log, a device name) is replaced
// with U+FFFD instead of throwing: a result is never lost to a byte.
std::string dump(const nlohmann::json& doc);

// The result files are written through these (backends/file_write.hpp).
using backends::claim_file;
using backends::write_all_of;
using backends::write_atomically;

// "ref:nvidia-g70" -> "ref-nvidia-g70": a name usable as a file name.
std::string slug(std::string_view id);

}  // namespace gp::audit
