// OpenCL opened at run time: the ICD loader (libOpenCL.so.1, or the file GPUPARANOIA_OPENCL_LIBRARY
// names), so that the program starts where there is none. opencl_api.cpp defines the C entry
// points the C++ bindings call as forwarders to it.
#pragma once

#include <string>

#include "backends/expected.hpp"

namespace gp::backends::opencl {

// The file of the ICD loader, opened once per process, or why there is none. The backend calls
// OpenCL only after this has succeeded.
Expected<std::string> icd_loader();

}  // namespace gp::backends::opencl
