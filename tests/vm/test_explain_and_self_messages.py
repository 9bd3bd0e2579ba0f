"""``predict --explain`` (text, JSON, HTML report) and messages a rank sends itself."""

import json
from pathlib import Path

import numpy as np
import pytest

from pevpm.cli import main
from pevpm.machine.comm_models import Constant
from pevpm.machine.machine import Machine
from pevpm.machine.presets import parse_machine
from pevpm.machine.transfer import LOCAL_COPY_RATE
from pevpm.model.builder import ModelBuilder
from pevpm.report.html import write_report
from pevpm.vm import engine, fastengine

RING = '''\
from pevpm.model.builder import ModelBuilder


def model():
    b = ModelBuilder()
    with b.loop(50):
        b.sendrecv(8192, dest="(procnum + 1) % numprocs", source="(procnum + 1) % numprocs")
    return b
'''


def to_myself(size):
    b = ModelBuilder()
    with b.loop(4):
        b.isend(size, dest="procnum", request="s")
        b.recv(size, source="procnum")
        b.wait("s")
        b.sendrecv(size, dest="procnum", source="procnum")
    return b.build()


@pytest.mark.parametrize("machine", [parse_machine("default", ppn=2),
                                     Machine(Constant(1e-3, local=1e-3))])
def test_a_message_to_oneself_costs_a_local_copy_whatever_the_network(machine):
    for simulate in (engine.simulate, fastengine.simulate):
        run = simulate(to_myself(65536), 1, machine, rng=np.random.default_rng(0))
        # 8 copies of 64 KiB, no local completion charged, no network draw
        assert run.makespan == pytest.approx(8 * 65536 / LOCAL_COPY_RATE)
        assert run.ranks[0].communication == pytest.approx(run.makespan)


def test_explain_prints_the_block_behind_each_kind_of_message(tmp_path, capsys):
    path = tmp_path / "ring.py"
    path.write_text(RING)
    code = main(["predict", str(path), "-n", "1,2", "--runs", "2", "--machine", "default",
                 "--ppn", "2", "--explain"])
    out, err = capsys.readouterr()
    assert code == 0
    lines = out.splitlines()
    row = next(line for line in lines if "MPI_Sendrecv" in line).split()
    assert row == ["transfer", "MPI_Sendrecv", "duplex", "sendrecv", "1x2", "8192", "1", "100"]
    assert "1 rank: profile blocks used by one run" in out
    assert "(no message drew a time from the profile)" in out     # 1 rank: copies only
    # all ranks on one node: the note about inter-node messages does not apply
    assert "only intra-node" not in err


def test_explain_in_json_feeds_the_report_table(tmp_path, capsys):
    path = tmp_path / "ring.py"
    path.write_text(RING)
    assert main(["predict", str(path), "-n", "2", "--runs", "2", "--machine", "default",
                 "--ppn", "1", "--explain", "--json"]) == 0
    out, err = capsys.readouterr()
    [prediction] = json.loads(out)["predictions"]
    # a rank may post its next message while its last is still on the wire: 2 one way
    assert prediction["explain"] == [{"kind": "transfer", "op": "MPI_Sendrecv",
                                      "exchange": "duplex", "block": "sendrecv 1x2",
                                      "sizes": "8192", "contention": "1..2", "messages": 100}]
    assert "isend: only intra-node (1xp) placements measured" in err   # 2 nodes now
    page = Path(write_report({"explain": {"ring, 2 ranks": prediction["explain"]}},
                             str(tmp_path / "report"))).read_text(encoding="utf-8")
    assert "<h3>ring, 2 ranks</h3>" in page
    assert ("<td class='l'>transfer</td><td class='l'>MPI_Sendrecv</td><td class='l'>duplex"
            "</td><td class='l'>sendrecv 1x2</td>") in page


def test_explain_without_a_profile_is_a_one_line_error(tmp_path, capsys):
    path = tmp_path / "ring.py"
    path.write_text(RING)
    code = main(["predict", str(path), "-n", "2", "--runs", "1", "--machine",
                 "constant:latency=1us", "--explain"])
    _, err = capsys.readouterr()
    assert code == 2
    assert err.strip().splitlines()[-1].startswith("pevpm: error: --explain needs a machine "
                                                   "profile (the communication model is Constant")
