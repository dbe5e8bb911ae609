// The shards of one device's sharded run (`run --shard I/N`, every shard with the same seed) as one
// result (`gpuparanoia merge`): the shards' probes, identification and profile are the same, their
// random validations (the scalar profiles' and the identified MMA models') drew disjoint cases, and
// the merged result holds the first shard's document with every validation's counts summed over the
// shards and its verdict said again from the sums.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "backends/expected.hpp"

namespace gp::audit {

// `shards`: each file's name and result. An Error (ErrorKind::invalid) names the file and what
// keeps it from the others: not a shard, another device or run, a shard given twice, or a
// difference beyond the validations (the shards then disagree on what the device computes).
Expected<nlohmann::json> merge_shards(const std::vector<std::pair<std::string, nlohmann::json>>& shards);

}  // namespace gp::audit
