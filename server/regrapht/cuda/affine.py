"""A small symbolic algebra for index expressions: polynomials over named atoms.

An index such as `(blockIdx.x * blockDim.x + threadIdx.x) * stride + k` becomes a `Poly`, a
map from monomials (sorted tuples of atom names) to integer coefficients. Thread indices are
the atoms `threadIdx.x` etc.; parameters and loop variables are atoms named after themselves.
Anything non-polynomial (`%`, `/`, a load, a call) becomes an *opaque* atom whose name starts
with `~` and records whether it depends on the thread (`t`) or on loaded data (`m`), so that
"thread-dependent but not affine" and "data-dependent" survive the algebra.
"""

from __future__ import annotations

from dataclasses import dataclass

from regrapht.cuda.model import NO_COEFFICIENT, Coefficient

Monomial = tuple[str, ...]

THREAD_ATOMS = frozenset({"threadIdx.x", "threadIdx.y", "threadIdx.z"})
MAX_TERMS = 64  # beyond this a product is treated as opaque: no exponential blow-up


def opaque_atom(text: str, thread_dims: str, memory: bool) -> str:
    """An opaque atom; `thread_dims` lists the thread dimensions it depends on ("xy")."""
    return f"~{thread_dims}{'m' if memory else ''}:{text}"


def _flags(atom: str) -> str:
    return atom[1 : atom.index(":")] if atom.startswith("~") else ""


def thread_dims_of(atom: str) -> str:
    if atom in THREAD_ATOMS:
        return atom[-1]
    return "".join(d for d in "xyz" if d in _flags(atom))


def atom_is_thread(atom: str) -> bool:
    return bool(thread_dims_of(atom))


def atom_is_memory(atom: str) -> bool:
    return "m" in _flags(atom)


def monomial_quotient(monomial: Monomial, by: Monomial) -> Monomial | None:
    """`monomial / by` when `by`'s atoms are among `monomial`'s (as multisets), else None."""
    remaining = list(monomial)
    for atom in by:
        if atom not in remaining:
            return None
        remaining.remove(atom)
    return tuple(remaining)


def exact_quotient(total: Poly, divisor: Poly) -> Poly | None:
    """`total / divisor` when every term of `total` divides exactly by the one-term `divisor`."""
    if len(divisor.terms) != 1:
        return None
    (by, by_value), = divisor.terms
    out: dict[Monomial, int] = {}
    for monomial, value in total.terms:
        remaining = monomial_quotient(monomial, by)
        if remaining is None or value % by_value:
            return None
        out[remaining] = out.get(remaining, 0) + value // by_value
    return Poly.of(out)


def _graded(monomial: Monomial) -> tuple[int, Monomial]:
    """A monomial order compatible with multiplication (degree, then the sorted atoms)."""
    return len(monomial), monomial


def polynomial_quotient(total: Poly, divisor: Poly) -> Poly | None:
    """`total / divisor` when `divisor` divides `total` exactly (any number of terms: `(W - 2)`),
    by long division on leading terms; None when it does not divide or a step is not exact."""
    if not divisor.terms:
        return None
    lead, lead_value = max(divisor.terms, key=lambda term: _graded(term[0]))
    remainder = total
    out: dict[Monomial, int] = {}
    for _ in range(MAX_TERMS * 4):
        if not remainder.terms:
            return Poly.of(out)
        monomial, value = max(remainder.terms, key=lambda term: _graded(term[0]))
        factor = monomial_quotient(monomial, lead)
        if factor is None or value % lead_value:
            return None
        step = Poly.of({factor: value // lead_value})
        product = step * divisor
        if product is None:
            return None
        out[factor] = out.get(factor, 0) + value // lead_value
        remainder = remainder - product
    return None


@dataclass(frozen=True)
class Poly:
    terms: tuple[tuple[Monomial, int], ...]  # sorted, no zero coefficients

    @staticmethod
    def of(mapping: dict[Monomial, int]) -> Poly:
        return Poly(tuple(sorted((m, c) for m, c in mapping.items() if c != 0)))

    @staticmethod
    def const(value: int) -> Poly:
        return Poly.of({(): value})

    @staticmethod
    def atom(name: str) -> Poly:
        return Poly.of({(name,): 1})

    def as_dict(self) -> dict[Monomial, int]:
        return dict(self.terms)

    def __add__(self, other: Poly) -> Poly:
        result = self.as_dict()
        for monomial, coefficient in other.terms:
            result[monomial] = result.get(monomial, 0) + coefficient
        return Poly.of(result)

    def __neg__(self) -> Poly:
        return Poly(tuple((m, -c) for m, c in self.terms))

    def __sub__(self, other: Poly) -> Poly:
        return self + (-other)

    def __mul__(self, other: Poly) -> Poly | None:
        """The product, or None when it would be too large to be useful."""
        if len(self.terms) * len(other.terms) > MAX_TERMS:
            return None
        result: dict[Monomial, int] = {}
        for m1, c1 in self.terms:
            for m2, c2 in other.terms:
                monomial = tuple(sorted(m1 + m2))
                result[monomial] = result.get(monomial, 0) + c1 * c2
        return Poly.of(result)

    @property
    def constant(self) -> int | None:
        """The value when the polynomial is a constant."""
        if not self.terms:
            return 0
        if len(self.terms) == 1 and self.terms[0][0] == ():
            return self.terms[0][1]
        return None

    def atoms(self) -> frozenset[str]:
        return frozenset(a for m, _ in self.terms for a in m)

    @property
    def thread_dependent(self) -> bool:
        return any(atom_is_thread(a) for a in self.atoms())

    def thread_dims(self) -> str:
        dims = "".join(thread_dims_of(a) for a in self.atoms())
        return "".join(d for d in "xyz" if d in dims)

    @property
    def memory_dependent(self) -> bool:
        return any(atom_is_memory(a) for a in self.atoms())

    def coefficient(self, atom: str) -> Coefficient:
        """How the value changes per +1 of `atom` (an exact, linear atom such as threadIdx.x)."""
        linear: dict[Monomial, int] = {}
        nonaffine = False
        for monomial, value in self.terms:
            count = monomial.count(atom)
            if count == 1:
                rest = tuple(a for a in monomial if a != atom)
                linear[rest] = linear.get(rest, 0) + value
            elif count > 1 or atom in THREAD_ATOMS and any(atom[-1] in _flags(a) for a in monomial):
                nonaffine = True
        coefficient = Poly.of(linear)
        if not coefficient.terms:
            return Coefficient("nonaffine") if nonaffine else NO_COEFFICIENT
        if nonaffine:
            return Coefficient("nonaffine", text=coefficient.text())
        constant = coefficient.constant
        if constant is not None:
            return Coefficient("unit" if abs(constant) == 1 else "constant", constant, str(constant))
        return Coefficient("runtime", None, coefficient.text())

    def without(self, atom: str) -> Poly:
        """The terms that do not mention `atom`."""
        return Poly(tuple((m, c) for m, c in self.terms if atom not in m))

    def text(self) -> str:
        if not self.terms:
            return "0"
        parts = []
        for monomial, value in self.terms:
            names = [a.split(":", 1)[1] if a.startswith("~") else a for a in monomial]
            if not names:
                parts.append(str(value))
            elif value == 1:
                parts.append("*".join(names))
            elif value == -1:
                parts.append("-" + "*".join(names))
            else:
                parts.append(f"{value}*" + "*".join(names))
        return " + ".join(parts).replace("+ -", "- ")
