"""What the batched-product reader reads: the records, the reading state, the algebra helpers.

`BatchedProduct` (with `BatchedOperand`) is the result `batched_gemm.batched_product` gives; a
`Decode` is one integer local as `(source / divisor) % modulus`; `Reading` holds what the reader
has read of a kernel so far (its scope, decodes, guards, launch) with the queries over it that
the reader, the product and the domain share; `ProductWork` is the k loop's product.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from tree_sitter import Node

from regrapht.cuda.affine import Poly
from regrapht.idioms.syntax import (
    GLOBAL_X,
    GLOBAL_Y,
    KernelSyntax,
    Symbols,
    subscript_parts,
    text,
)

AXES = ("x", "y", "z")
Hole = Literal["acc", "c"]


@dataclass(frozen=True)
class Epilogue:
    """A stored value written in terms of the accumulator and C's stored element: pieces of the
    original's text (`str`) and holes (`Piece.hole`), filled by `written`."""

    pieces: tuple[Piece, ...]

    def written(self, acc: str, c: str) -> str:
        """The value with the accumulator spelled `acc` and C's element `c`."""
        return "".join(p.text if p.hole is None else (acc if p.hole == "acc" else c) for p in self.pieces)

    def __str__(self) -> str:
        return self.written("{acc}", "{c}")


@dataclass(frozen=True)
class Piece:
    text: str = ""
    hole: Hole | None = None

    @staticmethod
    def of(value: str) -> Piece:
        return Piece(text=value)
GLOBAL_Z = Poly.of({("blockDim.z", "blockIdx.z"): 1, ("threadIdx.z",): 1})
GLOBALS = {"x": GLOBAL_X, "y": GLOBAL_Y, "z": GLOBAL_Z}
ELEMENT_TYPES = ("float", "double", "int")
FLOAT_TYPES = ("float", "double")
FLOAT_RANK = {"float": 0, "double": 1}  # a conversion to a higher rank is exact
ROLES = ("batch", "row", "col")
INTEGER_TYPE_WORDS = frozenset({"int", "unsigned", "signed", "long", "short", "size_t", "int64_t", "uint64_t",
                                 "ptrdiff_t", "int32_t", "uint32_t"})


@dataclass(frozen=True)
class Decode:
    """`(source / divisor) % modulus` (modulus None: no `%`)."""

    source: str
    divisor: Poly
    modulus: Poly | None


@dataclass(frozen=True)
class BatchedOperand:
    array: str  # the pointer parameter
    base: Poly  # over the batch leaf ("b") and scalars
    outer: Poly  # stride of its row (A) or column (B) coordinate
    inner: Poly  # stride of k


@dataclass(frozen=True)
class BatchedProduct:
    element: str  # "float" or "double" (after template substitution)
    acc_type: str  # the accumulator's type (after template substitution)
    element_text: str  # the operands' element type as written (`T` in a template)
    acc_text: str  # the accumulator's type as written
    # The type each product `a * b` is formed in (after template substitution; the element type
    # unless a factor is widened, `(double)A[..]` on float data) and that type as written.
    product_type: str
    product_text: str
    batch: Poly  # extents over scalar parameters, template parameters and literals
    m: Poly
    n: Poly
    k: Poly
    a: BatchedOperand
    b: BatchedOperand
    output: str
    c_base: Poly  # C's index = c_base(b) + c_row * i + c_col * j
    c_row: Poly
    c_col: Poly
    # The stored value: the original's text around holes for the accumulator and C's element.
    epilogue: Epilogue
    template_values: Mapping[str, int]  # this instantiation's integer template arguments
    # The grid axis whose blocks are the batch when its count exists only in the launch
    # (`blockIdx.x` per matrix, no guard, the grid not a kernel scalar): a rewrite keeps the launch.
    batch_axis: str | None
    compile_time: frozenset[str]  # names whose values are compile-time (template parameters)

    def value(self, poly: Poly, constants: Mapping[str, int]) -> int | None:
        """`poly` evaluated with the template arguments and `constants` (spec scalars)."""
        return evaluate(poly, {**constants, **self.template_values})


# A leaf of the mixed radix in the indices: role letter (b, i, j) by what uses it.
LEAF_NAMES = {"batch": "b", "row": "i", "col": "j"}


def evaluate(poly: Poly, values: Mapping[str, int]) -> int | None:
    total = 0
    for monomial, coefficient in poly.terms:
        term = coefficient
        for atom in monomial:
            if atom not in values:
                return None
            term *= values[atom]
        total += term
    return total


def substitute(poly: Poly, mapping: Mapping[str, Poly]) -> Poly | None:
    out = Poly.const(0)
    for monomial, coefficient in poly.terms:
        term: Poly | None = Poly.const(coefficient)
        for atom in monomial:
            if term is None:
                return None
            term = term * mapping.get(atom, Poly.atom(atom))
        if term is None:
            return None
        out = out + term
    return out


def template_arguments(name: str) -> list[str]:
    """`bmm<float, 16>` -> ["float", "16"] (split at top-level commas)."""
    if "<" not in name or not name.rstrip().endswith(">"):
        return []
    inner = name[name.index("<") + 1 : name.rstrip().rindex(">")]
    parts, depth, current = [], 0, ""
    for char in inner:
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
            continue
        depth += {"<": 1, ">": -1, "(": 1, ")": -1}.get(char, 0)
        current += char
    if current.strip():
        parts.append(current.strip())
    return parts


class NotBatched(Exception):
    """Internal: the kernel leaves the recognised shape (caught in `batched_product` only)."""


def times(left: Poly, right: Poly) -> Poly:
    product = left * right
    if product is None:
        raise NotBatched
    return product


@dataclass
class ProductWork:
    """The k loop's product: the accumulator, the loop, the two factors, the store."""

    acc: str
    acc_type: str
    k: str
    k_bound: Poly
    first: tuple[str, Poly]  # (array, index) of the two factors
    second: tuple[str, Poly]
    conversions: tuple[tuple[str, ...], tuple[str, ...]]  # of the first and second factor
    fused: str  # the call that forms the update (`fmaf`, `fma`), "" for `acc += a * b`
    output: tuple[str, Poly]
    value: Node
    compound: bool  # `C[..] += expr`


@dataclass
class Reading:
    """What the reader has read of one kernel so far (filled in statement by statement; the
    product and the domain read it)."""

    syntax: KernelSyntax
    constants: dict[str, int]  # the spec's scalar values
    symbols: Symbols
    decodes: dict[str, Decode] = field(default_factory=dict)
    reach: dict[str, Poly] = field(default_factory=dict)  # source -> how many values it takes
    owned: set[tuple[str, str]] = field(default_factory=set)  # ("block" | "grid", axis) owned by a loop source
    conditions: list[tuple[str, Poly]] = field(default_factory=list)  # (decode local, exclusive bound)
    types: dict[str, str] = field(default_factory=dict)  # template type parameter -> argument
    template_values: dict[str, int] = field(default_factory=dict)
    value_locals: dict[str, tuple[str, Node]] = field(default_factory=dict)  # float locals the epilogue reads
    scalars: set[str] = field(default_factory=set)
    pointers: dict[str, str] = field(default_factory=dict)  # pointer parameter -> element type (substituted)
    written_types: dict[str, str] = field(default_factory=dict)  # pointer parameter -> element type as written
    known: set[str] = field(default_factory=set)  # scalars and integer template parameters
    grid_texts: list[str] = field(default_factory=list)
    block_texts: list[str] = field(default_factory=list)
    launch_grid: list[Poly] = field(default_factory=list)
    launch_block: list[Poly] = field(default_factory=list)

    def scalar(self, node: Node | None) -> Poly | None:
        """A positive amount over scalars and template parameters."""
        poly = self.symbols.poly(node)
        if not poly.terms or not poly.atoms() <= self.known or any(c <= 0 for _, c in poly.terms):
            return None
        return poly

    def exclusive(self, node: Node | None, inclusive: bool) -> Poly | None:
        """The exclusive bound a `< node` (or `<= node`: `<= M - 1` is `< M`) sets, over scalars."""
        if not inclusive:
            return self.scalar(node)
        poly = self.symbols.poly(node) + Poly.const(1)
        if not poly.terms or not poly.atoms() <= self.known or any(c <= 0 for _, c in poly.terms):
            return None
        return poly

    def subscript(self, node: Node) -> tuple[str, Poly]:
        array, indices = subscript_parts(node)
        if array is None or array.type != "identifier" or len(indices) != 1:
            raise NotBatched
        name = text(array)
        index = self.symbols.poly(indices[0])
        if name in self.symbols.aliases:
            name, offset = self.symbols.aliases[name]
            index = offset + index
        if name not in self.pointers:
            raise NotBatched
        return name, index
