"""Ctrl-C ends a command with one line and status 130, also while the
command's modules are still being loaded (issue 30, item 4: ``fit``)."""

import importlib

from pevpm.cli import main


def test_ctrl_c_while_a_command_loads(monkeypatch, capsys):
    def interrupted(name, *args):
        raise KeyboardInterrupt

    monkeypatch.setattr(importlib, "import_module", interrupted)
    assert main(["fit", "machine.db"]) == 130
    err = capsys.readouterr().err
    assert err == "pevpm: interrupted\n"


def test_ctrl_c_that_reaches_python_as_an_import_error(monkeypatch, capsys):
    """A Ctrl-C inside numpy's C import became ``ImportError: PyCapsule_Import
    could not import module "datetime"`` (found by the fuzz campaign)."""
    import signal

    def interrupted(name, *args):
        try:
            signal.raise_signal(signal.SIGINT)      # the user's Ctrl-C, which C code
        except KeyboardInterrupt:                   # importing turns into this:
            raise ImportError('PyCapsule_Import could not import module "datetime"') \
                from None

    monkeypatch.setattr(importlib, "import_module", interrupted)
    assert main(["analytic", "spmd"]) == 130
    assert capsys.readouterr().err == "pevpm: interrupted\n"


def test_an_import_error_without_ctrl_c_is_not_hidden(monkeypatch):
    def broken(name, *args):
        raise ImportError("no such module")

    monkeypatch.setattr(importlib, "import_module", broken)
    try:
        main(["analytic", "spmd"])
    except ImportError:
        return
    raise AssertionError("an ImportError without Ctrl-C was swallowed")
