"""``pevpm show``: read a model and print it (``pevpm check`` lints: :mod:`pevpm.cli.check`)."""

from __future__ import annotations

import argparse

from pevpm.cli.arguments import parse_defines
from pevpm.model.loader import load_model
from pevpm.model.printer import format_tree, to_directives


def run_show(args: argparse.Namespace) -> int:
    model = load_model(args.file, parse_defines(args.define), args.processor)
    if args.directives:
        print(to_directives(model, args.language), end="")
    else:
        print(format_tree(model))
    return 0


def register(subparsers) -> None:
    show = subparsers.add_parser(
        "show",
        description="Parse FILE and print its model as an indented tree, or as "
                    "directives (--directives) that parse back to the same model.")
    show.add_argument("file", help="annotated .c/.cpp/.f90/.py source or Python model file")
    show.add_argument("-D", "--define", action="append", metavar="NAME=VALUE",
                      help="give a parameter a value (or override a program constant)")
    show.add_argument("--processor", help="select the processor model for Serial on ... times")
    show.add_argument("--directives", action="store_true",
                      help="print directive text instead of the tree")
    show.add_argument("--language", choices=("c", "fortran", "python"), default="c",
                      help="comment style for --directives (default: c)")
    show.set_defaults(func=run_show)
