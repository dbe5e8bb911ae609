#include "backends/opencl/opencl_api.hpp"

#include <CL/cl.h>
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>

#include "backends/dynamic_library.hpp"

// The C entry points of OpenCL that the C++ bindings (CL/opencl.hpp) call, defined here as
// forwarders to the ICD loader opened at run time, so that the program is not linked with it. This
// file is compiled with hidden visibility: the forwarders are never exported, so that they cannot
// stand in for a driver's own functions of the same names.
// X(return type, name, (parameters), (arguments)); run `nm -u` on opencl_backend.cpp's object for
// the list the bindings need.
// clang-format off
#define GP_CL_FUNCTIONS(X) \
  X(cl_int, clBuildProgram,                                                                                    \
    (cl_program program, cl_uint num_devices, const cl_device_id* device_list, const char* options,            \
     void (CL_CALLBACK* pfn_notify)(cl_program program, void* user_data), void* user_data),                    \
    (program, num_devices, device_list, options, pfn_notify, user_data))                                       \
  X(cl_mem, clCreateBuffer,                                                                                    \
    (cl_context context, cl_mem_flags flags, size_t size, void* host_ptr, cl_int* errcode_ret),                \
    (context, flags, size, host_ptr, errcode_ret))                                                             \
  X(cl_command_queue, clCreateCommandQueue,                                                                    \
    (cl_context context, cl_device_id device, cl_command_queue_properties properties, cl_int* errcode_ret),    \
    (context, device, properties, errcode_ret))                                                                \
  X(cl_command_queue, clCreateCommandQueueWithProperties,                                                      \
    (cl_context context, cl_device_id device, const cl_queue_properties* properties, cl_int* errcode_ret),     \
    (context, device, properties, errcode_ret))                                                                \
  X(cl_context, clCreateContext,                                                                               \
    (const cl_context_properties* properties, cl_uint num_devices, const cl_device_id* devices,                \
     void (CL_CALLBACK* pfn_notify)(const char* errinfo, const void* private_info, size_t cb, void* user_data),\
     void* user_data, cl_int* errcode_ret),                                                                    \
    (properties, num_devices, devices, pfn_notify, user_data, errcode_ret))                                    \
  X(cl_kernel, clCreateKernel,                                                                                 \
    (cl_program program, const char* kernel_name, cl_int* errcode_ret),                                        \
    (program, kernel_name, errcode_ret))                                                                       \
  X(cl_program, clCreateProgramWithSource,                                                                     \
    (cl_context context, cl_uint count, const char** strings, const size_t* lengths, cl_int* errcode_ret),     \
    (context, count, strings, lengths, errcode_ret))                                                           \
  X(cl_int, clEnqueueNDRangeKernel,                                                                            \
    (cl_command_queue command_queue, cl_kernel kernel, cl_uint work_dim, const size_t* global_work_offset,     \
     const size_t* global_work_size, const size_t* local_work_size, cl_uint num_events_in_wait_list,           \
     const cl_event* event_wait_list, cl_event* event),                                                        \
    (command_queue, kernel, work_dim, global_work_offset, global_work_size, local_work_size,                   \
     num_events_in_wait_list, event_wait_list, event))                                                         \
  X(cl_int, clEnqueueReadBuffer,                                                                               \
    (cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_read, size_t offset, size_t size,         \
     void* ptr, cl_uint num_events_in_wait_list, const cl_event* event_wait_list, cl_event* event),            \
    (command_queue, buffer, blocking_read, offset, size, ptr, num_events_in_wait_list, event_wait_list,        \
     event))                                                                                                   \
  X(cl_int, clEnqueueWriteBuffer,                                                                              \
    (cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_write, size_t offset, size_t size,        \
     const void* ptr, cl_uint num_events_in_wait_list, const cl_event* event_wait_list, cl_event* event),      \
    (command_queue, buffer, blocking_write, offset, size, ptr, num_events_in_wait_list, event_wait_list,       \
     event))                                                                                                   \
  X(cl_int, clGetContextInfo,                                                                                  \
    (cl_context context, cl_context_info param_name, size_t param_value_size, void* param_value,               \
     size_t* param_value_size_ret),                                                                            \
    (context, param_name, param_value_size, param_value, param_value_size_ret))                                \
  X(cl_int, clGetDeviceIDs,                                                                                    \
    (cl_platform_id platform, cl_device_type device_type, cl_uint num_entries, cl_device_id* devices,          \
     cl_uint* num_devices),                                                                                    \
    (platform, device_type, num_entries, devices, num_devices))                                                \
  X(cl_int, clGetDeviceInfo,                                                                                   \
    (cl_device_id device, cl_device_info param_name, size_t param_value_size, void* param_value,               \
     size_t* param_value_size_ret),                                                                            \
    (device, param_name, param_value_size, param_value, param_value_size_ret))                                 \
  X(cl_int, clGetKernelWorkGroupInfo,                                                                          \
    (cl_kernel kernel, cl_device_id device, cl_kernel_work_group_info param_name, size_t param_value_size,     \
     void* param_value, size_t* param_value_size_ret),                                                         \
    (kernel, device, param_name, param_value_size, param_value, param_value_size_ret))                         \
  X(cl_int, clGetPlatformIDs,                                                                                  \
    (cl_uint num_entries, cl_platform_id* platforms, cl_uint* num_platforms),                                  \
    (num_entries, platforms, num_platforms))                                                                   \
  X(cl_int, clGetPlatformInfo,                                                                                 \
    (cl_platform_id platform, cl_platform_info param_name, size_t param_value_size, void* param_value,         \
     size_t* param_value_size_ret),                                                                            \
    (platform, param_name, param_value_size, param_value, param_value_size_ret))                               \
  X(cl_int, clGetProgramBuildInfo,                                                                             \
    (cl_program program, cl_device_id device, cl_program_build_info param_name, size_t param_value_size,       \
     void* param_value, size_t* param_value_size_ret),                                                         \
    (program, device, param_name, param_value_size, param_value, param_value_size_ret))                        \
  X(cl_int, clGetProgramInfo,                                                                                  \
    (cl_program program, cl_program_info param_name, size_t param_value_size, void* param_value,               \
     size_t* param_value_size_ret),                                                                            \
    (program, param_name, param_value_size, param_value, param_value_size_ret))                                \
  X(cl_int, clReleaseCommandQueue, (cl_command_queue command_queue), (command_queue))                          \
  X(cl_int, clReleaseContext, (cl_context context), (context))                                                 \
  X(cl_int, clReleaseDevice, (cl_device_id device), (device))                                                  \
  X(cl_int, clReleaseKernel, (cl_kernel kernel), (kernel))                                                     \
  X(cl_int, clReleaseMemObject, (cl_mem memobj), (memobj))                                                     \
  X(cl_int, clReleaseProgram, (cl_program program), (program))                                                 \
  X(cl_int, clRetainDevice, (cl_device_id device), (device))                                                   \
  X(cl_int, clRetainKernel, (cl_kernel kernel), (kernel))                                                      \
  X(cl_int, clSetKernelArg,                                                                                    \
    (cl_kernel kernel, cl_uint arg_index, size_t arg_size, const void* arg_value),                             \
    (kernel, arg_index, arg_size, arg_value))                                                                  \
// clang-format on

namespace gp::backends::opencl {

namespace {

#define GP_CL_POINTER(ret, name, params, args) ret(CL_API_CALL* name) params = nullptr;
struct Functions {
  std::string library;
  GP_CL_FUNCTIONS(GP_CL_POINTER)
};
#undef GP_CL_POINTER

Expected<Functions> load() {
  auto library = open_library("GPUPARANOIA_OPENCL_LIBRARY", {"libOpenCL.so.1"});
  if (!library) return library.error();
  Functions f;
  f.library = library->path;
#define GP_CL_RESOLVE(ret, name, params, args)                                                        \
  if (!(f.name = reinterpret_cast<decltype(f.name)>(library->symbol(#name))))                       \
    return Error{fmt::format("{} has no {}: an ICD loader older than OpenCL 2.0", f.library, #name), ErrorKind::unsupported};
  GP_CL_FUNCTIONS(GP_CL_RESOLVE)
#undef GP_CL_RESOLVE
  return f;
}

const Expected<Functions>& loaded() {
  static const Expected<Functions> functions = load();
  return functions;
}

// The table for a forwarder: the backend calls OpenCL only after icd_loader() succeeded, so that a
// failure here is a bug of the program, not of the machine.
const Functions& functions() {
  if (!loaded()) {
    std::fprintf(stderr, "gpuparanoia: OpenCL called without its ICD loader: %s\n", loaded().error().message.c_str());
    std::abort();
  }
  return *loaded();
}

}  // namespace

Expected<std::string> icd_loader() {
  if (!loaded()) return loaded().error();
  return loaded()->library;
}

}  // namespace gp::backends::opencl

#define GP_CL_FORWARD(ret, name, params, args) \
  extern "C" ret CL_API_CALL name params { return gp::backends::opencl::functions().name args; }
GP_CL_FUNCTIONS(GP_CL_FORWARD)
#undef GP_CL_FORWARD
