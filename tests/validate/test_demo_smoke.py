"""``pevpm demo --quick`` end to end: benchmark, fit, calibrate, validate, report.

Real MPI runs and a real MPIBench; about a minute or two here.  The report
is then rendered in headless Chromium when it is installed.
"""

import json
import re
import shutil
import subprocess
import sys

import pytest

CHROMIUM = shutil.which("chromium")


@pytest.mark.mpi
@pytest.mark.slow
def test_quick_demo_writes_a_complete_report(tmp_path):
    out = tmp_path / "report"
    proc = subprocess.run([sys.executable, "-m", "pevpm", "demo", "--quick", "-o", str(out)],
                          check=False, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads((out / "results.json").read_text())
    assert set(results["validation"]) == {"jacobi", "fft2d", "bag_of_tasks"}
    for example, rows in results["validation"].items():
        assert [r["n"] for r in rows] == ([1, 2, 4, 8] if example == "bag_of_tasks" else [1, 2])
        for r in rows:
            assert r["measured_mean"] > 0 and len(r["measured_times"]) == 2
            # calibrated between the runs: the busiest calibration's load is recorded
            assert r["calibration_others"] is not None and r["calibration_others"] >= 0
            assert {"full", "min2x1", "mean2x1", "mean-nxp", "latency-bandwidth",
                    "amdahl"} <= set(r["predictions"])
    assert [p["n"] for p in results["scaling"]["jacobi"]] == [4, 16, 64]
    trace = json.loads((out / "trace.json").read_text())
    assert {e["ph"] for e in trace["traceEvents"]} >= {"X", "s", "f", "M"}
    assert "ranks" in results["breakdowns"]["jacobi"]
    if CHROMIUM is None:
        pytest.skip("chromium not installed: report rendered but not checked in a browser")
    dom = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={tmp_path / 'chromium'}", "--virtual-time-budget=5000",
         "--dump-dom", f"file://{out / 'index.html'}"],
        check=False, capture_output=True, text=True, timeout=120).stdout
    ok, total = map(int, re.search(r'data-plots-loaded="(\d+)/(\d+)"', dom).groups())
    assert total >= 8 and ok == total
