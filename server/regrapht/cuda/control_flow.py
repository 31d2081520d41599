"""Loops and thread-dependent branches of one function, as the extractor's walk meets them.

`ControlFlow.loop` records a `Loop` (induction variable, trip count, header span) and defines
the induction variable in the scope; `ControlFlow.if_statement` and `branch` record the
thread-dependent `Branch`es and the walk context under them (single-thread guards, the first
`if (...) return;` that makes later barriers divergent).
"""

from __future__ import annotations

from tree_sitter import Node

from regrapht.cuda.affine import Poly, atom_is_thread, exact_quotient, polynomial_quotient
from regrapht.cuda.arith_types import COMPARISON_OPERATORS, arithmetic_type
from regrapht.cuda.function_scope import LANE_NAMES, FunctionScope, WalkContext
from regrapht.cuda.model import Branch, Expr, Loop, LoopKind
from regrapht.cuda.nodes import (
    Positions,
    always_returns,
    declarator_name,
    node_text,
    statement_count,
    unit_step,
    unparen,
)
from regrapht.text import Span


class ControlFlow:
    """Reads the loops and branches of the function whose scope is `scope`."""

    def __init__(self, scope: FunctionScope, positions: Positions, function: str | None) -> None:
        self.scope = scope
        self.positions = positions
        self.function = function
        self.unit_step_loops: set[int] = set()  # loops stepping their variable by +-1

    def loop(self, node: Node, ctx: WalkContext) -> tuple[WalkContext, set[int]]:
        state = self.scope.state
        kind: LoopKind = "for" if node.type in ("for_statement", "for_range_loop") else \
            "while" if node.type == "while_statement" else "do"
        condition = node.child_by_field_name("condition")
        init_node = node.child_by_field_name("initializer")
        update = node.child_by_field_name("update")
        variable: str | None = None
        if init_node is not None:
            if init_node.type == "declaration":
                declarator = init_node.child_by_field_name("declarator")
                name_node = declarator_name(declarator.child_by_field_name("declarator")
                                            if declarator is not None and declarator.type == "init_declarator"
                                            else declarator)
                variable = node_text(name_node) if name_node is not None else None
                value = declarator.child_by_field_name("value") if declarator is not None else None
                if variable:
                    state.declare(variable)  # scoped to the loop (the walk opened its frame)
                    state.env[variable] = self.scope.poly(value) + Poly.atom(variable)
                    state.types[variable] = arithmetic_type(node_text(init_node.child_by_field_name("type")))
            elif init_node.type == "assignment_expression":
                left = init_node.child_by_field_name("left")
                if left is not None and left.type == "identifier":
                    variable = node_text(left)
                    state.env[variable] = self.scope.poly(init_node.child_by_field_name("right")) + Poly.atom(variable)
        if variable is None and condition is not None:
            inner = condition.named_children[0] if condition.type in ("condition_clause", "parenthesized_expression") \
                and condition.named_children else condition
            if inner.type == "binary_expression":
                left = inner.child_by_field_name("left")
                if left is not None and left.type == "identifier":
                    variable = node_text(left)
                    if kind == "for" and variable not in state.env:
                        state.env[variable] = Poly.atom(variable)
        previous = node.prev_named_sibling
        unrolled = previous is not None and previous.type == "preproc_call" and "unroll" in node_text(previous)
        header_end = node.child_by_field_name("body")
        if kind == "do":
            header = Span(self.positions.start(node), self.positions.end(node.children[0]))
        elif header_end is not None:
            header = Span(self.positions.start(node), self.positions.start(header_end))
        else:
            header = self.positions.span(node)
        index = len(state.loops)
        state.loops.append(Loop(
            kind=kind,
            span=self.positions.span(node),
            header_span=header,
            variable=variable,
            init=node_text(init_node),
            condition=node_text(condition).strip("() ") if kind != "for" else node_text(condition),
            step=node_text(update),
            depth=len(ctx.loops) + 1,
            function=self.function or "",
            unrolled=unrolled,
            trip_count=self._trip_count(init_node, condition, update, variable),
            parent=ctx.loops[-1] if ctx.loops else None,
        ))
        if variable is not None and unit_step(node_text(update), variable):
            self.unit_step_loops.add(index)
        thread_branch = ctx.thread_branch
        if condition is not None:
            branch = self.branch(kind, condition, node)
            if branch is not None and branch.thread_dependent and not self._uniform_comparison(condition) \
                    and not self._block_strided_to_multiple(node, condition, update, variable):
                thread_branch = branch.condition.text
        # The initializer was evaluated above (with the induction atom); the update is a step.
        skip = {n.id for n in (update, init_node) if n is not None}
        return WalkContext(ctx.loops + (index,), thread_branch, ctx.single_guard, False), skip

    def _uniform_comparison(self, condition: Node) -> bool:
        """`t < end + tid` with `t = base + tid + k*C`: the thread index cancels, so every thread
        runs the same number of iterations (the loop is not divergent)."""
        inner = condition
        while inner.type in ("condition_clause", "parenthesized_expression") and inner.named_child_count == 1:
            inner = inner.named_children[0]
        if inner.type != "binary_expression" or \
                node_text(inner.child_by_field_name("operator")) not in COMPARISON_OPERATORS - {"=="}:
            return False
        difference = self.scope.poly(inner.child_by_field_name("left")) - self.scope.poly(inner.child_by_field_name("right"))
        return not difference.thread_dependent and not difference.memory_dependent

    def _block_strided_to_multiple(self, node: Node, condition: Node, update: Node | None,
                                   variable: str | None) -> bool:
        """`for (i = u + threadIdx.y; i < u + m * blockDim.y; i += blockDim.y)`: every thread of the
        block runs the same `m` iterations, so a barrier inside is reached by all. Proven when the
        thread part t of the start is a flat thread index over some dimensions (`threadIdx.y`,
        `threadIdx.x + blockDim.x * threadIdx.y`), so 0 <= t < P for P the product of their
        `blockDim`s; the step is c * P for a constant c >= 1; and the bound minus the start's
        uniform part u is m * P with m a polynomial that neither the thread nor loaded data
        decide (`((n + blockDim.y - 1) / blockDim.y) * blockDim.y`). Then iteration k runs iff
        t + k*c*P < m*P, i.e. k*c < m - t/P, which for integers and 0 <= t/P < 1 is k*c < m:
        the same k for every thread. (`<=` is `< bound + 1`.) The body must leave the variable,
        the bound and the step alone and have no `break`, `return` or `goto` of its own."""
        if variable is None or update is None:
            return False
        comparison = condition
        while comparison.type in ("condition_clause", "parenthesized_expression") and comparison.named_child_count == 1:
            comparison = comparison.named_children[0]
        if comparison.type != "binary_expression":
            return False
        operator = node_text(comparison.child_by_field_name("operator"))
        left, right = comparison.child_by_field_name("left"), comparison.child_by_field_name("right")
        if operator in (">", ">="):
            left, right = right, left
        elif operator not in ("<", "<="):
            return False
        if left is None or right is None or unparen(left) is None or node_text(unparen(left)) != variable:
            return False
        step = self._step(update, variable)
        current = self.scope.state.env.get(variable)
        if step is None or current is None or step.thread_dependent or step.memory_dependent:
            return False
        start = current.without(variable)
        thread = Poly(tuple(term for term in start.terms if any(atom_is_thread(a) for a in term[0])))
        span = _flat_thread_span(thread)
        multiple = exact_quotient(step, span) if span is not None else None
        if multiple is None or multiple.constant is None or multiple.constant < 1:
            return False
        bound = self.scope.poly(right) + Poly.const(1 if operator in ("<=", ">=") else 0) - (start - thread)
        rounds = polynomial_quotient(bound, span) if span is not None else None
        if rounds is None or rounds.thread_dependent or rounds.memory_dependent or variable in rounds.atoms():
            return False
        body = node.child_by_field_name("body")
        fixed = {variable} | _identifiers(right) | _identifiers(update)
        return body is not None and not _leaves_or_writes(body, fixed)

    def _step(self, update: Node, variable: str) -> Poly | None:
        """What one iteration adds to `variable`: `i += s`, `i = i + s` (among `, `-separated
        updates that leave `i` alone otherwise); None for anything else."""
        parts = [update]
        steps: list[Poly] = []
        while parts:
            part = unparen(parts.pop())
            if part is None:
                return None
            if part.type == "comma_expression":
                parts.extend(part.named_children)
                continue
            if variable not in _identifiers(part):
                continue
            target = part.child_by_field_name("left") if part.type == "assignment_expression" else None
            if target is None or node_text(target) != variable:
                return None  # `i++`, `i *= 2`, `j = i`: not a step this proof knows
            operator = node_text(part.child_by_field_name("operator"))
            value = part.child_by_field_name("right")
            if operator == "+=" and variable not in _identifiers(value):
                steps.append(self.scope.poly(value))
            elif operator == "=":
                steps.append(self.scope.poly(value) - self.scope.poly(target))
            else:
                return None
        return steps[0] if len(steps) == 1 and variable not in steps[0].atoms() else None

    def _trip_count(self, init: Node | None, condition: Node | None, update: Node | None,
                    variable: str | None) -> int | None:
        if init is None or condition is None or update is None or variable is None:
            return None
        start = self.scope.state.env.get(variable, Poly.atom(variable)).without(variable).constant
        if condition.type != "binary_expression" or node_text(condition.child_by_field_name("left")) != variable:
            return None
        bound = self.scope.poly(condition.child_by_field_name("right")).constant
        operator = node_text(condition.child_by_field_name("operator"))
        update_text = node_text(update).replace(" ", "")
        if start is None or bound is None or update_text not in (f"{variable}++", f"++{variable}", f"{variable}+=1"):
            return None
        if operator == "<":
            return max(0, bound - start)
        if operator == "<=":
            return max(0, bound - start + 1)
        return None

    def if_statement(self, node: Node, ctx: WalkContext, stack: list[tuple[Node | None, WalkContext]]) -> None:
        condition = node.child_by_field_name("condition")
        consequence = node.child_by_field_name("consequence")
        alternative = node.child_by_field_name("alternative")
        branch = self.branch("if", condition, node, statement_count(consequence) + statement_count(alternative),
                              alternative is not None, ctx.loops) if condition is not None else None
        inner = ctx
        if branch is not None and branch.thread_dependent:
            # `tid % 4 == 0` still selects a quarter of the threads: not a single-thread guard.
            single = condition is not None and self._single_thread_condition(condition) and \
                (branch.modulus is None or (branch.modulus_value or 0) >= 32)
            inner = ctx._replace(thread_branch=branch.condition.text, single_guard=ctx.single_guard or single)
            if alternative is None and consequence is not None and always_returns(consequence) \
                    and self.scope.state.exit_condition is None:
                # The walk is in source order, so only barriers after this statement see it.
                self.scope.state.exit_condition = branch.condition.text
                self.scope.state.exit_span = branch.span
        # Push in reverse source order: alternative, consequence, condition.
        if alternative is not None:
            stack.append((alternative, inner._replace(single_guard=ctx.single_guard)))
        if consequence is not None:
            stack.append((consequence, inner))
        if condition is not None:
            stack.append((condition, ctx))

    def _single_thread_condition(self, condition: Node) -> bool:
        """`tid == 0`, `lane == 0`, `!(tid & 31)`: one thread per group runs the branch."""
        stack = [condition]
        while stack:
            current = stack.pop()
            if current.type == "binary_expression":
                operator = node_text(current.child_by_field_name("operator"))
                if operator == "==":
                    # `lane == 0` picks one thread; `x[i] == 0` picks by data, however
                    # thread-dependent the rest of the condition is.
                    difference = self.scope.poly(current.child_by_field_name("left")) - \
                        self.scope.poly(current.child_by_field_name("right"))
                    if difference.thread_dependent and not difference.memory_dependent:
                        return True
                    continue
                if operator == "&&":
                    stack.extend(current.named_children)
            elif current.type == "unary_expression" and node_text(current.child_by_field_name("operator")) == "!":
                return True
            elif current.type in ("condition_clause", "parenthesized_expression"):
                stack.extend(current.named_children)
        return False

    def _steps_by_lane(self, operand: Node) -> bool:
        """Neighbouring lanes differ by a constant in `operand`: `threadIdx.x`, `2 * tid`, or a
        thread rank handed in by the caller (a parameter named `tid` or `lane`)."""
        if self.scope.poly(operand).coefficient("threadIdx.x").kind in ("unit", "constant"):
            return True
        name = unparen(operand)
        return name is not None and name.type == "identifier" and node_text(name) in LANE_NAMES and \
            self.scope.state.env.get(node_text(name)) is None

    def branch(self, kind: str, condition: Node, statement: Node, statements: int = 0,
                has_else: bool = False, loops: tuple[int, ...] = ()) -> Branch | None:
        dims, _ = self.scope.dependencies(condition)
        if not dims:
            return None
        modulus: Node | None = None
        modulus_value: int | None = None
        modulus_operator = "%"
        stack = [condition]
        while stack and modulus is None:
            current = stack.pop()
            if current.type == "binary_expression":
                operator = node_text(current.child_by_field_name("operator"))
                left = current.child_by_field_name("left")
                right = current.child_by_field_name("right")
                if operator in ("%", "&") and left is not None and right is not None and self._steps_by_lane(left):
                    mask = self.scope.poly(right)
                    value = mask.constant
                    if operator == "%":
                        modulus, modulus_value = right, value
                    elif value is not None and value > 0 and (value + 1) & value == 0:
                        modulus, modulus_value, modulus_operator = right, value + 1, "&"
                    elif value is None and _minus_one(right):
                        # `tid & (2 * s - 1)`: the low bits, `tid % (2 * s)` for a power of two.
                        modulus, modulus_operator = right, "&"
            stack.extend(current.named_children)
        text_node = condition.named_children[0] if condition.type == "condition_clause" and condition.named_children \
            else condition
        loop_variables = {self.scope.state.loops[i].variable for i in loops} - {None}
        stepped = modulus is not None and bool(loop_variables & self.scope.poly(modulus).atoms())
        branch = Branch(
            kind=kind,  # type: ignore[arg-type]
            condition=Expr(node_text(text_node), self.positions.span(text_node)),
            span=self.positions.span(statement),
            thread_dependent=True,
            modulus=Expr(node_text(modulus), self.positions.span(modulus)) if modulus is not None else None,
            modulus_value=modulus_value,
            statements=statements,
            has_else=has_else,
            modulus_operator=modulus_operator,
            loop_stepped=stepped,
        )
        self.scope.state.branches.append(branch)
        return branch



# `threadIdx.x + blockDim.x * threadIdx.y` and the like: a flat index of the block's threads over
# some of its dimensions (the first fastest), from 0 to the product of their `blockDim`s.
_DIMENSION_SETS = ("x", "y", "z", "xy", "yz", "xz", "xyz")
_LOOP_EXITS = frozenset({"return_statement", "goto_statement"})
_BREAK_TARGETS = frozenset({"for_statement", "while_statement", "do_statement", "for_range_loop", "switch_statement"})
_NESTED_DEFINITIONS = frozenset({"lambda_expression", "function_definition", "class_specifier", "struct_specifier"})


def _flat_thread_span(thread: Poly) -> Poly | None:
    """The number of values of `thread` when it is a flat thread index, else None."""
    for dims in _DIMENSION_SETS:
        index = Poly.const(0)
        span = Poly.const(1)
        for dim in dims:
            term = Poly.atom(f"threadIdx.{dim}") * span
            extent = span * Poly.atom(f"blockDim.{dim}")
            if term is None or extent is None:
                return None
            index, span = index + term, extent
        if index == thread:
            return span
    return None


def _identifiers(node: Node | None) -> set[str]:
    if node is None:
        return set()
    stack = [node]
    names: set[str] = set()
    while stack:
        current = stack.pop()
        if current.type == "identifier":
            names.add(node_text(current))
        stack.extend(current.named_children)
    return names


def _leaves_or_writes(body: Node, names: set[str]) -> bool:
    """The loop body has a `return`, `goto` or a `break` out of this loop, or assigns or
    increments one of `names`."""
    stack: list[tuple[Node, bool]] = [(body, False)]  # (node, inside a nested loop or switch)
    while stack:
        current, nested = stack.pop()
        kind = current.type
        if kind in _LOOP_EXITS or kind == "break_statement" and not nested:
            return True
        if kind in _NESTED_DEFINITIONS:
            continue
        target = current.child_by_field_name("left") if kind == "assignment_expression" else \
            current.child_by_field_name("argument") if kind == "update_expression" else None
        target = unparen(target)
        if target is not None and target.type == "identifier" and node_text(target) in names:
            return True
        inner = nested or kind in _BREAK_TARGETS
        stack.extend((child, inner) for child in current.named_children)
    return False


def _minus_one(node: Node) -> bool:
    """`m - 1` (the mask of the low bits below a power of two `m`)."""
    inner = unparen(node)
    return inner is not None and inner.type == "binary_expression" and \
        node_text(inner.child_by_field_name("operator")) == "-" and \
        node_text(inner.child_by_field_name("right")).strip() == "1"
