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
