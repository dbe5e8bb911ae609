// Random validation of an MMA model against a device (MMA-Sim section V):
// random tiles, half of them uniform random bit patterns and half random normal values, evaluated
// by the device and by the model, compared element by element. The device works on one batch
// while a second thread checks the previous one against the model.
#pragma once

#include <cstdint>
#include <vector>

#include "audit/finding.hpp"
#include "backends/device.hpp"
#include "model/mma_algorithms.hpp"

namespace gp::mma {

struct Validation {
  std::uint64_t tiles = 0;
  std::uint64_t elements = 0;    // tiles * M * N dot products compared
  std::uint64_t mismatches = 0;  // elements whose output differs from the model's
  std::uint64_t mismatched_tiles = 0;
  std::vector<audit::Observation> examples;  // the first mismatches, inputs c, a, b
  double seconds = 0;
};

// Validates `model` on `tiles` random tiles of the configuration (seeded), keeping up to
// `max_examples` mismatches as observations (prediction "model").
Expected<Validation> validate(backends::Device& device, const backends::MmaConfig& config,
                              const model::DotConfig& model, std::uint64_t tiles, std::uint64_t seed,
                              int max_examples = 16);

}  // namespace gp::mma
