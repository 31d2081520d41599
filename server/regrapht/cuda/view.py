"""`KernelView`: one kernel of one code state, the boundary engines read kernels through.

`kernels_of(text)` parses a text once with tree-sitter and returns its `FileView`: every
`__global__` definition as a frozen `KernelView` (name; definition, parameter list and body as
text offsets and lines; parameters; `__launch_bounds__`; template parameters; the tree-sitter
`function_definition` node), every `__global__` declaration (`KernelDeclaration`, forward ones
too), the comment/string-blanked code mask, launch sites by kernel, and, on first use, the
file's `SourceModel`. It is memoised by the text (an LRU over a pure function), so the engines
that ask about one code state (the locator, the prompt, the idioms, spec inference) share one
parse.

Text tree-sitter cannot parse cleanly (model output, half-typed code) has its kernels,
declarations and launch sites read by the lexical scanner (`cuda/scan.py`) instead, behind the
same types: `FileView.parsed` says which. Both paths spell what they find with the same
normalisers, so a kernel reads the same either way.

Offsets are `str` indices (code points) into the text, lines 0-based.
"""

from __future__ import annotations

import bisect
import functools
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from regrapht.cuda.extract import declarator_name, node_text
from regrapht.cuda.parse import ModelBuilder, encode_source, make_parser
from regrapht.cuda.scan import (
    ScannedDeclaration,
    arguments,
    code_mask,
    integer_define,
    parse_params,
    scan_body,
    scan_declarations,
    scan_launches,
    split_top_level,
    statement_start,
)

if TYPE_CHECKING:
    from tree_sitter import Node, Tree

    from regrapht.cuda.model import SourceModel

# Distinct code states kept parsed: a search step reads a handful (the source, a few rewrites).
CACHED_TEXTS = 32
# Nodes whose children may hold kernels at file scope.
_SCOPES = frozenset({"translation_unit", "linkage_specification", "declaration_list", "namespace_definition",
                     "template_declaration", "preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif",
                     "preproc_elifdef"})


@dataclass(frozen=True)
class Param:
    type: str  # e.g. "const float *" (normalised spaces, without the name)
    name: str

    @property
    def is_pointer(self) -> bool:
        return "*" in self.type

    @property
    def element_type(self) -> str:
        """The pointee type without qualifiers: "const float * __restrict__" -> "float"."""
        base = self.type.split("*")[0]
        words = [w for w in base.split() if w not in ("const", "volatile", "__restrict__", "__restrict")]
        return " ".join(words)


@dataclass(frozen=True)
class KernelDeclaration:
    """One `__global__` declaration, with a body or without (offsets into the text)."""

    name: str
    start: int  # the line of its first specifier (a comment-only gap before it is not part of it)
    paren: int  # offset of the parameter list's "("
    close: int  # offset of its ")"
    launch_bounds: tuple[str, ...]  # as in `KernelView`
    template_parameters: tuple[str, ...]  # as written, e.g. ("typename T", "int B = 256")


@dataclass(frozen=True)
class KernelLaunch:
    """`kernel<<<grid, block[, shared[, stream]]>>>`: where its configuration is written."""

    start: int  # offset of "<<<"
    end: int  # offset just past ">>>"
    args: tuple[str, ...]  # grid, block[, shared[, stream]] as written


@dataclass(frozen=True)
class KernelView:
    """One `__global__` definition of a code state."""

    name: str
    start: int  # offset of the definition (the line of its first specifier: template, extern "C", ...)
    end: int  # offset just past the closing brace
    params_start: int  # offset just past "("
    params_end: int  # offset of ")"
    body_start: int  # offset just past "{"
    body_end: int  # offset of the closing "}"
    params: tuple[Param, ...]
    # The arguments of its `__launch_bounds__` as written (comments dropped, spaces normalised),
    # e.g. ("256", "2"); () without one.
    launch_bounds: tuple[str, ...] = ()
    template_parameters: tuple[str, ...] = ()  # as written, e.g. ("typename T", "int B = 256")
    lines: tuple[int, int] = (0, 0)  # first and last line of the definition
    body_lines: tuple[int, int] = (0, 0)  # lines of "{" and "}"
    # The tree-sitter `function_definition` (None where the scanner read the text).
    node: Node | None = field(default=None, compare=False, repr=False)
    file: FileView | None = field(default=None, compare=False, repr=False)

    def text(self, source: str) -> str:
        return source[self.start : self.end]

    def body(self, source: str) -> str:
        return source[self.body_start : self.body_end]

    def header(self, source: str) -> str:
        return source[self.start : self.body_start]

    @property
    def launches(self) -> tuple[KernelLaunch, ...]:
        """Where the file launches this kernel."""
        return self.file.launches_of(self.name) if self.file is not None else ()

    def signature_key(self) -> tuple[str, tuple[str, ...]]:
        """What a candidate may not change: the name and the parameter types as the ABI sees them.

        Top-level qualifiers (`__restrict__`, a `const` on the pointer itself) do not change a C++
        parameter's type, so they are dropped; pointee qualifiers do and are kept.
        """
        types = []
        for param in self.params:
            t = param.type.replace("__restrict__", " ").replace("__restrict", " ")
            if "*" in t:
                head, _, tail = t.rpartition("*")
                t = head + "*" + tail.replace("const", " ")
            types.append(" ".join(t.split()))
        return self.name, tuple(types)


def base_name(name: str) -> str:
    """The kernel a name refers to: an instantiation `scan<float>` names its template `scan`."""
    return name.split("<")[0].strip()


@dataclass(frozen=True, eq=False)
class FileView:
    """One code state's kernels (see the module docstring). Build it with `kernels_of`."""

    text: str
    data: bytes  # the text as tree-sitter reads it (UTF-8)
    tree: Tree
    parsed: bool  # tree-sitter parsed the text without an error: the kernels come from the tree
    masked: str  # comments and string/char literal contents blanked (same length as `text`)
    kernels: tuple[KernelView, ...]  # the definitions, in source order
    declarations: tuple[KernelDeclaration, ...]  # every `__global__` declaration, in source order

    def kernel(self, name: str) -> KernelView | None:
        """The first definition of kernel `name` (or of the template an instantiation names)."""
        base = base_name(name)
        return next((k for k in self.kernels if k.name == base), None)

    def launch_bounds(self, name: str) -> tuple[str, ...]:
        """The `__launch_bounds__` arguments of kernel `name` as any of its declarations (a forward
        declaration or the definition) writes them; () when none has them."""
        base = base_name(name)
        return next((d.launch_bounds for d in self.declarations if d.name == base and d.launch_bounds), ())

    def launches_of(self, name: str) -> tuple[KernelLaunch, ...]:
        """The launch sites of kernel `name` (`name<<<`, `name<T><<<`, `ns::name<<<`)."""
        base = base_name(name)
        found = []
        for start, end in scan_launches(self.masked, base):
            if self.parsed and not self._launches_kernel(start, base):
                continue
            found.append(KernelLaunch(start, end, tuple(split_top_level(self.text[start + 3 : end - 3]))))
        return tuple(found)

    def integer_define(self, name: str) -> int | None:
        """The value of `#define NAME <integer literal>` when the file defines `name` exactly once
        so (and never `#undef`s it); None otherwise."""
        return integer_define(self.masked, name)

    def function_node(self, name: str) -> tuple[Node, tuple[str, ...]] | None:
        """The tree-sitter `function_definition` of kernel `name` with the names of its template
        parameters, read from the tree whether or not the rest of the file parses cleanly."""
        return _definition_node(self.tree.root_node, base_name(name))

    @cached_property
    def model(self) -> SourceModel:
        """The file's source model (extracted from this view's tree on first use)."""
        return ModelBuilder().build(self.tree, self.data)

    def _launches_kernel(self, start: int, name: str) -> bool:
        """Whether the `<<<` at `start` configures a call of `name` in the tree."""
        at = _byte_offset(self.text, self.data, start)
        token = self.tree.root_node.descendant_for_byte_range(at, at + 3)
        syntax = token.parent if token is not None else None
        call = syntax.parent if syntax is not None and syntax.type == "kernel_call_syntax" else None
        callee = call.child_by_field_name("function") if call is not None else None
        return callee is not None and _callee_name(callee) == name


@functools.lru_cache(maxsize=CACHED_TEXTS)
def kernels_of(text: str) -> FileView:
    """The `FileView` of `text`, parsed once per distinct text (never raises)."""
    data = encode_source(text)
    tree = make_parser().parse(data)
    masked = code_mask(text)
    parsed = not tree.root_node.has_error
    lines = _Lines(text)
    if parsed:
        definitions, declarations = _from_tree(tree.root_node, text, data, masked)
    else:
        definitions, declarations = _from_scan(text, masked)
    kernels: list[KernelView] = []
    view = FileView(text, data, tree, parsed, masked, (), tuple(declarations))
    for declaration, body, node in definitions:
        opening, closing = body
        kernels.append(KernelView(
            name=declaration.name, start=declaration.start, end=closing + 1, params_start=declaration.paren + 1,
            params_end=declaration.close, body_start=opening + 1, body_end=closing,
            params=tuple(Param(t, n) for t, n in parse_params(text[declaration.paren + 1 : declaration.close])),
            launch_bounds=declaration.launch_bounds, template_parameters=declaration.template_parameters,
            lines=(lines.of(declaration.start), lines.of(closing)), body_lines=(lines.of(opening), lines.of(closing)),
            node=node, file=view,
        ))
    object.__setattr__(view, "kernels", tuple(kernels))  # the kernels point back at their file
    return view


def kernel_view(text: str, name: str) -> KernelView | None:
    """Kernel `name` of `text` (`kernels_of(text).kernel(name)`)."""
    return kernels_of(text).kernel(name)


# ---------------------------------------------------------------------------------------------
# Building a view.

_Definition = tuple[KernelDeclaration, tuple[int, int], "Node | None"]  # (declaration, ("{", "}"), node)


def _from_scan(text: str, masked: str) -> tuple[list[_Definition], list[KernelDeclaration]]:
    declarations = [_declaration(found) for found in scan_declarations(masked)]
    definitions: list[_Definition] = []
    for declaration in declarations:
        body = scan_body(masked, declaration.close)
        if body is not None:
            definitions.append((declaration, body, None))
    return definitions, declarations


def _declaration(found: ScannedDeclaration) -> KernelDeclaration:
    return KernelDeclaration(found.name, found.start, found.paren, found.close, found.launch_bounds,
                             found.template_parameters)


def _from_tree(root: Node, text: str, data: bytes, masked: str) -> tuple[list[_Definition], list[KernelDeclaration]]:
    offset = _Offsets(text, data)
    definitions: list[_Definition] = []
    declarations: list[KernelDeclaration] = []
    for node, owner in _global_functions(root):
        declarator = _function_declarator(node)
        name_node = declarator.child_by_field_name("declarator") if declarator is not None else None
        plist = declarator.child_by_field_name("parameters") if declarator is not None else None
        name = _declared_name(name_node)
        if name is None or plist is None:
            continue
        bounds: tuple[str, ...] = ()
        launch_bounds = next((c for c in node.children if c.type == "launch_bounds"), None)
        if launch_bounds is not None:
            bounds = _bracketed(launch_bounds, "(", ")", masked, offset)
        template: tuple[str, ...] = ()
        if owner.type == "template_declaration":
            parameters = owner.child_by_field_name("parameters")
            template = _bracketed(parameters, "<", ">", masked, offset) if parameters is not None else ()
        declaration = KernelDeclaration(name, statement_start(masked, offset(owner.start_byte)),
                                        offset(plist.start_byte), offset(plist.end_byte) - 1, bounds, template)
        declarations.append(declaration)
        body = node.child_by_field_name("body") if node.type == "function_definition" else None
        if body is not None:
            definitions.append((declaration, (offset(body.start_byte), offset(body.end_byte) - 1), node))
    return definitions, declarations


def _global_functions(root: Node) -> list[tuple[Node, Node]]:
    """(`function_definition` or `declaration` with `__global__`, the node its declaration starts
    at: its `template <...>` or `extern "C"` when those open it), in source order."""
    found: list[tuple[Node, Node]] = []
    stack: list[Node] = [root]
    while stack:
        node = stack.pop()
        kind = node.type
        if kind in ("function_definition", "declaration"):
            if any(c.type == "__global__" for c in node.children) and _function_declarator(node) is not None:
                found.append((node, _owner(node)))
            continue
        if kind in _SCOPES:
            stack.extend(reversed(node.children))
    return found


def _owner(node: Node) -> Node:
    parent = node.parent
    if parent is not None and parent.type == "template_declaration":
        return parent
    if parent is not None and parent.type == "linkage_specification" and parent.child_by_field_name("body") == node:
        return parent
    return node


def _function_declarator(node: Node) -> Node | None:
    declarator = node.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    return declarator


def _declared_name(node: Node | None) -> str | None:
    """The kernel's name: `k` or `ns::k`; None for what the scanner does not read as a kernel
    either (an explicit specialisation `k<float>`, an operator)."""
    while node is not None and node.type == "qualified_identifier":
        node = node.child_by_field_name("name")
    if node is None or node.type != "identifier" or node.text is None:
        return None
    return node.text.decode("utf-8", errors="replace")


def _callee_name(node: Node) -> str:
    while node.type in ("qualified_identifier", "template_function"):
        inner = node.child_by_field_name("name")
        if inner is None:
            return ""
        node = inner
    return node.text.decode("utf-8", errors="replace") if node.type == "identifier" and node.text else ""


def _bracketed(node: Node, opener: str, closer: str, masked: str, offset: _Offsets) -> tuple[str, ...]:
    """The arguments between a node's `opener` and `closer` tokens, as the scanner spells them."""
    open_at = next((c for c in node.children if c.type == opener), None)
    close_at = next((c for c in reversed(node.children) if c.type == closer), None)
    if open_at is None or close_at is None:
        return ()
    return arguments(masked, offset(open_at.start_byte), offset(close_at.start_byte))


def _definition_node(root: Node, name: str) -> tuple[Node, tuple[str, ...]] | None:
    """The first `__global__` definition of `name` in source order (the one `FileView.kernel`
    picks when a file defines it twice, e.g. in both branches of an `#if`) and its template
    parameters' names."""
    stack: list[tuple[Node, tuple[str, ...]]] = [(root, ())]
    while stack:
        node, template = stack.pop()
        if node.type == "function_definition":
            declarator = _function_declarator(node)
            ident = declarator.child_by_field_name("declarator") if declarator is not None else None
            if ident is not None and ident.text is not None and ident.text.decode("utf-8", errors="replace") == name \
                    and any(c.type == "__global__" or c.text == b"__global__" for c in node.children):
                return node, template
            continue
        if node.type == "template_declaration":
            params = node.child_by_field_name("parameters")
            names = tuple(_template_parameter_name(p) for p in params.named_children) if params is not None else ()
            stack.extend((c, names) for c in reversed(node.children))  # popped in source order
            continue
        if node.type in ("translation_unit", "linkage_specification", "declaration_list", "namespace_definition",
                         "preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif"):
            stack.extend((c, template) for c in reversed(node.children))
    return None


def _template_parameter_name(parameter: Node) -> str:
    return node_text(declarator_name(parameter) or parameter.named_children[-1])


class _Offsets:
    """Byte offsets of the tree -> `str` offsets of the text."""

    def __init__(self, text: str, data: bytes) -> None:
        self.data = data
        self.same = len(data) == len(text)  # ASCII: bytes are characters

    def __call__(self, byte: int) -> int:
        if self.same:
            return byte
        # A lone surrogate was encoded as one "?" (encode_source): one byte per code point holds.
        return len(self.data[:byte].decode("utf-8", errors="replace"))


def _byte_offset(text: str, data: bytes, offset: int) -> int:
    return offset if len(data) == len(text) else len(encode_source(text[:offset]))


class _Lines:
    """Offsets -> 0-based lines, with the line starts found on first use."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._starts: list[int] | None = None

    def of(self, offset: int) -> int:
        if self._starts is None:
            starts, at = [], self.text.find("\n")
            while at >= 0:
                starts.append(at)
                at = self.text.find("\n", at + 1)
            self._starts = starts
        return bisect.bisect_left(self._starts, offset)
