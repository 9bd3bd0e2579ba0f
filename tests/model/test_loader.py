"""load_model: annotated sources, Python model files, -D values, processor choice."""

from pathlib import Path

import pytest

from pevpm.errors import DirectiveError, ModelError
from pevpm.model.ast import Loop, Serial
from pevpm.model.expr import Expr
from pevpm.model.loader import load_model

JACOBI = Path(__file__).resolve().parents[2] / "examples" / "jacobi" / "jacobi.c"


def test_jacobi_with_parameters_and_processor():
    model = load_model(JACOBI, params={"iterations": 1000}, processor="orion")
    assert model.parameters["iterations"] == 1000
    assert model.defaults.processor == "orion"
    assert model.source == str(JACOBI)


def test_defines_are_expressions_over_constants_and_may_override_constants():
    model = load_model(JACOBI, params={"iterations": "2 * xsize", "xsize": "512"})
    assert model.parameters["iterations"] == 512
    assert model.constants["xsize"] == 512


def test_unknown_define_and_processor_suggest_names():
    with pytest.raises(ModelError, match=r"no parameter or constant 'iteration' "
                                         r"\(did you mean 'iterations'\?\)"):
        load_model(JACOBI, params={"iteration": 5})
    with pytest.raises(ModelError, match=r"no processor 'perseu' \(did you mean 'perseus'"):
        load_model(JACOBI, processor="perseu")
    with pytest.raises(ModelError, match="-D iterations=ten: unknown name 'ten'"):
        load_model(JACOBI, params={"iterations": "ten"})


def test_python_model_file_with_model_function(tmp_path):
    path = tmp_path / "ring_model.py"
    path.write_text(
        "from pevpm.model.builder import ModelBuilder\n"
        "def model():\n"
        "    b = ModelBuilder(parameters={'n': 3})\n"
        "    with b.loop('parameter n'):\n"
        "        b.serial(0.25)\n"
        "    return b\n")
    model = load_model(path, params={"n": 7})
    assert model.body == (Loop(Expr.of("parameter n"), (Serial(Expr.of(0.25)),)),)
    assert model.parameters == {"n": 7}
    assert model.source == str(path)


def test_python_model_file_with_unknown_name(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("from pevpm.model.builder import ModelBuilder\n"
                    "b = ModelBuilder(constants={'rows': 4})\n"
                    "b.serial('row * 1e-3')\n"
                    "MODEL = b.build()\n")
    with pytest.raises(ModelError, match=r"Serial time uses unknown name 'row' "
                                         r"\(did you mean 'rows'\?\)"):
        load_model(path)


def test_python_program_without_directives_is_not_run(tmp_path):
    marker = tmp_path / "ran"
    path = tmp_path / "program.py"
    path.write_text(f"open({str(marker)!r}, 'w').close()\n")
    with pytest.raises(ModelError, match="no '# PEVPM' directives and defines neither"):
        load_model(path)
    assert not marker.exists()


def test_failing_model_file_is_reported(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("def model():\n    return 1 / 0\n")
    with pytest.raises(ModelError, match="building the model failed: ZeroDivisionError"):
        load_model(path)


def test_annotated_python_source(tmp_path):
    path = tmp_path / "prog.py"
    path.write_text("ROWS = 64\n"
                    "# PEVPM Serial time = ROWS * 1e-6\n"
                    "print('never run')\n")
    model = load_model(path)
    assert model.constants == {"ROWS": 64}
    assert model.body[0].time.evaluate(model.constants) == pytest.approx(64e-6)


def test_annotated_fortran_source(tmp_path):
    path = tmp_path / "prog.f90"
    path.write_text("integer, parameter :: n = 8\n"
                    "! PEVPM Loop iterations = n\n! PEVPM {\n"
                    "! PEVPM Serial time = 1e-3\n! PEVPM }\n")
    assert load_model(path).body[0].count == Expr.of("n")


def test_missing_file_and_unknown_suffix(tmp_path):
    with pytest.raises(ModelError, match="cannot read model"):
        load_model(tmp_path / "absent.c")
    with pytest.raises(DirectiveError, match="cannot tell the language"):
        load_model(tmp_path / "model.txt")
