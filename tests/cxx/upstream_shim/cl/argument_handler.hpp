/** @file
 * @brief tinytc::opencl_argument_handler for programs written against upstream tinytc's test
 * suite, whose OpenCL test runtime includes this (upstream-internal) header.
 *
 * Sets kernel arguments by memory type: buffers by value, USM pointers through the Intel
 * extension function clSetKernelArgMemPointerINTEL, SVM pointers through OpenCL 2.0.
 */
#ifndef TINYTC_SHIM_CL_ARGUMENT_HANDLER_HPP
#define TINYTC_SHIM_CL_ARGUMENT_HANDLER_HPP

#include "tinytc/tinytc_cl.hpp"

#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <cstddef>
#include <cstdint>

namespace tinytc {

class opencl_argument_handler {
  public:
    using clSetKernelArgMemPointerINTEL_t = cl_int (*)(cl_kernel, cl_uint, const void *);

    opencl_argument_handler() = default;
    explicit opencl_argument_handler(cl_platform_id plat) { set_platform(plat); }

    //! Looks up the USM extension function of the platform (absent: USM arguments throw)
    void set_platform(cl_platform_id plat) {
        set_usm_ = reinterpret_cast<clSetKernelArgMemPointerINTEL_t>(
            clGetExtensionFunctionAddressForPlatform(plat, "clSetKernelArgMemPointerINTEL"));
    }

    void set_arg(cl_kernel kernel, std::uint32_t arg_index, std::size_t arg_size,
                 void const *arg_value) const {
        CL_CHECK_STATUS(clSetKernelArg(kernel, arg_index, arg_size, arg_value));
    }

    void set_mem_arg(cl_kernel kernel, std::uint32_t arg_index, const void *value,
                     tinytc_mem_type_t ty) const {
        if (ty == tinytc_mem_type_buffer) {
            set_arg(kernel, arg_index, sizeof(value), &value);
        } else if (ty == tinytc_mem_type_usm_pointer) {
            if (!set_usm_) {
                throw status::unavailable_extension;
            }
            CL_CHECK_STATUS(set_usm_(kernel, arg_index, value));
        } else if (ty == tinytc_mem_type_svm_pointer) {
            CL_CHECK_STATUS(clSetKernelArgSVMPointer(kernel, arg_index, value));
        } else {
            throw status::invalid_arguments;
        }
    }

  private:
    clSetKernelArgMemPointerINTEL_t set_usm_ = nullptr;
};

} // namespace tinytc

#endif // TINYTC_SHIM_CL_ARGUMENT_HANDLER_HPP
