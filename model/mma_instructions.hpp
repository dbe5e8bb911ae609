// The MMA instruction table: every instruction of MMA-Sim's Tables III (NVIDIA, Volta to RTX
// Blackwell) and IV (AMD CDNA2, CDNA3), and AMD CDNA1's from MMA-Sim's later code, with its shape,
// formats, algorithm and parameters; beside them AMD's v_dot2_f32_f16 of CDNA2 and CDNA4 (K = 2)
// and the consumer units of RDNA 3, 3.5 and 4 (v_dot2, WMMA: the ocfda algorithm).
//
// Names (as the command line and the JSON write them): "<arch>:<name>", arch one of volta turing ampere
// ada hopper blackwell rtx-blackwell cdna1 cdna2 cdna3 cdna4 rdna3 rdna3.5 rdna4, the name as written
// in the tables with the f8/f6/f4 types spelled out (hopper:HMMA.16816.F32, ada:QMMA.16832.F32.E4M3.E4M3,
// hopper:QGMMA.64x8x32.F32.E5M2.E5M2, cdna3:v_mfma_f32_32x32x8_f16). Blackwell's tcgen05
// instructions carry their types in a descriptor, not in the SASS name: they are named here with
// the HGMMA/QMMA suffixes (blackwell:UTCHMMA.F32.BF16, blackwell:UTCQMMMA.F32.E4M3.E2M1,
// blackwell:UTCQMMMA.SF.F32.E2M1.E2M1.E8, blackwell:UTCOMMA.4X.F32.E2M1.E2M1.UE4M3).
//
// Each entry's `notes` says where every parameter comes from: the papers, the parameters on which
// MMA-Sim's later versions and the models of Khattak and Mikaitis ("Accurate Models of NVIDIA Tensor
// Cores", 2025) agree (block sizes, alignment floors), assumptions (marked so), and for the
// instructions the captured hardware data of tests_mma/golden covers, what that data forces.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "model/mma_algorithms.hpp"

namespace gp::model {

struct MmaInstruction {
  std::string arch;  // "hopper"
  std::string name;  // "HMMA.16816.F32"
  int m, n, k;       // shape; tcgen05 (UTC*) instructions take many M and N: the smallest is given
  DotConfig config;  // formats, algorithm and parameters of one output element
  std::string notes;
  // Whether the row is MMA-Sim's (its tables or code); the others' notes name their sources.
  bool from_mma_sim = true;
  // Not a native instruction: what runs instead, modelled as such, is in the notes (Hopper's fp8
  // mma.sync).
  bool emulated = false;
  std::string id() const { return arch + ":" + name; }
  // "MMA-Sim's hopper:HMMA.16816.F32", "the table's rdna3.5:v_dot2_f32_f16": the row as reports name it.
  std::string row_name() const { return (from_mma_sim ? "MMA-Sim's " : "the table's ") + id(); }
};

// The architectures, in the order above.
std::span<const std::string_view> mma_architectures();

// Every instruction, grouped by architecture in table order. Built once, never changed.
std::span<const MmaInstruction> all_mma_instructions();

// Looks an instruction up by "<arch>:<name>" (exact spelling); nullptr when unknown.
const MmaInstruction* find_mma_instruction(std::string_view id);

}  // namespace gp::model
