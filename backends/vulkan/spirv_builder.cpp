#include "backends/vulkan/spirv_builder.hpp"

#include <algorithm>
#include <stdexcept>

namespace gp::backends::vulkan {

std::vector<Word> spirv_string(std::string_view s) {
  std::vector<Word> words(s.size() / 4 + 1, 0);  // room for the terminating nul
  for (std::size_t i = 0; i < s.size(); ++i) words[i / 4] |= Word(static_cast<unsigned char>(s[i])) << (8 * (i % 4));
  return words;
}

void SpirvBuilder::append(Section& section, Word opcode, const std::vector<Word>& operands) {
  const std::size_t count = operands.size() + 1;
  // The word count shares the first word with the opcode: 16 bits. The modules built here are far
  // smaller; reaching it is a bug in the caller.
  if (count > 0xFFFF) throw std::length_error("SPIR-V instruction longer than 65535 words");
  section.push_back(Word(count) << spv::WordCountShift | opcode);
  section.insert(section.end(), operands.begin(), operands.end());
}

void SpirvBuilder::append(Section& section, Word opcode, std::initializer_list<Word> operands) {
  append(section, opcode, std::vector<Word>(operands));
}

void SpirvBuilder::capability(Word capability) {
  if (std::find(declared_capabilities_.begin(), declared_capabilities_.end(), capability) !=
      declared_capabilities_.end())
    return;
  declared_capabilities_.push_back(capability);
  append(capabilities_, spv::OpCapability, {capability});
}

void SpirvBuilder::extension(std::string_view name) {
  if (std::find(declared_extensions_.begin(), declared_extensions_.end(), name) != declared_extensions_.end()) return;
  declared_extensions_.emplace_back(name);
  append(extensions_, spv::OpExtension, spirv_string(name));
}

void SpirvBuilder::memory_model(Word addressing, Word memory) {
  memory_model_.clear();
  append(memory_model_, spv::OpMemoryModel, {addressing, memory});
}

void SpirvBuilder::entry_point(Word execution_model, Id function, std::string_view name) {
  entry_point_ = EntryPoint{execution_model, function, spirv_string(name)};
}

void SpirvBuilder::execution_mode(Id function, Word mode, std::initializer_list<Word> literals) {
  std::vector<Word> operands{function, mode};
  operands.insert(operands.end(), literals);
  append(execution_modes_, spv::OpExecutionMode, operands);
}

void SpirvBuilder::decorate(Id target, Word decoration, std::initializer_list<Word> literals) {
  std::vector<Word> operands{target, decoration};
  operands.insert(operands.end(), literals);
  append(annotations_, spv::OpDecorate, operands);
}

void SpirvBuilder::member_decorate(Id structure, Word member, Word decoration, std::initializer_list<Word> literals) {
  std::vector<Word> operands{structure, member, decoration};
  operands.insert(operands.end(), literals);
  append(annotations_, spv::OpMemberDecorate, operands);
}

std::pair<Id, bool> SpirvBuilder::declare_once(std::vector<Word> key, Word opcode, std::optional<Id> result_type,
                                               std::vector<Word> operands) {
  if (auto it = declared_.find(key); it != declared_.end()) return {it->second, false};
  const Id result = id();
  std::vector<Word> all;
  if (result_type) all.push_back(*result_type);
  all.push_back(result);
  all.insert(all.end(), operands.begin(), operands.end());
  append(globals_, opcode, all);
  declared_.emplace(std::move(key), result);
  return {result, true};
}

Id SpirvBuilder::type(Word opcode, std::initializer_list<Word> operands) {
  std::vector<Word> key{opcode};
  key.insert(key.end(), operands);
  return declare_once(key, opcode, std::nullopt, operands).first;
}

Id SpirvBuilder::type_void() { return type(spv::OpTypeVoid, {}); }
Id SpirvBuilder::type_bool() { return type(spv::OpTypeBool, {}); }
Id SpirvBuilder::type_uint(Word width) { return type(spv::OpTypeInt, {width, 0}); }

Id SpirvBuilder::type_float(Word width, std::optional<Word> encoding) {
  return encoding ? type(spv::OpTypeFloat, {width, *encoding}) : type(spv::OpTypeFloat, {width});
}

Id SpirvBuilder::type_vector(Id component, Word count) { return type(spv::OpTypeVector, {component, count}); }

Id SpirvBuilder::type_pointer(Word storage_class, Id pointee) {
  return type(spv::OpTypePointer, {storage_class, pointee});
}

Id SpirvBuilder::type_function(Id return_type) { return type(spv::OpTypeFunction, {return_type}); }

Id SpirvBuilder::type_runtime_array(Id element, Word stride) {
  // Arrays may repeat in a module; this one is keyed by its stride too, so that each id carries
  // exactly one ArrayStride.
  auto [array, fresh] =
      declare_once({spv::OpTypeRuntimeArray, element, stride}, spv::OpTypeRuntimeArray, std::nullopt, {element});
  if (fresh) decorate(array, spv::DecorationArrayStride, {stride});
  return array;
}

Id SpirvBuilder::type_block(std::initializer_list<std::pair<Id, Word>> members) {
  std::vector<Word> key{spv::OpTypeStruct, spv::DecorationBlock}, types;
  for (auto [type, offset] : members) {
    key.insert(key.end(), {type, offset});
    types.push_back(type);
  }
  auto [block, fresh] = declare_once(key, spv::OpTypeStruct, std::nullopt, types);
  if (fresh) {
    decorate(block, spv::DecorationBlock);
    Word member = 0;
    for (const auto& m : members) member_decorate(block, member++, spv::DecorationOffset, {m.second});
  }
  return block;
}

Id SpirvBuilder::constant_uint(Word value) {
  const Id uint = type_uint(32);
  return declare_once({spv::OpConstant, uint, value}, spv::OpConstant, uint, {value}).first;
}

Id SpirvBuilder::global_variable(Id pointer_type, Word storage_class) {
  const Id variable = id();
  append(globals_, spv::OpVariable, {pointer_type, variable, storage_class});
  global_variables_.push_back(variable);
  return variable;
}

Id SpirvBuilder::function(Id return_type, Id function_type) {
  const Id f = id();
  append(functions_, spv::OpFunction, {return_type, f, spv::FunctionControlMaskNone, function_type});
  return f;
}

void SpirvBuilder::label(Id label) { append(functions_, spv::OpLabel, {label}); }

Id SpirvBuilder::emit(Word opcode, Id result_type, std::initializer_list<Word> operands) {
  const Id result = id();
  std::vector<Word> all{result_type, result};
  all.insert(all.end(), operands);
  append(functions_, opcode, all);
  return result;
}

void SpirvBuilder::emit(Word opcode, std::initializer_list<Word> operands) { append(functions_, opcode, operands); }

void SpirvBuilder::function_end() { append(functions_, spv::OpFunctionEnd, {}); }

std::vector<Word> SpirvBuilder::words() const {
  // Header: magic, version, generator (0: a tool without a registered id), id bound, schema.
  std::vector<Word> module{spv::MagicNumber, version_, 0, next_id_, 0};
  Section entry_points;  // written last: its interface lists every global variable
  if (entry_point_) {
    std::vector<Word> operands{entry_point_->model, entry_point_->function};
    operands.insert(operands.end(), entry_point_->name.begin(), entry_point_->name.end());
    operands.insert(operands.end(), global_variables_.begin(), global_variables_.end());
    append(entry_points, spv::OpEntryPoint, operands);
  }
  // Logical layout (SPIR-V 2.4); no debug instructions (section 7) are written.
  for (const Section* s :
       std::initializer_list<const Section*>{&capabilities_, &extensions_, &memory_model_, &entry_points,
                                             &execution_modes_, &annotations_, &globals_, &functions_})
    module.insert(module.end(), s->begin(), s->end());
  return module;
}

}  // namespace gp::backends::vulkan
