"""The ``flexmb`` command.

    flexmb validate [CASE ...] [--quick] [--out DIR] [--cases-dir DIR]
    flexmb validate --list
"""
from __future__ import annotations

import argparse
import sys
from typing import Sequence


def _validate(args: argparse.Namespace) -> int:
    import matplotlib
    matplotlib.use("Agg")                                   # files only, no display needed
    from flexmb.validation import discover_cases, run_cases
    from flexmb.validation.registry import load_module

    try:
        if args.list:
            for name, path in discover_cases(args.cases_dir).items():
                module = load_module(path)
                print(f"{name:20s} {module.TITLE}  [{module.SOURCE}]")
            return 0
        failed = run_cases(args.cases, quick=args.quick, out_dir=args.out, cases_dir=args.cases_dir)
    except (FileNotFoundError, KeyError) as exc:
        print(f"flexmb validate: {exc.args[0]}", file=sys.stderr)
        return 2
    return 1 if failed else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="flexmb", description="Flexible multibody dynamics with finite elements.")
    sub = parser.add_subparsers(dest="command", required=True)
    val = sub.add_parser("validate", help="run literature benchmarks and compare with reference values")
    val.add_argument("cases", nargs="*", metavar="CASE", help="case names (default: all)")
    val.add_argument("--quick", action="store_true", help="shorter runs where a case offers them (for CI)")
    val.add_argument("--out", default="validation-results", metavar="DIR",
                     help="folder for CASE.json and CASE.png (default: %(default)s)")
    val.add_argument("--list", action="store_true", help="list the available cases and exit")
    val.add_argument("--cases-dir", default=None, metavar="DIR", help="folder with the case scripts")
    val.set_defaults(func=_validate)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
