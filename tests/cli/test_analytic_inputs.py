"""The CSV files of ``pevpm analytic ... --fit`` are read like every other input
(issue 30, item 4): text that is not UTF-8 and FIFOs are one error line."""

import os

import pytest

from pevpm.cli import main

COMMANDS = {"times": ["analytic", "laws", "--fit"],
            "speedups": ["analytic", "spmd", "--model", "bus-aio", "--preset", "qcrd", "--fit"]}
HEADERS = {"times": b"n,time\n1,2.0\n2,1.1", "speedups": b"p,d,speedup\n16,1,5.7"}


def one_error(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err.strip()


@pytest.mark.parametrize("kind", sorted(COMMANDS))
def test_a_csv_that_is_not_utf8(tmp_path, capsys, kind):
    path = tmp_path / "m.csv"
    path.write_bytes(HEADERS[kind] + b"\xff\n")
    assert main([*COMMANDS[kind], str(path)]) == 2
    assert "is not UTF-8 text (byte 0xff)" in one_error(capsys)


@pytest.mark.parametrize("kind", sorted(COMMANDS))
def test_a_csv_that_is_a_fifo(tmp_path, capsys, kind):
    path = tmp_path / "m.csv"
    os.mkfifo(path)
    assert main([*COMMANDS[kind], str(path)]) == 2
    assert "is not a regular file (a FIFO)" in one_error(capsys)
