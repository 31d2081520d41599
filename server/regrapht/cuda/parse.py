"""Parsing .cu text into a `SourceModel`: the tree-sitter parser, decoding, and the model builder.

`parse_source(text)` is the one-shot entry point. `ModelBuilder` turns a tree into a model and
keeps a per-function cache keyed by the function's bytes (and the text before it on its first
line), so that after an edit only the changed functions are re-extracted. Facts are extracted
with rows relative to the function's first line; a function that moved is placed with
`model.move_function` (header now, facts on first read), so an edit costs O(functions), not
O(facts in the file). Each cache entry carries the memo of `PlacedFunction` (derived results,
e.g. rule findings, keyed by the function's text). `SourceDocument` (document.py) owns a
builder per open file.

Never raises on bad input: tree-sitter is error-tolerant, walks are iterative, and anything
that cannot be understood is skipped and logged at DEBUG level.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from typing import Any

from tree_sitter import Node, Tree

from regrapht.cuda.extract import FunctionExtractor
from regrapht.cuda.intexpr import int_literal
from regrapht.cuda.model import (
    Function,
    PlacedFunction,
    SharedArray,
    SourceModel,
    move_function,
    shift_rows,
)
from regrapht.cuda.nodes import Positions, declarator_name, encode_source, make_parser, node_text

log = logging.getLogger(__name__)

# Nodes whose children may hold function definitions at file scope.
CONTAINERS = frozenset({
    "translation_unit", "linkage_specification", "declaration_list", "namespace_definition",
    "template_declaration", "preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "preproc_elifdef",
    "ERROR",
})
_DEFINE_VALUE = re.compile(r"^\(?\s*([0-9][0-9a-fA-FxX']*[uUlL]*)\s*\)?$")
# Beyond this (generated code), later functions are skipped, with a warning. The cache holds one
# entry per function of the latest tree, so it is bounded by this too.
MAX_FUNCTIONS = 20_000


def decode_source(data: bytes) -> tuple[str, list[str]]:
    """Bytes of a file -> text, with warnings for what had to be repaired (never raises)."""
    warnings: list[str] = []
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        warnings.append(f"not valid UTF-8 (first bad byte at offset {error.start}); undecodable bytes replaced")
        text = data.decode("utf-8", errors="replace")
    if "\x00" in text:
        warnings.append("contains NUL bytes; is this a binary file?")
    return text, warnings


def parse_source(text: str, *, bodies: bool = True) -> SourceModel:
    """Parse a whole .cu/.cuh text into a `SourceModel` (never raises). `bodies=False`: only
    what a function's header says (name, kind, spans, template parameters, parameters, launch
    bounds, extern "C"), every body fact left empty; the same headers as the whole model, at
    the cost of the parse alone."""
    source = encode_source(text)
    tree = make_parser().parse(source)
    return ModelBuilder(bodies=bodies).build(tree, source)


_CacheKey = tuple[bytes, bytes, tuple[str, ...], bool, int]


@dataclass
class _Entry:
    """A cached function: its facts relative to its first line, the memo shared by its
    placements, and the latest placement (reused while the function does not move)."""

    relative: Function
    memo: dict[Any, Any] = field(default_factory=dict)
    placed: PlacedFunction | None = None

    def place(self, row: int) -> PlacedFunction:
        placed = self.placed
        if placed is None or placed.row != row:
            placed = PlacedFunction(self.relative, row, move_function(self.relative, row), self.memo)
            self.placed = placed
        return placed


class ModelBuilder:
    """Builds `SourceModel`s from trees, reusing the facts of functions whose text did not change."""

    def __init__(self, max_functions: int = MAX_FUNCTIONS, *, bodies: bool = True) -> None:
        self.max_functions = max_functions
        self.bodies = bodies  # False: headers only (`parse_source`)
        self._cache: dict[_CacheKey, _Entry] = {}

    def build(self, tree: Tree, source: bytes) -> SourceModel:
        items, constants, file_shared_nodes, skipped = _top_level_items(tree.root_node)
        positions = Positions(source)
        file_extractor = FunctionExtractor(positions, constants, {})
        file_shared: list[SharedArray] = []
        for declaration, target, name, type_text, is_extern in file_shared_nodes:
            file_shared.append(file_extractor.shared_array(declaration, target, name, type_text, is_extern, None))
        shared_types = {s.name: s.element_type for s in file_shared}
        context_key = hash((tuple(sorted(constants.items())), tuple(sorted(shared_types.items()))))
        placements: list[PlacedFunction] = []
        new_cache: dict[_CacheKey, _Entry] = {}
        if len(items) > self.max_functions:
            skipped.append(f"{len(items)} functions; only the first {self.max_functions} are analysed")
            items = items[: self.max_functions]
        for node, template_parameters, extern_c in items:
            row = node.start_point.row
            line_prefix = source[node.start_byte - node.start_point.column : node.start_byte]
            key = (line_prefix, node.text or b"", template_parameters, extern_c, context_key)
            entry = self._cache.get(key) or new_cache.get(key)
            if entry is None:
                # Rows relative to the function's first line: the facts only depend on `key`.
                extractor = FunctionExtractor(positions.relative_to(row), constants, shared_types)
                function = extractor.extract(node, template_parameters, extern_c, body_facts=self.bodies)
                if function is None:
                    skipped.append(f"line {row + 1}: function definition without a name")
                    continue
                entry = _Entry(function)
            new_cache[key] = entry
            placements.append(entry.place(row))
        # Only the functions of the latest tree stay cached: memory is bounded by the file (and
        # MAX_FUNCTIONS). Dropping the cache for big files would re-extract every function on
        # every keystroke (seconds for a file of thousands of kernels).
        self._cache = new_cache
        for message in skipped:
            log.debug("skipped: %s", message)
        return SourceModel(
            functions=tuple(p.absolute for p in placements),
            file_shared_arrays=tuple(file_shared),
            constants=tuple(sorted(constants.items())),
            warnings=tuple(skipped),
            has_errors=tree.root_node.has_error,
            line_count=tree.root_node.end_point.row + 1,
            placements=tuple(placements),
        )


def _top_level_items(root: Node) -> tuple[
    list[tuple[Node, tuple[str, ...], bool]],
    dict[str, int],
    list[tuple[Node, Node | None, str, str, bool]],
    list[str],
]:
    """File-scope function definitions (with template parameters and extern "C"), integer
    constants, and `__shared__` declarations, in source order."""
    items: list[tuple[Node, tuple[str, ...], bool]] = []
    constants: dict[str, int] = {}
    shared: list[tuple[Node, Node | None, str, str, bool]] = []
    skipped: list[str] = []
    stack: list[tuple[Node, tuple[str, ...], bool]] = [(root, (), False)]
    while stack:
        node, template_parameters, extern_c = stack.pop()
        node_type = node.type
        if node_type == "function_definition":
            items.append((node, template_parameters, extern_c))
            continue
        if node_type == "preproc_def":
            name = node_text(node.child_by_field_name("name"))
            match = _DEFINE_VALUE.match(node_text(node.child_by_field_name("value")).strip())
            value = int_literal(match.group(1)) if match else None
            if value is not None:
                constants[name] = value
            continue
        if node_type == "declaration":
            _file_declaration(node, constants, shared)
            continue
        if node_type not in CONTAINERS:
            continue
        if node_type == "ERROR":
            skipped.append(f"line {node.start_point.row + 1}: syntax error, parsed around it")
            child_types = {c.type for c in node.children}
            if "function_declarator" in child_types and "{" in child_types:
                items.append((node, template_parameters, extern_c))
        inner_templates = template_parameters
        inner_extern = extern_c
        if node_type == "template_declaration":
            parameters = node.child_by_field_name("parameters")
            inner_templates = tuple(node_text(p) for p in parameters.named_children) if parameters else ()
        elif node_type == "linkage_specification":
            inner_extern = extern_c or '"C"' in node_text(node.child_by_field_name("value"))
        children = node.children
        for index in range(len(children) - 1, -1, -1):
            stack.append((children[index], inner_templates, inner_extern))
    items.sort(key=lambda item: item[0].start_byte)
    return items, constants, shared, skipped


def _file_declaration(node: Node, constants: dict[str, int],
                      shared: list[tuple[Node, Node | None, str, str, bool]]) -> None:
    qualifiers = {node_text(c) for c in node.children if c.type in ("type_qualifier", "storage_class_specifier")}
    type_text = node_text(node.child_by_field_name("type"))
    for declarator in node.children_by_field_name("declarator"):
        is_init = declarator.type == "init_declarator"
        target = declarator.child_by_field_name("declarator") if is_init else declarator
        name_node = declarator_name(target)
        if name_node is None:
            continue
        if "__shared__" in qualifiers:
            shared.append((node, target, node_text(name_node), type_text, "extern" in qualifiers))
        elif is_init and ("const" in qualifiers or "constexpr" in qualifiers):
            value = int_literal(node_text(declarator.child_by_field_name("value")))
            if value is not None:
                constants[node_text(name_node)] = value


__all__ = ["ModelBuilder", "decode_source", "encode_source", "make_parser", "parse_source", "shift_rows"]
