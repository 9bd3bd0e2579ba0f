"""``pevpm calibrate`` says when the machine was busy: it measures again, keeps the
quietest attempt, and warns; the file keeps both machine states (issue 29)."""

import json
import sys

from pevpm.calibrate import timing
from pevpm.cli import main
from pevpm.host import MachineState

BUSY = MachineState(load=5.6, cores=2, others=1.5, spin_rate=2e7)
QUIET = MachineState(load=0.1, cores=2, others=0.0, spin_rate=4e7)


def test_a_busy_machine_is_measured_again_and_named(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(timing, "probe_machine", lambda interval: BUSY)
    out = tmp_path / "cal.json"
    program = [sys.executable, "-c", "print('PEVPM-REGION step 0.01')"]
    assert main(["calibrate", "-o", str(out), "--repeats", "1", "--", *program]) == 0
    printed = capsys.readouterr()
    assert printed.err.count("pevpm calibrate: note: busy") == 1           # measured again
    assert "pevpm calibrate: warning: measured while the machine was busy" in printed.err
    assert "machine before: load 5.60, other processes used 1.50 of 2 cores" in printed.out
    saved = json.loads(out.read_text())
    assert saved["disturbed"].startswith("busy") and saved["machine_states"][0]["others"] == 1.5

    monkeypatch.setattr(timing, "probe_machine", lambda interval: QUIET)
    assert main(["calibrate", "-o", str(out), "--force", "--repeats", "1", "--",
                 *program]) == 0
    assert "warning" not in capsys.readouterr().err
    assert json.loads(out.read_text())["disturbed"] is None
