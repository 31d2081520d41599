"""The work of a point kernel: checking it is pointwise, and its accesses, loops and atomics.

`WorkScanner` walks the statements run at each point: `check_pointwise` refuses barriers,
returns, thread geometry, impure calls and writes to parameters or coordinates; `scan` records
every subscript of a pointer parameter as an `Access` (index polynomial, enclosing loop
variables, the conditions it runs under), constant loop ranges and `atomicAdd` updates.
"""

from __future__ import annotations

from typing import NamedTuple

from tree_sitter import Node

from regrapht.cuda.affine import Poly, opaque_atom
from regrapht.cuda.nodes import node_text, walk
from regrapht.idioms.point_model import PURE_CALLS, Access, AtomicUpdate, Condition, LoopRange
from regrapht.idioms.point_values import NotPointwise, PointValues, strip

_GEOMETRY = ("threadIdx", "blockIdx", "blockDim", "gridDim")


class _Scope(NamedTuple):
    loop_vars: tuple[str, ...]
    conditions: tuple[Condition, ...]
    unknown: bool


_TOP = _Scope((), (), False)  # the work's own statements: no loop, no condition


class WorkScanner:
    """Scans the work statements of a point kernel whose names `values` holds."""

    def __init__(self, values: PointValues, type_names: set[str], allow_atomics: bool) -> None:
        self.values = values
        self.type_names = type_names  # template type parameters: `T(1)` is a conversion
        self.allow_atomics = allow_atomics
        self.mutable: set[str] = set()  # names the work assigns
        self.loop_names: set[str] = set()  # the work's loop variables
        self.atomics: list[AtomicUpdate] = []

    def check_pointwise(self, statement: Node) -> None:
        for node in walk(statement):
            kind = node.type
            if kind in ("return_statement", "goto_statement", "break_statement", "lambda_expression", "asm_statement"):
                raise NotPointwise  # `break` out of the work's own loops is fine but rare: keep it simple
            if kind == "field_expression":
                argument = node.child_by_field_name("argument")
                if argument is not None and node_text(argument) in _GEOMETRY:
                    raise NotPointwise
            if kind == "declaration":
                if any(node_text(c) in ("__shared__", "static", "extern") for c in node.children):
                    raise NotPointwise
                if any(d.type == "pointer_declarator" or (d.type == "init_declarator" and
                       (d.child_by_field_name("declarator") or d).type == "pointer_declarator")
                       for d in node.children_by_field_name("declarator")):
                    raise NotPointwise  # a local pointer could alias a parameter
            if kind == "call_expression":
                function = node.child_by_field_name("function")
                name = node_text(function.child_by_field_name("name") if function is not None and
                                 function.type == "template_function" else function)
                if name not in PURE_CALLS and name not in self.type_names and \
                        not (name == "atomicAdd" and self.allow_atomics):
                    raise NotPointwise
            if kind in ("assignment_expression", "update_expression"):
                target = node.child_by_field_name("left") or node.child_by_field_name("argument")
                target = strip(target)
                if target is None:
                    raise NotPointwise
                if target.type == "identifier":
                    if node_text(target) in self.values.params or any(c.name == node_text(target) for c in self.values.coordinates):
                        raise NotPointwise  # re-binding a parameter or a coordinate
                elif target.type != "subscript_expression":
                    raise NotPointwise  # `*p = v`, fields: not tracked
            if kind == "pointer_expression" and node_text(node.child_by_field_name("operator")) == "&" and \
                    not self._atomic_target(node):
                raise NotPointwise

    def _atomic_target(self, node: Node) -> bool:
        """`&a[i]` as the first argument of an allowed `atomicAdd` (also under the cast that gives a
        64-bit counter's `atomicAdd` its pointer type, `_counter_cast`)."""
        arguments = node.parent
        if arguments is not None and arguments.type == "parenthesized_expression":
            arguments = arguments.parent
        if arguments is not None and arguments.type == "cast_expression" and _counter_cast(arguments) is not None:
            node, arguments = arguments, arguments.parent
        call = arguments.parent if arguments is not None else None
        return self.allow_atomics and call is not None and call.type == "call_expression" and \
            node_text(call.child_by_field_name("function")) == "atomicAdd" and arguments is not None and \
            arguments.named_children[:1] == [node]

    def assigned_names(self, work: list[Node]) -> set[str]:
        names: set[str] = set()
        for statement in work:
            for node in walk(statement):
                if node.type in ("assignment_expression", "update_expression"):
                    target = strip(node.child_by_field_name("left") or node.child_by_field_name("argument"))
                    if target is not None and target.type == "identifier":
                        names.add(node_text(target))
        return names

    def scan(self, node: Node, accesses: list[Access], loops: dict[str, LoopRange],
             scope: _Scope = _TOP) -> None:
        """Accesses and loop ranges under `node`, in source order, tracking local definitions
        and the conditions each access runs under."""
        kind = node.type
        if kind in ("for_statement", "while_statement", "do_statement"):
            variable = self._loop_header(node, loops) if kind == "for_statement" else None
            exits = any(n.type in ("continue_statement", "break_statement") and not self._offset_only_exit(n, node)
                        for n in walk(node))
            inner = scope._replace(loop_vars=scope.loop_vars + ((variable,) if variable else ()),
                                   unknown=scope.unknown or exits or kind != "for_statement")
            for child in node.children:
                if child.type == "declaration" and child == node.child_by_field_name("initializer"):
                    continue
                self.scan(child, accesses, loops, inner)
            return
        if kind in ("if_statement", "conditional_expression"):
            condition = node.child_by_field_name("condition")
            consequence = node.child_by_field_name("consequence")
            alternative = node.child_by_field_name("alternative")
            if condition is not None and self._offset_only(condition):
                # `if (dx == 0 && dy == 0) continue;`: picks offsets, says nothing of the point
                for part in (condition, consequence, alternative):
                    if part is not None:
                        self.scan(part, accesses, loops, scope)
                return
            if condition is not None:
                self.scan(condition, accesses, loops, scope)
                terms = self.values.conditions(condition)
                then_scope = scope._replace(conditions=scope.conditions + (terms or ()),
                                            unknown=scope.unknown or terms is None)
            else:
                then_scope = scope._replace(unknown=True)
            if consequence is not None:
                self.scan(consequence, accesses, loops, then_scope)
            if alternative is not None:
                # `if (x == 0 || x == W - 1 || ...) copy; else stencil`: the else branch runs under
                # the negated disjunction (`x != 0` is `x > 0` where the guard gives x >= 0)
                others = self.values.negated_at_bounds(condition) if condition is not None else None
                else_scope = scope._replace(conditions=scope.conditions + others) if others is not None \
                    else scope._replace(unknown=True)
                self.scan(alternative, accesses, loops, else_scope)
            return
        if kind == "compound_statement":
            for child in node.children:
                self.scan(child, accesses, loops, scope)
                if child.type == "if_statement":
                    consequence = child.child_by_field_name("consequence")
                    body = consequence.named_children if consequence is not None and \
                        consequence.type == "compound_statement" else [consequence]
                    exit_node = body[0] if len(body) == 1 else None
                    condition = child.child_by_field_name("condition")
                    if exit_node is not None and exit_node.type == "continue_statement" and \
                            not (condition is not None and self._offset_only(condition)):
                        after = self._skip_guard(exit_node)
                        scope = scope._replace(conditions=scope.conditions + after) if after is not None \
                            else scope._replace(unknown=True)
            return
        if kind == "binary_expression" and node_text(node.child_by_field_name("operator")) in ("&&", "||"):
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            if left is not None:
                self.scan(left, accesses, loops, scope)
            if right is not None:
                self.scan(right, accesses, loops, scope._replace(unknown=True))
            return
        if kind == "declaration":
            for declarator in node.children_by_field_name("declarator"):
                if declarator.type == "init_declarator":
                    target = declarator.child_by_field_name("declarator")
                    value = declarator.child_by_field_name("value")
                    if value is not None:
                        self.scan(value, accesses, loops, scope)
                    if target is not None and target.type == "identifier" and value is not None:
                        name = node_text(target)
                        self.values.env[name] = Poly.atom(opaque_atom(name, "", False)) if name in self.mutable \
                            else self.values.poly(value)
                elif declarator.type == "identifier":
                    self.values.env[node_text(declarator)] = Poly.atom(opaque_atom(node_text(declarator), "", False))
                else:
                    self.scan(declarator, accesses, loops, scope)
            return
        if kind == "call_expression" and node_text(node.child_by_field_name("function")) == "atomicAdd":
            self._atomic(node, scope, accesses, loops)
            return
        if kind == "subscript_expression":
            base = node.child_by_field_name("argument")
            index = _subscript_index(node)
            if base is not None and base.type == "identifier" and node_text(base) in self.values.pointers and index is not None:
                read, write = _access_kind(node)
                accesses.append(Access(node_text(base), self.values.poly(index), node_text(index), node.start_byte,
                                       node.end_byte, write, read, scope.loop_vars, scope.conditions, scope.unknown))
            elif base is not None and base.type != "identifier":
                raise NotPointwise  # `t[i][j]` on parameters, casts: not tracked
            if index is not None:
                self.scan(index, accesses, loops, scope)
            return
        for child in node.children:
            self.scan(child, accesses, loops, scope)

    def _atomic(self, node: Node, scope: _Scope, accesses: list[Access], loops: dict[str, LoopRange]) -> None:
        arguments = node.child_by_field_name("arguments")
        args = [a for a in (arguments.named_children if arguments else []) if a.type != "comment"]
        if len(args) != 2:
            raise NotPointwise
        target = strip(args[0])
        array: Node | None = None
        index: Node | None = None
        cast = _counter_cast(target) if target is not None and target.type == "cast_expression" else None
        if cast is not None:
            target = strip(cast)
        if target is not None and target.type == "pointer_expression" and \
                node_text(target.child_by_field_name("operator")) == "&":
            inner = strip(target.child_by_field_name("argument"))
            if inner is not None and inner.type == "subscript_expression":
                array, index = inner.child_by_field_name("argument"), _subscript_index(inner)
        elif target is not None and target.type == "binary_expression" and \
                node_text(target.child_by_field_name("operator")) == "+":
            array, index = target.child_by_field_name("left"), target.child_by_field_name("right")
            if index is not None and index.type == "identifier" and node_text(index) in self.values.pointers:
                array, index = index, array
        if array is None or index is None or array.type != "identifier" or node_text(array) not in self.values.pointers:
            raise NotPointwise  # an atomic on something other than a pointer parameter's element
        if cast is not None and self.values.pointers[node_text(array)] not in COUNTERS_64:
            raise NotPointwise  # a cast that changes the element's width or kind
        self.scan(index, accesses, loops, scope)
        self.scan(args[1], accesses, loops, scope)
        self.atomics.append(AtomicUpdate(node_text(array), self.values.poly(index), node_text(index), array.start_byte,
                                         array.end_byte, node_text(args[1]),
                                         bool(scope.loop_vars or scope.conditions or scope.unknown),
                                         node.start_byte, node.end_byte,
                                         node.parent is not None and node.parent.type == "expression_statement"))

    def _offset_only(self, condition: Node) -> bool:
        """A condition over the work's loop variables and literals only."""
        for node in walk(condition):
            if node.type in ("subscript_expression", "call_expression", "field_expression", "assignment_expression"):
                return False
            if node.type == "identifier" and node_text(node) not in self.loop_names:
                return False
        return True

    def _offset_only_exit(self, exit_node: Node, loop: Node) -> bool:
        """A `continue` whose enclosing conditions up to `loop` are all offset-only."""
        if exit_node.type != "continue_statement":
            return False
        if self._skip_guard(exit_node) is not None:
            return True  # `if (iy < 0 || iy >= H) continue;`: later statements see its negation
        current = exit_node.parent
        while current is not None and current != loop:
            if current.type in ("for_statement", "while_statement", "do_statement"):
                return True  # it continues an inner loop
            if current.type == "if_statement":
                condition = current.child_by_field_name("condition")
                if condition is None or not self._offset_only(condition):
                    return False
            current = current.parent
        return True

    def _skip_guard(self, exit_node: Node) -> tuple[Condition, ...] | None:
        """For a `continue` that is the whole of an `if` without `else` standing in a block, the
        comparisons that hold after that `if` (the negation of a disjunction of comparisons)."""
        statement = exit_node.parent
        if statement is not None and statement.type == "compound_statement" and \
                [c.type for c in statement.named_children if c.type != "comment"] == ["continue_statement"]:
            statement = statement.parent
        block = statement.parent if statement is not None else None
        loop = block.parent if block is not None else None
        if statement is None or statement.type != "if_statement" or \
                statement.child_by_field_name("alternative") is not None or block is None or \
                block.type != "compound_statement" or loop is None or \
                loop.type not in ("for_statement", "while_statement", "do_statement") or \
                loop.child_by_field_name("body") != block:
            return None  # the skip must cover the rest of the loop body: the block it stands in
        condition = statement.child_by_field_name("condition")
        return self.values.negated(condition) if condition is not None else None

    def _loop_header(self, node: Node, loops: dict[str, LoopRange]) -> str | None:
        init = node.child_by_field_name("initializer")
        condition = strip(node.child_by_field_name("condition"))
        update = node.child_by_field_name("update")
        if init is None or init.type != "declaration":
            return None
        declarators = init.children_by_field_name("declarator")
        if len(declarators) != 1 or declarators[0].type != "init_declarator":
            return None
        variable = node_text(declarators[0].child_by_field_name("declarator"))
        first = self.values.poly(declarators[0].child_by_field_name("value")).constant
        self.values.env[variable] = Poly.atom(variable)
        if first is None or condition is None or condition.type != "binary_expression" or update is None:
            return variable
        if node_text(condition.child_by_field_name("left")) != variable or variable in self.mutable and \
                node_text(update).replace(" ", "") not in (f"{variable}++", f"++{variable}", f"{variable}+=1"):
            return variable
        # The loop variable's own update is its only assignment: other assignments forfeit a range.
        assigned = sum(1 for n in walk(node) if n.type in ("assignment_expression", "update_expression")
                       and node_text(strip(n.child_by_field_name("left") or n.child_by_field_name("argument")))
                       == variable)
        if assigned != 1 or node_text(update).replace(" ", "") not in (f"{variable}++", f"++{variable}",
                                                                       f"{variable}+=1"):
            return variable
        bound = self.values.poly(condition.child_by_field_name("right")).constant
        op = node_text(condition.child_by_field_name("operator"))
        if bound is None or op not in ("<", "<="):
            return variable
        last = bound - 1 if op == "<" else bound
        if last >= first:
            loops[variable] = LoopRange(variable, first, last)
        return variable

    # ------------------------------------------------------------------ expressions

def _subscript_index(node: Node) -> Node | None:
    indices = node.child_by_field_name("indices")
    if indices is not None:
        named = [c for c in indices.named_children if c.type != "comment"]
        return named[0] if len(named) == 1 else None
    return node.child_by_field_name("index")


def _access_kind(node: Node) -> tuple[bool, bool]:
    """(read, write) for a subscript expression."""
    child = node
    parent = node.parent
    while parent is not None and parent.type == "parenthesized_expression":
        child, parent = parent, parent.parent
    if parent is not None and parent.type == "assignment_expression" and parent.child_by_field_name("left") == child:
        return node_text(parent.child_by_field_name("operator")) != "=", True
    if parent is not None and parent.type == "update_expression":
        return True, True
    return True, False


# 64-bit unsigned counter types whose `atomicAdd` is the `unsigned long long` one through a cast
# (`atomicAdd((unsigned long long *)&counts[b], 1ULL)` on `size_t` counts).
COUNTERS_64 = frozenset({"size_t", "uint64_t", "unsigned long", "unsigned long int", "unsigned long long",
                         "unsigned long long int"})


def _counter_cast(node: Node) -> Node | None:
    """The operand of `(unsigned long long *)x` (or `unsigned long long int *`), else None."""
    descriptor = node.child_by_field_name("type")
    if descriptor is None or " ".join(node_text(descriptor).split()).replace(" *", "*") not in (
            "unsigned long long*", "unsigned long long int*"):
        return None
    return node.child_by_field_name("value")
