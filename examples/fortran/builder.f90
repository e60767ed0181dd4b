! Builds `func @axpby(%A: memref<f32x8x?>, %B: memref<f32x8x?>)`, which sets B = 2*A + B, with the
! tinytc builder API from Fortran, prints the program, compiles it to SPIR-V for a PVC core and
! prints the binary's size and magic number. A parse error shows the error reporter at work.
! Needs no device. Build (the module file comes first):
!   gfortran capi/fortran/tinytc.f90 examples/fortran/example_support.f90 \
!            examples/fortran/builder.f90 -Lbuild/lib -ltinytc \
!            -Wl,-rpath,build/lib
module builder_support
    use tinytc
    use example_support
    implicit none

contains

    !> The error reporter (tinytc_error_reporter_t): prints the location and the message.
    subroutine reporter(what, location, user_data) bind(c)
        type(c_ptr), value :: what
        type(tinytc_location_t), intent(in) :: location
        type(c_ptr), value :: user_data
        integer(c_int), pointer :: count

        call c_f_pointer(user_data, count)
        count = count + 1
        write (*, '("reported at ", i0, ".", i0, ": ", a)') location%begin%line, &
            location%begin%column, c_string(what)
    end subroutine reporter

    !> Appends a float constant to region body and returns its value.
    function append_constant(body, ty, x) result(val)
        type(c_ptr), intent(in) :: body, ty
        real(c_double), intent(in) :: x
        type(c_ptr) :: val, inst
        type(c_ptr) :: values(1)
        integer(c_size_t) :: n

        n = 1
        call check(tinytc_constant_inst_create_float(inst, x, ty), "constant")
        call check(tinytc_inst_get_values(inst, n, values), "inst_get_values")
        call check(tinytc_region_append(body, inst), "region_append") ! the region owns inst
        val = values(1)
    end function append_constant
end module builder_support

program builder
    use tinytc
    use example_support
    use builder_support
    implicit none

    character(len=*), parameter :: bad_source = "func @f(%a: f32) {" // new_line("a") // &
                                                "    %b = add %a, %c : f32" // new_line("a") // "}"
    type(c_ptr) :: ctx, prog, f32, mat, void_ty, fun, body, alpha, beta, inst, info, bin, text
    type(c_ptr) :: data, bad_prog
    type(c_ptr) :: param_types(2), params(2)
    integer(c_int64_t) :: shape(2), no_stride(1)
    integer(c_size_t) :: n, size
    integer(c_int) :: format
    integer(c_int), target :: reports
    integer(c_int32_t), pointer :: words(:)

    call check(tinytc_compiler_context_create(ctx), "compiler_context_create")
    reports = 0
    call check(tinytc_compiler_context_set_error_reporter(ctx, c_funloc(reporter), &
                                                          c_loc(reports)), "set_error_reporter")
    call check(tinytc_prog_create(prog, ctx), "prog_create") ! loc omitted: passed as NULL

    ! types: f32 and memref<f32x8x?>
    shape = [8_c_int64_t, TINYTC_DYNAMIC]
    call check(tinytc_f32_type_get(f32, ctx), "f32_type_get")
    call check(tinytc_memref_type_get(mat, f32, 2_c_size_t, shape, 0_c_size_t, no_stride, &
                                      tinytc_address_space_global), "memref_type_get")
    call check(tinytc_void_type_get(void_ty, ctx), "void_type_get")

    ! the function and its parameters
    param_types = [mat, mat]
    call check(tinytc_func_create(fun, 5_c_size_t, "axpby", 2_c_size_t, param_types, void_ty), &
               "func_create")
    call check(tinytc_prog_add_function(prog, fun), "prog_add_function") ! prog owns fun now
    call check(tinytc_func_get_body(fun, body), "func_get_body")
    n = 2
    call check(tinytc_region_get_parameters(body, n, params), "region_get_parameters")
    call check(tinytc_value_set_name(params(1), "A" // c_null_char), "value_set_name")
    call check(tinytc_value_set_name(params(2), "B" // c_null_char), "value_set_name")

    ! B = 2*A + B
    alpha = append_constant(body, f32, 2.0_c_double)
    beta = append_constant(body, f32, 1.0_c_double)
    call check(tinytc_axpby_inst_create(inst, 0_c_int8_t, tinytc_transpose_N, alpha, params(1), &
                                        beta, params(2)), "axpby_inst_create")
    call check(tinytc_region_append(body, inst), "region_append")

    call check(tinytc_prog_print_to_string(prog, text), "prog_print_to_string")
    write (*, '(a)', advance="no") c_string(text)
    call tinytc_string_destroy(text)

    ! compile to SPIR-V for a PVC core
    call check(tinytc_core_info_intel_create_from_arch(info, tinytc_intel_gpu_architecture_pvc), &
               "core_info_intel_create_from_arch")
    call check(tinytc_prog_compile_to_spirv_and_assemble(bin, prog, info), "compile")
    call check(tinytc_binary_get_raw(bin, format, size, data), "binary_get_raw")
    call c_f_pointer(data, words, [size / 4])
    write (*, '("format: ", a)') c_string(tinytc_bundle_format_to_string(format))
    write (*, '("spirv bytes: ", i0)') size
    write (*, '("magic: 0x", z8.8)') words(1)

    ! a parse error: the status and one message through the reporter
    call check(merge(tinytc_status_success, tinytc_status_runtime_error, &
                     tinytc_parse_string(bad_prog, len(bad_source, c_size_t), bad_source, ctx) &
                     == tinytc_status_parse_error), "expecting a parse error")
    write (*, '("reports: ", i0)') reports

    call check(tinytc_binary_release(bin), "binary_release")
    call check(tinytc_core_info_release(info), "core_info_release")
    call check(tinytc_prog_release(prog), "prog_release")
    call check(tinytc_compiler_context_release(ctx), "compiler_context_release")
end program builder
