"""Spellings that hide a plain loop from the recognisers, written the plain way.

`plain_spelling(source, kernel)` returns the source with, inside the kernel,

- comparisons the C++ grammar misreads as template arguments (`y < 0 || x >= n` as `y<...>`,
  `y` a variable) with the variable parenthesised: `(y) < 0 || x >= n`;
- object-like macros that stand for an expression (`#define GID (blockIdx.x * blockDim.x +
  threadIdx.x)`) expanded where the kernel uses them as a name (integer ones are constants
  already);
- function-like macros expanded (`#define AT(p, i) ((p)[(i)])`: `AT(in, i)` -> `((in)[(i)])`),
  as the preprocessor would (each parameter token replaced by its argument);
- a parenthesised variable before `+ - * &` (`((row) + (col) * (ld))`, as macros expand) written
  without its parentheses: C++ reads an addition there, tree-sitter a cast (`cuda/nodes.py:
  ambiguous_cast`);
- cooperative groups' block handle (`cg::thread_block b = cg::this_thread_block();`) used only
  for barriers and ranks: `b.sync()` / `cg::sync(b)` written `__syncthreads()`, `b.thread_rank()`
  the linear thread index, `b.size()` the block's threads, the handle's declaration gone;
- `T *s = SharedMemory<T>();` through a proxy struct of the file whose conversion operators
  return an `extern __shared__` array, written `extern __shared__ T s[];`;
- calls of one-line `__device__` helpers (`{ return a + b; }`) inlined, when every argument is
  pure (evaluating it twice or not at all changes nothing);
- functional casts to a template parameter (`T(0)`) written as `static_cast<T>(0)`;
- `do { BODY } while (i < n);` written `while (i < n) { BODY }`: the same for every range that
  is not empty (an empty one runs the original's body once, out of its bounds);
- `int i = n; do { --i; BODY } while (i > 0);` (a signed counter stepped down first, unused
  after the loop) written `for (int i = (n) - 1; i >= 0; --i) { BODY }`: the same for every
  start of 1 or more (any other runs the original's body once, below the range);
- one counter reused by several loops of a block (`int j = 1; while (j < d) { ..; ++j; } j = 0;
  while (j < d) { ..; ++j; } for (j = 0; j < d; ++j) ..`) given one counter per loop: when every
  use of it lies in those loops, each starting it afresh (`j = e;` just before a while, or the
  for's `j = e`), nothing reads the value a loop leaves and nothing takes its address, each loop
  declares its own (`for (int j = e; ...)`, a while stepped last becoming a for) and the
  block's declaration goes;
- a counted `int k = 0; ... while (k < K) { BODY; k++; }` written `for (int k = 0; k < K; k++)
  { BODY }` when that is the same loop: the counter is declared in the same block, changed only
  by the body's last statement and not used after the loop, nothing between the declaration and
  the loop touches it or what its start reads, the condition and the start read no memory, and
  the body has no `continue` (which would skip the original's increment);
- a local pointer into a parameter (`const float *plane = in + (size_t)c * H * W;`, or
  `&in[...]`) that is never re-pointed and only subscripted, each `plane[i]` written
  `in[(long long)(c * H * W) + (i)]`: the same element (the offset's names are never assigned, so
  it has one value), the offset added in 64 bits as the pointer arithmetic did;
- a counter that counts down to its bound (`for (int left = n; left > 0; --left)`) counting up
  instead (`for (int walk_up = 0; walk_up < (n) - (0); ++walk_up) { const int left = (n) -
  walk_up; ...`): the same values in the same order;
- a call of a `__device__` function whose body is declarations, loops and expression
  statements ending in its one `return` (`dot(a_row, b_col, K, ldb)`), when the call is the whole
  value of a store or of a declaration, inlined as a block: each parameter a local initialised
  with its argument (C passes by value), every name of the helper suffixed so that nothing
  collides, the store taking the returned value (the same program, evaluated in the same order);
- a read-only-cache load `__ldg(&X)` written `X` (the same value: `__ldg` is only defined for
  memory the kernel does not write);
- a dereference of a pointer plus an offset `*(p + e)` written `p[e]` (the same by definition),
  for a pointer named by an identifier (what `pointer_walks` leaves behind);
- a global thread index the kernel never names (`int t = threadIdx.x; if (blockIdx.x *
  blockDim.x + t < n) y[(long long)(blockIdx.x * blockDim.x) + (t)] = ..`, as block-local
  pointers `yb = y + blockIdx.x * blockDim.x` indexed by `t` are written above) named once,
  `const unsigned int global_x = blockIdx.x * blockDim.x + threadIdx.x;`, and used for each
  expression of that value: when nothing else reads the axis's block or thread index (or the
  local), and each such expression is a whole subscript (any integer type holds the same
  index; one at least) or a guard's `E < bound` with E of the coordinate's own type
  (`blockIdx.x * blockDim.x + t`, t `int` or `unsigned`: unsigned arithmetic, as the
  coordinate's).

Unchanged when none applies; each step only rewrites what it fully understands.

This module is the driver (the passes in order); the passes live by what they read:
`macros.py`, `groups.py`, `inline.py`, `loops.py`, `pointers.py`, with what they share in `common.py`.
"""

from __future__ import annotations

from regrapht.idioms.spelling.groups import block_groups, builtin_aliases, shared_proxies
from regrapht.idioms.spelling.inline import inline_bodies, inline_helpers
from regrapht.idioms.spelling.loops import count_up, counted_while, do_count_down, do_while, reused_counters
from regrapht.idioms.spelling.macros import (
    comparisons,
    expand_macros,
    expand_object_macros,
    functional_casts,
    variable_parentheses,
)
from regrapht.idioms.spelling.pointers import (
    deref_subscripts,
    named_global_index,
    plain_loads,
    pointer_offsets,
)
from regrapht.idioms.syntax import kernel_syntax


def plain_spelling(source: str, kernel: str) -> str:
    syntax = None  # parsed again only after a step changed the text (a parse is the costly part)
    for step in (comparisons, expand_object_macros, expand_macros, variable_parentheses, block_groups, shared_proxies,
                 inline_helpers,
                 inline_bodies, functional_casts, do_while, do_count_down, reused_counters, counted_while,
                 count_up, plain_loads,
                 deref_subscripts, pointer_offsets, named_global_index):
        if syntax is None:
            syntax = kernel_syntax(source, kernel)
            if syntax is None:
                return source
        edits = step(syntax)
        if edits:
            data = syntax.source
            for start, end, replacement in sorted(edits, reverse=True):
                data = data[:start] + replacement.encode() + data[end:]
            source = data.decode()
            syntax = None
    return source


def builtins_unaliased(source: str, kernel: str) -> str:
    """The kernel with locals that only rename a built-in index (`int tx = threadIdx.x, bx =
    blockIdx.x;`) written as the built-in (`((int)threadIdx.x)`: the local's value and type).
    Not a step of `plain_spelling`: the point-kernel readers take `int c = blockIdx.z;` as a
    coordinate and `int t = threadIdx.x;` as a block-local index; callers that read a kernel
    they rewrote themselves (a shared-tile product written naively) use it on their text."""
    syntax = kernel_syntax(source, kernel)
    edits = builtin_aliases(syntax) if syntax is not None else []
    if not edits:
        return source
    data = syntax.source if syntax is not None else source.encode()
    for start, end, replacement in sorted(edits, reverse=True):
        data = data[:start] + replacement.encode() + data[end:]
    return data.decode()


__all__ = ["builtins_unaliased", "plain_spelling"]
