! The few OpenCL 3.0 host functions and constants that run_kernel.f90 needs, as iso_c_binding
! interfaces (link with -lOpenCL). OpenCL handles (cl_platform_id, cl_device_id, cl_context,
! cl_command_queue, cl_program, cl_kernel, cl_mem, cl_event) are type(c_ptr); cl_int and cl_uint
! are integer(c_int32_t); cl_bitfield, cl_ulong and cl_device_type are integer(c_int64_t).
! Optional dummies are passed as NULL when absent.
module opencl_minimal
    use, intrinsic :: iso_c_binding
    implicit none

    integer(c_int32_t), parameter :: CL_SUCCESS = 0
    integer(c_int32_t), parameter :: CL_TRUE = 1
    integer(c_int64_t), parameter :: CL_DEVICE_TYPE_ALL = int(z'FFFFFFFF', c_int64_t)
    integer(c_int64_t), parameter :: CL_MEM_READ_WRITE = 1
    integer(c_int64_t), parameter :: CL_MEM_WRITE_ONLY = 2
    integer(c_int64_t), parameter :: CL_MEM_READ_ONLY = 4
    integer(c_int64_t), parameter :: CL_MEM_COPY_HOST_PTR = 32

    interface
        integer(c_int32_t) function clGetPlatformIDs(num_entries, platforms, num_platforms) &
            bind(c, name="clGetPlatformIDs")
            import
            integer(c_int32_t), value :: num_entries
            type(c_ptr), dimension(*), intent(inout) :: platforms
            integer(c_int32_t), intent(inout) :: num_platforms
        end function clGetPlatformIDs

        integer(c_int32_t) function clGetDeviceIDs(platform, device_type, num_entries, devices, &
            num_devices) bind(c, name="clGetDeviceIDs")
            import
            type(c_ptr), value :: platform
            integer(c_int64_t), value :: device_type
            integer(c_int32_t), value :: num_entries
            type(c_ptr), dimension(*), intent(inout) :: devices
            integer(c_int32_t), intent(inout) :: num_devices
        end function clGetDeviceIDs

        type(c_ptr) function clCreateContext(properties, num_devices, devices, pfn_notify, &
            user_data, errcode_ret) bind(c, name="clCreateContext")
            import
            type(c_ptr), value :: properties
            integer(c_int32_t), value :: num_devices
            type(c_ptr), dimension(*), intent(in) :: devices
            type(c_funptr), value :: pfn_notify
            type(c_ptr), value :: user_data
            integer(c_int32_t), intent(inout) :: errcode_ret
        end function clCreateContext

        type(c_ptr) function clCreateCommandQueueWithProperties(context, device, properties, &
            errcode_ret) bind(c, name="clCreateCommandQueueWithProperties")
            import
            type(c_ptr), value :: context
            type(c_ptr), value :: device
            type(c_ptr), value :: properties
            integer(c_int32_t), intent(inout) :: errcode_ret
        end function clCreateCommandQueueWithProperties

        type(c_ptr) function clCreateBuffer(context, flags, size, host_ptr, errcode_ret) &
            bind(c, name="clCreateBuffer")
            import
            type(c_ptr), value :: context
            integer(c_int64_t), value :: flags
            integer(c_size_t), value :: size
            type(c_ptr), value :: host_ptr
            integer(c_int32_t), intent(inout) :: errcode_ret
        end function clCreateBuffer

        type(c_ptr) function clCreateKernel(program, kernel_name, errcode_ret) &
            bind(c, name="clCreateKernel")
            import
            type(c_ptr), value :: program
            character(kind=c_char), dimension(*), intent(in) :: kernel_name
            integer(c_int32_t), intent(inout) :: errcode_ret
        end function clCreateKernel

        integer(c_int32_t) function clSetKernelArg(kernel, arg_index, arg_size, arg_value) &
            bind(c, name="clSetKernelArg")
            import
            type(c_ptr), value :: kernel
            integer(c_int32_t), value :: arg_index
            integer(c_size_t), value :: arg_size
            type(c_ptr), value :: arg_value
        end function clSetKernelArg

        integer(c_int32_t) function clEnqueueNDRangeKernel(queue, kernel, work_dim, &
            global_work_offset, global_work_size, local_work_size, num_events_in_wait_list, &
            event_wait_list, event) bind(c, name="clEnqueueNDRangeKernel")
            import
            type(c_ptr), value :: queue
            type(c_ptr), value :: kernel
            integer(c_int32_t), value :: work_dim
            integer(c_size_t), dimension(*), intent(in), optional :: global_work_offset
            integer(c_size_t), dimension(*), intent(in) :: global_work_size
            integer(c_size_t), dimension(*), intent(in), optional :: local_work_size
            integer(c_int32_t), value :: num_events_in_wait_list
            type(c_ptr), dimension(*), intent(in), optional :: event_wait_list
            type(c_ptr), intent(inout), optional :: event
        end function clEnqueueNDRangeKernel

        integer(c_int32_t) function clEnqueueReadBuffer(queue, buffer, blocking_read, offset, &
            size, ptr, num_events_in_wait_list, event_wait_list, event) &
            bind(c, name="clEnqueueReadBuffer")
            import
            type(c_ptr), value :: queue
            type(c_ptr), value :: buffer
            integer(c_int32_t), value :: blocking_read
            integer(c_size_t), value :: offset
            integer(c_size_t), value :: size
            type(c_ptr), value :: ptr
            integer(c_int32_t), value :: num_events_in_wait_list
            type(c_ptr), dimension(*), intent(in), optional :: event_wait_list
            type(c_ptr), intent(inout), optional :: event
        end function clEnqueueReadBuffer

        integer(c_int32_t) function clFinish(queue) bind(c, name="clFinish")
            import
            type(c_ptr), value :: queue
        end function clFinish

        integer(c_int32_t) function clReleaseMemObject(memobj) bind(c, name="clReleaseMemObject")
            import
            type(c_ptr), value :: memobj
        end function clReleaseMemObject

        integer(c_int32_t) function clReleaseKernel(kernel) bind(c, name="clReleaseKernel")
            import
            type(c_ptr), value :: kernel
        end function clReleaseKernel

        integer(c_int32_t) function clReleaseProgram(program) bind(c, name="clReleaseProgram")
            import
            type(c_ptr), value :: program
        end function clReleaseProgram

        integer(c_int32_t) function clReleaseCommandQueue(queue) &
            bind(c, name="clReleaseCommandQueue")
            import
            type(c_ptr), value :: queue
        end function clReleaseCommandQueue

        integer(c_int32_t) function clReleaseContext(context) bind(c, name="clReleaseContext")
            import
            type(c_ptr), value :: context
        end function clReleaseContext
    end interface

contains

    !> Stops the program with the OpenCL error code when err is not CL_SUCCESS.
    subroutine cl_check(err, what)
        integer(c_int32_t), intent(in) :: err
        character(len=*), intent(in) :: what

        if (err /= CL_SUCCESS) then
            write (*, '(a, " failed: OpenCL error ", i0)') what, err
            error stop 1
        end if
    end subroutine cl_check
end module opencl_minimal
