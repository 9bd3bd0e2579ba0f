"""Program constants picked up from C, Fortran and Python sources."""

from pevpm.model.constants import find_constants


def test_c_declarations_and_defines():
    src = """
#define N 64
#define TWICE (2 * N)
#define SQUARE(x) ((x) * (x))
/* int hidden = 5; */
// int also_hidden = 6;
static const double dt = 1.5e-3, t_end = 10 * dt;
unsigned long big = 100UL;
float f = 2.5f;
int ysize = 256 / numprocs + 2;
int grid[N];
for (int i = 0; i < N; i++) {}
int first = 1;
int first = 2;
"""
    assert find_constants(src, "c") == {
        "N": 64, "TWICE": 128, "dt": 1.5e-3, "t_end": 10 * 1.5e-3, "big": 100, "f": 2.5,
        "first": 1}


def test_fortran_parameters():
    src = """
      integer, parameter :: n = 256, m = n / 2   ! sizes
      real(kind=8), parameter :: h = 1.0d-3
      real(8), parameter :: w = 2.5_dp
      PARAMETER (NITER = 100)
      integer :: k = 5
"""
    assert find_constants(src, "fortran") == {"n": 256, "m": 128, "h": 1e-3, "w": 2.5,
                                              "NITER": 100}


def test_python_module_level_numbers_only():
    src = """
import numpy as np
SIZE = 256
ITERATIONS: int = 1000
ROW_BYTES = SIZE * 4
RATE = SIZE / 3
FLAG = True
NAME = "jacobi"
ARRAY = np.zeros(4)
def main():
    LOCAL = 5
"""
    assert find_constants(src, "python") == {"SIZE": 256, "ITERATIONS": 1000,
                                             "ROW_BYTES": 1024, "RATE": 256 / 3}


def test_python_that_does_not_parse_has_no_constants():
    assert find_constants("N = 3\ndef broken(:\n", "python") == {}
