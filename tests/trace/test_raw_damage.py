"""The tracer's raw records, damaged: each is one error naming the file, and
``pevpm trace`` leaves the raw records (the data) but no partial archive."""

import os
from pathlib import Path

import numpy as np
import pytest
from conftest import MPICC

from pevpm.cli import main
from pevpm.errors import PevpmError
from pevpm.trace.otf2.read import read_archive
from pevpm.trace.otf2.write import write_archive
from pevpm.trace.raw import RECORD, read_raw

OPS = ("INIT", "FINALIZE", "SEND", "RECV", "BARRIER", "COMPLETE")


def write_raw(directory: Path, size: int = 2) -> Path:
    """Raw records of ``size`` ranks: MPI_Init, a barrier, MPI_Finalize; rank 0 also
    sends 8 bytes to rank 1, which receives them."""
    directory.mkdir(parents=True, exist_ok=True)
    for rank in range(size):
        ops = [("INIT", -1, -1), ("BARRIER", 0, -1), ("FINALIZE", -1, -1)]
        if size > 1 and rank < 2:
            ops.insert(1, ("SEND", 0, 1) if rank == 0 else ("RECV", 0, 0))
        records = np.zeros(len(ops), dtype=RECORD)
        for i, (op, comm, peer) in enumerate(ops):
            records[i] = (i, i + 0.5, 0.1, 0.0, 8, 8, OPS.index(op), comm, peer, 0, -1, 0, -1, 0)
        records.tofile(directory / f"rank-{rank}.bin")
        (directory / f"rank-{rank}.txt").write_text(
            f"rank {rank}\nsize {size}\nrecord 80\nops {' '.join(OPS)}\n"
            f"comm 0 {size} {' '.join(map(str, range(size)))}\noffset 0\n")
    return directory


def _edit_text(path: Path, old: str, new: str) -> None:
    path.write_text(path.read_text().replace(old, new))


def _edit_records(path: Path, field: str, value) -> None:
    records = np.fromfile(path, dtype=RECORD)
    records[field][1] = value
    records.tofile(path)


DAMAGES = {
    "record size": (lambda d: _edit_text(d / "rank-0.txt", "record 80", "record 64"),
                    "rank-0.txt", "trace records are 64 bytes, expected 80 bytes"),
    "blank line": (lambda d: _edit_text(d / "rank-0.txt", "offset 0\n", "\noffset 0\n"),
                   "rank-0.txt", ("not the tracer's metadata (ValueError: not enough values "
                                 "to unpack (expected at least 1, got 0))")),
    "no ops": (lambda d: _edit_text(d / "rank-0.txt", f"ops {' '.join(OPS)}\n", ""),
               "rank-0.txt", "not the tracer's metadata (KeyError: 'ops')"),
    "words for numbers": (lambda d: _edit_text(d / "rank-0.txt", "size 2", "size two"),
                          "rank-0.txt", ("not the tracer's metadata (ValueError: invalid "
                                        "literal for int() with base 10: 'two')")),
    "not text": (lambda d: (d / "rank-0.txt").write_bytes(b"\xff\xfe"),
                 "rank-0.txt", ("not the tracer's metadata (UnicodeDecodeError: 'ascii' codec "
                               "can't decode byte 0xff in position 0: ordinal not in "
                               "range(128))")),
    "no ranks": (lambda d: _edit_text(d / "rank-0.txt", "size 2", "size 0"),
                 "rank-0.txt", "says it is rank 0 of 0, expected rank 0"),
    "another rank's": (lambda d: _edit_text(d / "rank-1.txt", "rank 1", "rank 0"),
                       "rank-1.txt", "says it is rank 0 of 2, expected rank 1"),
    "clock offset": (lambda d: _edit_text(d / "rank-0.txt", "offset 0", "offset nan"),
                     "rank-0.txt", "its clock offset is nan"),
    "no COMPLETE": (lambda d: _edit_text(d / "rank-0.txt", " COMPLETE", ""),
                    "rank-0.txt", "its ops line has no COMPLETE"),
    "cut short": (lambda d: (d / "rank-0.bin").write_bytes((d / "rank-0.bin").read_bytes()[:100]),
                  "rank-0.bin", "holds 100 bytes, not whole 80-byte records (cut short?)"),
    "unknown op": (lambda d: _edit_records(d / "rank-0.bin", "op", 99),
                   "rank-0.bin", ("record 1 is not the tracer's (op 99, communicator 0, "
                                 "times 1.0, 1.5)")),
    "unknown communicator": (lambda d: _edit_records(d / "rank-0.bin", "comm", 7),
                             "rank-0.bin", ("record 1 is not the tracer's (op 2, "
                                           "communicator 7, times 1.0, 1.5)")),
    "time": (lambda d: _edit_records(d / "rank-1.bin", "t1", np.inf),
             "rank-1.bin", ("record 1 is not the tracer's (op 3, communicator 0, times 1.0, "
                           "inf)")),
}


def test_the_synthetic_records_make_an_archive(tmp_path):
    ranks = read_raw(write_raw(tmp_path / "raw"))
    assert [(r.rank, r.size, len(r.records)) for r in ranks] == [(0, 2, 4), (1, 2, 4)]
    trace = read_archive(write_archive(ranks, tmp_path))
    assert [[c.name for c in calls] for calls in trace.ranks] == [
        ["MPI_Init", "MPI_Send", "MPI_Barrier", "MPI_Finalize"],
        ["MPI_Init", "MPI_Recv", "MPI_Barrier", "MPI_Finalize"]]


@pytest.mark.parametrize("name", sorted(DAMAGES))
def test_damaged_raw_records_are_one_error(tmp_path, name):
    change, where, message = DAMAGES[name]
    directory = write_raw(tmp_path / "raw")
    change(directory)
    with pytest.raises(PevpmError) as caught:
        read_raw(directory)
    assert str(caught.value) == f"{directory / where}: {message}"


@pytest.mark.skipif(not MPICC, reason="needs mpicc (the tracer is built)")
def test_records_that_make_no_archive_leave_the_raw_records_only(tmp_path, cache_home, capsys):
    """A peer outside its communicator passes the checks of raw.py but not the
    archive writer: one error, the raw records kept, no part of an archive."""
    source = write_raw(tmp_path / "made")
    _edit_records(source / "rank-0.bin", "peer", 5)
    launcher = tmp_path / "launch.sh"
    launcher.write_text(f'#!/bin/sh\ncp {source}/* "$PEVPM_TRACE_DIR"/\n')
    launcher.chmod(0o755)
    out = tmp_path / "out"
    assert main(["trace", "-o", str(out), "--", str(launcher)]) == 2
    raw = out.resolve() / "raw"
    assert capsys.readouterr().err.strip() == (
        "pevpm: error: pevpm trace: the raw records do not make an OTF2 archive (ValueError: "
        f"tuple.index(x): x not in tuple); they are in {raw}")
    assert sorted(os.listdir(out)) == [".pevpm-folder", "raw"]     # a trace folder's mark
    assert sorted(os.listdir(raw)) == ["rank-0.bin", "rank-0.txt", "rank-1.bin", "rank-1.txt"]
