"""A small interpreter for the shared-memory phase of a one-block kernel, run in lock step.

`prefix_of_totals(...)` answers one question about the code between the chunk totals of a
one-block scan (`part[tid] = s; __syncthreads();`) and the rescan loop: does every thread end with
`run == part[0] + ... + part[tid - 1]`, whatever the totals were? It runs that code for every
thread of the block on integer stand-ins for the totals (random, so that a wrong combination is
not equal by accident), with `__syncthreads()` anywhere (threads are generators that yield at a
barrier; all must reach the same number of barriers). Each thread combines what the kernel
wrote into shared memory, so the usual forms are all read the same way: a thread summing the
totals before it, thread 0 scanning them serially (in place or into another array), a
Hillis-Steele or Blelloch scan over them.

`block_tree_operator(...)` answers the question of a block's tree reduction in shared memory
(`idioms/block_partials.py`): after each thread stored its value, do the barriers and halvings
leave the block's sum, maximum or minimum in thread 0, and only there, and which of them?

Only integer scalar arithmetic, shared arrays, `if`, `for`, `while` and `min`/`max` (`fminf`/`fmaxf`,
`fmin`/`fmax`) are interpreted; anything else (a load from global memory, a call, `break`, a value that is not an
integer) makes the answer "unknown", as does running out of the step budget.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Mapping
from typing import Literal

from tree_sitter import Node

from regrapht.cuda.extract import ambiguous_cast
from regrapht.cuda.intexpr import fold_binary
from regrapht.idioms.syntax import call_args, call_name, condition_of, named_statements, text, unparen

STEP_BUDGET = 400_000  # a few seconds at most; O(threads^2) combines of big blocks give up


class _Returned(Exception):
    """Internal: the thread ran `return;` (`block_computes_scan` only)."""


class _Unknown(Exception):
    """Internal: the code does something this interpreter does not model (caught below)."""


Env = dict[str, int]


class _Block:
    def __init__(self, threads: int, constants: Mapping[str, int], shared_sizes: Mapping[str, int]) -> None:
        self.threads = threads
        self.constants = dict(constants)
        self.shared_sizes = dict(shared_sizes)
        self.shared: dict[str, list[int]] = {}
        self.steps = 0
        self.poison = random.Random(7)
        # Shared elements touched since the last barrier: (array, index) -> (writer, readers).
        self.touched: dict[tuple[str, int], tuple[int | None, set[int]]] = {}
        self.texts: dict[int, str] = {}
        self.floats = False  # values may be floats (`insertion_keeps_top`); else integers only
        self.returns = False  # `return;` ends the thread (`block_computes_scan`)
        self.budget = STEP_BUDGET
        self.flat = False  # a 1-D block: threadIdx.y/z are 0, blockDim.y/z are 1 (`block_tree_operator`)

    def t(self, node: Node | None) -> str:
        """The node's text, once per node (the same statements run for every thread)."""
        if node is None:
            return ""
        found = self.texts.get(node.id)
        if found is None:
            found = self.texts[node.id] = text(node)
        return found

    def touch(self, array: str, index: int, thread: int, write: bool) -> None:
        """Record an access; two threads touching one element between barriers, one of them
        writing, is a race: its outcome depends on the order, which this run cannot stand for."""
        writer, readers = self.touched.get((array, index), (None, set()))
        if writer is not None and writer != thread:
            raise _Unknown("race")
        if write:
            if readers - {thread}:
                raise _Unknown("race")
            writer = thread
        else:
            readers = readers | {thread}
        self.touched[(array, index)] = (writer, readers)

    def array(self, name: str) -> list[int]:
        if name not in self.shared:
            size = self.shared_sizes[name]
            self.shared[name] = [self.poison.randrange(1 << 50, 1 << 51) for _ in range(size)]
        return self.shared[name]

    # ------------------------------------------------------------------------------ statements
    def run(self, statements: list[Node], env: Env) -> Iterator[None]:
        for statement in statements:
            yield from self.execute(statement, env)

    def execute(self, node: Node, env: Env) -> Iterator[None]:
        self.tick()
        kind = node.type
        if kind == "comment":
            return
        if kind == "compound_statement":
            yield from self.run(named_statements(node), env)
        elif kind == "declaration":
            self.declare(node, env)
        elif kind == "expression_statement":
            expression = unparen(node.named_children[0]) if node.named_children else None
            if expression is None:
                return
            if expression.type == "call_expression" and call_name(expression) == "__syncthreads":
                yield None
            else:
                self.value(expression, env)
        elif kind == "if_statement":
            condition = condition_of(node)
            branch = node.child_by_field_name("consequence") if self.value(condition, env) else \
                node.child_by_field_name("alternative")
            if branch is not None:
                if branch.type == "else_clause":
                    branch = branch.named_children[0] if branch.named_children else None
                if branch is not None:
                    yield from self.execute(branch, env)
        elif kind == "for_statement":
            init = node.child_by_field_name("initializer")
            if init is not None:
                if init.type == "declaration":
                    self.declare(init, env)
                else:
                    self.value(init, env)
            condition, update, body = (node.child_by_field_name(f) for f in ("condition", "update", "body"))
            while condition is None or self.value(condition, env):
                if body is not None:
                    yield from self.execute(body, env)
                if update is not None:
                    self.value(update, env)
        elif kind == "while_statement":
            condition, body = condition_of(node), node.child_by_field_name("body")
            while self.value(condition, env):
                if body is not None:
                    yield from self.execute(body, env)
        elif kind == "return_statement" and self.returns and not node.named_children:
            raise _Returned
        else:
            raise _Unknown(kind)

    def declare(self, node: Node, env: Env) -> None:
        if any(self.t(c) in ("static", "extern") for c in node.children):
            raise _Unknown("storage")
        shared = any(self.t(c) == "__shared__" for c in node.children)
        for declarator in node.children_by_field_name("declarator"):
            if shared or declarator.type == "array_declarator":
                name = declarator.child_by_field_name("declarator")
                if declarator.type != "array_declarator" or name is None or self.t(name) not in self.shared_sizes:
                    raise _Unknown("array")
                if not shared:
                    self.shared.pop(self.t(name), None)  # a local array: fresh (poisoned) per declaration
                self.array(self.t(name))
                continue
            if declarator.type == "init_declarator":
                target = declarator.child_by_field_name("declarator")
                if target is None or target.type != "identifier":
                    raise _Unknown("declarator")
                env[self.t(target)] = self.value(declarator.child_by_field_name("value"), env)
            elif declarator.type == "identifier":
                env[self.t(declarator)] = self.poison.randrange(1 << 50, 1 << 51)  # uninitialised
            else:
                raise _Unknown("declarator")

    # ------------------------------------------------------------------------------ expressions
    def tick(self) -> None:
        self.steps += 1
        if self.steps > self.budget:
            raise _Unknown("budget")

    def value(self, node: Node | None, env: Env) -> int:
        self.tick()
        node = unparen(node)
        if node is None:
            raise _Unknown("missing")
        kind = node.type
        if kind == "number_literal":
            literal = self.t(node).lower().rstrip("ul")
            try:
                return int(literal, 0)
            except ValueError:
                number = float(literal.rstrip("f"))
                if not self.floats and number != int(number):
                    raise _Unknown("fraction") from None
                return number if self.floats else int(number)  # type: ignore[return-value]
        if kind == "identifier":
            name = self.t(node)
            if name in env:
                return env[name]
            if name in self.constants:
                return self.constants[name]
            if self.floats and name in FLOAT_CONSTANTS:
                return FLOAT_CONSTANTS[name]  # type: ignore[return-value]
            raise _Unknown(name)
        if kind == "field_expression":
            name = "".join(self.t(node).split())
            builtins = {"threadIdx.x": env["@thread"], "blockDim.x": self.threads, "blockIdx.x": 0, "gridDim.x": 1}
            if self.flat:
                builtins.update({"threadIdx.y": 0, "threadIdx.z": 0, "blockDim.y": 1, "blockDim.z": 1})
            if name not in builtins:
                raise _Unknown(name)
            return builtins[name]
        if kind == "subscript_expression":
            name, array, index = self.element(node, env)
            self.touch(name, index, env["@thread"], write=False)
            return array[index]
        if kind == "cast_expression":
            if ambiguous_cast(node):
                raise _Unknown("ambiguous cast")
            return self.value(node.child_by_field_name("value"), env)
        if kind == "conditional_expression":
            chosen = "consequence" if self.value(node.child_by_field_name("condition"), env) else "alternative"
            return self.value(node.child_by_field_name(chosen), env)
        if kind == "call_expression" and call_name(node) in _ORDERING_CALLS and len(call_args(node)) == 2:
            a, b = (self.value(x, env) for x in call_args(node))
            return _ORDERING_CALLS[call_name(node)](a, b)
        if kind == "assignment_expression":
            return self.assign(node, env)
        if kind == "update_expression":
            return self.update(node, env)
        if kind == "unary_expression":
            operator = self.t(node.child_by_field_name("operator"))
            argument = self.value(node.child_by_field_name("argument"), env)
            unary: dict[str, Callable[[int], int]] = {"-": lambda a: -a, "+": lambda a: a, "!": lambda a: int(not a)}
            if operator not in unary:
                raise _Unknown(operator)
            return unary[operator](argument)
        if kind == "comma_expression":
            self.value(node.child_by_field_name("left"), env)
            return self.value(node.child_by_field_name("right"), env)
        if kind == "binary_expression":
            operator = self.t(node.child_by_field_name("operator"))
            left = self.value(node.child_by_field_name("left"), env)
            if operator == "&&":
                return int(bool(left) and bool(self.value(node.child_by_field_name("right"), env)))
            if operator == "||":
                return int(bool(left) or bool(self.value(node.child_by_field_name("right"), env)))
            return _binary(operator, left, self.value(node.child_by_field_name("right"), env))
        raise _Unknown(kind)

    def element(self, node: Node, env: Env) -> tuple[str, list[int], int]:
        base = unparen(node.child_by_field_name("argument"))
        indices = node.child_by_field_name("indices")
        index_nodes = [c for c in indices.named_children if c.type != "comment"] if indices is not None else []
        if base is None or base.type != "identifier" or self.t(base) not in self.shared_sizes or len(index_nodes) != 1:
            raise _Unknown("array")
        array = self.array(self.t(base))
        index = self.value(index_nodes[0], env)
        if not 0 <= index < len(array):
            raise _Unknown("bounds")
        return self.t(base), array, index

    def assign(self, node: Node, env: Env) -> int:
        operator = self.t(node.child_by_field_name("operator"))
        target = unparen(node.child_by_field_name("left"))
        right = self.value(node.child_by_field_name("right"), env)
        if target is not None and target.type == "identifier":
            old = env.get(self.t(target))
            if old is None:
                raise _Unknown("undeclared")
            new = right if operator == "=" else _binary(operator[:-1], old, right)
            env[self.t(target)] = new
            return new
        if target is not None and target.type == "subscript_expression":
            name, array, index = self.element(target, env)
            if operator != "=":
                self.touch(name, index, env["@thread"], write=False)
            self.touch(name, index, env["@thread"], write=True)
            new = right if operator == "=" else _binary(operator[:-1], array[index], right)
            array[index] = new
            return new
        raise _Unknown("target")

    def update(self, node: Node, env: Env) -> int:
        target = unparen(node.child_by_field_name("argument"))
        if target is None or target.type != "identifier" or self.t(target) not in env:
            raise _Unknown("update")
        name = self.t(target)
        operator = self.t(node.child_by_field_name("operator"))
        old = env[name]
        env[name] = old + (1 if operator == "++" else -1)
        prefix = node.children[0].type in ("++", "--")
        return env[name] if prefix else old


FLOAT_CONSTANTS = {"INFINITY": float("inf"), "HUGE_VALF": float("inf"), "HUGE_VAL": float("inf"),
                   "FLT_MAX": 3.4028234663852886e38, "__FLT_MAX__": 3.4028234663852886e38,
                   "DBL_MAX": 1.7976931348623157e308, "__DBL_MAX__": 1.7976931348623157e308}


def _binary(operator: str, a: int, b: int) -> int:
    if operator == "/" and (isinstance(a, float) or isinstance(b, float)):
        if b == 0:
            raise _Unknown("division by zero")
        return a / b  # type: ignore[return-value]
    if isinstance(a, float) or isinstance(b, float):
        if operator not in _FLOAT_OPERATORS:
            raise _Unknown(operator)
        return _FLOAT_OPERATORS[operator](a, b)
    value = fold_binary(operator, a, b)  # C semantics, the one integer evaluator
    if value is None:
        raise _Unknown(operator)  # undefined (division by zero, a wide shift) or an overflow
    return value


_FLOAT_OPERATORS: dict[str, Callable[[int, int], int]] = {
    "+": lambda x, y: x + y, "-": lambda x, y: x - y, "*": lambda x, y: x * y,
    "<": lambda x, y: int(x < y), ">": lambda x, y: int(x > y), "<=": lambda x, y: int(x <= y),
    ">=": lambda x, y: int(x >= y), "==": lambda x, y: int(x == y), "!=": lambda x, y: int(x != y),
}


def prefix_of_totals(prelude: list[Node], total: str, totals: str, stored_at: Node, combine: list[Node], run: str,
                     threads: int, constants: Mapping[str, int], shared_sizes: Mapping[str, int]) -> bool:
    """Whether, after `prelude` (declarations), `totals[stored_at] = total` (the thread's chunk
    total) in every thread and a barrier, the `combine` statements leave `run == totals[0] + ...
    + totals[t - 1]` in every thread t (without races between barriers)."""
    block = _Block(threads, constants, shared_sizes)
    stand_ins = random.Random(11)
    values = [stand_ins.randrange(1, 1 << 31) for _ in range(threads)]
    envs: list[Env] = []
    try:
        stored = block.array(totals)
        for thread in range(threads):
            env: Env = {"@thread": thread}
            for statement in prelude:
                for _ in block.execute(statement, env):
                    return False  # a barrier among the declarations
            index = block.value(stored_at, env)
            if not 0 <= index < len(stored):
                return False
            stored[index] = values[thread]
            env[total] = values[thread]
            envs.append(env)
        runners = [block.run(combine, env) for env in envs]
        while True:
            block.touched.clear()  # a barrier (the first: the one after the totals)
            finished = 0
            for runner in runners:
                try:
                    next(runner)
                except StopIteration:
                    finished += 1
            if finished == len(runners):
                break
            if finished:
                return False  # some threads left while others wait at a barrier
    except _Unknown:
        return False
    prefix = 0
    for thread, env in enumerate(envs):
        if env.get(run) != prefix:
            return False
        prefix += values[thread]
    return True


def insertion_keeps_top(body: list[Node], values: str, ids: str, element: str, position: str, k: int,
                        start_value: float, start_id: int, constants: Mapping[str, int]) -> bool:
    """Whether `body`, run once per element (value in `element`, column in `position`, columns in
    increasing order) on the arrays `values`/`ids` of `k` slots that start at
    (`start_value`, `start_id`), keeps the `k` largest values seen in descending order, equal
    values in the order they came (the earlier column first), with their columns; unfilled slots
    keep the start. Checked on random sequences with many ties, after every element."""
    draws = random.Random(5)
    for trial in range(60):
        block = _Block(1, constants, {values: k, ids: k})
        block.floats = True
        kept = [(start_value, start_id)] * k
        block.shared[values] = [start_value] * k  # type: ignore[list-item]
        block.shared[ids] = [start_id] * k
        length = draws.randrange(0, 3 * k + 2)
        pool = [float(v) for v in range(-2, 3)] + ([start_value] if trial % 3 == 0 else [])
        try:
            for column in range(length):
                value = draws.choice(pool)
                env: Env = {"@thread": 0, element: value, position: column}  # type: ignore[dict-item]
                for _ in block.run(body, env):
                    return False  # a barrier
                if value > kept[-1][0]:
                    at = next(n for n, (v, _) in enumerate(kept) if v < value)
                    kept = kept[:at] + [(value, column)] + kept[at:-1]
                if list(zip(block.shared[values], block.shared[ids], strict=True)) != kept:
                    return False
        except (_Unknown, StopIteration):
            return False
    return True


def block_computes_scan(statements: list[Node], source_array: str, target: str, count: str, threads: int,
                        sizes: tuple[int, ...], constants: Mapping[str, int], shared_sizes: Mapping[str, int],
                        floats: bool, budget: int = STEP_BUDGET) -> str | None:
    """"inclusive" or "exclusive" when a one-block kernel body (`statements`, run by `threads`
    threads in lock step, barriers anywhere, threads that return leave) turns random values of
    `source_array` into their inclusive (exclusive) scan in `target`, writing nothing else, for
    every element count in `sizes` (the scalar `count`); "unknown" when the code does something
    not modelled (or runs out of steps); None when it computes something else."""
    found: set[str] = set()
    draws = random.Random(3)
    for size in sizes:
        block = _Block(threads, {**constants, count: size}, {**shared_sizes, source_array: size, target: size})
        block.floats = floats
        block.returns = True
        block.budget = budget
        values = [draws.randrange(-50, 50) for _ in range(size)]
        block.shared[source_array] = [float(v) for v in values] if floats else values  # type: ignore[misc]
        before = list(block.array(target))
        envs: list[Env] = [{"@thread": t} for t in range(threads)]
        runners = [block.run(statements, env) for env in envs]
        live = list(range(threads))
        try:
            while live:
                block.touched.clear()
                still = []
                for index in live:
                    try:
                        next(runners[index])
                        still.append(index)
                    except (StopIteration, _Returned):
                        pass
                live = still
        except _Unknown:
            return "unknown"
        if block.shared[source_array] != values or any(
                name not in (target, source_array) and name not in shared_sizes for name in block.shared):
            return None
        out = block.shared[target]
        inclusive, running = [], 0
        for v in values:
            running += v
            inclusive.append(running)
        exclusive = [r - v for r, v in zip(inclusive, values, strict=True)]
        kinds = {kind for kind, want in (("inclusive", inclusive), ("exclusive", exclusive)) if out == want}
        if size == 0 and out == before:
            continue
        if not kinds:
            return None
        found = kinds if not found else found & kinds
        if not found:
            return None
    return min(found) if len(found) == 1 else None


TreeOperator = Literal["sum", "max", "min"]

# fmaxf/fminf and their double spellings combine as max/min (NaN aside: the draws have none)
_ORDERING_CALLS = {"min": min, "max": max, "fminf": min, "fmaxf": max, "fmin": min, "fmax": max}


def block_tree_operator(prelude: list[Node], opaque: frozenset[str], array: str, stored_at: Node, held: str | None,
                        combine: list[Node], condition: Node, result: Node, threads: int,
                        constants: Mapping[str, int], shared_sizes: Mapping[str, int]) -> TreeOperator | None:
    """What a 1-D block's tree reduction computes from what its threads stored, when it is the
    sum, the maximum or the minimum of the values: each thread runs `prelude` (its index
    declarations; the names in `opaque` are values read from memory, random here), stores a
    random value v_t at `array[stored_at]` (`held`: the local that holds it, then v_t too), and
    after `combine` (barriers anywhere, no races) `condition` holds in thread 0 alone, where
    `result` is one of sum/max/min of v_0 .. v_(threads-1), the same one in every run. Runs on
    different draws (signed, all distinct, so that the three differ and a combine which only
    looks right for one draw, or picks one thread's value, is not taken for an operator)."""
    found: set[TreeOperator] = set()
    for seed in (13, 29, 41):
        draws = random.Random(seed)
        values = draws.sample(range(-(1 << 31), 1 << 31), threads)
        computed = _tree_result(prelude, opaque, array, stored_at, held, combine, condition, result, threads,
                                constants, shared_sizes, values, draws)
        if computed is None:
            return None
        expected: dict[TreeOperator, int] = {"sum": sum(values), "max": max(values), "min": min(values)}
        found |= {op for op, want in expected.items() if computed == want}
        if len(found) != 1:
            return None
    return found.pop()


def _tree_result(prelude: list[Node], opaque: frozenset[str], array: str, stored_at: Node, held: str | None,
                 combine: list[Node], condition: Node, result: Node, threads: int, constants: Mapping[str, int],
                 shared_sizes: Mapping[str, int], values: list[int], draws: random.Random) -> int | None:
    """`result` in thread 0 after one run of the tree on `values`; None when the run is not a
    reduction into thread 0 alone (a barrier in the prelude, a race, threads leaving early,
    `condition` true in another thread or false in thread 0, anything not modelled)."""
    block = _Block(threads, constants, shared_sizes)
    block.flat = True
    envs: list[Env] = []
    try:
        target = block.array(array)
        for thread in range(threads):
            env: Env = {"@thread": thread, **{name: draws.randrange(1 << 40, 1 << 41) for name in opaque}}
            for statement in prelude:
                for _ in block.execute(statement, env):
                    return None  # a barrier among the declarations
            index = block.value(stored_at, env)
            if not 0 <= index < len(target):
                return None
            block.touch(array, index, thread, write=True)
            target[index] = values[thread]
            if held is not None:
                env[held] = values[thread]
            envs.append(env)
        runners = [block.run(combine, env) for env in envs]
        while True:  # up to the next barrier in every thread; the stores race with what comes before one
            finished = 0
            for runner in runners:
                try:
                    next(runner)
                except StopIteration:
                    finished += 1
            if finished == len(runners):
                break
            if finished:
                return None  # some threads left while others wait at a barrier
            block.touched.clear()
        # read where the last threads' writes still count: no barrier comes between them
        if [bool(block.value(condition, env)) for env in envs] != [True] + [False] * (threads - 1):
            return None
        return block.value(result, envs[0])
    except _Unknown:
        return None
