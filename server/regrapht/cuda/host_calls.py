"""What the host does around a blocking CUDA call inside a loop (issue 27, R013).

Owns `host_call_context`: for a `cudaMemcpy`/`cudaDeviceSynchronize`-like call in a host loop, the
facts that decide whether the wait is avoidable, read from the syntax tree of that loop only:
whether it runs once per loop (under `if (i == 0)`, or followed by `break`/`return`), whether it
is one arm of a synchronous/asynchronous pair, whether the loop (or the code right around it) is a
timing harness, and whether host code in the loop reads memory or branches on data, which the
wait may be there for. Nothing here knows severities: rules/checks.py decides.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tree_sitter import Node

from regrapht.cuda.model import HostCallContext
from regrapht.cuda.nodes import node_text, walk

# The calls whose context is recorded: copies, waits, allocations (`Async` variants excluded).
HOST_WAITS = ("cudaMemcpy", "cudaDeviceSynchronize", "cudaThreadSynchronize", "cudaStreamSynchronize",
              "cudaEventSynchronize", "cudaMalloc", "cudaFree")
READ_NODES = frozenset({"call_expression", "subscript_expression", "field_expression", "pointer_expression",
                        "identifier"})
WAIT_CALL = re.compile(r"^(cudaDeviceSynchronize|cudaThreadSynchronize|cudaStreamSynchronize|cudaEventSynchronize|"
                       r"cudaStreamWaitEvent|cudaGetLastError|cudaPeekAtLastError|cudaEventQuery|cudaStreamQuery)$")
LOOP_TYPES = ("for_statement", "while_statement", "do_statement", "for_range_loop")
EXITS = ("break_statement", "return_statement", "goto_statement")
# Timers: CUDA events, the CUDA samples' sdk timers, std::chrono, POSIX and OpenMP/MPI clocks,
# and timer objects (`timer.start()`, `t.Stop()`).
TIMING = re.compile(r"cudaEventRecord|cudaEventElapsedTime|cuEventRecord|sdk(Start|Stop|Reset)Timer|"
                    r"chrono|gettimeofday|clock_gettime|\bclock\s*\(|omp_get_wtime|MPI_Wtime|QueryPerformanceCounter|"
                    r"(?i:timer)\w*\s*(\.|->)\s*\w+\s*\(|\.\s*(?i:start|stop|tic|toc|elapsed)\s*\(")
# Calls that only hand work to the GPU: their arguments are no host reads. Error checks and
# printing, `std::swap` of buffer pointers and `min`/`max` are no reads of their own, but what
# they are given is.
API_CALL = re.compile(r"^(cuda|cu[A-Z]|cublas|cufft|curand|cusparse|cusolver|nccl)")
PASS_THROUGH = re.compile(r"^(check|CHECK|CUDA|CU_|getLastCudaError|printf|fprintf|puts|assert|"
                          r"(std::)?(swap|min|max)$)")


def _innermost_loop(call: Node) -> Node | None:
    parent = call.parent
    while parent is not None and parent.type != "function_definition":
        if parent.type in LOOP_TYPES:
            return parent
        parent = parent.parent
    return None


def _loop_variable(loop: Node) -> str | None:
    init = loop.child_by_field_name("initializer")
    if init is None:
        return None
    for node in walk(init):
        if node.type in ("identifier",):
            return node_text(node)
    return None


def _ends_with_exit(statement: Node | None) -> bool:
    if statement is None:
        return False
    if statement.type in EXITS:
        return True
    if statement.type == "compound_statement" and statement.named_children:
        return _ends_with_exit(statement.named_children[-1])
    return False


def _once(call: Node, loop: Node) -> bool:
    """Under an `if` on the loop counter being one value (or every k-th, `i % k == c`), or with an
    exit after it in its block."""
    variable = _loop_variable(loop)
    child, parent = call, call.parent
    while parent is not None and parent != loop:
        if parent.type == "compound_statement":
            siblings = parent.named_children
            index = next((i for i, s in enumerate(siblings) if s == child), -1)
            if any(_ends_with_exit(s) for s in siblings[index + 1:]):
                return True
        if parent.type == "if_statement" and parent.child_by_field_name("consequence") == child:
            condition = node_text(parent.child_by_field_name("condition"))
            if variable and re.search(rf"\b{re.escape(variable)}\s*(==|%)|==\s*{re.escape(variable)}\b", condition):
                return True  # `if (i == 0)`, `if (i % 100 == 99)`: once, or every k-th iteration
            if _ends_with_exit(child):
                return True
        child, parent = parent, parent.parent
    return False


def _paired_variant(call: Node, loop: Node, name: str) -> bool:
    """`if (async) cudaMemcpyAsync(...); else cudaMemcpy(...);`: a deliberate pair."""
    counterpart = name + "Async" if not name.endswith("Async") else name[:-5]
    child, parent = call, call.parent
    while parent is not None and parent != loop:
        if parent.type == "if_statement":
            for field in ("consequence", "alternative"):
                arm = parent.child_by_field_name(field)
                if arm is not None and arm != child and counterpart in node_text(arm):
                    return True
        child, parent = parent, parent.parent
    return False


def _statement_reads(statement: Node, copied: frozenset[str]) -> bool:
    """Host code that reads memory, calls a non-API function, or uses a value a copy in the loop
    brought back (`if (h_err < tol)`, `total += h_sum`)."""
    for node in walk(statement):
        if node.type not in READ_NODES:
            continue
        if node.type == "call_expression":
            function = node_text(node.child_by_field_name("function"))
            if any(c.type == "kernel_call_syntax" for c in node.children) or API_CALL.match(function) \
                    or PASS_THROUGH.match(function):
                continue
            return True
        if _memory_read(node) and not _inside_api_call(node, statement):
            return True
        if node.type == "identifier" and node_text(node) in copied and not _inside_api_call(node, statement):
            return True
    return False


def _destination(argument: Node | None) -> str | None:
    """The variable a copy writes: `&h_err` -> h_err, `h + i * n` -> h, `(void *)buf[k]` -> buf."""
    node = argument
    while node is not None:
        if node.type == "identifier":
            return node_text(node)
        if node.type == "cast_expression":
            node = node.child_by_field_name("value")
        elif node.type == "pointer_expression":
            node = node.child_by_field_name("argument")
        elif node.type == "parenthesized_expression":
            node = node.named_children[0] if node.named_children else None
        elif node.type == "binary_expression":
            node = node.child_by_field_name("left")
        elif node.type == "subscript_expression":
            node = node.child_by_field_name("argument")
        else:
            return None
    return None


def _copied(loop: Node) -> frozenset[str]:
    """The host variables the loop's device-to-host `cudaMemcpy*` calls write."""
    names = set()
    for node in walk(loop):
        if node.type == "call_expression" and node_text(node.child_by_field_name("function")).startswith("cudaMemcpy"):
            arguments = node.child_by_field_name("arguments")
            text = node_text(arguments)
            if arguments is not None and arguments.named_children and "HostToDevice" not in text \
                    and "DeviceToDevice" not in text:
                name = _destination(arguments.named_children[0])
                if name is not None:
                    names.add(name)
    return frozenset(names - {_loop_variable(loop)})


def _memory_read(node: Node) -> bool:
    return node.type in ("subscript_expression", "field_expression") or \
        (node.type == "pointer_expression" and node_text(node.child_by_field_name("operator")) == "*")


def _inside_api_call(node: Node, stop: Node) -> bool:
    parent = node.parent
    while parent is not None and parent != stop.parent:
        if parent.type == "call_expression":
            function = node_text(parent.child_by_field_name("function"))
            if API_CALL.match(function) or any(c.type == "kernel_call_syntax" for c in parent.children):
                return True
        parent = parent.parent
    return False


def _enclosing_statement(call: Node, loop: Node) -> Node:
    """The loop body's top-level statement that holds the call."""
    child, parent = call, call.parent
    while parent is not None and parent != loop and parent.type != "compound_statement":
        child, parent = parent, parent.parent
    while parent is not None and parent != loop and parent.parent != loop:
        child, parent = parent, parent.parent
    return child


@dataclass(frozen=True)
class LoopFacts:
    """What does not depend on which call of the loop is asked about (computed once per loop)."""

    reading_statements: tuple[int, ...]  # start bytes of the body's statements that read
    copied: frozenset[str]
    timed_inside: bool
    timed_around: bool
    condition_reads: bool
    drain: bool


def _loop_facts(loop: Node) -> LoopFacts:
    body = loop.child_by_field_name("body")
    statements = (body.named_children if body is not None and body.type == "compound_statement"
                  else [body] if body is not None else [])
    copied = _copied(loop)
    before = after = ""
    parent = loop.parent
    if parent is not None:
        siblings = parent.named_children
        index = next((i for i, s in enumerate(siblings) if s == loop), -1)
        before = " ".join(node_text(s) for s in siblings[max(0, index - 3):index])
        after = " ".join(node_text(s) for s in siblings[index + 1:index + 4])
    return LoopFacts(
        reading_statements=tuple(s.start_byte for s in statements if _statement_reads(s, copied)),
        copied=copied,
        timed_inside=TIMING.search(node_text(loop)) is not None,
        timed_around=TIMING.search(before) is not None and TIMING.search(after) is not None,
        condition_reads=_condition_reads(loop, copied),
        drain=not _enqueues_work(loop),
    )


def host_call_context(call: Node, name: str, loops: dict[int, LoopFacts]) -> HostCallContext:
    """`loops` memoises the per-loop facts (by the loop's start byte) for one function's walk."""
    loop = _innermost_loop(call)
    if loop is None:
        return HostCallContext()
    facts = loops.get(loop.start_byte)
    if facts is None:
        facts = loops[loop.start_byte] = _loop_facts(loop)
    own = _enclosing_statement(call, loop)
    return HostCallContext(
        once=_once(call, loop),
        paired_variant=_paired_variant(call, loop, name),
        timed_inside=facts.timed_inside,
        timed_around=facts.timed_around,
        host_reads=any(start != own.start_byte for start in facts.reading_statements)
        or _own_reads(own, facts.copied) or facts.condition_reads or _reads_after(call, own, facts.copied),
        drain=facts.drain,
    )


def _enqueues_work(loop: Node) -> bool:
    """A launch, a copy or set, or any call that is neither a wait nor an error check."""
    for node in walk(loop):
        if node.type != "call_expression":
            continue
        if any(c.type == "kernel_call_syntax" for c in node.children):
            return True
        function = node_text(node.child_by_field_name("function"))
        if not WAIT_CALL.match(function) and not PASS_THROUGH.match(function):
            return True
    return False


def _reads_after(call: Node, own: Node, copied: frozenset[str]) -> bool:
    """Inside the call's own top-level statement, a later statement reads (`if (h_err < tol) break;`
    after the copy in `if (i % 100 == 0) { ... }`)."""
    child, parent = call, call.parent
    while parent is not None and child != own:
        if parent.type == "compound_statement":
            siblings = parent.named_children
            index = next((i for i, s in enumerate(siblings) if s == child), len(siblings))
            if any(_statement_reads(s, copied) for s in siblings[index + 1:]):
                return True
        child, parent = parent, parent.parent
    return False


def _condition_reads(loop: Node, copied: frozenset[str]) -> bool:
    """The loop's condition reads memory or a value a copy in the loop brings back
    (`while (h_err > tol)` after `cudaMemcpy(&h_err, ...)`)."""
    condition = loop.child_by_field_name("condition")
    return condition is not None and _statement_reads(condition, copied)


def _own_reads(own: Node, copied: frozenset[str]) -> bool:
    """The call's own statement branches on data around it (`if (x[0] > tol) { ...; sync; }`)."""
    if own.type not in ("if_statement", "switch_statement", "while_statement"):
        return False
    condition = own.child_by_field_name("condition")
    return condition is not None and _statement_reads(condition, copied)
