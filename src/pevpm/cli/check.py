"""``pevpm check``: lint an annotated source against its PEVPM directives."""

from __future__ import annotations

import argparse

from pevpm.model.lint import lint_file


def run_check(args: argparse.Namespace) -> int:
    findings = lint_file(args.file)
    for finding in findings:
        print(finding)
    if not findings:
        print(f"{args.file}: no problems found")
    return 1 if findings else 0


def register(subparsers) -> None:
    check = subparsers.add_parser(
        "check",
        description="Parse FILE and report MPI calls without a Message directive, "
                    "conditionals with more branches than Condition/Runon arms, and "
                    "Serial segments missing a time for a declared processor.  Exit "
                    "status 1 when anything is found.")
    check.add_argument("file", help="annotated .c/.cpp/.f90/.py source")
    check.set_defaults(func=run_check)
