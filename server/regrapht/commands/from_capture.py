"""`--capture DIR` for `optimize`, `check` and `bench`: the spec a capture made for the kernel.

Owns the flag and its meaning: the capture's spec of `--kernel` with the most recorded launches
(`--spec` names any other), its positional parameter names renamed after the kernel's declaration
in the given source file (docs/capture.md). `--spec` and `--capture` together are an error.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from regrapht.capture.index import spec_for_source
from regrapht.errors import InputError
from regrapht.inputs import read_source


def add_capture_argument(parser: Any) -> None:
    parser.add_argument("--capture", metavar="DIR",
                        help="use the spec `regrapht capture` wrote for the kernel in this capture directory")


def spec_argument(args: argparse.Namespace, source: Path) -> Path | None:
    """The spec path the command uses: `--spec`, the capture's (`--capture`), or None (beside the file)."""
    capture = getattr(args, "capture", None)
    if capture and args.spec:
        raise InputError("give --spec or --capture, not both")
    if capture:
        text, _warnings = read_source(source)
        return spec_for_source(Path(capture), args.kernel, text)
    return Path(args.spec) if args.spec else None
