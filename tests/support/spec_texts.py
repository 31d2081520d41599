"""Spec files shared by several suites, written out as text."""

from __future__ import annotations


def xy_spec(kernel: str, *, grid: str, block: int, n: str, x_type: str = "const float*") -> str:
    """The spec of `kernel(x, y, n)`: reads `x` (n elements, uniform in [-1, 1]), writes `y`
    (n elements), with `n` fixed to the expression `n`."""
    return f"""
[[kernel]]
name = "{kernel}"
grid = ["{grid}"]
block = [{block}]

[[kernel.arg]]
name = "x"
type = "{x_type}"
count = "n"
init = "uniform(-1, 1)"

[[kernel.arg]]
name = "y"
type = "float*"
count = "n"
role = "out"

[[kernel.arg]]
name = "n"
type = "int"
value = "{n}"
"""
