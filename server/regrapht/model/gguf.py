"""Cheap structural check of a GGUF model file before llama.cpp sees it.

llama.cpp may abort the whole process on a malformed file, so the model engine reads the
header here first: the "GGUF" magic, a supported version, sane tensor and metadata counts,
the metadata key/values (scalars kept, arrays only counted), the tensor infos (known types,
aligned offsets, element counts that fit), that the file is long enough to hold the data of
every tensor (a header-only or cut file fails here), and the hyperparameters llama.cpp asserts
on (`GGML_ASSERT` aborts the process): the layer count against `LLAMA_MAX_LAYERS`, the expert
counts, the sizes and the tokenizer's parallel arrays. Any failure is an `InputError` naming
the file and the key. Nothing here loads weights. The model still runs in a worker process
(`process_backend`): no header check can find everything llama.cpp may abort on.
"""

from __future__ import annotations

import mmap
import os
import struct
from dataclasses import dataclass, field
from pathlib import Path

from regrapht.errors import InputError

GGUF_MAGIC = b"GGUF"
SUPPORTED_VERSIONS = (2, 3)
DEFAULT_ALIGNMENT = 32
# Bounds far above any real model; they only stop a corrupt count from looping for hours.
MAX_TENSORS = 1_000_000
MAX_METADATA = 1_000_000
MAX_DIMS = 8
# llama.cpp's own limits (llama-hparams.h); beyond them it aborts while loading.
LLAMA_MAX_LAYERS = 512
LLAMA_MAX_EXPERTS = 512
MAX_SIZE_PARAMETER = 1 << 24  # embedding, feed-forward, head counts: real models stay far below
MAX_CONTEXT = 1 << 27
GGML_TYPE_LIMIT = 64  # ggml type ids are small; a larger one is a corrupt tensor info
MAX_ELEMENTS = 1 << 60

# ggml type id -> (elements per block, bytes per block). Types missing here are allowed but
# their size is not checked (only their offset is).
GGML_TYPE_SIZES: dict[int, tuple[int, int]] = {
    0: (1, 4),  # F32
    1: (1, 2),  # F16
    2: (32, 18),  # Q4_0
    3: (32, 20),  # Q4_1
    6: (32, 22),  # Q5_0
    7: (32, 24),  # Q5_1
    8: (32, 34),  # Q8_0
    9: (32, 36),  # Q8_1
    10: (256, 84),  # Q2_K
    11: (256, 110),  # Q3_K
    12: (256, 144),  # Q4_K
    13: (256, 176),  # Q5_K
    14: (256, 210),  # Q6_K
    15: (256, 292),  # Q8_K
    24: (1, 1),  # I8
    25: (1, 2),  # I16
    26: (1, 4),  # I32
    27: (1, 8),  # I64
    28: (1, 8),  # F64
    30: (1, 2),  # BF16
}

# Metadata value types: id -> struct format of a scalar.
_SCALARS: dict[int, str] = {
    0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d",
}
_STRING = 8
_ARRAY = 9

MetadataValue = int | float | bool | str


@dataclass(frozen=True)
class GgufInfo:
    path: Path
    version: int
    tensor_count: int
    metadata: dict[str, MetadataValue] = field(repr=False)  # scalars and strings only
    array_lengths: dict[str, int] = field(repr=False)  # array-valued keys -> element count
    data_offset: int
    data_end: int  # the byte after the last tensor's data (what the file must reach)
    file_size: int

    @property
    def name(self) -> str:
        value = self.metadata.get("general.name")
        return value if isinstance(value, str) and value else self.path.name

    @property
    def chat_template(self) -> str | None:
        value = self.metadata.get("tokenizer.chat_template")
        return value if isinstance(value, str) and value else None


class _Truncated(Exception):
    """Internal: a read ran past the end of the file (turned into InputError at the top)."""


class _Reader:
    def __init__(self, buffer: mmap.mmap | bytes) -> None:
        self.buffer = buffer
        self.pos = 0

    def unpack(self, fmt: str) -> tuple[int | float | bool, ...]:
        size = struct.calcsize(fmt)
        if self.pos + size > len(self.buffer):
            raise _Truncated
        values = struct.unpack_from(fmt, self.buffer, self.pos)
        self.pos += size
        return values

    def u32(self) -> int:
        return int(self.unpack("<I")[0])

    def u64(self) -> int:
        return int(self.unpack("<Q")[0])

    def string(self) -> str:
        length = self.u64()
        if self.pos + length > len(self.buffer):
            raise _Truncated
        raw = bytes(self.buffer[self.pos : self.pos + length])
        self.pos += length
        return raw.decode("utf-8", errors="replace")

    def skip(self, count: int) -> None:
        if self.pos + count > len(self.buffer):
            raise _Truncated
        self.pos += count


def read_gguf_info(path: str | os.PathLike[str]) -> GgufInfo:
    """Parse and check the header of the GGUF file at `path`; raise InputError if unusable."""
    file = Path(path)
    shown = str(file)
    if not file.exists():
        raise InputError("model file not found", file=shown)
    if not file.is_file():
        raise InputError("model path is not a regular file", file=shown)
    try:
        size = file.stat().st_size
        if size < 24:
            raise InputError(f"not a GGUF model file (only {size} bytes)", file=shown)
        with open(file, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as view:
            return _parse(file, view, size)
    except OSError as error:
        raise InputError(f"cannot read model file: {error.strerror or error}", file=shown) from error


def _parse(file: Path, view: mmap.mmap, size: int) -> GgufInfo:
    shown = str(file)
    if view[:4] != GGUF_MAGIC:
        raise InputError("not a GGUF model file (bad magic; expected 'GGUF')", file=shown)
    reader = _Reader(view)
    reader.skip(4)
    try:
        version = reader.u32()
        if version not in SUPPORTED_VERSIONS:
            raise InputError(f"unsupported GGUF version {version} (supported: 2, 3)", file=shown)
        tensor_count = reader.u64()
        metadata_count = reader.u64()
        if tensor_count > MAX_TENSORS or metadata_count > MAX_METADATA:
            raise InputError(
                f"corrupt GGUF header ({tensor_count} tensors, {metadata_count} metadata entries)",
                file=shown,
            )
        metadata, arrays = _read_metadata(reader, metadata_count, shown)
        tensors = [_read_tensor_info(reader, shown) for _ in range(tensor_count)]
    except _Truncated:
        raise InputError("truncated GGUF file (header ends early)", file=shown) from None

    alignment = metadata.get("general.alignment", DEFAULT_ALIGNMENT)
    if not isinstance(alignment, int) or alignment <= 0:
        raise InputError(f"corrupt GGUF header (alignment {alignment!r})", file=shown)
    data_offset = -(-reader.pos // alignment) * alignment
    data_end = data_offset
    if tensor_count == 0:
        raise InputError("not a usable model: the GGUF file holds no tensors", file=shown)
    for name, offset, nbytes in tensors:
        if offset % alignment:
            raise InputError(f"corrupt GGUF tensor info: '{name}' is at offset {offset}, not a multiple of "
                             f"the alignment {alignment}", file=shown)
        end = data_offset + offset + nbytes
        if end > data_end:
            data_end = end
        if end > size:
            raise InputError(
                f"truncated GGUF file: tensor '{name}' needs bytes up to {end}, file has {size}",
                file=shown,
            )
    _check_hyperparameters(metadata, arrays, shown)
    return GgufInfo(
        path=file, version=version, tensor_count=tensor_count, metadata=metadata,
        array_lengths=arrays, data_offset=data_offset, data_end=data_end, file_size=size,
    )


def _check_hyperparameters(metadata: dict[str, MetadataValue], arrays: dict[str, int], shown: str) -> None:
    """The counts llama.cpp trusts (and asserts on) must be in its range."""
    arch = metadata.get("general.architecture")
    if not isinstance(arch, str):
        arch = ""  # llama.cpp refuses such a file itself, with an error rather than an abort

    def count(key: str, low: int, high: int, required: bool = False) -> int | None:
        if key in arrays:  # per-layer values (some architectures): one per layer at most
            return None
        value = metadata.get(key)
        if value is None:
            if required:
                raise InputError(f"not a usable model: '{key}' is missing from the GGUF metadata", file=shown,
                                 key=key)
            return None
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise InputError(f"corrupt GGUF metadata: '{key}' is {value!r}, outside {low}..{high}"
                             + (" (llama.cpp's limit)" if high in (LLAMA_MAX_LAYERS, LLAMA_MAX_EXPERTS) else ""),
                             file=shown, key=key)
        return value

    layers = count(f"{arch}.block_count", 1, LLAMA_MAX_LAYERS, required=bool(arch))
    for name in ("embedding_length", "feed_forward_length", "attention.head_count", "attention.head_count_kv",
                 "vocab_size", "rope.dimension_count"):
        count(f"{arch}.{name}", 0 if name == "feed_forward_length" else 1, MAX_SIZE_PARAMETER)
    count(f"{arch}.context_length", 1, MAX_CONTEXT)
    experts = count(f"{arch}.expert_count", 0, LLAMA_MAX_EXPERTS) or 0
    used = count(f"{arch}.expert_used_count", 0, LLAMA_MAX_EXPERTS) or 0
    if used > experts or (experts > 0 and used == 0):
        raise InputError(f"corrupt GGUF metadata: {used} experts used per token of {experts}", file=shown,
                         key=f"{arch}.expert_used_count")
    for key, length in arrays.items():
        if key.startswith(f"{arch}.") and layers is not None and length > layers:
            raise InputError(f"corrupt GGUF metadata: '{key}' has {length} values for {layers} layers",
                             file=shown, key=key)
    tokens = arrays.get("tokenizer.ggml.tokens")
    for key in ("tokenizer.ggml.scores", "tokenizer.ggml.token_type"):
        if tokens is not None and key in arrays and arrays[key] != tokens:
            raise InputError(f"corrupt GGUF metadata: '{key}' has {arrays[key]} entries for {tokens} tokens",
                             file=shown, key=key)
    if tokens is not None:
        for key, value in metadata.items():
            if key.startswith("tokenizer.ggml.") and key.endswith("_token_id") and isinstance(value, int) \
                    and not isinstance(value, bool) and not -1 <= value < tokens:
                raise InputError(f"corrupt GGUF metadata: '{key}' is {value}, beyond the {tokens} tokens",
                                 file=shown, key=key)


def _read_metadata(
    reader: _Reader, count: int, shown: str
) -> tuple[dict[str, MetadataValue], dict[str, int]]:
    metadata: dict[str, MetadataValue] = {}
    arrays: dict[str, int] = {}
    for _ in range(count):
        key = reader.string()
        kind = reader.u32()
        if kind == _ARRAY:
            element_kind = reader.u32()
            length = reader.u64()
            _skip_array(reader, element_kind, length, key, shown)
            arrays[key] = length
        else:
            metadata[key] = _read_value(reader, kind, key, shown)
    return metadata, arrays


def _read_value(reader: _Reader, kind: int, key: str, shown: str) -> MetadataValue:
    if kind == _STRING:
        return reader.string()
    fmt = _SCALARS.get(kind)
    if fmt is None:
        raise InputError(f"corrupt GGUF metadata: key '{key}' has unknown type {kind}", file=shown)
    value = reader.unpack(fmt)[0]
    return value


def _skip_array(reader: _Reader, kind: int, length: int, key: str, shown: str) -> None:
    if kind == _STRING:
        for _ in range(length):
            reader.skip(reader.u64())
        return
    fmt = _SCALARS.get(kind)
    if fmt is None:
        raise InputError(f"corrupt GGUF metadata: array '{key}' has element type {kind}", file=shown)
    reader.skip(struct.calcsize(fmt) * length)


def _read_tensor_info(reader: _Reader, shown: str) -> tuple[str, int, int]:
    name = reader.string()
    n_dims = reader.u32()
    if n_dims > MAX_DIMS:
        raise InputError(f"corrupt GGUF tensor info: '{name}' has {n_dims} dimensions", file=shown)
    dims = [reader.u64() for _ in range(n_dims)]
    ggml_type = reader.u32()
    offset = reader.u64()
    if ggml_type >= GGML_TYPE_LIMIT:
        raise InputError(f"corrupt GGUF tensor info: '{name}' has unknown type {ggml_type}", file=shown)
    elements = 1
    for dim in dims:
        elements *= dim
    if elements > MAX_ELEMENTS:
        raise InputError(f"corrupt GGUF tensor info: '{name}' has {elements} elements", file=shown)
    block = GGML_TYPE_SIZES.get(ggml_type)
    nbytes = 0 if block is None else (elements // block[0]) * block[1]
    return name, offset, nbytes
