"""Messages never show Python's ``None`` in place of a place (issue 30: "the loop
at None" when no loop of a run that hit its event limit could be extrapolated)."""

from __future__ import annotations

from pevpm.cli import main

#: A loop whose count differs between ranks: never steady, so never extrapolated.
UNEVEN_LOOP = '''from pevpm.model.builder import ModelBuilder


def model():
    b = ModelBuilder()
    with b.loop("100000 + procnum"):
        b.serial(1e-6)
        b.collective("MPI_Barrier")
    return b
'''


def test_an_event_limit_with_no_loop_to_extrapolate_names_no_none(tmp_path, capsys):
    model = tmp_path / "m.py"
    model.write_text(UNEVEN_LOOP)
    assert main(["predict", str(model), "-n", "2", "--runs", "2", "--machine",
                 "constant:latency=1us", "--max-events", "1000"]) == 2
    err = capsys.readouterr().err
    assert "None" not in err and "Traceback" not in err
    assert err.strip().endswith(f"; no loop could be extrapolated: the loop at {model}:6:5 "
                                "has a different count on different ranks")
