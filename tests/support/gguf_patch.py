"""Damaged copies of a real GGUF for tests: one metadata value or one token string patched in
place (same size, so every offset after it stays right), or the file cut short."""

from __future__ import annotations

import struct
from pathlib import Path

_SCALAR_SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
_STRING, _ARRAY = 8, 9


def _metadata_offsets(data: bytes) -> dict[str, tuple[int, int, list[tuple[int, int]]]]:
    """key -> (value type, offset of the value, [(offset, length) of each string in an array])."""
    pos = 4 + 4 + 8
    (count,) = struct.unpack_from("<Q", data, pos)
    pos += 8
    found: dict[str, tuple[int, int, list[tuple[int, int]]]] = {}

    def string(at: int) -> tuple[str, int]:
        (length,) = struct.unpack_from("<Q", data, at)
        return data[at + 8 : at + 8 + length].decode("utf-8", "replace"), at + 8 + length

    for _ in range(count):
        key, pos = string(pos)
        (kind,) = struct.unpack_from("<I", data, pos)
        pos += 4
        strings: list[tuple[int, int]] = []
        start = pos
        if kind == _STRING:
            _, pos = string(pos)
        elif kind == _ARRAY:
            element, length = struct.unpack_from("<IQ", data, pos)
            pos += 12
            for _ in range(length):
                if element == _STRING:
                    (size,) = struct.unpack_from("<Q", data, pos)
                    strings.append((pos + 8, size))
                    pos += 8 + size
                else:
                    pos += _SCALAR_SIZES[element]
        else:
            pos += _SCALAR_SIZES[kind]
        found[key] = (kind, start, strings)
    return found


def patched_u32(source: Path, target: Path, key: str, value: int) -> Path:
    """A copy of `source` whose uint32 metadata `key` holds `value`."""
    data = bytearray(source.read_bytes())
    kind, offset, _ = _metadata_offsets(bytes(data))[key]
    assert kind == 4, f"{key} is not a uint32"
    struct.pack_into("<I", data, offset, value)
    target.write_bytes(bytes(data))
    return target


def duplicated_token(source: Path, target: Path) -> Path:
    """A copy of `source` in which one vocabulary entry is the same text as another of its
    length (llama.cpp asserts that token texts are unique and aborts)."""
    data = bytearray(source.read_bytes())
    _, _, strings = _metadata_offsets(bytes(data))["tokenizer.ggml.tokens"]
    by_length: dict[int, int] = {}
    for offset, size in strings[300:]:  # plain tokens, past the special ones
        if size in by_length:
            first = by_length[size]
            data[offset : offset + size] = data[first : first + size]
            target.write_bytes(bytes(data))
            return target
        by_length[size] = offset
    raise AssertionError("no two tokens of one length")


def header_only(source: Path, target: Path, keep_bytes: int) -> Path:
    """The first `keep_bytes` of `source` (a header with no tensor data behind it)."""
    with source.open("rb") as handle:
        target.write_bytes(handle.read(keep_bytes))
    return target
