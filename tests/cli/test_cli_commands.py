"""The command line: every command is listed; running one loads only its module."""

import subprocess
import sys

from pevpm.cli import COMMANDS, build_parser, main


def test_help_lists_every_command(capsys):
    assert main([]) == 2
    listed = capsys.readouterr().out
    assert all(f"    {name}" in listed for name in COMMANDS)


def test_running_bench_does_not_load_scipy_or_matplotlib():
    code = ("import sys; from pevpm.cli import build_parser; build_parser('bench'); "
            "print(sorted(m for m in ('scipy', 'matplotlib', 'mpi4py') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_each_command_parses_with_its_module_alone():
    for name in COMMANDS:
        parser = build_parser(name)
        assert name in parser._subparsers._group_actions[0].choices
