"""cuda.affine.polynomial_quotient: exact division of index polynomials with several terms (the
extents `W - 2` of a valid convolution divide a flat index's bound), None when it does not divide."""

from __future__ import annotations

from regrapht.cuda.affine import Poly, polynomial_quotient


def _p(mapping: dict[tuple[str, ...], int]) -> Poly:
    return Poly.of(mapping)


def test_divides_products_of_extents_exactly() -> None:
    ow = _p({("W",): 1, (): -2})
    oh = _p({("H",): 1, (): -2})
    nc = _p({("C", "N"): 1})
    plane = oh * ow
    assert plane is not None
    total = nc * plane
    assert total is not None
    assert polynomial_quotient(total, plane) == nc
    assert polynomial_quotient(total, ow) == nc * oh
    assert polynomial_quotient(plane, Poly.const(1)) == plane


def test_refuses_what_does_not_divide() -> None:
    ow = _p({("W",): 1, (): -2})
    assert polynomial_quotient(_p({("W",): 1, (): -1}), ow) is None  # W - 1 by W - 2
    assert polynomial_quotient(_p({("H", "W"): 1}), ow) is None
    assert polynomial_quotient(_p({("W",): 3}), _p({("W",): 2})) is None  # not an integer quotient
    assert polynomial_quotient(ow, Poly.const(0)) is None
