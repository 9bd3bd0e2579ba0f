"""Every number a user writes goes through one conversion (issue 30, item 2):
400-digit whole numbers, ``inf``, ``nan`` and ``1e400`` are one error line
naming the place, never an ``OverflowError`` traceback, wherever they are
written."""

from __future__ import annotations

import pytest

from pevpm.cli import main

BIG = "9" * 400
HALF = "9" * 200
CONSTANT = "constant:latency=1e-6"
CALIBRATION = '{"format": "pevpm-parameters/1", "parameters": {"t_x": VALUE}}'


def one_error(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err and "OverflowError" not in err, err
    first = err.strip().splitlines()[0]
    assert first.startswith("pevpm: error: "), err
    assert BIG[:60] not in first, first          # no 400-digit literal in the message
    return first


def predict(path, *extra) -> int:
    return main(["predict", str(path), "-n", "1", "--runs", "2", "--machine", CONSTANT,
                 *extra])


@pytest.mark.parametrize("literal, message", [(BIG, "at most 300 digits"),
                                              ("0x" + "f" * 400, "too long")])
def test_a_400_digit_literal_in_a_directive(tmp_path, capsys, literal, message):
    model = tmp_path / "m.c"
    model.write_text(f"// PEVPM Serial time = {literal}\n")
    assert predict(model) == 2
    error = one_error(capsys)
    assert f"{model}:1:" in error and message in error


def test_a_400_digit_loop_count(tmp_path, capsys):
    model = tmp_path / "m.c"
    model.write_text(f"// PEVPM Loop iterations = {BIG}\n// PEVPM {{\n"
                     "// PEVPM Serial time = 1\n// PEVPM }\n")
    assert predict(model) == 2
    assert "at most 300 digits" in one_error(capsys)


def test_a_product_of_long_literals_is_refused_where_it_is_computed(tmp_path, capsys):
    model = tmp_path / "m.c"
    model.write_text(f"// PEVPM Serial time = {HALF} * {HALF}\n")
    assert predict(model) == 2
    error = one_error(capsys)
    assert f"{model}:1:" in error and "not a finite number" in error


def test_a_400_digit_define(tmp_path, capsys):
    model = tmp_path / "m.c"
    model.write_text("// PEVPM Serial time = parameter x\n")
    assert predict(model, "-D", f"x={BIG}") == 2
    error = one_error(capsys)
    assert "-D" in error and "at most 300 digits" in error


def test_a_400_digit_calibration_parameter(tmp_path, capsys):
    model = tmp_path / "m.c"
    model.write_text("// PEVPM Serial time = parameter t_x\n")
    calibration = tmp_path / "c.json"
    calibration.write_text(CALIBRATION.replace("VALUE", BIG))
    assert predict(model, "--calibration", str(calibration)) == 2
    error = one_error(capsys)
    assert str(calibration) in error and "parameter t_x" in error


def test_a_5000_digit_calibration_parameter(tmp_path, capsys):
    model = tmp_path / "m.c"
    model.write_text("// PEVPM Serial time = parameter t_x\n")
    calibration = tmp_path / "c.json"
    calibration.write_text(CALIBRATION.replace("VALUE", "9" * 5000))
    assert predict(model, "--calibration", str(calibration)) == 2
    assert str(calibration) in one_error(capsys)


def test_a_huge_number_in_a_python_model(tmp_path, capsys):
    model = tmp_path / "m.py"
    model.write_text("from pevpm.model.builder import ModelBuilder\n\n\ndef model():\n"
                     "    b = ModelBuilder()\n    b.serial(10 ** 400)\n    return b\n")
    assert predict(model) == 2
    error = one_error(capsys)
    assert f"{model}:6" in error and "at most 300 digits" in error


@pytest.mark.parametrize("value", ["inf", "nan", "1e400", BIG])
def test_collective_options_take_finite_numbers(tmp_path, capsys, value):
    model = tmp_path / "m.c"
    model.write_text("// PEVPM Serial time = 1\n")
    assert predict(model, "--coll", f"bcast_short={value}") == 2
    assert "collective option bcast_short" in one_error(capsys)


def test_a_400_digit_segment_time_in_a_dpgraph(tmp_path, capsys):
    graph = tmp_path / "g.toml"
    graph.write_text(f"[nodes]\na = [{BIG}]\n")
    assert main(["analytic", "dpgraph", str(graph)]) == 2
    assert "node a: segment time is too large" in one_error(capsys)


def test_a_400_digit_message_size_in_a_dpgraph(tmp_path, capsys):
    graph = tmp_path / "g.toml"
    graph.write_text(f'[nodes]\na = [1]\nb = [1]\n[[messages]]\nfrom = "a"\nto = "b"\n'
                     f"elements = {BIG}\n")
    assert main(["analytic", "dpgraph", str(graph)]) == 2
    assert "message 0" in one_error(capsys)


def test_a_dpgraph_whose_time_overflows_is_an_error(tmp_path, capsys):
    graph = tmp_path / "g.toml"
    graph.write_text("[nodes]\na = [1e308, 1e308]\n")
    assert main(["analytic", "dpgraph", str(graph)]) == 2
    assert "node a: its time overflows" in one_error(capsys)
    assert "inf s" not in capsys.readouterr().out


@pytest.mark.parametrize("value, message", [(BIG, "at most 300 digits"),
                                            ("inf", "not a finite number")])
def test_numbers_in_an_analytic_config(tmp_path, capsys, value, message):
    config = tmp_path / "c.toml"
    config.write_text(f"s_par = {value}\n")
    assert main(["analytic", "spmd", "--model", "bus-aio", "--config", str(config)]) == 2
    error = one_error(capsys)
    assert f"{config}: s_par" in error and message in error


def test_a_400_digit_count_in_measured_times(tmp_path, capsys):
    times = tmp_path / "t.csv"
    times.write_text(f"n,time\n1,2.0\n{BIG},1.0\n")
    assert main(["analytic", "laws", "--fit", str(times)]) == 2
    assert f"{times}:3" in one_error(capsys)
