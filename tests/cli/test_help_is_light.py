"""``pevpm --help`` lists the commands from the registry and loads none of them (issue 29)."""

import argparse
import importlib
import subprocess
import sys

import pytest

from pevpm.cli import COMMANDS, main


def test_help_loads_no_command_module_and_no_numpy():
    code = ("import sys; from pevpm.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith('pevpm.cli.') "
            "or m in ('numpy', 'scipy')), file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stderr.strip() == "[]"
    assert all(entry.summary in " ".join(done.stdout.split()) for entry in COMMANDS.values())


def test_an_unknown_command_lists_the_known_ones(capsys):
    assert main(["predcit"]) == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'predcit'" in err and "'predict'" in err


def test_every_summary_is_the_commands_own_line():
    """One short line each (test_cli_commands checks each module registers its commands)."""
    for entry in COMMANDS.values():
        assert entry.summary and "\n" not in entry.summary and len(entry.summary) < 100
        assert entry.module.startswith("pevpm.cli.")


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_command_has_a_module_named_after_it_that_adds_it_alone(name):
    assert COMMANDS[name].module == f"pevpm.cli.{name}"
    subparsers = argparse.ArgumentParser().add_subparsers()
    importlib.import_module(COMMANDS[name].module).register(subparsers)
    assert list(subparsers.choices) == [name]
