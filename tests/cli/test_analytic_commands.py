import csv

import numpy as np
import pytest

from pevpm import cli
from pevpm.analytic import QCRD_TABLE4, speedup


@pytest.fixture
def run(capsys):
    def invoke(*argv):
        code = cli.main(["analytic", *map(str, argv)])
        out, err = capsys.readouterr()
        return code, out, err

    return invoke


def test_laws_table_and_plot(run, tmp_path):
    plot = tmp_path / "laws.png"
    code, out, _ = run("laws", "-f", "0.9", "-r", "4", "-n", "1..16*2", "--t-seq", "10",
                       "--messages", "3", "--message-bits", "8e6", "--plot", plot)
    assert code == 0
    lines = out.splitlines()
    assert lines[1].split() == ["n", "Amdahl", "Gustafson", "Hill-Marty", "sym", "Hill-Marty",
                                "asym", "Hill-Marty", "dyn", "Sun-Chen", "Khanyile"]
    row16 = lines[-2].split()
    assert row16[0] == "16" and float(row16[1]) == pytest.approx(6.4, rel=1e-5)
    assert lines[2].split()[3] == "-"  # n = 1 < r: no Hill-Marty chip
    assert plot.stat().st_size > 1000


def test_laws_from_yaml_config_with_command_line_override(run, tmp_path):
    config = tmp_path / "laws.yaml"
    config.write_text("parallel_fraction: 0.5\nprocessors: [1, 2]\n")
    code, out, _ = run("laws", "--config", config)
    assert code == 0 and out.splitlines()[-1].split()[:2] == ["2", "1.33333"]
    code, out, _ = run("laws", "--config", config, "-f", "1.0")
    assert out.splitlines()[-1].split()[:2] == ["2", "2"]


def test_spmd_surface_from_toml_and_heatmap(run, tmp_path):
    config = tmp_path / "qcrd.toml"
    config.write_text('model = "bus-aio"\npreset = "qcrd"\np = "16,64"\nd = [1, 8]\n')
    plot = tmp_path / "surface.png"
    code, out, _ = run("spmd", "--config", config, "--plot", plot, "--surface-kind", "3d")
    assert code == 0
    rows = [line.split() for line in out.splitlines()[2:4]]
    expected = speedup("bus-aio", QCRD_TABLE4, [[16], [64]], [[1, 8]])
    assert np.array([[float(v) for v in r[1:]] for r in rows]) == pytest.approx(expected, rel=1e-5)
    assert plot.stat().st_size > 1000


def test_spmd_fit_prints_parameters_and_average_error(run, tmp_path):
    observed = tmp_path / "observed.csv"
    with observed.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["p", "d", "speedup"])
        for p in (1, 4, 16, 64):
            for d in (1, 4):
                writer.writerow([p, d, float(speedup("bus-aio", QCRD_TABLE4, p, d))])
    code, out, _ = run("spmd", "--model", "bus-aio", "--preset", "qcrd", "--w", "0.5",
                       "--fit", observed, "--free", "w,sr_com", "--starts", "2")
    assert code == 0
    values = {line.split()[0]: float(line.split()[1]) for line in out.splitlines()
              if line.split()[:1] in (["w"], ["sr_com"])}
    assert values == pytest.approx({"w": 0.19, "sr_com": 0.41}, rel=1e-6)
    assert "average error" in out


@pytest.mark.parametrize("argv, message", [
    (("spmd", "--model", "clu-aio", "--preset", "qcrd", "-p", "6", "-d", "4"),
     "CLU-AIO needs p/c to be a multiple of d"),
    (("spmd", "--model", "sio", "--s-par", "1", "--w", "2"), "w must lie in [0, 1]"),
    (("spmd", "--model", "sio", "--s-par", "1", "--c", "8", "-p", "4"), "exceeds processor count"),
    (("spmd", "--model", "sio", "--s-par", "1", "--sr-io", "-1"), "sr_io must be a finite"),
    (("spmd", "--model", "sio"), "give --s-par"),
    (("spmd", "--model", "sio", "--s-par", "1", "-p", "1..x"), "bad count list"),
    (("laws",), "parallel fraction"),
    (("dpgraph", "missing.yaml"), "cannot read missing.yaml"),
])
def test_bad_input_is_one_line_error(run, argv, message):
    code, _out, err = run(*argv)
    assert code == 2
    assert err.startswith("pevpm: error: ") and message in err and err.count("\n") == 1


def test_dpgraph_fits_measured_modes_and_prints_t_exec(run, tmp_path):
    graph = tmp_path / "graph.yaml"
    graph.write_text("""
nodes:
  sender: [0.5, 0.25]
  receiver: [0.125]
messages:
  - {from: sender, to: receiver, elements: 100000, mode: buffered}
send_modes:
  buffered:
    measured:
      elements: [100000, 200000]
      sender: [0.01, 0.02]
      receiver: [0.05, 0.10]
""")
    code, out, _ = run("dpgraph", graph)
    assert code == 0
    assert out.splitlines()[-1] == "T_exec = 0.76 s"
    bad = tmp_path / "bad.toml"
    bad.write_text('[nodes]\na = [1.0]\n[[messages]]\nfrom = "a"\nto = "b"\nelements = 3\n')
    code, _, err = run("dpgraph", bad)
    assert code == 2 and "unknown node 'b'" in err


def test_fractional_group_size_from_a_config_file_is_rejected(run, tmp_path):
    config = tmp_path / "bad.yaml"
    config.write_text("model: sio\ns_par: 1.0\nc: 2.5\n")
    code, _, err = run("spmd", "--config", config)
    assert code == 2 and "c must be an integer >= 1, got 2.5" in err
