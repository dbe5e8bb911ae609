// Human-readable reports rendered from a result document (so that a stored JSON renders the same):
// a text report in Paranoia's voice, and Markdown for results/.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "model/summation_tree.hpp"

namespace gp::audit {

// The summation trees a result names (finding_tree), each once, in the order of its findings.
std::vector<model::SummationTree> result_trees(const nlohmann::json& doc);
// The drawings of result_trees(doc) beside a Markdown report (`run --out`): tree i as
// "<stem>-tree<i+1>.dot" and, where notes[i] is empty, ".svg"; else notes[i] says why not.
struct TreeDrawings {
  std::string stem;  // the report's file name without extension: the links are relative
  std::vector<std::string> notes;
};

std::string text_report(const nlohmann::json& doc);
// With drawings, each tree's Mermaid source is followed by its SVG (or the note) and a link to its DOT.
std::string markdown_report(const nlohmann::json& doc, const TreeDrawings* drawings = nullptr);
// One Markdown table of several results side by side (results/README.md): per device and format
// the headline parameters of the inferred profile, per MMA configuration the identified model.
std::string results_table(const std::vector<nlohmann::json>& docs);
// The same headline as lines for a closing summary: "binary32: add rne, mul rne, div rne, fma()
// unfused, a*b+c unfused, subnormals preserve/preserve/preserve, 0 mismatches in 100000".
std::vector<std::string> headline_lines(const nlohmann::json& doc);
// The summation tree a finding names: the tree-shape probe's "tree", or the identified model's when
// its algorithm is "tree"; only one that parses over its configuration's K.
std::optional<model::SummationTree> finding_tree(const nlohmann::json& finding);

}  // namespace gp::audit
