// The MMA probe families; each file of tests_mma/ adds its probes to the registry.
#pragma once

#include <string>
#include <vector>

#include "audit/probe.hpp"
#include "tests_mma/questions.hpp"
#include "tests_mma/support.hpp"

namespace gp::mma {

// The fixed part of every MMA probe: id, title, source and the question it asks of the model
// (questions.hpp); it applies to any configuration whose formats the model knows.
class ProbeBase : public audit::MmaProbe {
 public:
  ProbeBase(std::string id, std::string title, std::string source, MmaQuestion question)
      : id_(std::move(id)), title_(std::move(title)), source_(std::move(source)), question_(std::move(question)) {}
  std::string_view id() const override { return id_; }
  std::string_view title() const override { return title_; }
  std::string_view source() const override { return source_; }
  bool applies(const MmaConfig& cfg) const override { return usable(cfg); }
  const MmaQuestion* question() const override { return &question_; }

 private:
  std::string id_, title_, source_;
  MmaQuestion question_;
};

void add_mmasim_probes(std::vector<const audit::MmaProbe*>& out);    // mmasim.cpp
void add_specials_probes(std::vector<const audit::MmaProbe*>& out);  // specials.cpp
void add_fasi_probes(std::vector<const audit::MmaProbe*>& out);      // fasi.cpp
void add_valpey_probes(std::vector<const audit::MmaProbe*>& out);    // valpey.cpp

}  // namespace gp::mma
