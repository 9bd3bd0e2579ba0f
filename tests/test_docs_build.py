"""The documentation builds with warnings as errors: the guides (MyST) and the API
reference, where every public name needs a docstring and an example (docs/conf.py)."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"

pytest.importorskip("sphinx")
pytest.importorskip("myst_parser")


def load_conf():
    spec = importlib.util.spec_from_file_location("pevpm_docs_conf", DOCS / "conf.py")
    conf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conf)
    return conf


@pytest.mark.slow
def test_docs_build_without_warnings(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         "-d", str(tmp_path / "doctrees"), str(DOCS), str(tmp_path / "html")],
        capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stderr[-5000:]
    api = (tmp_path / "html" / "api" / "model.html").read_text()
    for method in ("isend", "irecv", "wait", "waitall", "test", "collective", "directives"):
        assert f'id="pevpm.model.builder.ModelBuilder.{method}"' in api
    assert (tmp_path / "html" / "tutorial.html").is_file()


def function_without_docstring():
    pass


def function_without_example():
    """Does something."""


def function_with_example():
    """Does something.

    >>> function_with_example()
    """


class Recorder:
    def __init__(self):
        self.messages = []

    def warning(self, message, **kwargs):
        self.messages.append(message)


@pytest.mark.parametrize("function, expected", [
    (function_without_docstring, "without a docstring"),
    (function_without_example, "without an example"),
    (function_with_example, None),
])
def test_an_undocumented_public_name_is_a_warning(monkeypatch, function, expected):
    conf = load_conf()
    log = Recorder()
    monkeypatch.setattr(conf, "_log", log)
    name = f"{__name__}.{function.__name__}"
    lines = (function.__doc__ or "").splitlines()
    conf.check_documented(None, "function", name, function, {}, lines)
    if expected is None:
        assert log.messages == []
    else:
        assert len(log.messages) == 1 and expected in log.messages[0]
