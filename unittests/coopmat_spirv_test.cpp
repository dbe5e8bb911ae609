// The cooperative-matrix SPIR-V emitter (backends/vulkan/coopmat_spirv.hpp). Every module is checked
// against the structural rules the emitter relies on, and with spirv-val where the installed
// SPIRV-Tools knows every capability the module declares; each test prints which check it ran and
// asserts it. SPIRV-Tools 2023.1 (Debian 12) predates SPV_KHR_cooperative_matrix, SPV_KHR_bfloat16
// and SPV_EXT_float8, so there the frame every module shares is validated by spirv-val inside an
// ordinary compute shader made by the same code, and the structural check is itself tested: it must
// agree with spirv-val on valid modules and reject broken ones.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include <spirv-tools/libspirv.hpp>

#include "backends/vulkan/coopmat_spirv.hpp"
#include "unittests/newer_spirv_val.hpp"

namespace gp::backends::vulkan {
namespace {

constexpr spv_target_env kTargetEnv = SPV_ENV_VULKAN_1_2;  // SPIR-V 1.5, kCoopmatSpirvVersion

// The formats with a SPIR-V type; coopmat_module rejects every other.
const model::Format* const kSpirvFormats[] = {&model::binary16, &model::binary32, &model::binary64,
                                              &model::bfloat16, &model::e4m3,     &model::e5m2};

// Capabilities, FP encodings and opcodes of the three extensions, by name, beside the values the
// emitter writes: SPIRV-Tools that knows a name must assemble it to the same value. (Matrix uses and
// layouts are operands given by <id>, so the assembler cannot check theirs.)
struct Named {
  const char* assembly;  // a line that SPIRV-Tools assembles into one instruction
  Word value;            // the emitter's value of the named enumerant
  std::size_t word;      // where it lands in that instruction (0: the opcode)
};
const Named kExtensionNames[] = {
    {"OpCapability CooperativeMatrixKHR", spvx::CapabilityCooperativeMatrixKHR, 1},
    {"OpCapability BFloat16TypeKHR", spvx::CapabilityBFloat16TypeKHR, 1},
    {"OpCapability BFloat16DotProductKHR", spvx::CapabilityBFloat16DotProductKHR, 1},
    {"OpCapability BFloat16CooperativeMatrixKHR", spvx::CapabilityBFloat16CooperativeMatrixKHR, 1},
    {"OpCapability Float8EXT", spvx::CapabilityFloat8EXT, 1},
    {"OpCapability Float8CooperativeMatrixEXT", spvx::CapabilityFloat8CooperativeMatrixEXT, 1},
    {"%f = OpTypeFloat 16 BFloat16KHR", spvx::FPEncodingBFloat16KHR, 3},
    {"%f = OpTypeFloat 8 Float8E4M3EXT", spvx::FPEncodingFloat8E4M3EXT, 3},
    {"%f = OpTypeFloat 8 Float8E5M2EXT", spvx::FPEncodingFloat8E5M2EXT, 3},
    {"%m = OpTypeCooperativeMatrixKHR %f %s %r %c %u", spvx::OpTypeCooperativeMatrixKHR, 0},
    {"%m = OpCooperativeMatrixLoadKHR %t %p %l %s", spvx::OpCooperativeMatrixLoadKHR, 0},
    {"OpCooperativeMatrixStoreKHR %p %o %l %s", spvx::OpCooperativeMatrixStoreKHR, 0},
    {"%d = OpCooperativeMatrixMulAddKHR %t %a %b %c", spvx::OpCooperativeMatrixMulAddKHR, 0},
    {"%n = OpCooperativeMatrixLengthKHR %t %m", spvx::OpCooperativeMatrixLengthKHR, 0},
};

// ---------------------------------------------------------------------------------------------
// SPIRV-Tools

struct Tools {
  spvtools::SpirvTools tools{kTargetEnv};
  std::string messages;
  Tools() {
    tools.SetMessageConsumer([this](spv_message_level_t, const char*, const spv_position_t&, const char* m) {
      messages += m;
      messages += '\n';
    });
  }
  std::optional<std::vector<Word>> assemble(const std::string& text) {
    std::vector<Word> words;
    messages.clear();
    if (!tools.Assemble(text, &words, SPV_TEXT_TO_BINARY_OPTION_NONE)) return std::nullopt;
    return words;
  }
  bool validate(const std::vector<Word>& words) {
    messages.clear();
    return tools.Validate(words);
  }
  std::optional<std::string> disassemble(const std::vector<Word>& words) {
    std::string text;
    messages.clear();
    if (!tools.Disassemble(words, &text, SPV_BINARY_TO_TEXT_OPTION_NONE)) return std::nullopt;
    return text;
  }
};

Tools& tools() {
  static Tools t;
  return t;
}

// Whether the installed SPIRV-Tools knows a capability, by its name.
bool tools_know_capability(Word capability) {
  static std::map<Word, bool> known;
  if (auto it = known.find(capability); it != known.end()) return it->second;
  std::optional<std::string> name;
  for (const Named& n : kExtensionNames)
    if (std::string_view(n.assembly).starts_with("OpCapability ") && n.value == capability) name = n.assembly;
  // Core capabilities (Shader, Float16, ...) predate any SPIRV-Tools that knows SPIR-V 1.5.
  return known[capability] = !name || tools().assemble(*name + "\n").has_value();
}

// ---------------------------------------------------------------------------------------------
// The structural check: a decoded module and the rules the emitter relies on.

struct Instruction {
  Word opcode = 0;
  Id type = 0, result = 0;     // 0 when the instruction has none
  std::vector<Word> operands;  // the words after the result type and result id
};

// What the check knows of each instruction the emitter writes: result type and result id, then the
// operands: i an id defined before, f an id that may be defined later (the forward references of
// SPIR-V 2.4: entry point, execution modes, decorations, branch targets), l a literal word, s a
// literal string. A kind followed by ? is optional, by * repeats (zero or more times).
struct Grammar {
  Word opcode;
  bool type, result;
  const char* operands;
  int section;  // of the logical layout (SPIR-V 2.4); 10: inside functions
};
const Grammar kGrammar[] = {
    {spv::OpCapability, false, false, "l", 1},
    {spv::OpExtension, false, false, "s", 2},
    {spv::OpMemoryModel, false, false, "ll", 4},
    {spv::OpEntryPoint, false, false, "lfsf*", 5},
    {spv::OpExecutionMode, false, false, "fll*", 6},
    {spv::OpDecorate, false, false, "fll*", 8},
    {spv::OpMemberDecorate, false, false, "flll*", 8},
    {spv::OpTypeVoid, false, true, "", 9},
    {spv::OpTypeBool, false, true, "", 9},
    {spv::OpTypeInt, false, true, "ll", 9},
    {spv::OpTypeFloat, false, true, "ll?", 9},
    {spv::OpTypeVector, false, true, "il", 9},
    {spv::OpTypeRuntimeArray, false, true, "i", 9},
    {spv::OpTypeStruct, false, true, "i*", 9},
    {spv::OpTypePointer, false, true, "li", 9},
    {spv::OpTypeFunction, false, true, "ii*", 9},
    {spvx::OpTypeCooperativeMatrixKHR, false, true, "iiiii", 9},
    {spv::OpConstant, true, true, "l", 9},
    {spv::OpVariable, true, true, "li?", 9},
    {spv::OpFunction, true, true, "li", 10},
    {spv::OpFunctionEnd, false, false, "", 10},
    {spv::OpLabel, false, true, "", 10},
    {spv::OpLoad, true, true, "il*", 10},
    {spv::OpStore, false, false, "iil*", 10},
    {spv::OpAccessChain, true, true, "ii*", 10},
    {spv::OpCompositeExtract, true, true, "il*", 10},
    {spv::OpIAdd, true, true, "ii", 10},
    {spv::OpIMul, true, true, "ii", 10},
    {spv::OpULessThan, true, true, "ii", 10},
    {spv::OpFAdd, true, true, "ii", 10},
    {spv::OpFMul, true, true, "ii", 10},
    {spv::OpFConvert, true, true, "i", 10},
    {spv::OpSelectionMerge, false, false, "fl", 10},
    {spv::OpBranchConditional, false, false, "iffl*", 10},
    {spv::OpBranch, false, false, "f", 10},
    {spv::OpReturn, false, false, "", 10},
    {spvx::OpCooperativeMatrixLoadKHR, true, true, "iii?l*", 10},
    {spvx::OpCooperativeMatrixStoreKHR, false, false, "iiii?l*", 10},
    {spvx::OpCooperativeMatrixMulAddKHR, true, true, "iiil?", 10},
};

const Grammar* grammar(Word opcode) {
  for (const Grammar& g : kGrammar)
    if (g.opcode == opcode) return &g;
  return nullptr;
}

bool is_type(Word opcode) {
  return (opcode >= spv::OpTypeVoid && opcode <= spv::OpTypeForwardPointer) ||
         opcode == spvx::OpTypeCooperativeMatrixKHR;
}

bool is_terminator(Word opcode) {
  return opcode == spv::OpBranch || opcode == spv::OpBranchConditional || opcode == spv::OpReturn;
}

std::string decode_string(std::span<const Word> words) {
  std::string s;
  for (Word w : words)
    for (int byte = 0; byte < 4; ++byte) {
      const char c = static_cast<char>((w >> (8 * byte)) & 0xFF);
      if (c == 0) return s;
      s += c;
    }
  return s;
}

class Module {
 public:
  Word version = 0, bound = 0;
  std::vector<Instruction> instructions;
  std::vector<std::string> violations;

  explicit Module(std::span<const Word> words) { decode(words); }

  const Instruction* defining(Id id) const {
    auto it = definitions_.find(id);
    return it == definitions_.end() ? nullptr : &instructions[it->second];
  }
  std::vector<const Instruction*> all(Word opcode) const {
    std::vector<const Instruction*> v;
    for (const Instruction& i : instructions)
      if (i.opcode == opcode) v.push_back(&i);
    return v;
  }
  // The literals of every `decoration` on `target` (OpDecorate), one vector per decoration.
  std::vector<std::vector<Word>> decorations(Id target, Word decoration) const {
    std::vector<std::vector<Word>> v;
    for (const Instruction* d : all(spv::OpDecorate))
      if (d->operands[0] == target && d->operands[1] == decoration)
        v.emplace_back(d->operands.begin() + 2, d->operands.end());
    return v;
  }
  std::vector<std::vector<Word>> member_decorations(Id structure, Word member, Word decoration) const {
    std::vector<std::vector<Word>> v;
    for (const Instruction* d : all(spv::OpMemberDecorate))
      if (d->operands[0] == structure && d->operands[1] == member && d->operands[2] == decoration)
        v.emplace_back(d->operands.begin() + 3, d->operands.end());
    return v;
  }
  std::optional<Word> constant(Id id) const {
    const Instruction* c = defining(id);
    if (!c || c->opcode != spv::OpConstant) return std::nullopt;
    return c->operands[0];
  }
  // The variable the pointer type of `variable` points to, when it is an OpVariable.
  const Instruction* pointee_of_variable(Id variable) const {
    const Instruction* v = defining(variable);
    if (!v || v->opcode != spv::OpVariable) return nullptr;
    const Instruction* p = defining(v->type);
    return p && p->opcode == spv::OpTypePointer ? defining(p->operands[1]) : nullptr;
  }
  std::set<Word> capabilities() const {
    std::set<Word> s;
    for (const Instruction* c : all(spv::OpCapability)) s.insert(c->operands[0]);
    return s;
  }
  std::set<std::string> extensions() const {
    std::set<std::string> s;
    for (const Instruction* e : all(spv::OpExtension)) s.insert(decode_string(e->operands));
    return s;
  }
  // The byte size of a scalar numeric type, 0 for anything else.
  Word scalar_bytes(Id type) const {
    const Instruction* t = defining(type);
    return t && (t->opcode == spv::OpTypeFloat || t->opcode == spv::OpTypeInt) ? t->operands[0] / 8 : 0;
  }

 private:
  std::map<Id, std::size_t> definitions_;

  void fail(std::string s) { violations.push_back(std::move(s)); }
  void decode(std::span<const Word> words);
  void check_operands(const Instruction& inst, const Grammar& g, std::span<const Word> words, std::set<Id>& defined,
                      std::vector<Id>& forward);
};

void Module::decode(std::span<const Word> words) {
  if (words.size() < 5) return fail("shorter than the 5-word header");
  if (words[0] != spv::MagicNumber) fail("bad magic number");
  version = words[1];
  bound = words[3];
  if (words[4] != 0) fail("schema word is not 0");
  std::set<Id> defined;
  std::vector<Id> forward;
  std::set<std::vector<Word>> declarations;
  int section = 0;
  bool in_function = false, in_block = false;
  std::size_t entry_points = 0, memory_models = 0;
  for (std::size_t at = 5; at < words.size();) {
    const Word count = words[at] >> spv::WordCountShift, opcode = words[at] & spv::OpCodeMask;
    if (count == 0 || at + count > words.size())
      return fail("instruction at word " + std::to_string(at) + ": word count " + std::to_string(count) +
                  " overruns the module");
    const Grammar* g = grammar(opcode);
    if (!g) return fail("opcode " + std::to_string(opcode) + " is not one the emitter writes");
    std::span<const Word> rest = words.subspan(at + 1, count - 1);
    at += count;
    Instruction inst{opcode, 0, 0, {}};
    const std::size_t fixed = (g->type ? 1u : 0u) + (g->result ? 1u : 0u);
    if (rest.size() < fixed) {
      fail("opcode " + std::to_string(opcode) + ": word count " + std::to_string(count) + " leaves no result id");
      continue;
    }
    if (g->type) inst.type = rest[0];
    if (g->result) inst.result = rest[g->type ? 1 : 0];
    inst.operands.assign(rest.begin() + long(fixed), rest.end());
    auto where = [&] { return "opcode " + std::to_string(opcode) + " (result %" + std::to_string(inst.result) + ")"; };

    // Logical layout: module sections in order, then functions made of blocks.
    if (g->section < section) fail(where() + ": out of the section order of SPIR-V 2.4");
    section = std::max(section, g->section);
    entry_points += opcode == spv::OpEntryPoint;
    memory_models += opcode == spv::OpMemoryModel;
    if (opcode == spv::OpVariable && !inst.operands.empty() && inst.operands[0] == spv::StorageClassFunction)
      fail(where() + ": a Function variable among the globals");
    if (g->section == 10) {
      if (opcode == spv::OpFunction) {
        if (in_function) fail(where() + ": function inside a function");
        in_function = true;
      } else if (!in_function) {
        fail(where() + ": outside a function");
      } else if (opcode == spv::OpLabel) {
        if (in_block) fail(where() + ": label inside a block");
        in_block = true;
      } else if (opcode == spv::OpFunctionEnd) {
        if (in_block) fail(where() + ": function ends inside a block");
        in_function = false;
      } else if (!in_block) {
        fail(where() + ": instruction outside a block");
      } else if (is_terminator(opcode)) {
        in_block = false;
      }
    }

    // Ids: defined once, below the bound, used after their definition unless forward references
    // are allowed; result types are types.
    if (inst.type && (!defined.count(inst.type) || !is_type(instructions[definitions_[inst.type]].opcode)))
      fail(where() + ": result type %" + std::to_string(inst.type) + " is not a type defined before");
    // Types are declared once (validators reject duplicate non-aggregate types), and so are
    // constants by the builder.
    if ((is_type(opcode) && opcode != spv::OpTypeStruct && opcode != spv::OpTypeRuntimeArray) ||
        opcode == spv::OpConstant) {
      std::vector<Word> key{opcode, inst.type};
      key.insert(key.end(), inst.operands.begin(), inst.operands.end());
      if (!declarations.insert(key).second) fail(where() + ": declared twice");
    }
    if (g->result) {
      if (inst.result == 0 || inst.result >= bound) fail(where() + ": id outside the bound " + std::to_string(bound));
      if (!defined.insert(inst.result).second) fail(where() + ": id defined twice");
      definitions_[inst.result] = instructions.size();
    }
    check_operands(inst, *g, inst.operands, defined, forward);
    instructions.push_back(std::move(inst));
  }
  for (Id id : forward)
    if (!defined.count(id)) fail("forward reference to %" + std::to_string(id) + ", never defined");
  if (in_function) fail("the last function has no OpFunctionEnd");
  if (entry_points != 1) fail(std::to_string(entry_points) + " entry points, not 1");
  if (memory_models != 1) fail(std::to_string(memory_models) + " memory models, not 1");
}

void Module::check_operands(const Instruction& inst, const Grammar& g, std::span<const Word> words,
                            std::set<Id>& defined, std::vector<Id>& forward) {
  auto where = [&] { return "opcode " + std::to_string(inst.opcode); };
  std::size_t at = 0;
  for (const char* k = g.operands; *k; ++k) {
    const char kind = *k, modifier = k[1];
    if (modifier == '?' || modifier == '*') ++k;
    const std::size_t most = modifier == '*' ? words.size() : 1;
    if (at == words.size() && (modifier == '?' || modifier == '*')) break;
    if (at == words.size()) return fail(where() + ": word count too small for its operands");
    for (std::size_t n = 0; n < most && at < words.size(); ++n) {
      if (kind == 's') {
        while (at < words.size() && (words[at] & 0xFF000000u) && (words[at] & 0xFF0000u) && (words[at] & 0xFF00u) &&
               (words[at] & 0xFFu))
          ++at;  // every byte nonzero: the string goes on
        if (at == words.size()) return fail(where() + ": string without its terminating nul");
        ++at;
      } else {
        const Word w = words[at++];
        if (kind == 'i' && !defined.count(w))
          fail(where() + ": operand %" + std::to_string(w) + " used before its definition");
        if (kind == 'f') forward.push_back(w);
      }
    }
  }
  if (at != words.size()) fail(where() + ": word count larger than its operands");
}

// The capabilities and extensions a module needs, derived from what it declares. These modules
// compute in every type they declare, so a 16-bit float needs Float16 and not only 16-bit storage.
void check_capabilities(Module& m) {
  std::set<Word> need{spv::CapabilityShader};
  std::set<std::string> extensions;
  for (const Instruction& i : m.instructions) {
    if (i.opcode == spv::OpMemoryModel && i.operands[1] == spv::MemoryModelVulkan)
      need.insert(spv::CapabilityVulkanMemoryModel);
    if (i.opcode == spv::OpTypeFloat) {
      const Word width = i.operands[0];
      const std::optional<Word> encoding = i.operands.size() > 1 ? std::optional(i.operands[1]) : std::nullopt;
      if (encoding == spvx::FPEncodingBFloat16KHR && width == 16) {
        need.insert(spvx::CapabilityBFloat16TypeKHR);
        extensions.insert("SPV_KHR_bfloat16");
      } else if ((encoding == spvx::FPEncodingFloat8E4M3EXT || encoding == spvx::FPEncodingFloat8E5M2EXT) &&
                 width == 8) {
        need.insert(spvx::CapabilityFloat8EXT);
        extensions.insert("SPV_EXT_float8");
      } else if (!encoding && (width == 16 || width == 32 || width == 64)) {
        if (width == 16) need.insert(spv::CapabilityFloat16);
        if (width == 64) need.insert(spv::CapabilityFloat64);
      } else {
        m.violations.push_back("OpTypeFloat " + std::to_string(width) + " with an encoding that does not fit it");
      }
    }
    if (i.opcode == spvx::OpTypeCooperativeMatrixKHR) {
      need.insert(spvx::CapabilityCooperativeMatrixKHR);
      extensions.insert("SPV_KHR_cooperative_matrix");
      const Instruction* component = m.defining(i.operands[0]);
      if (component && component->opcode == spv::OpTypeFloat && component->operands.size() > 1)
        need.insert(component->operands[1] == spvx::FPEncodingBFloat16KHR ? spvx::CapabilityBFloat16CooperativeMatrixKHR
                                                                          : spvx::CapabilityFloat8CooperativeMatrixEXT);
    }
    if (i.opcode == spv::OpVariable && i.operands[0] == spv::StorageClassStorageBuffer) {
      const Instruction* block = m.pointee_of_variable(i.result);
      const Instruction* array = block && !block->operands.empty() ? m.defining(block->operands[0]) : nullptr;
      const Word bytes = array ? m.scalar_bytes(array->operands[0]) : 0;
      if (bytes == 2) need.insert(spv::CapabilityStorageBuffer16BitAccess);
      if (bytes == 1) need.insert(spv::CapabilityStorageBuffer8BitAccess);
    }
  }
  if (m.all(spv::OpCapability).size() != m.capabilities().size()) m.violations.push_back("a capability declared twice");
  for (Word c : need)
    if (!m.capabilities().count(c))
      m.violations.push_back("capability " + std::to_string(c) + " used but not declared");
  for (Word c : m.capabilities())
    if (!need.count(c)) m.violations.push_back("capability " + std::to_string(c) + " declared but not needed");
  // SPIR-V 1.5 has the storage-class, 16/8-bit storage and memory-model extensions in its core.
  if (m.extensions() != extensions) m.violations.push_back("the extensions declared are not the ones the module needs");
}

// The interface: the entry point lists every global variable, storage buffers are Block structs of
// one runtime array with its ArrayStride and bound once each, push constants a Block with offsets,
// the input a built-in; no id carries a decoration twice.
void check_interface(Module& m) {
  std::set<Id> globals;
  for (const Instruction* v : m.all(spv::OpVariable)) globals.insert(v->result);
  for (const Instruction* e : m.all(spv::OpEntryPoint)) {
    if (e->operands[0] != spv::ExecutionModelGLCompute) m.violations.push_back("the entry point is not GLCompute");
    const Instruction* f = m.defining(e->operands[1]);
    if (!f || f->opcode != spv::OpFunction) m.violations.push_back("the entry point names no function");
    const std::string name = decode_string(std::span(e->operands).subspan(2));
    const std::size_t name_words = name.size() / 4 + 1;
    const std::vector<Id> interface(e->operands.begin() + long(2 + name_words), e->operands.end());
    if (std::set<Id>(interface.begin(), interface.end()) != globals || interface.size() != globals.size())
      m.violations.push_back("the entry point's interface is not every global variable once");
  }
  std::set<std::vector<Word>> seen;
  for (const Instruction* d : m.all(spv::OpDecorate))
    if (!seen.insert({d->operands[0], d->operands[1]}).second) m.violations.push_back("a decoration repeated");
  for (const Instruction* d : m.all(spv::OpMemberDecorate))
    if (!seen.insert({d->operands[0], d->operands[1], d->operands[2], 1}).second)
      m.violations.push_back("a member decoration repeated");
  for (Id v : globals) {
    const Instruction* variable = m.defining(v);
    const Instruction* pointee = m.pointee_of_variable(v);
    const std::string where = "variable %" + std::to_string(v);
    if (!pointee) {
      m.violations.push_back(where + ": not a pointer variable");
      continue;
    }
    const Word storage = variable->operands[0];
    if (storage == spv::StorageClassStorageBuffer || storage == spv::StorageClassPushConstant) {
      if (pointee->opcode != spv::OpTypeStruct || m.decorations(pointee->result, spv::DecorationBlock).size() != 1) {
        m.violations.push_back(where + ": not a Block struct");
        continue;
      }
      for (Word member = 0; member < pointee->operands.size(); ++member)
        if (m.member_decorations(pointee->result, member, spv::DecorationOffset).size() != 1)
          m.violations.push_back(where + ": member " + std::to_string(member) + " has no Offset");
    }
    if (storage == spv::StorageClassStorageBuffer) {
      const Instruction* array = m.defining(pointee->operands[0]);
      if (pointee->operands.size() != 1 || !array || array->opcode != spv::OpTypeRuntimeArray) {
        m.violations.push_back(where + ": the block is not one runtime array");
        continue;
      }
      if (m.member_decorations(pointee->result, 0, spv::DecorationOffset) != std::vector<std::vector<Word>>{{0}})
        m.violations.push_back(where + ": the array is not at offset 0");
      if (m.decorations(array->result, spv::DecorationArrayStride) !=
          std::vector<std::vector<Word>>{{m.scalar_bytes(array->operands[0])}})
        m.violations.push_back(where + ": ArrayStride is not the element size");
      if (m.decorations(v, spv::DecorationDescriptorSet).size() != 1 ||
          m.decorations(v, spv::DecorationBinding).size() != 1)
        m.violations.push_back(where + ": no descriptor set and binding");
    } else if (storage == spv::StorageClassInput) {
      if (m.decorations(v, spv::DecorationBuiltIn).size() != 1)
        m.violations.push_back(where + ": input without BuiltIn");
    } else if (storage != spv::StorageClassPushConstant) {
      m.violations.push_back(where + ": storage class " + std::to_string(storage) + " not used by the emitter");
    }
  }
}

// Every rule, on a module of kCoopmatSpirvVersion; the violations join decoding's.
void check_structure(Module& m) {
  if (m.version != kCoopmatSpirvVersion) m.violations.push_back("not SPIR-V 1.5");
  if (m.violations.empty()) {  // the rules below read operands that decoding found present
    check_capabilities(m);
    check_interface(m);
  }
}

std::vector<std::string> structural_violations(std::span<const Word> words) {
  Module m(words);
  check_structure(m);
  return m.violations;
}

// ---------------------------------------------------------------------------------------------
// What coopmat_module promises of a configuration's module, on its raw words.

struct MatrixSpec {
  TileKernel::Matrix buffer;
  const model::Format* format;
  Word rows, columns, use;
};

// The buffer variable bound at `binding`.
Id buffer_at(const Module& m, Word binding) {
  for (const Instruction* v : m.all(spv::OpVariable))
    if (v->operands[0] == spv::StorageClassStorageBuffer &&
        m.decorations(v->result, spv::DecorationBinding) == std::vector<std::vector<Word>>{{binding}})
      return v->result;
  return 0;
}

class CoopmatCheck {
 public:
  CoopmatCheck(const Module& m, const MmaConfig& config, Word subgroup) : m_(m) { check(config, subgroup); }
  std::vector<std::string> violations;

 private:
  const Module& m_;
  Id tile_ = 0;

  void check(const MmaConfig& config, Word subgroup) {
    check_frame(subgroup);
    const MatrixSpec a{TileKernel::A, config.a, Word(config.m), Word(config.k), spvx::CooperativeMatrixUseMatrixAKHR};
    const MatrixSpec b{TileKernel::B, config.b, Word(config.k), Word(config.n), spvx::CooperativeMatrixUseMatrixBKHR};
    const MatrixSpec c{TileKernel::C, config.c, Word(config.m), Word(config.n),
                       spvx::CooperativeMatrixUseMatrixAccumulatorKHR};
    const MatrixSpec d{TileKernel::D, config.d, Word(config.m), Word(config.n),
                       spvx::CooperativeMatrixUseMatrixAccumulatorKHR};
    for (const MatrixSpec& s : {a, b, c, d}) check_buffer(s);
    const auto muladds = m_.all(spvx::OpCooperativeMatrixMulAddKHR);
    const auto stores = m_.all(spvx::OpCooperativeMatrixStoreKHR);
    if (muladds.size() != 1 || stores.size() != 1 || m_.all(spvx::OpCooperativeMatrixLoadKHR).size() != 3)
      return fail("not 3 loads, 1 MulAdd and 1 store");
    const Instruction& muladd = *muladds[0];
    if (muladd.operands.size() == 4 && muladd.operands[3] != spvx::CooperativeMatrixOperandsMaskNone)
      fail("MulAdd has Cooperative Matrix Operands, which floating-point matrices do not need");
    check_load(muladd.operands[0], a);
    check_load(muladd.operands[1], b);
    check_load(muladd.operands[2], c);
    // The result is D's matrix type itself: no conversion between the unit and the store.
    check_matrix_type(muladd.type, d);
    if (!m_.all(spv::OpFConvert).empty()) fail("the module converts: MulAdd's result is not D's type");
    const Instruction& store = *stores[0];
    check_tile_pointer(store.operands[0], d);
    check_layout(store.operands[2], store.operands.size() > 3 ? store.operands[3] : 0, d);
    if (m_.defining(store.operands[1]) != &muladd) fail("the store does not write MulAdd's result");
  }

  void fail(std::string s) { violations.push_back(std::move(s)); }
  bool is_constant(Id id, Word value) const { return m_.constant(id) == value; }

  // The element type of the format: width and FP encoding.
  bool is_element(Id type, const model::Format* f) const {
    const Instruction* t = m_.defining(type);
    if (!t || t->opcode != spv::OpTypeFloat || t->operands[0] != Word(f->storage_bits)) return false;
    std::optional<Word> encoding;
    if (f == &model::bfloat16) encoding = spvx::FPEncodingBFloat16KHR;
    if (f == &model::e4m3) encoding = spvx::FPEncodingFloat8E4M3EXT;
    if (f == &model::e5m2) encoding = spvx::FPEncodingFloat8E5M2EXT;
    return (t->operands.size() > 1 ? std::optional(t->operands[1]) : std::nullopt) == encoding;
  }

  // LocalSize (subgroup, 1, 1); tile = push.base + WorkgroupId.x inside `WorkgroupId.x < push.count`.
  void check_frame(Word subgroup) {
    const auto modes = m_.all(spv::OpExecutionMode);
    if (modes.size() != 1 ||
        modes[0]->operands != std::vector<Word>{modes[0]->operands[0], spv::ExecutionModeLocalSize, subgroup, 1, 1})
      fail("the execution mode is not LocalSize " + std::to_string(subgroup) + " 1 1");
    const auto adds = m_.all(spv::OpIAdd);
    const auto compares = m_.all(spv::OpULessThan);
    if (adds.size() != 1 || compares.size() != 1) return fail("not one tile index and one bounds check");
    tile_ = adds[0]->result;
    const Id x = adds[0]->operands[1];
    if (!is_push_member(adds[0]->operands[0], 0)) fail("the tile index does not add push constant base");
    if (!is_push_member(compares[0]->operands[1], 1) || compares[0]->operands[0] != x)
      fail("the bounds check is not WorkgroupId.x < count");
    const Instruction* extract = m_.defining(x);
    const Instruction* load =
        extract && extract->opcode == spv::OpCompositeExtract ? m_.defining(extract->operands[0]) : nullptr;
    if (!load || extract->operands[1] != 0 || load->opcode != spv::OpLoad ||
        m_.decorations(load->operands[0], spv::DecorationBuiltIn) !=
            std::vector<std::vector<Word>>{{spv::BuiltInWorkgroupId}})
      fail("the tile index does not use WorkgroupId.x");
    const auto branches = m_.all(spv::OpBranchConditional);
    if (branches.size() != 1 || branches[0]->operands[0] != compares[0]->result)
      fail("the bounds check does not guard the body");
    const auto push = m_.all(spv::OpTypeStruct);
    bool found = false;
    for (const Instruction* s : push)
      found |= s->operands.size() == 2 && m_.scalar_bytes(s->operands[0]) == 4 &&
               m_.scalar_bytes(s->operands[1]) == 4 &&
               m_.member_decorations(s->result, 1, spv::DecorationOffset) == std::vector<std::vector<Word>>{{4}};
    if (!found) fail("no push constant block {uint base; uint count;}");
  }

  bool is_push_member(Id value, Word member) const {
    const Instruction* load = m_.defining(value);
    const Instruction* chain = load && load->opcode == spv::OpLoad ? m_.defining(load->operands[0]) : nullptr;
    const Instruction* variable =
        chain && chain->opcode == spv::OpAccessChain ? m_.defining(chain->operands[0]) : nullptr;
    return variable && variable->opcode == spv::OpVariable && variable->operands[0] == spv::StorageClassPushConstant &&
           chain->operands.size() == 2 && is_constant(chain->operands[1], member);
  }

  void check_buffer(const MatrixSpec& s) {
    const Instruction* block = m_.pointee_of_variable(buffer_at(m_, s.buffer));
    const Instruction* array = block ? m_.defining(block->operands[0]) : nullptr;
    if (!array || !is_element(array->operands[0], s.format) ||
        m_.decorations(buffer_at(m_, s.buffer), spv::DecorationDescriptorSet) != std::vector<std::vector<Word>>{{0}})
      fail("binding " + std::to_string(s.buffer) + " is not set 0, an array of " + std::string(s.format->name));
  }

  // A pointer to element tile * rows * columns of the matrix's buffer.
  void check_tile_pointer(Id pointer, const MatrixSpec& s) {
    const std::string what = "matrix " + std::to_string(s.buffer) + ": ";
    const Instruction* chain = m_.defining(pointer);
    if (!chain || chain->opcode != spv::OpAccessChain || chain->operands.size() != 3 ||
        chain->operands[0] != buffer_at(m_, s.buffer) || !is_constant(chain->operands[1], 0))
      return fail(what + "the pointer is not into its buffer's array");
    if (!is_element(m_.defining(chain->type)->operands[1], s.format)) fail(what + "the pointer is not to an element");
    const Instruction* first = m_.defining(chain->operands[2]);
    if (!first || first->opcode != spv::OpIMul || first->operands[0] != tile_ ||
        !is_constant(first->operands[1], s.rows * s.columns))
      fail(what + "the tile does not start at tile * " + std::to_string(s.rows * s.columns));
  }

  void check_layout(Id layout, Id stride, const MatrixSpec& s) {
    if (!is_constant(layout, spvx::CooperativeMatrixLayoutRowMajorKHR) || !is_constant(stride, s.columns))
      fail("matrix " + std::to_string(s.buffer) + ": not row-major with stride " + std::to_string(s.columns));
  }

  void check_matrix_type(Id type, const MatrixSpec& s) {
    const Instruction* t = m_.defining(type);
    if (!t || t->opcode != spvx::OpTypeCooperativeMatrixKHR || !is_element(t->operands[0], s.format) ||
        !is_constant(t->operands[1], spv::ScopeSubgroup) || !is_constant(t->operands[2], s.rows) ||
        !is_constant(t->operands[3], s.columns) || !is_constant(t->operands[4], s.use))
      fail("matrix " + std::to_string(s.buffer) + ": its type is not " + std::to_string(s.rows) + "x" +
           std::to_string(s.columns) + " " + std::string(s.format->name) + ", subgroup scope, use " +
           std::to_string(s.use));
  }

  void check_load(Id value, const MatrixSpec& s) {
    const Instruction* load = m_.defining(value);
    if (!load || load->opcode != spvx::OpCooperativeMatrixLoadKHR)
      return fail("MulAdd operand " + std::to_string(s.buffer) + " is not a cooperative matrix load");
    check_matrix_type(load->type, s);
    check_tile_pointer(load->operands[0], s);
    check_layout(load->operands[1], load->operands.size() > 2 ? load->operands[2] : 0, s);
  }
};

std::vector<std::string> coopmat_violations(std::span<const Word> words, const MmaConfig& config, Word subgroup) {
  Module m(words);
  check_structure(m);
  return m.violations.empty() ? CoopmatCheck(m, config, subgroup).violations : m.violations;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += "\n  " + x;
  return s;
}

// ---------------------------------------------------------------------------------------------
// The tests

MmaConfig config(int m, int n, int k, const model::Format* a, const model::Format* b, const model::Format* c,
                 const model::Format* d) {
  MmaConfig cfg;
  cfg.m = m, cfg.n = n, cfg.k = k, cfg.a = a, cfg.b = b, cfg.c = c, cfg.d = d;
  return cfg;
}

// Which check a module gets: spirv-val when the tools know every capability it declares.
enum class Check { spirv_val, structural };

Check check_for(std::span<const Word> words) {
  for (Word c : Module(words).capabilities())
    if (!tools_know_capability(c)) return Check::structural;
  return Check::spirv_val;
}

TEST(CoopmatSpirv, EveryFormatCombinationPassesItsCheck) {
  // Shapes of the devices (lavapipe 8x8x8, NVIDIA 16x16x16, 16x8x16 and 16x8x32 fp8, AMD 16x16x32)
  // and odd ones; subgroup sizes of Intel, NVIDIA, AMD wave32 and wave64.
  const int shapes[][3] = {{8, 8, 8}, {16, 16, 16}, {16, 8, 16}, {16, 8, 32}, {16, 16, 32}, {1, 1, 1}, {3, 5, 7}};
  const Word subgroups[] = {8, 16, 32, 64};
  std::map<Check, int> counts;
  std::size_t index = 0;
  for (const model::Format* a : kSpirvFormats)
    for (const model::Format* b : kSpirvFormats)
      for (const model::Format* c : kSpirvFormats)
        for (const model::Format* d : kSpirvFormats)
          for (const auto& shape : shapes) {
            // Every combination in every shape; the subgroup size turns with them.
            const Word subgroup = subgroups[index++ % std::size(subgroups)];
            const MmaConfig cfg = config(shape[0], shape[1], shape[2], a, b, c, d);
            auto module = coopmat_module(cfg, subgroup);
            ASSERT_TRUE(module.ok()) << cfg.name() << ": " << module.error().message;
            const std::vector<std::string> v = coopmat_violations(*module, cfg, subgroup);
            ASSERT_TRUE(v.empty()) << cfg.name() << " subgroup " << subgroup << join(v);
            const Check check = check_for(*module);
            ++counts[check];
            if (check == Check::spirv_val) {
              ASSERT_TRUE(tools().validate(*module)) << cfg.name() << ": " << tools().messages;
            } else {
              // The tools reject what they do not know: the structural check is the one that applies.
              ASSERT_FALSE(tools().validate(*module)) << cfg.name();
            }
          }
  const int total = counts[Check::spirv_val] + counts[Check::structural];
  std::printf(
      "checked %d modules: %d with spirv-val (and the structural rules), %d against the structural rules "
      "alone (the installed SPIRV-Tools does not know a capability they declare)\n",
      total, counts[Check::spirv_val], counts[Check::structural]);
  RecordProperty("spirv_val", counts[Check::spirv_val]);
  RecordProperty("structural", counts[Check::structural]);
  EXPECT_EQ(total, 1296 * int(std::size(shapes)));
  // Where the tools know CooperativeMatrixKHR, the binary16/32/64 modules go to spirv-val.
  EXPECT_EQ(counts[Check::spirv_val] > 0, tools_know_capability(spvx::CapabilityCooperativeMatrixKHR));
}

// ---------------------------------------------------------------------------------------------
// The newer spirv-val of scripts/vulkan-validation-fixture (unittests/newer_spirv_val.hpp).

using testing::run_spirv_val;
using testing::SpirvVal;

// Whether the tool knows a capability: a module declaring it (and its extension) and nothing else
// (Linkage: a module without an entry point).
SpirvVal external_knows(const char* tool, Word capability, const char* extension) {
  SpirvBuilder b(kCoopmatSpirvVersion);
  b.capability(spv::CapabilityShader);
  b.capability(spv::CapabilityLinkage);
  b.capability(capability);
  b.extension(extension);
  b.memory_model(spv::AddressingModelLogical, spv::MemoryModelGLSL450);
  return run_spirv_val(tool, b.words(), "spv1.5");
}

// The shapes real drivers list, with the inputs and accumulators they pair, through the newer
// spirv-val with Vulkan 1.2's rules (the version coopmat_module writes): every module it can read
// must pass. Those declaring what it does not know yet are counted, and must be the bfloat16 and
// float8 ones.
TEST(CoopmatSpirv, NewerSpirvValAcceptsTheModulesOfRealShapes) {
  const char* tool = testing::newer_spirv_val();
  if (!tool) GTEST_SKIP() << testing::kNoNewerSpirvVal;
  const SpirvVal coopmat = external_knows(tool, spvx::CapabilityCooperativeMatrixKHR, "SPV_KHR_cooperative_matrix");
  ASSERT_TRUE(coopmat.ok) << tool << " does not know SPV_KHR_cooperative_matrix:\n" << coopmat.messages;
  const bool bfloat16 = external_knows(tool, spvx::CapabilityBFloat16TypeKHR, "SPV_KHR_bfloat16").ok;
  const bool float8 = external_knows(tool, spvx::CapabilityFloat8EXT, "SPV_EXT_float8").ok;
  const int shapes[][3] = {{16, 16, 16}, {16, 8, 16}, {16, 8, 8}, {8, 16, 16}, {16, 16, 32}, {16, 8, 32}, {8, 8, 8}};
  const model::Format* inputs[] = {&model::binary16, &model::bfloat16, &model::e4m3, &model::e5m2};
  const model::Format* accumulators[] = {&model::binary16, &model::binary32};
  int validated = 0, unknown = 0;
  for (const auto& shape : shapes)
    for (const model::Format* in : inputs)
      for (const model::Format* c : accumulators)
        for (const model::Format* d : accumulators)
          for (const Word subgroup : {16u, 32u}) {
            const MmaConfig cfg = config(shape[0], shape[1], shape[2], in, in, c, d);
            const auto module = coopmat_module(cfg, subgroup);
            ASSERT_TRUE(module.ok()) << cfg.name() << ": " << module.error().message;
            const bool known = in == &model::bfloat16 ? bfloat16 : in == &model::binary16 || float8;
            const SpirvVal r = run_spirv_val(tool, *module, "vulkan1.2");
            if (known) {
              EXPECT_TRUE(r.ok) << cfg.name() << " subgroup " << subgroup << ":\n" << r.messages;
              ++validated;
            } else {
              EXPECT_FALSE(r.ok) << cfg.name() << ": accepted, yet the capability probe says the tool does not know it";
              ++unknown;
            }
          }
  std::printf("%s: %d modules validated, %d left to the structural check (bfloat16 %s, float8 %s to this spirv-val)\n",
              tool, validated, unknown, bfloat16 ? "known" : "unknown", float8 ? "known" : "unknown");
  RecordProperty("validated", validated);
  EXPECT_GT(validated, 0);
}

// A compute shader made by TileKernel with an ordinary body, d[tile] = a[tile] * b[tile] + c[tile]
// in d's type (NoContraction on both operations): the frame of every coopmat module, validated by
// spirv-val as well as by the structural check.
std::vector<Word> ordinary_shader(const std::array<const model::Format*, 4>& formats, Word local_size) {
  SpirvBuilder b(kCoopmatSpirvVersion);
  auto kernel = TileKernel::begin(b, formats, local_size);
  if (!kernel) {
    ADD_FAILURE() << kernel.error().message;
    return {};
  }
  using M = TileKernel::Matrix;
  const Id type = kernel->element_type(M::D);
  auto operand = [&](M m) {
    const Id v = b.emit(spv::OpLoad, kernel->element_type(m), {kernel->element_pointer(m, kernel->tile())});
    return formats[m] == formats[M::D] ? v : b.emit(spv::OpFConvert, type, {v});
  };
  const Id product = b.emit(spv::OpFMul, type, {operand(M::A), operand(M::B)});
  const Id sum = b.emit(spv::OpFAdd, type, {product, operand(M::C)});
  b.decorate(product, spv::DecorationNoContraction);
  b.decorate(sum, spv::DecorationNoContraction);
  b.emit(spv::OpStore, {kernel->element_pointer(M::D, kernel->tile()), sum});
  kernel->end();
  return b.words();
}

TEST(CoopmatSpirv, FrameValidatesInAnOrdinaryComputeShader) {
  const model::Format* ieee[] = {&model::binary16, &model::binary32, &model::binary64};
  int checked = 0;
  for (const model::Format* a : ieee)
    for (const model::Format* b : ieee)
      for (const model::Format* c : ieee)
        for (const model::Format* d : ieee)
          for (Word local_size : {1u, 32u, 64u}) {
            const std::vector<Word> words = ordinary_shader({a, b, c, d}, local_size);
            ASSERT_EQ(check_for(words), Check::spirv_val);
            ASSERT_TRUE(tools().validate(words)) << a->name << b->name << c->name << d->name << tools().messages;
            const std::vector<std::string> v = structural_violations(words);
            ASSERT_TRUE(v.empty()) << join(v);
            ++checked;
          }
  std::printf("checked %d ordinary compute shaders with spirv-val and the structural rules\n", checked);
  EXPECT_EQ(checked, 81 * 3);
}

// Each mutation breaks one rule: the structural check must name it (and spirv-val must reject the
// broken ordinary shader too, where the rule is one it knows).
TEST(CoopmatSpirv, StructuralCheckRejectsBrokenModules) {
  const MmaConfig cfg = config(16, 16, 16, &model::binary16, &model::binary16, &model::binary32, &model::binary16);
  const std::vector<Word> good = *coopmat_module(cfg, 32);
  ASSERT_TRUE(coopmat_violations(good, cfg, 32).empty());
  const std::vector<Word> good_ordinary =
      ordinary_shader({&model::binary16, &model::binary16, &model::binary32, &model::binary16}, 32);

  // Offsets of each instruction in a module, to cut and move whole instructions.
  auto instruction_at = [](const std::vector<Word>& w, Word opcode, Word operand0 = ~0u, int nth = 0) -> std::size_t {
    for (std::size_t at = 5; at < w.size(); at += w[at] >> 16)
      if ((w[at] & 0xFFFF) == opcode && (operand0 == ~0u || w[at + 1] == operand0) && nth-- == 0) return at;
    return 0;
  };
  auto remove = [](std::vector<Word> w, std::size_t at) {
    w.erase(w.begin() + long(at), w.begin() + long(at + (w[at] >> 16)));
    return w;
  };
  struct Mutation {
    const char* what;
    std::function<std::vector<Word>(std::vector<Word>)> apply;
    bool spirv_val_checks = true;  // whether the rule is one spirv-val 2023.1 checks
  };
  const Mutation mutations[] = {
      {"Float16 capability missing",
       [&](std::vector<Word> w) { return remove(w, instruction_at(w, spv::OpCapability, spv::CapabilityFloat16)); }},
      {"StorageBuffer16BitAccess missing",
       [&](std::vector<Word> w) {
         return remove(w, instruction_at(w, spv::OpCapability, spv::CapabilityStorageBuffer16BitAccess));
       },
       false},  // SPIR-V lets Float16 put halves anywhere; Vulkan asks for 16-bit storage in buffers
      {"Block decoration missing",
       [&](std::vector<Word> w) {
         for (std::size_t at = 5; at < w.size(); at += w[at] >> 16)
           if ((w[at] & 0xFFFF) == spv::OpDecorate && w[at + 2] == spv::DecorationBlock) return remove(w, at);
         return w;
       }},
      {"ArrayStride wrong",
       [&](std::vector<Word> w) {
         for (std::size_t at = 5; at < w.size(); at += w[at] >> 16)
           if ((w[at] & 0xFFFF) == spv::OpDecorate && w[at + 2] == spv::DecorationArrayStride) {
             w[at + 3] -= 1;  // below the element size
             break;
           }
         return w;
       }},
      {"duplicate type",
       [&](std::vector<Word> w) {
         const std::size_t at = instruction_at(w, spv::OpTypeInt);
         const std::vector<Word> copy{w[at], w[3], w[at + 2], w[at + 3]};
         w.insert(w.begin() + long(at), copy.begin(), copy.end());
         ++w[3];
         return w;
       }},
      {"decoration among the types (section order)",
       [&](std::vector<Word> w) {
         const std::size_t at = instruction_at(w, spv::OpDecorate);
         const std::vector<Word> d(w.begin() + long(at), w.begin() + long(at + (w[at] >> 16)));
         w = remove(w, at);
         const std::size_t types = instruction_at(w, spv::OpFunction);
         w.insert(w.begin() + long(types), d.begin(), d.end());
         return w;
       }},
      {"word count one too large",
       [&](std::vector<Word> w) {
         const std::size_t at = instruction_at(w, spv::OpIAdd);
         w[at] += 1 << 16;
         w.insert(w.begin() + long(at + 5), 0);
         return w;
       }},
      {"id used before its definition",
       [&](std::vector<Word> w) {
         w[instruction_at(w, spv::OpIAdd) + 3] = w[3] - 1;  // the last id, defined after
         return w;
       }},
      {"id beyond the bound",
       [&](std::vector<Word> w) {
         w[3] -= 1;
         return w;
       }},
      {"entry point interface incomplete",
       [&](std::vector<Word> w) {
         const std::size_t at = instruction_at(w, spv::OpEntryPoint);
         w[at] -= 1 << 16;
         w.erase(w.begin() + long(at + (w[at] >> 16)));
         return w;
       }},
  };
  for (const Mutation& mutation : mutations) {
    const std::vector<Word> broken = mutation.apply(good);
    ASSERT_NE(broken, good) << mutation.what;
    const std::vector<std::string> v = coopmat_violations(broken, cfg, 32);
    EXPECT_FALSE(v.empty()) << mutation.what;
    std::printf("%-45s -> %s\n", mutation.what, v.empty() ? "(not caught)" : v.front().c_str());
    const std::vector<Word> broken_ordinary = mutation.apply(good_ordinary);
    EXPECT_FALSE(structural_violations(broken_ordinary).empty()) << mutation.what << " (ordinary shader)";
    if (mutation.spirv_val_checks) {
      EXPECT_FALSE(tools().validate(broken_ordinary)) << mutation.what << ": spirv-val accepts the ordinary shader";
    }
  }
}

TEST(CoopmatSpirv, DisassemblyShowsTheInstructions) {
  const MmaConfig cfg = config(16, 16, 16, &model::binary16, &model::binary16, &model::binary32, &model::binary16);
  const std::vector<Word> words = *coopmat_module(cfg, 32);
  if (std::optional<std::string> text = tools().disassemble(words)) {
    std::printf("check: spirv-dis\n%s", text->c_str());
    for (const char* expected :
         {"OpCapability CooperativeMatrixKHR", "OpExtension \"SPV_KHR_cooperative_matrix\"",
          "OpMemoryModel Logical Vulkan", "OpTypeCooperativeMatrixKHR", "OpCooperativeMatrixLoadKHR",
          "OpCooperativeMatrixMulAddKHR", "OpCooperativeMatrixStoreKHR", "ArrayStride 2", "BuiltIn WorkgroupId",
          "LocalSize 32 1 1"})
      EXPECT_NE(text->find(expected), std::string::npos) << expected;
    return;
  }
  // The disassembler stops at what it does not know: assert on raw words instead.
  std::string why = tools().messages;
  while (!why.empty() && why.back() == '\n') why.pop_back();
  std::printf("check: raw words (spirv-dis stops: %s)\n", why.c_str());
  EXPECT_EQ(words[0], 0x07230203u);
  EXPECT_EQ(words[1], 0x00010500u);
  const Module m(words);
  ASSERT_TRUE(m.violations.empty()) << join(m.violations);
  auto count = [&](Word first_word) {
    std::size_t n = 0;
    for (std::size_t at = 5; at < words.size(); at += words[at] >> 16) n += words[at] == first_word;
    return n;
  };
  // (word count << 16 | opcode): the type with its 5 operands, loads with pointer, layout and stride,
  // MulAdd without operands, the store, the capability and the memory model.
  EXPECT_EQ(count(7u << 16 | 4456), 4u);  // A, B, C (binary32) and D (binary16) matrix types
  EXPECT_EQ(count(6u << 16 | 4457), 3u);
  EXPECT_EQ(count(6u << 16 | 4459), 1u);
  EXPECT_EQ(count(5u << 16 | 4458), 1u);
  EXPECT_EQ(count(4u << 16 | spv::OpFConvert), 0u);  // MulAdd's result is D's type: nothing converts
  const std::vector<Word> capability{2u << 16 | spv::OpCapability, 6022};
  const std::vector<Word> memory_model{3u << 16 | spv::OpMemoryModel, 0, 3};
  EXPECT_NE(std::search(words.begin(), words.end(), capability.begin(), capability.end()), words.end());
  EXPECT_NE(std::search(words.begin(), words.end(), memory_model.begin(), memory_model.end()), words.end());
  const std::vector<Word> extension = spirv_string("SPV_KHR_cooperative_matrix");
  EXPECT_NE(std::search(words.begin(), words.end(), extension.begin(), extension.end()), words.end());
  // The same emitter, the same module: pipelines can be cached by it.
  EXPECT_EQ(*coopmat_module(cfg, 32), words);
}

TEST(CoopmatSpirv, RegistryValuesAgreeWithSpirvToolsWhereItKnowsThem) {
  int known = 0;
  std::string unknown;
  for (const Named& n : kExtensionNames) {
    auto words = tools().assemble(std::string(n.assembly) + "\n");
    if (!words) {
      unknown += std::string("\n  ") + n.assembly;
      continue;
    }
    ++known;
    // The last instruction of the text holds the value: find it after the 5-word header.
    std::size_t at = 5, last = 5;
    for (; at < words->size(); at += (*words)[at] >> 16) last = at;
    const Word value = n.word == 0 ? ((*words)[last] & 0xFFFF) : (*words)[last + n.word];
    EXPECT_EQ(value, n.value) << n.assembly;
  }
  std::printf("%d of %zu names known to the installed SPIRV-Tools, their values compared\n", known,
              std::size(kExtensionNames));
  if (known == 0) GTEST_SKIP() << "the installed SPIRV-Tools knows none of the names:" << unknown;
}

TEST(CoopmatSpirv, MalformedRequestsAreErrors) {
  // Every format without a SPIR-V type, in each matrix.
  for (const model::Format* f : model::all_formats()) {
    if (std::find(std::begin(kSpirvFormats), std::end(kSpirvFormats), f) != std::end(kSpirvFormats)) continue;
    for (int which = 0; which < 4; ++which) {
      std::array<const model::Format*, 4> formats{&model::binary16, &model::binary16, &model::binary32,
                                                  &model::binary32};
      formats[std::size_t(which)] = f;
      auto r = coopmat_module(config(16, 16, 16, formats[0], formats[1], formats[2], formats[3]), 32);
      ASSERT_FALSE(r.ok()) << f->name;
      EXPECT_NE(r.error().message.find(std::string(f->name)), std::string::npos) << r.error().message;
      EXPECT_NE(r.error().message.find(std::string("matrix ") + "ABCD"[which]), std::string::npos) << r.error().message;
    }
  }
  const model::Format* h = &model::binary16;
  struct Bad {
    MmaConfig cfg;
    Word subgroup;
    const char* reason;
  };
  MmaConfig workgroup_scope = config(16, 16, 16, h, h, h, h);
  workgroup_scope.scope = "workgroup";
  const Bad bad[] = {
      {config(0, 16, 16, h, h, h, h), 32, "positive"},
      {config(16, -8, 16, h, h, h, h), 32, "positive"},
      {config(16, 16, 0, h, h, h, h), 32, "positive"},
      {config(16, 16, 16, h, nullptr, h, h), 32, "no format"},
      {config(16, 16, 16, h, h, h, h), 0, "workgroup size"},
      {config(65536, 65536, 1, h, h, h, h), 32, "2^32"},
      {workgroup_scope, 32, "subgroup"},
  };
  for (const Bad& b : bad) {
    auto r = coopmat_module(b.cfg, b.subgroup);
    ASSERT_FALSE(r.ok()) << b.reason;
    EXPECT_NE(r.error().message.find(b.reason), std::string::npos) << r.error().message;
    std::printf("%s\n", r.error().message.c_str());
  }
}

}  // namespace
}  // namespace gp::backends::vulkan
