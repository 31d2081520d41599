"""Loads of read-only arrays routed through the read-only data path (`__ldg`).

`with_read_only_loads(source, kernel, arrays)` returns the source with every load `a[i]` of the
named pointer parameters written `__ldg(&a[i])`. An array
qualifies when it is a `const` pointer parameter of a type `__ldg` has an overload for and the
kernel uses it only in loads `a[i]` (no writes, aliases, casts, dereferences or calls: any of
them could write the array).
Anything else is left as written. The non-coherent path is only valid for data that does not
change while the kernel runs; a `const` parameter the kernel never writes is that, unless the
caller passes the same buffer as another, written, parameter, which the spec's distinct
buffers rule out.
"""

from __future__ import annotations

from tree_sitter import Node

from regrapht.idioms.syntax import kernel_syntax, subscript_parts, text, unparen, walk

# Element types with an `__ldg` overload (CUDA's sm_32_intrinsics.h).
LDG_TYPES = frozenset({"float", "double", "int", "unsigned int", "unsigned", "long long", "long long int",
                       "unsigned long long", "unsigned long long int", "short", "unsigned short", "char",
                       "signed char", "unsigned char", "float2", "float4", "int2", "int4", "double2",
                       "uint2", "uint4", "long", "unsigned long"})


def read_only_arrays(source: str, kernel: str) -> frozenset[str]:
    """The pointer parameters of `kernel` that qualify for `__ldg` (see the module docstring)."""
    syntax = kernel_syntax(source, kernel)
    if syntax is None:
        return frozenset()
    candidates = {name for name, param in syntax.pointers.items()
                  if param.is_const and " ".join(param.base_type.split()) in LDG_TYPES}
    for node in walk(syntax.body):
        if node.type != "identifier" or text(node) not in candidates:
            continue
        # The only use allowed is a load `a[i]`: a write, an alias, a cast, a dereference or a
        # call argument could write the array or hand it to code that does.
        parent = node.parent
        if parent is None or parent.type != "subscript_expression" or \
                parent.child_by_field_name("argument") != node or not _is_load(parent):
            candidates.discard(text(node))
    return frozenset(candidates)


def with_read_only_loads(source: str, kernel: str, arrays: frozenset[str]) -> str:
    """`source` with the loads `a[i]` of `arrays` (of `kernel`) written `__ldg(&a[i])`."""
    syntax = kernel_syntax(source, kernel)
    if syntax is None or not arrays:
        return source
    # Insertions, not replacements: nested loads (`x[col[k]]`) both get their own `__ldg`.
    inserts: list[tuple[int, str]] = []
    for node in walk(syntax.body):
        if node.type != "subscript_expression" or not _is_load(node):
            continue
        base, indices = subscript_parts(node)
        base = unparen(base)
        if base is None or base.type != "identifier" or text(base) not in arrays or len(indices) != 1:
            continue
        inserts += [(node.start_byte, "__ldg(&"), (node.end_byte, ")")]
    data = syntax.source
    for at, code in sorted(inserts, key=lambda i: i[0], reverse=True):
        data = data[:at] + code.encode() + data[at:]
    return data.decode()


def _is_load(node: Node) -> bool:
    """A subscript read for its value: not written, not an address (`&a[i]`), not under `__ldg`."""
    parent = node.parent
    if parent is None:
        return False
    if parent.type in ("assignment_expression",) and parent.child_by_field_name("left") == node:
        return False
    if parent.type == "update_expression":
        return False
    if parent.type == "pointer_expression" and text(parent.child_by_field_name("operator")) == "&":
        return False
    return not (parent.type == "subscript_expression" and parent.child_by_field_name("argument") == node)
