"""`LaunchConfig`: a kernel's launch configuration in the spec language.

Grid, block and dynamic shared memory as expressions over the spec's scalars (`"(n + 255) /
256"`), as a spec's `grid`/`block`/`shared_bytes` keys write them; `spec.resolve` evaluates
them. Search rewrites produce them and validation resolves them, so they belong to the spec.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LaunchConfig:
    grid: tuple[str, ...]  # 1-3 expressions
    block: tuple[str, ...]
    shared_bytes: str = "0"
