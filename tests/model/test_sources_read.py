"""Model sources are read the same way everywhere (issue 30, items 4 and 5): a
UTF-8 byte-order mark is skipped, a FIFO is refused before it is opened, and a
model with nothing to simulate is an error, not a prediction of 0 s."""

from __future__ import annotations

import json
import os

import pytest

from pevpm.cli import main

CONSTANT = "constant:latency=1e-6"
BOM = b"\xef\xbb\xbf"
MODEL_FILE = b"""from pevpm.model.builder import ModelBuilder


def model():
    b = ModelBuilder()
    b.serial(1)
    return b
"""


def predicted_mean(path, capsys) -> float:
    assert main(["predict", str(path), "-n", "1", "--runs", "2", "--machine", CONSTANT,
                 "--json", "--no-bounds"]) == 0
    return json.loads(capsys.readouterr().out)["predictions"][0]["mean"]


@pytest.mark.parametrize("name, text", [("m.c", b"// PEVPM Serial time = 1\n"),
                                        ("m.f90", b"! PEVPM Serial time = 1\n"),
                                        ("d.py", b"# PEVPM Serial time = 1\n"),
                                        ("model.py", MODEL_FILE)])
def test_a_byte_order_mark_is_skipped(tmp_path, capsys, name, text):
    path = tmp_path / name
    path.write_bytes(BOM + text)
    assert predicted_mean(path, capsys) == pytest.approx(1.0)


@pytest.mark.parametrize("text", ["int main(void) { return 0; }\n",
                                  "// PEVPM Parameter n = 4\n"])
def test_a_model_with_nothing_to_simulate_is_an_error(tmp_path, capsys, text):
    path = tmp_path / "m.c"
    path.write_text(text)
    assert main(["predict", str(path), "-n", "1,2", "--runs", "2", "--machine", CONSTANT]) == 2
    err = capsys.readouterr().err
    assert "nothing to simulate" in err and "Traceback" not in err


def test_a_fifo_model_is_refused_before_opening(tmp_path, capsys):
    fifo = tmp_path / "m.c"
    os.mkfifo(fifo)
    assert main(["show", str(fifo)]) == 2
    assert "is not a regular file (a FIFO)" in capsys.readouterr().err


def test_a_dpgraph_file_that_is_not_utf8(tmp_path, capsys):
    graph = tmp_path / "g.toml"
    graph.write_bytes(b"[nodes]\na = [1] # \xff\xfe\n")
    assert main(["analytic", "dpgraph", str(graph)]) == 2
    err = capsys.readouterr().err
    assert f"{graph}:2: is not UTF-8 text (byte 0xff)" in err and "Traceback" not in err
