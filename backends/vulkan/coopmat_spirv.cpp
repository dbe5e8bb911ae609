#include "backends/vulkan/coopmat_spirv.hpp"

#include <limits>
#include <optional>
#include <string>

namespace gp::backends::vulkan {
namespace {

// How each format with a SPIR-V type is declared: OpTypeFloat width [FP encoding].
struct SpirvFloat {
  const model::Format* format;
  Word width;
  std::optional<Word> encoding;
};

const SpirvFloat* spirv_float(const model::Format& f) {
  static const SpirvFloat table[] = {
      {&model::binary16, 16, std::nullopt},
      {&model::binary32, 32, std::nullopt},
      {&model::binary64, 64, std::nullopt},
      {&model::bfloat16, 16, spvx::FPEncodingBFloat16KHR},
      {&model::e4m3, 8, spvx::FPEncodingFloat8E4M3EXT},
      {&model::e5m2, 8, spvx::FPEncodingFloat8E5M2EXT},
  };
  for (const SpirvFloat& s : table)
    if (s.format == &f) return &s;
  return nullptr;
}

constexpr const char* kMatrixNames[] = {"A", "B", "C", "D"};

// A cooperative matrix of `component` elements with subgroup scope, declaring the capability that
// bfloat16 and float8 components need beyond their scalar type's.
Id matrix_type(SpirvBuilder& b, const model::Format& format, Id component, Word rows, Word columns, Word use) {
  if (&format == &model::bfloat16) b.capability(spvx::CapabilityBFloat16CooperativeMatrixKHR);
  if (&format == &model::e4m3 || &format == &model::e5m2) b.capability(spvx::CapabilityFloat8CooperativeMatrixEXT);
  return b.type(spvx::OpTypeCooperativeMatrixKHR,
                {component, b.constant_uint(spv::ScopeSubgroup), b.constant_uint(rows), b.constant_uint(columns),
                 b.constant_uint(use)});
}

}  // namespace

Expected<Id> spirv_element_type(SpirvBuilder& b, const model::Format& format) {
  const SpirvFloat* s = spirv_float(format);
  if (!s) return Error{"format " + std::string(format.name) + " has no SPIR-V type", ErrorKind::unsupported};
  if (s->encoding == spvx::FPEncodingBFloat16KHR) {
    b.capability(spvx::CapabilityBFloat16TypeKHR);
    b.extension("SPV_KHR_bfloat16");
  } else if (s->encoding) {
    b.capability(spvx::CapabilityFloat8EXT);
    b.extension("SPV_EXT_float8");
  } else if (s->width == 16) {
    b.capability(spv::CapabilityFloat16);
  } else if (s->width == 64) {
    b.capability(spv::CapabilityFloat64);
  }
  // Values narrower than 32 bits in storage buffers need the 16- or 8-bit storage capability.
  if (s->width == 16) b.capability(spv::CapabilityStorageBuffer16BitAccess);
  if (s->width == 8) b.capability(spv::CapabilityStorageBuffer8BitAccess);
  return b.type_float(s->width, s->encoding);
}

Expected<TileKernel> TileKernel::begin(SpirvBuilder& b, const std::array<const model::Format*, 4>& formats,
                                       std::uint32_t local_size) {
  if (local_size == 0) return Error{"the workgroup size must be positive", ErrorKind::invalid};
  TileKernel k(b);
  b.capability(spv::CapabilityShader);
  b.capability(spv::CapabilityVulkanMemoryModel);
  b.memory_model(spv::AddressingModelLogical, spv::MemoryModelVulkan);
  const Id uint = b.type_uint(32);
  for (Word m = 0; m < 4; ++m) {
    if (!formats[m]) return Error{std::string("matrix ") + kMatrixNames[m] + " has no format", ErrorKind::unsupported};
    Expected<Id> element = spirv_element_type(b, *formats[m]);
    if (!element)
      return element.error().retold(std::string("matrix ") + kMatrixNames[m] + ": " + element.error().message);
    k.element_[m] = *element;
    const Id array = b.type_runtime_array(*element, Word(formats[m]->storage_bits / 8));
    const Id block = b.type_block({{array, 0}});
    k.buffer_[m] =
        b.global_variable(b.type_pointer(spv::StorageClassStorageBuffer, block), spv::StorageClassStorageBuffer);
    b.decorate(k.buffer_[m], spv::DecorationDescriptorSet, {0});
    b.decorate(k.buffer_[m], spv::DecorationBinding, {m});
    k.element_pointer_type_[m] = b.type_pointer(spv::StorageClassStorageBuffer, *element);
  }
  const Id push = b.global_variable(b.type_pointer(spv::StorageClassPushConstant, b.type_block({{uint, 0}, {uint, 4}})),
                                    spv::StorageClassPushConstant);
  const Id uvec3 = b.type_vector(uint, 3);
  const Id workgroup_id = b.global_variable(b.type_pointer(spv::StorageClassInput, uvec3), spv::StorageClassInput);
  b.decorate(workgroup_id, spv::DecorationBuiltIn, {spv::BuiltInWorkgroupId});

  const Id void_type = b.type_void();
  const Id main = b.function(void_type, b.type_function(void_type));
  b.entry_point(spv::ExecutionModelGLCompute, main, "main");
  b.execution_mode(main, spv::ExecutionModeLocalSize, {local_size, 1, 1});
  b.label(b.id());
  const Id push_uint = b.type_pointer(spv::StorageClassPushConstant, uint);
  auto push_member = [&](Word member) {
    return b.emit(spv::OpLoad, uint, {b.emit(spv::OpAccessChain, push_uint, {push, b.constant_uint(member)})});
  };
  const Id x = b.emit(spv::OpCompositeExtract, uint, {b.emit(spv::OpLoad, uvec3, {workgroup_id}), 0});
  const Id inside = b.emit(spv::OpULessThan, b.type_bool(), {x, push_member(1)});
  const Id body = b.id();
  k.end_ = b.id();
  b.emit(spv::OpSelectionMerge, {k.end_, spv::SelectionControlMaskNone});
  b.emit(spv::OpBranchConditional, {inside, body, k.end_});
  b.label(body);
  k.tile_ = b.emit(spv::OpIAdd, uint, {push_member(0), x});
  return k;
}

Id TileKernel::element_pointer(Matrix m, Id index) const {
  return b_->emit(spv::OpAccessChain, element_pointer_type_[m], {buffer_[m], b_->constant_uint(0), index});
}

void TileKernel::end() const {
  b_->emit(spv::OpBranch, {end_});
  b_->label(end_);
  b_->emit(spv::OpReturn, {});
  b_->function_end();
}

Expected<std::vector<std::uint32_t>> coopmat_module(const MmaConfig& config, std::uint32_t subgroup_size) {
  const std::string shape = std::to_string(config.m) + "x" + std::to_string(config.n) + "x" + std::to_string(config.k);
  auto fail = [&](const std::string& why) { return Error{"cooperative matrix " + shape + ": " + why}; };
  if (config.m <= 0 || config.n <= 0 || config.k <= 0) return fail("M, N and K must be positive");
  if (config.scope != "subgroup") return fail("scope " + config.scope + " is not emitted, only subgroup");
  const std::uint64_t m = Word(config.m), n = Word(config.n), k = Word(config.k);
  if (m * k > std::numeric_limits<Word>::max() || k * n > std::numeric_limits<Word>::max() ||
      m * n > std::numeric_limits<Word>::max())
    return fail("a tile has more than 2^32 elements");

  SpirvBuilder b(kCoopmatSpirvVersion);
  Expected<TileKernel> kernel = TileKernel::begin(b, {config.a, config.b, config.c, config.d}, subgroup_size);
  if (!kernel) return fail(kernel.error().message);
  b.capability(spvx::CapabilityCooperativeMatrixKHR);
  b.extension("SPV_KHR_cooperative_matrix");

  using M = TileKernel::Matrix;
  const Id uint = b.type_uint(32);
  const Id row_major = b.constant_uint(spvx::CooperativeMatrixLayoutRowMajorKHR);
  // Tile t of a rows x columns matrix starts at element t*rows*columns, rows `columns` apart.
  auto tile_pointer = [&](M which, std::uint64_t rows, std::uint64_t columns) {
    const Id first = b.emit(spv::OpIMul, uint, {kernel->tile(), b.constant_uint(Word(rows * columns))});
    return kernel->element_pointer(which, first);
  };
  auto load = [&](M which, Id type, std::uint64_t rows, std::uint64_t columns) {
    return b.emit(spvx::OpCooperativeMatrixLoadKHR, type,
                  {tile_pointer(which, rows, columns), row_major, b.constant_uint(Word(columns))});
  };
  const Id a_type =
      matrix_type(b, *config.a, kernel->element_type(M::A), Word(m), Word(k), spvx::CooperativeMatrixUseMatrixAKHR);
  const Id b_type =
      matrix_type(b, *config.b, kernel->element_type(M::B), Word(k), Word(n), spvx::CooperativeMatrixUseMatrixBKHR);
  const Id c_type = matrix_type(b, *config.c, kernel->element_type(M::C), Word(m), Word(n),
                                spvx::CooperativeMatrixUseMatrixAccumulatorKHR);
  // MulAdd's result has D's component type (the configuration's ResultType): converting C's type
  // afterwards would add a rounding the unit does not do. Floating-point matrices need no Cooperative
  // Matrix Operands, so the optional operand is omitted.
  const Id d_type = matrix_type(b, *config.d, kernel->element_type(M::D), Word(m), Word(n),
                                spvx::CooperativeMatrixUseMatrixAccumulatorKHR);  // C's where C and D agree
  const Id d = b.emit(spvx::OpCooperativeMatrixMulAddKHR, d_type,
                      {load(M::A, a_type, m, k), load(M::B, b_type, k, n), load(M::C, c_type, m, n)});
  b.emit(spvx::OpCooperativeMatrixStoreKHR, {tile_pointer(M::D, m, n), d, row_major, b.constant_uint(Word(n))});
  kernel->end();
  return b.words();
}

}  // namespace gp::backends::vulkan
