! pevpm region timing for Fortran: the C library's calls (pevpm_region.h).
!
!   use pevpm_region
!   call pevpm_region_begin("spmv")
!   call spmv(a, x, y)
!   call pevpm_region_end("spmv")
!
! Build this file and pevpm_region.c with the program:
!   mpif90 $(pevpm calibrate --fortran) prog.f90 $(pevpm calibrate --libs) -o prog
module pevpm_region
  use iso_c_binding, only: c_char, c_null_char
  implicit none
  private
  public :: pevpm_region_begin, pevpm_region_end, pevpm_region_write

  interface
    subroutine c_begin(name) bind(C, name="pevpm_region_begin")
      import :: c_char
      character(kind=c_char), dimension(*), intent(in) :: name
    end subroutine
    subroutine c_end(name) bind(C, name="pevpm_region_end")
      import :: c_char
      character(kind=c_char), dimension(*), intent(in) :: name
    end subroutine
    subroutine c_write() bind(C, name="pevpm_region_write")
    end subroutine
  end interface

contains

  subroutine pevpm_region_begin(name)
    character(len=*), intent(in) :: name
    call c_begin(trim(name) // c_null_char)
  end subroutine

  subroutine pevpm_region_end(name)
    character(len=*), intent(in) :: name
    call c_end(trim(name) // c_null_char)
  end subroutine

  subroutine pevpm_region_write()
    call c_write()
  end subroutine

end module pevpm_region
