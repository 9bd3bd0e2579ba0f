"""Numbers on the command line: finite, in range, one clean line (issue 16)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pevpm.cli import main

SRC = Path(__file__).resolve().parents[2] / "src"
LOOP = ("// PEVPM Parameter iterations = 2\n// PEVPM Loop iterations = iterations\n"
        "// PEVPM {\n// PEVPM Serial time = 1e-3\n// PEVPM }\n")


@pytest.fixture
def model(tmp_path) -> str:
    path = tmp_path / "loop.c"
    path.write_text(LOOP)
    return str(path)


def one_error(capsys) -> str:
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("pevpm: error: "), err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize("argv, expected", [
    (["-D", "iterations=nan"], "-D: value of iterations must be a finite number, got 'nan'"),
    (["-D", "iterations=1e400"], "must be a finite number, got '1e400'"),
    (["-D", "iterations=-5"], "-D iterations=-5: Loop iterations 'iterations' would be -5"),
    (["--seed", "-1"], "argument --seed: must be a whole number from 0 to"),
    (["--runs", "99999999999999999999"], ("argument --runs: must be a whole number from 1 to "
                                         "1000000")),
    (["--runs", "1e3"], "argument --runs: must be a whole number"),
    (["--max-events", "-5"], "argument --max-events: must be a whole number from 0"),
    (["--max-time", "nan"], "argument --max-time: must be a finite number > 0, got 'nan'"),
    (["--max-time", "0"], "argument --max-time: must be a finite number > 0"),
    (["--workers", "0"], "argument --workers: must be a whole number from 1"),
    (["--ppn", "0"], "argument --ppn: must be a whole number from 1"),
    (["-n", "99999999999999999999999999"], ("-n: process count 99999999999999999999999999 is "
                                           "above the limit of 65536")),
    (["-n", "1000000000"], "above the limit of 65536"),
    (["--machine", "hockney:latency=1us,bandwidth=0"], "bandwidth must be above zero, got 0"),
    (["--machine", "hockney:latency=1e400s,bandwidth=1MB/s"], "latency=1e400s is too large"),
    (["--machine", "constant:latency=1us,ppn=2.5"], "ppn must be a whole number >= 1, got 2.5"),
    (["--machine", "loggp:L=1us,o=1us,g=-1us,G=1ns"], "g must not be negative"),
])
def test_bad_numbers_are_one_line_errors(model, capsys, argv, expected):
    args = ["predict", model, "--runs", "1", "--workers", "1", "-n", "2"]
    assert main(args + argv) == 2
    assert expected in one_error(capsys)


def test_negative_count_from_a_define_is_refused_like_a_written_one(model, tmp_path, capsys):
    written = tmp_path / "written.c"
    written.write_text(LOOP.replace("= iterations\n", "= -5\n"))
    assert main(["show", str(written)]) == 2
    assert "negative iteration count -5" in capsys.readouterr().err
    assert main(["show", model, "-D", "iterations=-5"]) == 2
    assert "must not be negative" in one_error(capsys)


def test_analytic_counts_are_bounded_before_anything_is_expanded(capsys):
    assert main(["analytic", "spmd", "--model", "bus-aio", "--preset", "qcrd",
                 "-p", "1..99999999999999"]) == 2
    assert one_error(capsys) == ("pevpm: error: -p: process count 99999999999999 is above the "
                                 "limit of 65536")


def test_zero_bces_per_core_is_refused_not_read_as_the_default(capsys):
    assert main(["analytic", "laws", "-f", "0.9", "-r", "0", "-n", "1,2"]) == 2
    assert one_error(capsys) == "pevpm: error: BCEs per core r must be >= 1, got 0.0"


@pytest.mark.slow
def test_default_event_limit_stops_a_model_that_never_ends(tmp_path, capsys):
    forever = tmp_path / "forever.c"
    forever.write_text("// PEVPM Loop iterations = 1e12\n// PEVPM {\n"
                       "// PEVPM Serial time = 1e-9\n// PEVPM }\n")
    args = ["predict", str(forever), "-n", "1", "--runs", "1", "--workers", "1", "--no-bounds",
            "--machine", "constant:latency=1us"]
    assert main(args + ["--exact"]) == 2
    assert one_error(capsys).startswith("pevpm: error: simulation stopped after 5000000 events")
    # without --exact the loop is steady: 64 iterations simulated, the rest added
    assert main(args) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[2].split()[:2] == ["1", "1000"]
    assert "was simulated for 64 of 1000000000000 iterations and extrapolated" in err


def test_closed_standard_output_ends_quietly(model):
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    proc = subprocess.Popen([sys.executable, "-m", "pevpm", "show", model],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    proc.stdout.close()                       # like `| head -0`
    assert proc.wait(timeout=120) == 141
    assert proc.stderr.read() == b""


def test_usage_errors_return_status_2_in_process(capsys):
    assert main(["predict"]) == 2
    assert "pevpm: error: give the model file to predict (or --list-models)" in one_error(capsys)


def test_local_workers_are_bounded_by_the_cpus(model, capsys):
    assert main(["predict", model, "-n", "2", "--workers", "1000", "--runs", "1"]) == 2
    assert "--workers: 1000 local workers on" in one_error(capsys)


@pytest.mark.parametrize("argv, expected", [
    (["fit", "x.db", "--seed", "-1"], "argument --seed: must be a whole number from 0"),
    (["lab", "run", "jacobi", "-n", "1", "--timeout", "nan"], ("argument --timeout: must be a "
                                                             "finite number > 0")),
    (["machine", "new", "-o", "n.db", "--latency", "1us", "--bandwidth", "1GB/s",
      "--samples", "1e9"], "argument --samples: must be a whole number"),
    (["machine", "new", "-o", "n.db", "--latency", "1e400us", "--bandwidth", "1GB/s"],
     "--latency: 1e400us is too large"),
    (["bench", "-o", "b.db", "--gap", "1e400us"], "--gap: 1e400us is too large"),
    (["machine", "new", "-o", "n.db", "--latency", "1e-300us", "--bandwidth", "1e-300GB/s"],
     "--bandwidth: must be at least 1 B/s, got 1e-300GB/s"),
    (["machine", "new", "-o", "n.db", "--latency", "1e300s", "--bandwidth", "1GB/s"],
     "--latency: must be at most 1e+150 s, got 1e300s"),
    (["machine", "new", "-o", "n.db", "--latency", "1us", "--bandwidth", "1GB/s", "--sizes",
      "0," + "9" * 30], "--sizes: message size " + "9" * 30 + " is above the largest"),
    (["bench", "-o", "b.db", "--outlier-multiplier", "inf"], ("argument --outlier-multiplier: "
                                                            "must be a finite number")),
])
def test_other_commands_check_their_numbers_too(capsys, argv, expected):
    assert main(argv) == 2
    assert expected in one_error(capsys)


def test_the_event_limit_names_the_rank_the_place_and_the_loop(tmp_path, capsys):
    model = tmp_path / "forever.c"
    model.write_text("// PEVPM Loop iterations = 1e12\n// PEVPM {\n"
                     "// PEVPM Serial time = 1e-9\n// PEVPM }\n")
    assert main(["predict", str(model), "-n", "1", "--runs", "1", "--max-events", "1000",
                 "--exact", "--no-bounds"]) == 2
    err = capsys.readouterr().err
    assert (f"simulation stopped after 1000 events while rank 0 ran in iteration 500 of "
            f"1000000000000 of the loop at {model}:1:10") in err
