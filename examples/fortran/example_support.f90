! Helpers the Fortran examples share: stop on a failed status, and copy a C string.
module example_support
    use tinytc
    implicit none

    interface
        integer(c_size_t) function strlen(s) bind(c, name="strlen")
            import
            type(c_ptr), value :: s
        end function strlen
    end interface

contains

    !> Stops the program with the status text when status is not success.
    subroutine check(status, what)
        integer(c_int), intent(in) :: status
        character(len=*), intent(in) :: what

        if (status /= tinytc_status_success) then
            write (*, '(a, " failed: ", a)') what, c_string(tinytc_status_to_string(status))
            error stop 1
        end if
    end subroutine check

    !> A copy of a NUL-terminated C string.
    function c_string(ptr) result(str)
        type(c_ptr), intent(in) :: ptr
        character(len=:), allocatable :: str
        character(kind=c_char), pointer :: chars(:)
        integer :: i

        call c_f_pointer(ptr, chars, [strlen(ptr)])
        allocate (character(len=size(chars)) :: str)
        do i = 1, size(chars)
            str(i:i) = chars(i)
        end do
    end function c_string
end module example_support
