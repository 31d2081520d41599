"""The proof step of spec inference: a drafted spec's counts, roles and shared bytes held against
the kernel's access ranges (`spec/proofs.py`), at the draft's size and at the odd size.

Owns `prove_draft`: a role the accesses prove replaces the draft's (and leaves `guessed`); a
count the proofs show large enough stays, else the smallest candidate (the draft's, the size
scalars and their products, the proven bound itself) that holds every index any thread may touch
at both sizes; whatever is not proven stays in `guessed` with the reason in the notes.
"""

from __future__ import annotations

from itertools import combinations
from typing import TYPE_CHECKING

from regrapht.errors import InputError
from regrapht.spec.expr import evaluate
from regrapht.spec.model import KernelSpec
from regrapht.spec.proofs import SizedUse, buffer_facts
from regrapht.spec.resolve import odd_size_variant

if TYPE_CHECKING:
    from regrapht.spec.infer import _Arg


def _value(expr: str, scalars: dict[str, int | float]) -> int | None:
    try:
        value = evaluate(expr, scalars)
    except InputError:
        return None
    return int(value) if isinstance(value, int) else None


def _drop(guessed: list[str], key: str) -> None:
    while key in guessed:
        guessed.remove(key)


def prove_draft(draft: KernelSpec, source: str, args: list[_Arg], guessed: list[str], notes: list[str]) -> str | None:
    """Update `args` (count, role, init), `guessed` and `notes` from the proofs; the shared bytes
    to write when the proofs give them (None: keep the draft's)."""
    from regrapht.spec.infer import _set_init

    try:
        base = buffer_facts(draft, source)
    except InputError:
        return None
    if base is None:
        return None
    facts, shared, resolved = base
    odd = odd_size_variant(draft, resolved)
    try:
        odd_found = buffer_facts(draft, source, odd) if odd else None
    except InputError:
        odd_found = None
    sizes = [dict(resolved.scalars)] + ([dict(odd_found[2].scalars)] if odd_found else [])
    size_names = [a.name for a in args if a.value is not None and a.ctype is not None and a.ctype.info.integer
                  and a.ctype.base != "bool"]
    by_name = {a.name: a for a in args}
    for name, fact in facts.items():
        arg = by_name[name]
        other = odd_found[0].get(name) if odd_found else None
        _role(arg, fact, guessed, notes)
        _set_init(arg, fact.use.complete and fact.use.atomic_only)
        _count(arg, fact, other, sizes, size_names, guessed, notes)
    if shared is None:
        return None
    odd_shared = odd_found[1] if odd_found else None
    if shared.bounded and shared.highest is not None and (odd_shared is None or odd_shared.bounded):
        need = max(shared.highest, odd_shared.highest if odd_shared and odd_shared.highest is not None else 0) + 1
        _drop(guessed, "shared_bytes")
        if resolved.shared_bytes >= need:
            return None
        notes.append(f"shared_bytes = {need}: the kernel's extern __shared__ accesses reach byte {need - 1}")
        return str(need)
    if "shared_bytes" not in guessed:
        guessed.append("shared_bytes")
    why = "; ".join(shared.reasons) or "its extern __shared__ accesses are not bounded"
    notes.append(f"shared_bytes is a guess: {why}")
    return None


def _role(arg: _Arg, fact: SizedUse, guessed: list[str], notes: list[str]) -> None:
    use = fact.use
    assert arg.ctype is not None
    if use.complete:  # every use followed (none at all: nothing to make or compare)
        role = "in" if not use.writes or arg.ctype.const else ("inout" if use.reads else "out")
        if use.atomic_only and not arg.ctype.const:
            role = "out"  # an accumulator: filled with zeros (its init) before each run, then compared
        _drop(guessed, f"{arg.name}.role")
        arg.role = role
        return
    if not arg.ctype.const:
        arg.role = "inout"  # read and compared: the safe choice when the accesses are not all followed
        guessed.append(f"{arg.name}.role")
        why = "; ".join(use.reasons) or "the kernel does not access it"
        notes.append(f"role of {arg.name} is a guess: {why}")


def _count(arg: _Arg, fact: SizedUse, other: SizedUse | None, sizes: list[dict[str, int | float]],
           size_names: list[str], guessed: list[str], notes: list[str]) -> None:
    use = fact.use
    key = f"{arg.name}.count"
    if fact.proven_enough and (other is None or other.proven_enough) or use.complete and not use.accesses:
        _drop(guessed, key)
        return
    facts = [fact] + ([other] if other is not None else [])
    if all(f.use.bounded and f.use.lowest is not None and f.use.lowest >= 0 for f in facts):
        highest = [f.use.highest if f.use.highest is not None else 0 for f in facts]
        candidates = [str(arg.count)] + size_names + [" * ".join(pair) for pair in combinations(size_names, 2)]
        if len(size_names) > 2:
            candidates.append(" * ".join(size_names))
        fitting = []
        for candidate in candidates:
            values = [_value(candidate, scalars) for scalars in sizes]
            if all(v is not None and v > h for v, h in zip(values, highest, strict=False)):
                fitting.append((values[0] or 0, candidate))
        if fitting and fitting[0][1] == str(arg.count):
            count = str(arg.count)
        elif fitting:
            count = min(fitting)[1]
        else:
            count = str(max(highest) + 1)
        if count != str(arg.count):
            notes.append(f"count of {arg.name} = {count}: the kernel's accesses reach element {highest[0]} "
                         "at this launch")
        arg.count = count
        _drop(guessed, key)
        return
    if key not in guessed:
        guessed.append(key)
    why = "; ".join(use.reasons) or ("the kernel does not access it" if not use.accesses else "not bounded")
    notes.append(f"count of {arg.name} = {arg.count} is a guess: {why}")
    touched = [f.use.touched for f in facts if f.proven_short and f.use.touched is not None]
    if touched:
        arg.count = str(max(touched) + 1)
        notes.append(f"count of {arg.name} raised to {arg.count}: the kernel provably touches element {max(touched)}")
