"""A spec held against its kernel's source: what the access-range proofs (`cuda/ranges.py`) say.

Owns `spec_problems(kernel, source)`: the reasons a spec cannot be right for the kernel, each an
`InputError` naming the spec key, at the spec's own sizes and at the smaller odd size every check
also runs:

- a buffer `count` below an element the kernel provably touches at that launch;
- an `out` buffer the original provably never writes (the comparison would be vacuous), an `in`
  buffer it provably writes (every candidate, and the original, would fail);
- `shared_bytes` below the kernel's provable `extern __shared__` use;
- buffers that need more memory than the device (or any GPU) has.

`buffer_facts(kernel, source)` gives the same proofs per buffer for spec inference and the card.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from regrapht.cuda.ranges import BufferUse, KernelRanges, Launch, access_ranges, split_template_args
from regrapht.errors import InputError
from regrapht.gpu_arch import MAX_DEVICE_MEMORY_BYTES
from regrapht.spec.model import KernelSpec
from regrapht.spec.resolve import ResolvedKernel, resolve


def launch_of(kernel: KernelSpec, resolved: ResolvedKernel) -> Launch:
    elements = {a.name: (a.ctype.element, np.dtype(a.ctype.info.dtype).itemsize * a.ctype.lanes)
                for a in kernel.args if a.is_pointer}
    return Launch(resolved.grid, resolved.block, dict(resolved.scalars), split_template_args(kernel.name), elements)


def ranges_for(kernel: KernelSpec, source: str, resolved: ResolvedKernel) -> KernelRanges | None:
    return access_ranges(source, kernel.name, launch_of(kernel, resolved))


@dataclass(frozen=True)
class SizedUse:
    """A buffer's proofs next to the spec's count for it (in the spec's elements: vectors)."""

    use: BufferUse
    count: int

    @property
    def proven_enough(self) -> bool:
        return self.use.bounded and self.use.lowest is not None and self.use.lowest >= 0 \
            and self.use.highest is not None and self.use.highest < self.count

    @property
    def proven_short(self) -> bool:
        return self.use.touched is not None and self.use.touched >= self.count


def buffer_facts(kernel: KernelSpec, source: str, overrides: Mapping[str, int] | None = None
                 ) -> tuple[dict[str, SizedUse], BufferUse | None, ResolvedKernel] | None:
    """Per pointer argument its proofs at the spec's sizes (or `overrides`), the extern shared
    use, and the resolved launch; None when the source has no definition of the kernel."""
    resolved = resolve(kernel, overrides=dict(overrides) if overrides else None)
    ranges = ranges_for(kernel, source, resolved)
    if ranges is None:
        return None
    counts = {b.name: b.count // max(1, a.ctype.lanes) for b, a in
              zip(resolved.buffers, (a for a in kernel.args if a.is_pointer), strict=True)}
    facts = {name: SizedUse(use, counts[name]) for name, use in ranges.buffers.items() if name in counts}
    return facts, ranges.shared, resolved


def spec_problems(kernel: KernelSpec, source: str, *, device_memory: int | None = None) -> list[InputError]:
    """Why `kernel`'s spec is provably wrong for `source` (empty when nothing is proven wrong), at
    the spec's own sizes: the smaller odd size is the tool's choice, not the spec's claim (a kernel
    that only supports multiples of its tile overruns there; see `odd_size_refuted`)."""
    return _problems(kernel, source, [None], device_memory)


def odd_size_refuted(kernel: KernelSpec, source: str, overrides: Mapping[str, int]) -> str | None:
    """Why the original provably overruns a buffer (or its shared memory) at the odd size check's
    `overrides`, so that size must not run (it only supports, say, multiples of its tile); None
    when nothing is proven."""
    problems = _problems(kernel, source, [overrides], None)
    return str(problems[0]) if problems else None


def _problems(kernel: KernelSpec, source: str, sizes: list[Mapping[str, int] | None],
              device_memory: int | None) -> list[InputError]:
    problems: list[InputError] = []
    base = resolve(kernel)
    total = sum(b.nbytes for b in base.buffers)
    limit = device_memory or MAX_DEVICE_MEMORY_BYTES
    if sizes == [None] and total > limit:
        where = "this device has" if device_memory else "any GPU has"
        problems.append(InputError(f"the buffers need {total} bytes, more than the {limit} bytes {where}",
                                   file=kernel.file, key=kernel.key(".arg")))
    index_of = {a.name: i for i, a in enumerate(kernel.args)}
    reported: set[str] = set()
    for overrides in sizes:
        found = buffer_facts(kernel, source, overrides)
        if found is None:
            return problems
        facts, shared, resolved = found
        at = "" if overrides is None else " at the odd size check (" + ", ".join(
            f"{k} = {v}" for k, v in overrides.items()) + ")"
        for name, fact in facts.items():
            arg = kernel.args[index_of[name]]
            key = kernel.key(f".arg[{index_of[name]}]")
            if fact.proven_short and f"{name}.count" not in reported:
                reported.add(f"{name}.count")
                problems.append(InputError(
                    f"count {arg.count!r} of {name} is {fact.count}{at}, but the kernel provably touches element "
                    f"{fact.use.touched} of it at this launch", file=kernel.file, key=f"{key}.count"))
            if overrides is None and fact.use.complete and fact.use.accesses:
                if arg.role == "out" and not fact.use.writes:
                    problems.append(InputError(
                        f"role 'out', but the kernel never writes {name}: the differential check would compare "
                        "nothing; use 'in'", file=kernel.file, key=f"{key}.role"))
                if arg.role == "in" and fact.use.writes:
                    problems.append(InputError(
                        f"role 'in', but the kernel writes {name}; use 'inout' (or 'out' when it never reads it)",
                        file=kernel.file, key=f"{key}.role"))
        if shared is not None and shared.touched is not None and shared.touched >= resolved.shared_bytes \
                and "shared" not in reported:
            reported.add("shared")
            problems.append(InputError(
                f"shared_bytes is {resolved.shared_bytes}{at}, but the kernel provably uses byte {shared.touched} "
                f"of its extern __shared__ memory at this launch", file=kernel.file, key=kernel.key(".shared_bytes")))
    return problems


def check_against_source(kernel: KernelSpec, source: str, *, device_memory: int | None = None) -> None:
    """Raise the first of `spec_problems` (the spec is not provably wrong otherwise)."""
    problems = spec_problems(kernel, source, device_memory=device_memory)
    if problems:
        raise problems[0]
