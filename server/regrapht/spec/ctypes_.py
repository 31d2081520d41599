"""C types of kernel parameters as the spec writes them: parsing, numpy dtypes, Itanium codes.

Owns the list of scalar types the spec allows and the normal form of a parameter type
(`const float* __restrict__` -> pointee `float`, pointer, pointee const). Extension: pointers to
CUDA's vector types (`float4*`, `uchar4*`, `int2*`, ... `VECTORS`): a buffer of `count` vectors is
made and compared as `count * lanes` elements of the vector's scalar type. `aliases` resolves
typedefs (`uint`, `typedef uchar4 Pixel`) a file declares (spec/typedefs.py reads them), and `struct_type`, a
struct passed by value as its bytes (the `struct NAME` extension, docs/kernel-spec.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from regrapht.errors import InputError


@dataclass(frozen=True)
class ScalarInfo:
    dtype: str  # numpy dtype string
    code: str  # Itanium builtin type code
    integer: bool


SCALARS: dict[str, ScalarInfo] = {
    "int": ScalarInfo("int32", "i", True),
    "unsigned int": ScalarInfo("uint32", "j", True),
    "long long": ScalarInfo("int64", "x", True),
    "unsigned long long": ScalarInfo("uint64", "y", True),
    "size_t": ScalarInfo("uint64", "m", True),
    "long": ScalarInfo("int64", "l", True),
    "unsigned long": ScalarInfo("uint64", "m", True),
    "float": ScalarInfo("float32", "f", False),
    "double": ScalarInfo("float64", "d", False),
    "half": ScalarInfo("float16", "6__half", False),  # extension: CUDA's half (class __half), as pointers only
    "char": ScalarInfo("int8", "c", True),
    "signed char": ScalarInfo("int8", "a", True),
    "unsigned char": ScalarInfo("uint8", "h", True),
    "short": ScalarInfo("int16", "s", True),
    "unsigned short": ScalarInfo("uint16", "t", True),
    "bool": ScalarInfo("bool", "b", True),
    "void": ScalarInfo("uint8", "v", True),  # extension: `void*` / `const void*`, a buffer of bytes
}

_SPELLINGS = {
    "unsigned": "unsigned int",
    "signed": "int",
    "signed int": "int",
    "long int": "long",
    "long long int": "long long",
    "unsigned long int": "unsigned long",
    "unsigned long long int": "unsigned long long",
    "short int": "short",
    "unsigned short int": "unsigned short",
    "int8_t": "signed char",
    "uint8_t": "unsigned char",
    "int16_t": "short",
    "uint16_t": "unsigned short",
    "int32_t": "int",
    "uint32_t": "unsigned int",
    "int64_t": "long",
    "uint64_t": "unsigned long",
    "__half": "half",
}

# CUDA's vector types (vector_types.h): name -> (scalar type, lanes). Their size is lanes times
# the scalar's (`float3`: 12 bytes; alignment never changes an array's stride for these).
_VECTOR_SCALARS = {"char": "signed char", "uchar": "unsigned char", "short": "short", "ushort": "unsigned short",
                   "int": "int", "uint": "unsigned int", "long": "long", "ulong": "unsigned long",
                   "longlong": "long long", "ulonglong": "unsigned long long", "float": "float", "double": "double"}
VECTORS: dict[str, tuple[str, int]] = {f"{name}{lanes}": (scalar, lanes) for name, scalar in _VECTOR_SCALARS.items()
                                       for lanes in (1, 2, 3, 4)}


def dtype_bytes(dtype: str) -> int:
    """Bytes of one element of a SCALARS numpy dtype string (`int32` -> 4, `bool` -> 1)."""
    digits = re.sub(r"\D", "", dtype)
    return int(digits) // 8 if digits else 1


def vector_layout(name: str) -> tuple[int, int]:
    """(size, alignment) in bytes of CUDA vector type `name` passed by value, as vector_types.h
    declares it: 1 and 3 lanes aligned as their scalar, 2 and 4 lanes as their size up to 16
    (`uint3`: 12, 4; `float4`: 16, 16; `double4`: 32, 16)."""
    scalar, lanes = VECTORS[name]
    width = {"signed char": 1, "unsigned char": 1, "short": 2, "unsigned short": 2, "int": 4, "unsigned int": 4,
             "float": 4}.get(scalar, 8)
    return width * lanes, (width if lanes in (1, 3) else min(16, width * lanes))


# Spellings every CUDA file has (sys/types.h through the CUDA runtime headers).
BUILTIN_ALIASES = {"uint": "unsigned int", "ushort": "unsigned short", "ulong": "unsigned long"}

_IGNORED = {"__restrict__", "restrict", "__restrict", "volatile_ignored"}


@dataclass(frozen=True)
class CType:
    base: str  # a key of SCALARS: the element's scalar type (a vector's lanes' type); a by-value struct's name
    pointer: bool = False
    const: bool = False  # const pointee (pointers) / const scalar (ignored for scalars)
    vector: str = ""  # a key of VECTORS (`float4`) for a pointer to CUDA vectors, else ""
    struct_size: int = 0  # > 0: a struct or class passed by value, as bytes (an extension); with
    # `pointer`, a buffer of such structs, `struct_size` bytes each (`struct NAME*`, an extension)

    @property
    def is_struct(self) -> bool:
        """A struct passed by value (not a pointer to structs)."""
        return self.struct_size > 0 and not self.pointer

    @property
    def is_struct_pointer(self) -> bool:
        return self.struct_size > 0 and self.pointer

    @property
    def info(self) -> ScalarInfo:
        if self.struct_size > 0:  # raw bytes; the Itanium code is the (maybe qualified) class name
            parts = [p for p in self.base.split("::") if p]
            code = f"{len(parts[0])}{parts[0]}" if len(parts) == 1 else "N" + "".join(f"{len(p)}{p}" for p in parts) + "E"
            if self.pointer:  # a buffer of structs: bytes, compared exactly
                return ScalarInfo("uint8", code, True)
            return ScalarInfo(f"V{self.struct_size}", code, False)
        return SCALARS[self.base]

    @property
    def lanes(self) -> int:
        """Elements of the buffer per element of the spec's count (a vector's lanes, a struct's bytes)."""
        if self.is_struct_pointer:
            return self.struct_size
        return VECTORS[self.vector][1] if self.vector else 1

    @property
    def element(self) -> str:
        """The pointee as C spells it: `float4`, `unsigned int`, a struct's name."""
        return self.vector or self.base

    @property
    def code(self) -> str:
        """The Itanium code of the element type: a builtin code, or a vector's source name."""
        return f"{len(self.vector)}{self.vector}" if self.vector else self.info.code

    def spelled(self) -> str:
        if self.is_struct_pointer:
            return f"{'const ' if self.const else ''}struct {self.base}*"
        if self.pointer:
            return f"{'const ' if self.const else ''}{self.element}*"
        return self.base

    def mangled(self) -> str:
        """The Itanium encoding of this type, without substitutions."""
        if self.pointer:
            return "P" + ("K" if self.const else "") + self.code
        return self.info.code


def parse_ctype(text: str, *, file: str | None = None, key: str | None = None,
                aliases: dict[str, str] | None = None) -> CType:
    """Parse a parameter type such as `const float* __restrict__`; an `InputError` naming `key`.
    `aliases`: typedef name -> what it stands for (itself a type text, resolved once more)."""
    if not isinstance(text, str):
        raise InputError(f"type must be a string, got {type(text).__name__}", file=file, key=key)
    tokens = re.findall(r"\*|[A-Za-z_][A-Za-z_0-9]*|\S", text)
    stars = [i for i, t in enumerate(tokens) if t == "*"]
    if len(stars) > 1:
        raise InputError(f"type {text!r}: pointers to pointers are not supported", file=file, key=key)
    before = tokens[: stars[0]] if stars else tokens
    words = [t for t in before if t not in _IGNORED]
    const = "const" in words
    words = [w for w in words if w != "const"]
    bad = [w for w in words if not re.fullmatch(r"[A-Za-z_][A-Za-z_0-9]*", w)]
    after = [t for t in (tokens[stars[0] + 1:] if stars else []) if t not in _IGNORED and t != "const"]
    if bad or after:
        raise InputError(f"type {text!r} is not a parameter type", file=file, key=key)
    base = " ".join(w for w in words if w != "struct")
    for _ in range(8):  # typedef chains
        resolved = (aliases or {}).get(base) or BUILTIN_ALIASES.get(base)
        if resolved is None or "*" in resolved:
            break
        resolved_words = [w for w in resolved.split() if w not in _IGNORED and w != "struct"]
        const = const or "const" in resolved_words
        base = " ".join(w for w in resolved_words if w != "const")
    base = _SPELLINGS.get(base, base)
    if base in VECTORS:
        if not stars:
            raise InputError(f"type {text!r}: a CUDA vector passed by value is not supported; "
                             "pointers to vectors are (e.g. 'const float4*')", file=file, key=key)
        return CType(base=VECTORS[base][0], pointer=True, const=const, vector=base)
    if base == "half" and not stars:
        raise InputError(f"type {text!r}: a half passed by value is not supported; half buffers are ('half*', "
                         "'const half*')", file=file, key=key)
    if base == "void" and not stars:
        raise InputError(f"type {text!r}: void is only a pointer's type ('void*', a buffer of bytes)",
                         file=file, key=key)
    if base not in SCALARS:
        known = ", ".join(SCALARS)
        raise InputError(f"unknown type {text!r} (known: {known}, pointers to them and to CUDA vector types "
                         "such as float4, uchar4)", file=file, key=key)
    return CType(base=base, pointer=bool(stars), const=const and bool(stars))


def struct_pointer_type(text: object, size: int) -> CType | None:
    """`const struct SplitFindTask*` (a buffer of structs of `size` bytes each) as a CType; None
    when `text` is not that spelling."""
    if not isinstance(text, str):
        return None
    match = re.fullmatch(r"\s*(const\s+)?struct\s+([A-Za-z_]\w*(?:::[A-Za-z_]\w*)*)\s*(const\s*)?\*\s*"
                         r"(?:__restrict__\s*)?", text)
    if match is None:
        return None
    return CType(base=match.group(2), pointer=True, const=bool(match.group(1) or match.group(3)), struct_size=size)


def struct_type(text: object, size: int) -> CType | None:
    """`struct Params` (a struct or class passed by value, `size` bytes) as a CType; None when
    `text` is not that spelling."""
    if not isinstance(text, str):
        return None
    match = re.fullmatch(r"\s*struct\s+([A-Za-z_]\w*(?:::[A-Za-z_]\w*)*)\s*", text)
    return CType(base=match.group(1), struct_size=size) if match else None
