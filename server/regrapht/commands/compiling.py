"""The compile flags of the commands that compile: `--compile-commands PATH`, `-I DIR`, `-D NAME[=VALUE]`.

One home for the flags' arguments (`add_compile_arguments`) and their reading
(`compile_setup_of`, `flags_of`): the database is the one named, else the nearest
`compile_commands.json` (validate/compile_db.py); `-I`/`-D` come after its flags. A bad database
and the neighbour's-flags notice are warnings on stderr; the command carries on.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO

from regrapht.validate.compile_db import CompileFlags, CompileSetup, user_flags


def add_compile_arguments(parser: Any) -> None:
    group = parser.add_argument_group("compile flags")
    group.add_argument("--compile-commands", metavar="PATH",
                       help="compile_commands.json to take the file's flags from (default: the nearest one "
                            "in the file's folder or a parent, or in a build/ folder of one)")
    group.add_argument("-I", dest="include_dirs", action="append", default=[], metavar="DIR",
                       help="add an include dir (after the database's flags)")
    group.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=VALUE]",
                       help="define a macro (after the database's flags)")


def compile_setup_of(args: argparse.Namespace) -> CompileSetup:
    database = getattr(args, "compile_commands", None)
    return CompileSetup(Path(database) if database else None,
                        user_flags(getattr(args, "include_dirs", ()) or (), getattr(args, "defines", ()) or ()))


def flags_of(args: argparse.Namespace, file: Path, err: TextIO | None = None) -> CompileFlags:
    """The flags to compile `file` with; a bad database or a neighbour's flags are said on `err`."""
    err = err or sys.stderr
    lookup = compile_setup_of(args).lookup(file)
    for problem in lookup.problems:
        print(f"regrapht: warning: {problem} (compiling without the compile database)", file=err)
    if lookup.notice is not None:
        print(f"regrapht: note: {lookup.notice}", file=err)
    return lookup.flags
