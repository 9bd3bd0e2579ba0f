"""``pevpm report DIR`` checks results.json before drawing (issue 30, item 4):
a field of the wrong type is one error naming it, never a traceback."""

from __future__ import annotations

import copy
import json

import pytest

from pevpm.cli import main

#: (where in the sample results, the wrong value, the field the error names)
CONFUSIONS = [
    (("title",), ["a", "list"], "title"),
    (("notes",), "one note", "notes"),
    (("machine",), ["node0"], "machine"),
    (("validation", "jacobi", 0, "measured_mean"), "2.0", "validation.jacobi[0].measured_mean"),
    (("validation", "jacobi", 1, "measured_mean"), 0, "validation.jacobi[1].measured_mean"),
    (("validation", "jacobi", 0, "predictions"), [2.02], "validation.jacobi[0].predictions"),
    (("validation", "jacobi", 0, "n"), None, "validation.jacobi[0].n"),
    (("scaling", "jacobi"), {"n": 4}, "scaling.jacobi"),
    (("breakdowns", "jacobi", "ranks", 0, "compute"), "0.8",
     "breakdowns.jacobi.ranks[0].compute"),
    (("breakdowns", "jacobi", "numprocs"), 2.5, "breakdowns.jacobi.numprocs"),
    (("collectives", 0, "completions"), 5, "collectives[0].completions"),
    (("trace",), 7, "trace"),
    (("scaling", "jacobi", 0, "mean"), 10 ** 400, "scaling.jacobi[0].mean"),
    (("explain",), {"jacobi 4": [{"kind": "p2p"}]}, "explain.jacobi 4[0].op"),
    (("figures",), [{"file": "x.png"}], "figures[0].title"),
]


def _set(results: dict, path: tuple, value) -> dict:
    changed = copy.deepcopy(results)
    target = changed
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return changed


@pytest.mark.parametrize("path, value, field", CONFUSIONS)
def test_a_wrong_field_is_one_error_naming_it(tmp_path, capsys, sample_results, path, value,
                                             field):
    (tmp_path / "results.json").write_text(json.dumps(_set(sample_results, path, value)))
    before = (tmp_path / "results.json").read_bytes()
    assert main(["report", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert f"results.json: {field}" in err, err
    assert (tmp_path / "results.json").read_bytes() == before


def test_deeply_nested_results_are_one_error(tmp_path, capsys):
    (tmp_path / "results.json").write_text("[" * 100_000 + "]" * 100_000)
    assert main(["report", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "not valid JSON" in err, err


def test_results_json_that_is_a_fifo_is_refused(tmp_path, capsys):
    import os

    os.mkfifo(tmp_path / "results.json")
    assert main(["report", str(tmp_path)]) == 2
    assert "not a regular file (a FIFO)" in capsys.readouterr().err
