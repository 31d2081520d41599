"""A loop around a point kernel's whole work that no launch axis can take, kept as a loop.

`for (int n = 0; n < N; n++) { ... }` around the work (a batch loop inside each thread) is a
march (`loop_points.py`) when a launch axis is free. When every axis is taken (the image's x and
y, the channel on blockIdx.z), each iteration can still be rewritten: `loop_as_scalar` makes the
loop variable a scalar parameter of a *derived* kernel whose body is one iteration, a point
kernel applier rewrites that, and `loop_around` puts the original loop header back around the
rewritten body, in the original signature. Each thread then runs the rewritten body once per
value of the loop, in the original order, and every point is computed by one thread for all
values of the loop (the rewrite's point -> thread mapping cannot depend on a scalar its launch
does not name), so each point's writes keep their order.

Checked here, on the syntax tree:
- the loop is the kernel's last statement, with a counter it declares and assigns nowhere else
  (not a parameter, declared once in the kernel), a unit step and bounds over scalars and
  constants only (every thread of a block runs it equally often, so barriers stay uniform);
- the statements before it are declarations and early-return guards that neither write nor read
  memory nor call anything but arithmetic (the rewrite evaluates them once per iteration);
- the iterations carry nothing to each other (`loop_points`: no break/return/goto, every local
  the body assigns declared in it, no array the body writes read in it), and (checked by the
  caller on the derived kernel's point view, `loop_points.distinct_writes`) one point's
  iterations write distinct elements, so no order between iterations is left to keep;
- `loop_around`: the rewritten body has no `return`, `goto`, or `break`/`continue` outside a
  loop of its own (each thread runs every iteration to its end, so it meets every barrier), and a
  barrier ends each iteration when the body has shared memory (the next iteration refills it).
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from regrapht.cuda.affine import Poly
from regrapht.idioms.loop_points import independent_iterations
from regrapht.idioms.pointwise import PURE_CALLS
from regrapht.idioms.syntax import (
    BUILTINS,
    Symbols,
    call_name,
    kernel_syntax,
    loop_counter,
    named_statements,
    text,
    unparen,
    walk,
)

_ARITHMETIC_CALLS = PURE_CALLS - {"__ldg"}  # a guard or index may call these (no memory read)
_LOOPS = ("for_statement", "while_statement", "do_statement")


@dataclass(frozen=True)
class KeptLoop:
    source: str  # the file with the derived kernel: one iteration, the variable a parameter
    variable: str
    type: str  # the counter's type as written
    header: str  # `for (int n = 0; n < N; n++)` as written
    lower: str  # its range [lower, upper) over scalars
    upper: str


def loop_as_scalar(source: str, kernel: str) -> KeptLoop | None:
    """The file with kernel `kernel`'s final loop (see the module docstring) replaced by its body
    and its counter appended to the parameters, or None when the kernel has no such loop."""
    syntax = kernel_syntax(source, kernel.split("<")[0].strip())
    if syntax is None:
        return None
    statements = syntax.statements()
    if not statements or statements[-1].type != "for_statement":
        return None
    loop, prefix = statements[-1], statements[:-1]
    scalars = set(syntax.scalars)
    symbols = Symbols(syntax.constants)
    for statement in prefix:
        if not _pure(statement):
            return None
        if statement.type == "declaration":
            for declarator in statement.children_by_field_name("declarator"):
                target = declarator.child_by_field_name("declarator") if declarator.type == "init_declarator" else None
                if target is not None and target.type == "identifier":
                    symbols.define(text(target), declarator.child_by_field_name("value"))
    counter = loop_counter(loop)
    condition = unparen(loop.child_by_field_name("condition"))
    update = unparen(loop.child_by_field_name("update"))
    body = loop.child_by_field_name("body")
    if counter is None or condition is None or update is None or body is None or \
            condition.type != "binary_expression":
        return None
    variable, start, init = counter
    type_text = " ".join(text(init.child_by_field_name("type")).split())
    if variable in {p.name for p in syntax.params} or any(w in type_text for w in ("float", "double", "auto")) or \
            any(c.type == "type_qualifier" for c in init.children):
        return None
    declared = [n for n in walk(syntax.function) if n.type == "identifier" and text(n) == variable and
                n.parent is not None and n.parent.child_by_field_name("declarator") == n]
    if len(declared) != 1:
        return None  # declared again (shadowed) somewhere: keep the reading simple
    operator = text(condition.child_by_field_name("operator"))
    if text(unparen(condition.child_by_field_name("left"))) != variable or operator not in ("<", "<=") or \
            _step(update, variable) != 1:
        return None
    lower, bound = symbols.poly(start), symbols.poly(condition.child_by_field_name("right"))
    if not _scalar(lower, scalars) or not _scalar(bound, scalars):
        return None
    upper = bound + Poly.const(1) if operator == "<=" else bound
    if not independent_iterations({variable}, loop, body, syntax.function):
        return None
    data = syntax.source
    body_text = text(body) if body.type == "compound_statement" else "{ " + text(body) + " }"
    parameters = syntax.function.child_by_field_name("declarator")
    parameter_list = parameters.child_by_field_name("parameters") if parameters is not None else None
    if parameter_list is None:
        return None
    closing = parameter_list.end_byte - 1  # the `)`
    separator = ", " if syntax.params else ""
    edits = [(loop.start_byte, loop.end_byte, body_text), (closing, closing, f"{separator}{type_text} {variable}")]
    for start_byte, end_byte, replacement in sorted(edits, reverse=True):
        data = data[:start_byte] + replacement.encode() + data[end_byte:]
    header = syntax.source[loop.start_byte : body.start_byte].decode().rstrip()
    return KeptLoop(data.decode(), variable, type_text, header, lower.text(), upper.text())


def loop_around(source: str, kernel: str, kept: KeptLoop) -> str | None:
    """`source` (a rewrite of the derived kernel) with the counter parameter removed and the
    kernel's body run once per value of the kept loop; None when the body could leave an
    iteration early (see the module docstring)."""
    syntax = kernel_syntax(source, kernel.split("<")[0].strip())
    if syntax is None or not syntax.params or syntax.params[-1].name != kept.variable:
        return None
    for node in walk(syntax.body):
        if node.type in ("return_statement", "goto_statement", "labeled_statement", "lambda_expression"):
            return None
        if node.type in ("break_statement", "continue_statement") and not _inside_loop(node, syntax.body):
            return None
    shared = any(n.type == "type_qualifier" and text(n) == "__shared__" for n in walk(syntax.body))
    declarator = syntax.function.child_by_field_name("declarator")
    parameter_list = declarator.child_by_field_name("parameters") if declarator is not None else None
    if parameter_list is None:
        return None
    parameters = [p for p in parameter_list.named_children if p.type != "comment"]
    data = syntax.source
    body = syntax.body
    # the rewritten body one level deeper, in a block of its own (its names stay local to it)
    inner = "\n".join(f"        {line}" if line.strip() else "" for line in text(body)[1:-1].strip("\n").split("\n"))
    barrier = "\n        __syncthreads();  // the next iteration refills the shared memory" if shared else ""
    new_body = (f"{{\n    {kept.header} {{  // kept from the original: no launch axis is free for it\n"
                f"        {{\n{inner}\n        }}{barrier}\n    }}\n}}")
    edits = [(body.start_byte, body.end_byte, new_body)]
    if len(parameters) == 1:
        edits.append((parameters[-1].start_byte, parameters[-1].end_byte, ""))
    else:
        edits.append((parameters[-2].end_byte, parameters[-1].end_byte, ""))
    for start_byte, end_byte, replacement in sorted(edits, reverse=True):
        data = data[:start_byte] + replacement.encode() + data[end_byte:]
    return data.decode()


def _inside_loop(node: Node, body: Node) -> bool:
    current = node.parent
    while current is not None and current != body:
        if current.type in _LOOPS or (node.type == "break_statement" and current.type == "switch_statement"):
            return True
        current = current.parent
    return False


def _pure(statement: Node) -> bool:
    """A declaration or an early-return guard that writes and reads no memory."""
    if statement.type == "declaration":
        if any(text(c) in ("static", "__shared__", "extern") for c in statement.children):
            return False
    elif statement.type == "if_statement":
        consequence = named_statements(statement.child_by_field_name("consequence"))
        if statement.child_by_field_name("alternative") is not None or len(consequence) != 1 or \
                consequence[0].type != "return_statement" or consequence[0].named_children:
            return False
        statement = statement.child_by_field_name("condition")  # type: ignore[assignment]
    else:
        return False
    for node in walk(statement):
        if node.type in ("assignment_expression", "update_expression", "subscript_expression", "pointer_expression",
                         "lambda_expression", "new_expression", "delete_expression"):
            return False
        if node.type == "field_expression" and text(node.child_by_field_name("argument")) not in BUILTINS:
            return False
        if node.type == "call_expression" and call_name(node) not in _ARITHMETIC_CALLS:
            return False
    return True


def _step(update: Node, variable: str) -> int | None:
    if update.type == "update_expression" and text(update.child_by_field_name("operator")) == "++" and \
            text(unparen(update.child_by_field_name("argument"))) == variable:
        return 1
    if update.type == "assignment_expression" and text(update.child_by_field_name("operator")) == "+=" and \
            text(unparen(update.child_by_field_name("left"))) == variable and \
            text(unparen(update.child_by_field_name("right"))) == "1":
        return 1
    return None


def _scalar(poly: Poly, scalars: set[str]) -> bool:
    return not poly.memory_dependent and poly.atoms() <= scalars
