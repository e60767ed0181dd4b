! Runs tinytc kernels on the first OpenCL device from Fortran, with the program's own cl_context
! and queue (the Fortran counterpart of examples/c/simple_cl.c):
!  - the small GEMM batched recipe, C_i = A_i B_i for 100 batches of 16x16 matrices, through a
!    tinytc_cl recipe handler;
!  - a kernel written in the tensor language, B = 3 A with one work-group per column, parsed,
!    compiled with tinytc_cl_kernel_bundle_create_with_program and launched with OpenCL calls.
! Both results are read back and checked. Build (the module files come first):
!   gfortran capi/fortran/tinytc.f90 examples/fortran/example_support.f90 \
!            examples/fortran/opencl_minimal.f90 \
!            examples/fortran/run_kernel.f90 -Lbuild/lib -ltinytc -ltinytc_cl -lOpenCL \
!            -Wl,-rpath,build/lib
module run_kernel_support
    use tinytc
    use tinytc_cl
    use opencl_minimal
    use example_support
    implicit none

contains

    !> C_i = A_i B_i with the small GEMM batched recipe; A_i is all ones, B_i is i times the
    !  identity (i = 0, ..., howmany - 1), so every entry of C_i must be i.
    !  Returns the number of wrong entries.
    integer function gemm(context, device, queue) result(errors)
        type(c_ptr), intent(in) :: context, device, queue
        integer(c_int64_t), parameter :: n = 16, howmany = 100
        integer(c_size_t), parameter :: bytes = c_sizeof(0.0_c_float) * n * n * howmany
        real(c_float), dimension(:, :, :), allocatable, target :: a, b, c
        real(c_float), target :: alpha, beta
        type(c_ptr) :: info, ctx, f32, recipe, handler, a_buf, b_buf, c_buf
        integer(c_int32_t) :: err
        integer :: h, i

        allocate (a(n, n, howmany), b(n, n, howmany), c(n, n, howmany))
        a = 1.0_c_float
        b = 0.0_c_float
        c = -1.0_c_float
        do h = 1, int(howmany)
            do i = 1, int(n)
                b(i, i, h) = real(h - 1, c_float)
            end do
        end do

        call check(tinytc_cl_core_info_create(info, device), "cl_core_info_create")
        call check(tinytc_compiler_context_create(ctx), "compiler_context_create")
        call check(tinytc_f32_type_get(f32, ctx), "f32_type_get")
        call check(tinytc_recipe_small_gemm_batched_create(recipe, info, f32, &
                                                           tinytc_transpose_N, tinytc_transpose_N, &
                                                           n, n, n, n, n * n, n, n * n, n, n * n), &
                   "recipe_small_gemm_batched_create")
        call check(tinytc_cl_recipe_handler_create(handler, context, device, recipe), &
                   "cl_recipe_handler_create")

        a_buf = clCreateBuffer(context, ior(CL_MEM_READ_ONLY, CL_MEM_COPY_HOST_PTR), bytes, &
                               c_loc(a), err)
        call cl_check(err, "clCreateBuffer(A)")
        b_buf = clCreateBuffer(context, ior(CL_MEM_READ_ONLY, CL_MEM_COPY_HOST_PTR), bytes, &
                               c_loc(b), err)
        call cl_check(err, "clCreateBuffer(B)")
        c_buf = clCreateBuffer(context, CL_MEM_WRITE_ONLY, bytes, c_null_ptr, err)
        call cl_check(err, "clCreateBuffer(C)")

        ! scalars by address and size; buffers (cl_mem) by value
        alpha = 1.0_c_float
        beta = 0.0_c_float
        call check(tinytc_recipe_small_gemm_batched_set_args(handler, howmany, &
                                                             c_sizeof(alpha), c_loc(alpha), &
                                                             tinytc_mem_type_buffer, a_buf, &
                                                             tinytc_mem_type_buffer, b_buf, &
                                                             c_sizeof(beta), c_loc(beta), &
                                                             tinytc_mem_type_buffer, c_buf), &
                   "recipe_small_gemm_batched_set_args")
        ! no wait list and no event: the optional arguments are passed as NULL
        call check(tinytc_cl_recipe_handler_submit(handler, queue, 0_c_int32_t), &
                   "cl_recipe_handler_submit")
        call cl_check(clEnqueueReadBuffer(queue, c_buf, CL_TRUE, 0_c_size_t, bytes, c_loc(c), &
                                          0_c_int32_t), "clEnqueueReadBuffer(C)")
        call cl_check(clFinish(queue), "clFinish")

        errors = 0
        do h = 1, int(howmany)
            errors = errors + count(abs(c(:, :, h) - real(h - 1, c_float)) > 0.0_c_float)
        end do
        write (*, '("gemm: ", i0, " of ", i0, " entries wrong")') errors, size(c)

        call cl_check(clReleaseMemObject(a_buf), "clReleaseMemObject")
        call cl_check(clReleaseMemObject(b_buf), "clReleaseMemObject")
        call cl_check(clReleaseMemObject(c_buf), "clReleaseMemObject")
        call check(tinytc_recipe_handler_release(handler), "recipe_handler_release")
        call check(tinytc_recipe_release(recipe), "recipe_release")
        call check(tinytc_compiler_context_release(ctx), "compiler_context_release")
        call check(tinytc_core_info_release(info), "core_info_release")
    end function gemm

    !> B = 3 A with a kernel written in the tensor language, one work-group per column of the
    !  32 x cols matrices. Returns the number of wrong entries.
    integer function custom_kernel(context, device, queue) result(errors)
        type(c_ptr), intent(in) :: context, device, queue
        character(len=1), parameter :: nl = new_line("a")
        character(len=*), parameter :: source = &
            "func @scale(%A: memref<i32x32x?>, %B: memref<i32x32x?>) {" // nl // &
            "    %gid = group_id.x : index" // nl // &
            "    %a = subview %A[0:32, %gid] : memref<i32x32>" // nl // &
            "    %b = subview %B[0:32, %gid] : memref<i32x32>" // nl // &
            "    %three = constant 3 : i32" // nl // &
            "    %zero = constant 0 : i32" // nl // &
            "    axpby.n %three, %a, %zero, %b" // nl // &
            "}" // nl
        integer, parameter :: rows = 32
        integer(c_int64_t), target :: cols
        integer(c_int32_t), dimension(:, :), allocatable, target :: a, b
        type(c_ptr), target :: a_buf, b_buf
        type(c_ptr) :: prog, bundle, kernel
        integer(c_size_t) :: bytes, local_size(3), global_size(3), num_groups(3)
        integer(c_int32_t) :: err
        integer :: i, j

        cols = 50
        allocate (a(rows, cols), b(rows, cols))
        do j = 1, int(cols)
            do i = 1, rows
                a(i, j) = int(i - 1 + rows * (j - 1), c_int32_t)
            end do
        end do
        b = -1
        bytes = c_sizeof(a(1, 1)) * size(a, kind=c_size_t)

        ! no compiler context: errors go to the default reporter
        call check(tinytc_parse_string(prog, len(source, c_size_t), source, c_null_ptr), &
                   "parse_string")
        call check(tinytc_cl_kernel_bundle_create_with_program(bundle, context, device, prog, &
                                                               0_c_int32_t), &
                   "cl_kernel_bundle_create_with_program")
        kernel = clCreateKernel(bundle, "scale" // c_null_char, err)
        call cl_check(err, "clCreateKernel")

        a_buf = clCreateBuffer(context, ior(CL_MEM_READ_ONLY, CL_MEM_COPY_HOST_PTR), bytes, &
                               c_loc(a), err)
        call cl_check(err, "clCreateBuffer(A)")
        b_buf = clCreateBuffer(context, CL_MEM_WRITE_ONLY, bytes, c_null_ptr, err)
        call cl_check(err, "clCreateBuffer(B)")

        ! calling convention: each memref is its buffer followed by its dynamic extents (int64)
        call cl_check(clSetKernelArg(kernel, 0_c_int32_t, c_sizeof(a_buf), c_loc(a_buf)), &
                      "clSetKernelArg(0)")
        call cl_check(clSetKernelArg(kernel, 1_c_int32_t, c_sizeof(cols), c_loc(cols)), &
                      "clSetKernelArg(1)")
        call cl_check(clSetKernelArg(kernel, 2_c_int32_t, c_sizeof(b_buf), c_loc(b_buf)), &
                      "clSetKernelArg(2)")
        call cl_check(clSetKernelArg(kernel, 3_c_int32_t, c_sizeof(cols), c_loc(cols)), &
                      "clSetKernelArg(3)")

        call check(tinytc_cl_get_group_size(kernel, local_size), "cl_get_group_size")
        num_groups = [int(cols, c_size_t), 1_c_size_t, 1_c_size_t]
        call tinytc_cl_get_global_size(num_groups, local_size, global_size)
        call cl_check(clEnqueueNDRangeKernel(queue, kernel, 3_c_int32_t, &
                                             global_work_size=global_size, &
                                             local_work_size=local_size, &
                                             num_events_in_wait_list=0_c_int32_t), &
                      "clEnqueueNDRangeKernel")
        call cl_check(clEnqueueReadBuffer(queue, b_buf, CL_TRUE, 0_c_size_t, bytes, c_loc(b), &
                                          0_c_int32_t), "clEnqueueReadBuffer(B)")
        call cl_check(clFinish(queue), "clFinish")

        errors = count(b /= 3 * a)
        write (*, '("custom kernel: ", i0, " of ", i0, " entries wrong")') errors, size(b)

        call cl_check(clReleaseMemObject(a_buf), "clReleaseMemObject")
        call cl_check(clReleaseMemObject(b_buf), "clReleaseMemObject")
        call cl_check(clReleaseKernel(kernel), "clReleaseKernel")
        call cl_check(clReleaseProgram(bundle), "clReleaseProgram")
        call check(tinytc_prog_release(prog), "prog_release")
    end function custom_kernel
end module run_kernel_support

program run_kernel
    use tinytc
    use tinytc_cl
    use opencl_minimal
    use run_kernel_support
    use example_support
    implicit none

    type(c_ptr) :: platforms(1), devices(1), context, queue
    integer(c_int32_t) :: num, err
    integer(c_int) :: level
    integer :: errors

    num = 0
    if (clGetPlatformIDs(1_c_int32_t, platforms, num) /= CL_SUCCESS .or. num == 0) then
        write (*, '(a)') "no OpenCL platform"
        error stop 1
    end if
    num = 0
    if (clGetDeviceIDs(platforms(1), CL_DEVICE_TYPE_ALL, 1_c_int32_t, devices, num) &
        /= CL_SUCCESS .or. num == 0) then
        write (*, '(a)') "no OpenCL device"
        error stop 1
    end if
    call check(tinytc_cl_get_support_level(devices(1), level), "cl_get_support_level")
    if (level == tinytc_support_level_none) then
        write (*, '(a)') "the device is not supported by tinytc"
        error stop 1
    end if
    write (*, '("support level: ", a)') c_string(tinytc_support_level_to_string(level))

    context = clCreateContext(c_null_ptr, 1_c_int32_t, devices, c_null_funptr, c_null_ptr, err)
    call cl_check(err, "clCreateContext")
    queue = clCreateCommandQueueWithProperties(context, devices(1), c_null_ptr, err)
    call cl_check(err, "clCreateCommandQueueWithProperties")

    errors = gemm(context, devices(1), queue)
    errors = errors + custom_kernel(context, devices(1), queue)

    call cl_check(clReleaseCommandQueue(queue), "clReleaseCommandQueue")
    call cl_check(clReleaseContext(context), "clReleaseContext")
    if (errors /= 0) error stop 1
end program run_kernel
