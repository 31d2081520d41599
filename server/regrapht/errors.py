"""Errors the user must see: bad input (exit code 2 in the CLI, an LSP error in the editor).

An `InputError` always names the file and, where it applies, the line or the spec key, so
that a message alone tells the user where to look.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class InputError(Exception):
    """Bad input: an unreadable file, an unknown kernel, a malformed spec or model file."""

    message: str
    file: str | None = None
    line: int | None = None  # 1-based
    key: str | None = None  # a spec key such as "kernel[0].arg[2].count"

    def __str__(self) -> str:
        where = self.file or ""
        if self.line is not None:
            where += f":{self.line}"
        if self.key:
            where += f" [{self.key}]" if where else f"[{self.key}]"
        return f"{where}: {self.message}" if where else self.message


class ModelLoadError(InputError):
    """The model file cannot be loaded (llama.cpp refused or aborted on it): a setting the user
    must fix, reported as such, never one failed model call that a search shrugs off."""
