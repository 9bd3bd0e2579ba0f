"""``--topology``/``--placement`` on predict and replay, and ``pevpm machine show``."""

import json
from pathlib import Path

import pytest

from pevpm.cli import main

DATA = Path(__file__).parents[1] / "machine" / "data" / "simgrid"
JACOBI = str(Path(__file__).parents[2] / "examples" / "jacobi" / "jacobi.c")


def test_machine_show_summarises_and_draws(tmp_path, capsys):
    picture = tmp_path / "tree.png"
    assert main(["machine", "show", "fat-tree:k=4,n=2,oversub=2,bw=10Gbit/s,lat=1us",
                 "-n", "6", "--ppn", "2", "--placement", "cyclic", "-o", str(picture)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "fat-tree 2;4,4;1,2;1,1: 16 nodes",
        "routing: D-mod-k up/down (SimGrid FatTreeZone)",
        "nodes: 16, 1 link(s) up each",
        "level 1: 4 switches, 4 ports down, 2 up, oversubscribed 2:1",
        "level 2: 2 switches, 4 ports down, 0 up",
        "links: 48 one-way links (48 at 10 Gbit/s, 1 us); 16 inside nodes",
        "diameter: 4 links",
        "cyclic placement: 6 ranks on 3 nodes, 2 per node",
        f"wrote {picture}"]
    assert picture.read_bytes().startswith(b"\x89PNG")


def test_machine_show_reads_a_simgrid_platform(capsys):
    assert main(["machine", "show", str(DATA / "torus.xml")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("torus 4x3x2: 24 nodes\n")
    assert "576 one-way links" not in out and "144 one-way links (144 at 1.25" not in out
    assert "diameter: 4 links" in out


@pytest.mark.parametrize("argv, message", [
    (["machine", "show", "torus:4x4", "-n", "40"],
     "40 ranks at 1 per node need 40 nodes; the torus 4x4 has 16 (raise --ppn)"),
    (["machine", "show", "tours:4x4"], "unknown topology 'tours' (did you mean 'torus'?)"),
    (["machine", "show", "torus:4x4", "-o", "x.txt"], "must end .png, .svg or .pdf"),
])
def test_machine_show_mistakes_are_one_line(tmp_path, capsys, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("pevpm: error: ") and message in err[0]


def test_predict_takes_a_topology_and_a_placement(tmp_path, capsys):
    hosts = tmp_path / "hosts"
    hosts.write_text("node-0:2\nnode-5:2\n")
    for extra in (["--placement", "random"], ["--placement", str(hosts)], ["--ppn", "2"]):
        assert main(["predict", JACOBI, "-n", "4", "-D", "iterations=2", "--machine",
                     "constant:latency=1us",
                     "--topology", "torus:4x4", "--runs", "1", "--no-bounds", "--json",
                     *extra]) == 0
        assert json.loads(capsys.readouterr().out)["predictions"][0]["mean"] > 0
    assert main(["predict", JACOBI, "-n", "4", "--machine", "perseus",
                 "--topology", str(tmp_path / "missing.xml")]) == 2
    assert "missing.xml: no such topology file" in capsys.readouterr().err
