"""``predict --json`` summarises each collective call site; ``--json-full`` keeps every
call's per-rank completion times (issue 29: 3-14 MB at 1,024 ranks)."""

import json
from pathlib import Path

import pytest

from pevpm.cli import main

HEAT = str(Path(__file__).resolve().parents[2] / "examples/heat/model.py")
ARGS = ["predict", HEAT, "-n", "16", "-D", "iterations=20", "--runs", "2", "--no-bounds",
        "--workers", "1", "--machine", "constant:latency=1e-6", "--exact"]


def predicted(capsys, *extra: str) -> tuple[dict, int]:
    assert main([*ARGS, *extra]) == 0
    out = capsys.readouterr().out
    return json.loads(out)["predictions"][0], len(out)


def test_the_default_json_has_one_entry_per_collective_call_site(capsys):
    entry, size = predicted(capsys, "--json")
    sites = entry["collectives"]
    assert [(s["op"], s["calls"], s["runs"]) for s in sites] == [
        ("MPI_Barrier", 1, 2), ("MPI_Allreduce", 20, 2)]
    assert [s["where"] for s in sites] == [f"{HEAT}:16:5", f"{HEAT}:22:9"]   # its lines
    assert 0 <= sites[1]["spread"] <= sites[1]["spread_max"]
    assert sites[1]["first"] <= sites[1]["last"] <= entry["max"]
    assert len(entry["per_rank"]["compute"]) == 16 and len(entry["makespans"]) == 2
    full, full_size = predicted(capsys, "--json-full")
    assert len(full["collectives"]) == 21
    assert all(len(c["mean_completion"]) == 16 for c in full["collectives"])
    assert {k: v for k, v in full.items() if k != "collectives"} == {
        k: v for k, v in entry.items() if k != "collectives"}
    assert max(c["last"] for c in full["collectives"]) == pytest.approx(sites[1]["last"])
    assert size * 3 < full_size
