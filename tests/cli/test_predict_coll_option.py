"""``pevpm predict --coll`` chooses the collective algorithm the VM simulates."""

import json

import pytest

from pevpm.cli import main

MODEL = '''from pevpm.model.builder import ModelBuilder


def model():
    b = ModelBuilder()
    b.collective("MPI_Bcast", 1024, root=0)
    return b
'''


def _mean(tmp_path, capsys, *coll):
    path = tmp_path / "bcast.py"
    path.write_text(MODEL)
    args = ["predict", str(path), "-n", "16", "--machine", "constant:latency=10us",
            "--runs", "2", "--executor", "inline", "--json"]
    for spec in coll:
        args += ["--coll", spec]
    assert main(args) == 0
    return json.loads(capsys.readouterr().out)["predictions"][0]["mean"]


def test_binomial_takes_log2_steps_and_linear_one(tmp_path, capsys):
    # Constant 10 us messages, Isends returning at once: the binomial tree needs
    # log2(16) = 4 hops to reach rank 15, the linear broadcast one.
    assert _mean(tmp_path, capsys, "bcast=binomial") == pytest.approx(40e-6, abs=1e-15)
    assert _mean(tmp_path, capsys, "bcast=linear") == pytest.approx(10e-6, abs=1e-15)


def test_unknown_algorithm_is_a_one_line_error(tmp_path, capsys):
    path = tmp_path / "bcast.py"
    path.write_text(MODEL)
    assert main(["predict", str(path), "-n", "4", "--coll", "bcast=bogus"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [("pevpm: error: unknown bcast algorithm 'bogus' (choose from binomial, "
                   "linear, scatter-allgather, measured, hardware)")]
