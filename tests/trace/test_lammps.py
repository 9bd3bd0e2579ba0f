"""Debian's packaged LAMMPS (built with Open MPI, nobody here wrote it) through
``pevpm trace`` -> ``replay`` -> ``extract`` -> ``predict`` at 64 ranks: its
Lennard-Jones melt example, shrunk to 864 atoms and 20 steps, traced at 2 and 4
ranks.  ``make test`` installs ``lammps`` with apt where it runs as root (the
``lammps`` target of the Makefile); elsewhere the test is skipped."""

import json
import os
import shutil
from pathlib import Path

import pytest
from conftest import pevpm_command

LMP = shutil.which("lmp")
OPENMPI_RUN = shutil.which("mpirun.openmpi")
MELT = Path("/usr/share/lammps/examples/melt/in.melt")

pytestmark = [
    pytest.mark.mpi, pytest.mark.slow,
    pytest.mark.skipif(not (LMP and OPENMPI_RUN and MELT.is_file()),
                       reason="needs Debian's lammps and Open MPI (as root: apt-get install "
                              "-y lammps openmpi-bin libopenmpi-dev; make test does it)")]


@pytest.fixture(scope="module")
def melt_traces(tmp_path_factory, cache_home):
    """in.melt with a 6^3-cell box (864 atoms) and 20 steps, traced at 2 and 4 ranks."""
    work = tmp_path_factory.mktemp("lammps")
    text = MELT.read_text().replace("block 0 10 0 10 0 10", "block 0 6 0 6 0 6")
    (work / "in.melt").write_text(text.replace("run\t\t250", "run\t\t20"))
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    traces = []
    for n in (2, 4):
        done = pevpm_command("trace", "-o", str(work / f"t{n}"), "--", OPENMPI_RUN,
                             "--oversubscribe", "-n", str(n), LMP, "-in",
                             str(work / "in.melt"), "-log", "none", "-screen", "none")
        assert done.returncode == 0, done.stderr
        traces.append(work / f"t{n}")
    return work, traces


def test_lammps_is_replayed_extracted_and_predicted_at_64_ranks(melt_traces):
    work, traces = melt_traces
    # The traced run is 20 ms of four Open MPI ranks spinning on two cores, so
    # its wall time carries the host's scheduling: two full-suite runs on
    # 2026-11-26 replayed it 10.0% and 10.7% off (docs/apps.md measures the
    # larger melt within 2%).  This bound catches a replay that loses the traced
    # computation or the messages, not the host's noise; the 10% accuracy is
    # measured in benchmarks/apps, not asserted here.
    done = pevpm_command("replay", str(traces[1]), "--machine", "default", "--json")
    assert done.returncode == 0, done.stderr
    replayed = json.loads(done.stdout)
    assert abs(replayed["mean"] - replayed["traced"]) <= 0.25 * replayed["traced"]

    model = work / "melt.py"
    done = pevpm_command("extract", *map(str, traces), "-o", str(model), timeout=600)
    assert done.returncode == 0, done.stderr
    # LAMMPS's own grid: 1 x 1 x 2 at 2 ranks, 1 x 2 x 2 at 4 (MPI_Dims_create's reversed)
    assert "1 x 1 x 2 at 2, 1 x 2 x 2 at 4 ranks (periodic, periodic, periodic), " \
           "MPI_Dims_create's grid with its dimensions smallest first" in done.stderr
    assert "pevpm extract: the model runs at 2, 4, 8, 64, 1024 ranks" in done.stderr
    text = model.read_text()
    assert "cart_shift_asc(procnum, numprocs, 3, " in text and "% numprocs" not in text

    done = pevpm_command("predict", str(model), "-n", "64", "--machine", "default",
                         "--runs", "1", "--json")
    assert done.returncode == 0, done.stderr
    prediction = json.loads(done.stdout)["predictions"][0]
    assert prediction["numprocs"] == 64 and prediction["mean"] > 0
