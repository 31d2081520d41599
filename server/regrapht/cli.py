"""The `regrapht` command: dispatches to the subcommand modules in `regrapht.commands`.

Each subcommand module owns its arguments and its work (`register(subparsers)` adds a parser
whose `handler(args) -> int` default runs it). The contract for flags, JSON keys and exit codes
is docs/cli-contract.md: 0 success, 1 the work ran but found a problem, 2 bad input.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Sequence

from regrapht import __version__
from regrapht.errors import InputError

DESCRIPTION = (
    "ReGraphT: finds optimization opportunities in CUDA kernels and searches, locally, for faster "
    "versions that are checked against the original and timed on the GPU before they are offered."
)

# Imported lazily so that `regrapht analyze` never pays for llama.cpp or pycuda.
COMMAND_MODULES = (
    "serve",
    "analyze",
    "bench",
    "check",
    "spec",
    "optimize",
    "graph",
    "eval",
    "capture",
)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser with every subcommand, or with just `only` (so `serve` starts without
    importing the search, validation and graph modules: the editor waits on that start-up)."""
    parser = argparse.ArgumentParser(prog="regrapht", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"regrapht {__version__}")
    parser.add_argument(
        "--log-level", default="WARNING", choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="logging to stderr (default WARNING)",
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in (only,) if only else COMMAND_MODULES:
        module = importlib.import_module(f"regrapht.commands.{name}")
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    chosen = next((a for a in arguments if not a.startswith("-")), None)
    parser = build_parser(chosen if chosen in COMMAND_MODULES else None)
    args = parser.parse_args(arguments)
    logging.basicConfig(
        level=getattr(logging, args.log_level), stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        return int(args.handler(args))
    except InputError as error:
        print(f"regrapht: error: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # Output piped into `head` and the like: stop quietly, as Unix tools do.
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print("regrapht: interrupted", file=sys.stderr)
        return 130
