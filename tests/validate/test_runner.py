import subprocess
import time

import pytest

from pevpm.errors import PevpmError
from pevpm.validate.runner import (
    LocalLauncher,
    Measurement,
    find_example,
    find_mpiexec,
    run_example,
    run_once,
)


def test_measurement_statistics():
    m = Measurement("x", 2, [], [1.0, 2.0, 4.0])
    assert (m.mean, m.median) == (pytest.approx(7 / 3), 2.0)
    assert m.sd == pytest.approx(1.5275252, rel=1e-6)
    assert Measurement("x", 1, [], [3.0]).sd == 0.0
    assert m.summary()["min"] == 1.0 and m.summary()["max"] == 4.0


def test_examples_are_found_by_name_folder_or_file():
    path = find_example("jacobi")
    assert path.name == "jacobi.py"
    assert find_example(path.parent) == path == find_example(path)
    with pytest.raises(PevpmError, match="known examples: bag_of_tasks, fft2d, jacobi"):
        find_example("jakobi")


def test_local_launcher_and_mpiexec():
    assert LocalLauncher().command("mpiexec", 3, ["python", "p.py"]) == [
        "mpiexec", "-n", "3", "python", "p.py"]
    assert find_mpiexec().endswith("mpiexec")


@pytest.mark.mpi
def test_run_example_records_each_repeat_after_the_warmup():
    m = run_example("jacobi", 1, ["--size", "16", "--iterations", "3"], repeats=2, warmup=1)
    assert (m.program, m.nprocs, len(m.times), len(m.records)) == ("jacobi", 1, 2, 2)
    assert m.times == [r["wall_time"] for r in m.records]
    assert all(r["params"]["iterations"] == 3 for r in m.records)
    assert len(m.others) == 2 and all(others >= 0 for others in m.others)   # machine load
    assert m.busiest == max(m.others)


@pytest.mark.mpi
def test_a_failing_run_shows_the_program_output():
    with pytest.raises(PevpmError, match=r"(?s)jacobi -n 2: exited with status 2.*need size >= 3"):
        run_once("jacobi", 2, ["--size", "1"])


@pytest.mark.mpi
def test_a_run_over_its_time_limit_is_killed():
    with pytest.raises(PevpmError, match="timed out after 1 s"):
        run_once("jacobi", 2, ["--iterations", "100000000", "--seed", "7", "--size", "64"],
                 timeout=1)
    time.sleep(0.5)
    left = subprocess.run(["pgrep", "-f", "iterations 100000000 --seed 7"],
                          capture_output=True, text=True, check=False).stdout
    assert left.strip() == ""


def test_bad_counts_are_refused():
    with pytest.raises(PevpmError, match="at least 1"):
        run_once("jacobi", 0)
    with pytest.raises(PevpmError, match="repeats >= 1"):
        run_example("jacobi", 1, repeats=0)
