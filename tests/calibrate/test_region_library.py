"""The region library for C and Fortran programs, built with their own compilers (issue 29)."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pevpm.calibrate.regions import build_flags
from pevpm.cli import main

BIN = Path(sys.executable).parent

C_PROGRAM = r"""
#include <mpi.h>
#include <time.h>
#include "pevpm_region.h"

int main(int argc, char **argv) {
    int rank, i;
    struct timespec pause = {0, 2000000};        /* 2 ms */
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (i = 0; i < 20; i++) {
        pevpm_region_begin("nap");
        nanosleep(&pause, NULL);
        pevpm_region_end("nap");
        MPI_Barrier(MPI_COMM_WORLD);
    }
    pevpm_region_begin("empty");
    pevpm_region_end("empty");
    MPI_Finalize();
    return 0;
}
"""

CXX_PROGRAM = r"""
#include <mpi.h>
#include <numeric>
#include <vector>
#include "pevpm_region.h"

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    std::vector<double> v(1000, 1.0);
    double total = 0.0;
    for (int i = 0; i < 300; i++) {
        pevpm_region_begin("sum");
        total += std::accumulate(v.begin(), v.end(), 0.0);
        pevpm_region_end("sum");
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return total < 0;
}
"""

FORTRAN_PROGRAM = """
program nap
  use pevpm_region
  implicit none
  integer :: i
  real :: x
  x = 0.0
  do i = 1, 5
    call pevpm_region_begin("loop")
    x = x + sqrt(real(i))
    call pevpm_region_end("loop")
  end do
  if (x < 0.0) print *, x
end program nap
"""


def _build(command, cwd):
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def _calibrated_on_two_ranks(folder: Path, compiler: str, source: str, program: str) -> dict:
    """The regions ``pevpm calibrate`` finds in ``program``, built by the mpich wheel's
    ``compiler`` with the region library and run by ``mpiexec -n 2``."""
    (folder / source).write_text(program)
    _build([str(BIN / compiler), "-O2", source, build_flags("cflags"), build_flags("libs"),
            "-o", "prog"], folder)
    out = folder / "cal.json"
    assert main(["calibrate", "-o", str(out), "--repeats", "1", "--busy-retries", "0", "--",
                 str(BIN / "mpiexec"), "-n", "2", str(folder / "prog")]) == 0
    return json.loads(out.read_text())["regions"]


@pytest.mark.mpi
@pytest.mark.skipif(not (BIN / "mpicc").exists(), reason="needs the mpich wheel's mpicc")
def test_a_c_program_calibrates_under_mpiexec(tmp_path, capsys):
    regions = _calibrated_on_two_ranks(tmp_path, "mpicc", "nap.c", C_PROGRAM)
    assert regions["nap"]["calls"] == 2 * 20 and regions["empty"]["calls"] == 2
    assert 0.002 <= regions["nap"]["median"] < 0.05          # a 2 ms sleep, timed
    assert regions["empty"]["max"] < 0.01
    assert "nap" in capsys.readouterr().out


@pytest.mark.mpi
@pytest.mark.skipif(not (BIN / "mpicc").exists(), reason="needs the mpich wheel's mpicc")
def test_an_ordinary_run_is_quiet_and_the_times_can_go_to_standard_output(tmp_path):
    (tmp_path / "nap.c").write_text(C_PROGRAM)
    _build([str(BIN / "mpicc"), "nap.c", build_flags("cflags"), build_flags("libs"), "-o",
            "nap"], tmp_path)
    run = [str(BIN / "mpiexec"), "-n", "1", str(tmp_path / "nap")]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PEVPM_REGION")}
    assert subprocess.run(run, capture_output=True, text=True, check=True, env=env).stdout == ""
    done = subprocess.run(run, capture_output=True, text=True, check=True,
                          env={**env, "PEVPM_REGION_STDOUT": "1"})
    lines = done.stdout.splitlines()
    assert len(lines) == 21 and all(line.startswith("PEVPM-REGION ") for line in lines)


@pytest.mark.mpi
@pytest.mark.skipif(not (BIN / "mpicxx").exists(), reason="needs the mpich wheel's mpicxx")
def test_a_cxx_program_builds_the_library_source_with_mpicxx(tmp_path, capsys):
    """mpicxx compiles the library's .c source as C++: it must be valid C++ too."""
    regions = _calibrated_on_two_ranks(tmp_path, "mpicxx", "sum.cpp", CXX_PROGRAM)
    assert regions["sum"]["calls"] == 2 * 300
    capsys.readouterr()


@pytest.mark.skipif(shutil.which("gfortran") is None, reason="needs gfortran")
def test_the_fortran_module_times_regions(tmp_path, capsys):
    (tmp_path / "nap.f90").write_text(FORTRAN_PROGRAM)
    _build(["gfortran", build_flags("fortran"), "nap.f90", build_flags("libs"), "-o", "nap"],
           tmp_path)
    out = tmp_path / "cal.json"
    assert main(["calibrate", "-o", str(out), "--repeats", "2", "--busy-retries", "0", "--",
                 str(tmp_path / "nap")]) == 0
    assert json.loads(out.read_text())["regions"]["loop"]["calls"] == 10
    capsys.readouterr()


def test_the_build_flags_name_the_shipped_files(capsys):
    assert main(["calibrate", "--cflags"]) == 0
    folder = Path(capsys.readouterr().out.strip()[2:])
    assert (folder / "pevpm_region.h").is_file()
    assert main(["calibrate", "--libs"]) == 0
    assert capsys.readouterr().out.strip() == str(folder / "pevpm_region.c")
