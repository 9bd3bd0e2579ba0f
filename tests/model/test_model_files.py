"""Python model files: trusted code, run under a time limit, every failure with
file and line (issue 16)."""

from __future__ import annotations

import pytest

from pevpm.errors import ModelError
from pevpm.model.loader import load_model
from pevpm.model.model_file import run_model_file

HEAD = "from pevpm.model.builder import ModelBuilder\nfrom pevpm.model.ast import Model\n"


def failure(tmp_path, body: str) -> str:
    path = tmp_path / "m.py"
    path.write_text(HEAD + body)
    with pytest.raises(ModelError) as info:
        load_model(path)
    return str(info.value).replace(str(path), "m.py")


@pytest.mark.parametrize("body, expected", [
    ("model = 5\n", "m.py: 'model' must be a function returning a Model, got int 5"),
    ("MODEL = Model(body=None)\n", "m.py: body must be a tuple of statements, not a NoneType"),
    ("MODEL = Model(body=(1,))\n", "m.py: body[0] is a int, not a statement"),
    ("MODEL = Model(body=(), defaults=None)\n", "m.py: defaults must be a Defaults"),
    ("MODEL = Model(body=(), constants={'n': float('inf')})\n",
     "m.py: constant 'n' must be a finite number, got inf"),
    ("class Boom(BaseException):\n    pass\n\ndef model():\n    raise Boom('bang')\n",
     "m.py:7: building the model failed: Boom: bang"),
    ("def model():\n    raise SystemExit(3)\n", "m.py:4: building the model failed: SystemExit: 3"),
    ("def model():\n    b = ModelBuilder()\n    b.serial('1 +* 2')\n    return b\n",
     "m.py:5: expected a value, found '*'"),
    ("x = 1\0\ndef model():\n    pass\n", "m.py:3: invalid Python: a NUL byte"),
    ("def model():\n    return 'text'\n", "m.py: model() or MODEL gave str 'text', not a Model"),
])
def test_failures_name_the_file_and_line(tmp_path, body, expected):
    assert failure(tmp_path, body) == expected or failure(tmp_path, body).startswith(expected)


def test_a_model_file_that_never_finishes_is_stopped(tmp_path):
    path = tmp_path / "loop.py"
    path.write_text("while True:\n    pass\nMODEL = None\n")
    with pytest.raises(ModelError, match="building the model took more than 0.5 s"):
        run_model_file(str(path), seconds=0.5)


def test_keyboard_interrupt_is_not_swallowed(tmp_path):
    path = tmp_path / "stop.py"
    path.write_text("def model():\n    raise KeyboardInterrupt\n")
    with pytest.raises(KeyboardInterrupt):
        run_model_file(str(path))
