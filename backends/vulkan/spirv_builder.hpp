// A small typed SPIR-V module builder: fresh ids, types and constants declared once, decorations,
// and the sections of a module in the order of the SPIR-V specification (2.4, Logical Layout).
// It writes what the project's hand-emitted modules need (the cooperative-matrix kernels, which
// glslang 12 cannot compile from GLSL), not a general assembler.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// Numeric values come from the SPIR-V headers: SPIRV-Headers' own where installed, else the copy
// that glslang ships (bookworm has only the latter).
#if __has_include(<spirv/unified1/spirv.hpp>)
#include <spirv/unified1/spirv.hpp>
#else
#include <glslang/SPIRV/spirv.hpp>
#endif

namespace gp::backends::vulkan {

using Word = std::uint32_t;
using Id = std::uint32_t;

// Enumerants newer than the installed headers. Bookworm's (glslang 12's copy: SPIR-V 1.6 revision 1)
// predate these three extensions, so their values are written here, in this one place, as the
// SPIR-V registry (SPIRV-Headers, spirv.core.grammar.json) defines them.
namespace spvx {
// SPV_KHR_cooperative_matrix
inline constexpr Word OpTypeCooperativeMatrixKHR = 4456;
inline constexpr Word OpCooperativeMatrixLoadKHR = 4457;
inline constexpr Word OpCooperativeMatrixStoreKHR = 4458;
inline constexpr Word OpCooperativeMatrixMulAddKHR = 4459;
inline constexpr Word OpCooperativeMatrixLengthKHR = 4460;
inline constexpr Word CapabilityCooperativeMatrixKHR = 6022;
// CooperativeMatrixUse
inline constexpr Word CooperativeMatrixUseMatrixAKHR = 0;
inline constexpr Word CooperativeMatrixUseMatrixBKHR = 1;
inline constexpr Word CooperativeMatrixUseMatrixAccumulatorKHR = 2;
// CooperativeMatrixLayout
inline constexpr Word CooperativeMatrixLayoutRowMajorKHR = 0;
inline constexpr Word CooperativeMatrixLayoutColumnMajorKHR = 1;
// CooperativeMatrixOperands, a bit mask of MulAdd; its signedness and saturation bits (0x1 to 0x10)
// concern integer matrices only, so floating-point MMA needs none.
inline constexpr Word CooperativeMatrixOperandsMaskNone = 0;
// SPV_KHR_bfloat16: bfloat16 is OpTypeFloat 16 with the BFloat16KHR FP encoding operand.
inline constexpr Word CapabilityBFloat16TypeKHR = 5116;
inline constexpr Word CapabilityBFloat16DotProductKHR = 5117;
inline constexpr Word CapabilityBFloat16CooperativeMatrixKHR = 5118;
inline constexpr Word FPEncodingBFloat16KHR = 0;
// SPV_EXT_float8: e4m3 and e5m2 are OpTypeFloat 8 with these FP encodings.
inline constexpr Word CapabilityFloat8EXT = 4212;
inline constexpr Word CapabilityFloat8CooperativeMatrixEXT = 4213;
inline constexpr Word FPEncodingFloat8E4M3EXT = 4214;
inline constexpr Word FPEncodingFloat8E5M2EXT = 4215;
}  // namespace spvx

class SpirvBuilder {
 public:
  // version: the header's version word, 0x00010500 for SPIR-V 1.5.
  explicit SpirvBuilder(Word version) : version_(version) {}

  Id id() { return next_id_++; }

  // Module-level declarations; a capability or extension declared twice appears once.
  void capability(Word capability);
  void extension(std::string_view name);
  void memory_model(Word addressing, Word memory);
  // The module's one entry point. Its interface lists every global variable, which SPIR-V 1.4 and
  // later require of the variables the entry point uses (earlier versions accept it too).
  void entry_point(Word execution_model, Id function, std::string_view name);
  void execution_mode(Id function, Word mode, std::initializer_list<Word> literals);
  void decorate(Id target, Word decoration, std::initializer_list<Word> literals = {});
  void member_decorate(Id structure, Word member, Word decoration, std::initializer_list<Word> literals = {});

  // Types and constants, each declared once (validators reject duplicate non-aggregate types):
  // the same declaration returns the first one's id.
  Id type_void();
  Id type_bool();
  Id type_uint(Word width);
  // encoding: an FP Encoding operand (bfloat16, float8); none for IEEE binary formats.
  Id type_float(Word width, std::optional<Word> encoding = std::nullopt);
  Id type_vector(Id component, Word count);
  Id type_pointer(Word storage_class, Id pointee);
  Id type_function(Id return_type);
  // A runtime array decorated with its ArrayStride (bytes).
  Id type_runtime_array(Id element, Word stride);
  // A Block-decorated struct of {member type, byte offset}, each member decorated with its Offset.
  Id type_block(std::initializer_list<std::pair<Id, Word>> members);
  // Any other type instruction, by opcode and operands (OpTypeCooperativeMatrixKHR).
  Id type(Word opcode, std::initializer_list<Word> operands);
  Id constant_uint(Word value);  // a 32-bit unsigned integer constant
  Id global_variable(Id pointer_type, Word storage_class);

  // Function bodies, instruction by instruction in order.
  Id function(Id return_type, Id function_type);  // OpFunction, no parameters
  void label(Id label);
  Id emit(Word opcode, Id result_type, std::initializer_list<Word> operands);  // a fresh result id
  void emit(Word opcode, std::initializer_list<Word> operands);                // no result
  void function_end();

  // The whole module: the header (bound = largest id + 1), then every section in order.
  std::vector<Word> words() const;

 private:
  using Section = std::vector<Word>;
  static void append(Section& section, Word opcode, std::initializer_list<Word> operands);
  static void append(Section& section, Word opcode, const std::vector<Word>& operands);
  // Declares a type or constant once, under a key that names it (its instruction, plus any
  // decorations that make it distinct); a constant has a result type, a type has none.
  std::pair<Id, bool> declare_once(std::vector<Word> key, Word opcode, std::optional<Id> result_type,
                                   std::vector<Word> operands);

  Word version_;
  Id next_id_ = 1;
  Section capabilities_, extensions_, memory_model_, execution_modes_, annotations_, globals_, functions_;
  std::vector<Word> declared_capabilities_;
  std::vector<std::string> declared_extensions_;
  struct EntryPoint {
    Word model;
    Id function;
    std::vector<Word> name;
  };
  std::optional<EntryPoint> entry_point_;
  std::vector<Id> global_variables_;
  std::map<std::vector<Word>, Id> declared_;
};

// A string operand: UTF-8, nul-terminated, padded with zeros to a whole word, first byte lowest.
std::vector<Word> spirv_string(std::string_view s);

}  // namespace gp::backends::vulkan
