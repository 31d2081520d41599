"""Reading the files a user names (sources, specs, graphs): bounded, decoded, never endless.

Owns the size limit of every input file and the one way to read one: at most `limit + 1` bytes
are read (so `/dev/zero`, a FIFO or a 3 GB file costs at most the limit, not all memory), and
every failure is an `InputError` naming the file: unreadable, a directory, larger than the limit,
not UTF-8 (with the line of the first bad byte).
"""

from __future__ import annotations

from pathlib import Path

from regrapht.errors import InputError

MIB = 1 << 20
MAX_SOURCE_BYTES = 16 * MIB  # a .cu/.cuh file; the largest real translation units are a few MB
MAX_SPEC_BYTES = 1 * MIB  # a *.regrapht.toml spec
MAX_GRAPH_BYTES = 64 * MIB  # a reasoning graph (the bundled one is tens of KB)
MAX_JSON_BYTES = 16 * MIB  # JSON side files (evaluation task extras)


def _human(size: int) -> str:
    return f"{size // MIB} MiB" if size >= MIB and size % MIB == 0 else f"{size} bytes"


def read_bytes_bounded(path: Path, limit: int, what: str = "file") -> bytes:
    """The bytes of `path`, at most `limit` of them; an `InputError` naming the file otherwise."""
    try:
        with path.open("rb") as handle:
            data = handle.read(limit + 1)
    except IsADirectoryError as error:
        raise InputError(f"cannot read {what}: it is a directory", file=str(path)) from error
    except OSError as error:
        raise InputError(f"cannot read {what}: {error.strerror or error}", file=str(path)) from error
    if len(data) > limit:
        raise InputError(f"{what} is larger than the limit of {_human(limit)}; not read", file=str(path))
    return data


def decode_utf8(data: bytes, path: str | None, what: str = "file") -> str:
    """`data` as UTF-8 text, or an `InputError` naming the file and the line of the first bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise InputError(f"{what} is not UTF-8 text (byte 0x{data[error.start]:02x} at offset {error.start})",
                         file=path, line=line) from None


def read_text_bounded(path: Path, limit: int, what: str = "file") -> str:
    """The UTF-8 text of `path`, at most `limit` bytes of it; an `InputError` naming the file otherwise."""
    return decode_utf8(read_bytes_bounded(path, limit, what), str(path), what)


def read_source(path: Path) -> tuple[str, list[str]]:
    """A CUDA source file (at most `MAX_SOURCE_BYTES`) as text, with warnings for what decoding
    had to repair (invalid UTF-8, NUL bytes); an `InputError` naming the file if unreadable."""
    # Imported here: the tree-sitter parser loads only for commands that read sources.
    from regrapht.cuda.parse import decode_source

    return decode_source(read_bytes_bounded(path, MAX_SOURCE_BYTES, "source file"))
