"""`__restrict__` (and `const` where the ABI allows) on the kernel's pointer parameters.

`__restrict__` on a parameter is a top-level qualifier: it does not change the parameter's type
or the kernel's mangled name, so it never breaks the launch site or the spec. A `const` on the
pointee does change the C++ type, so it is added only to `extern "C"` kernels (looked up by
plain name) and only on pointers the body never writes through (nor passes on). An adapter over
the rules' fix (`rules/fixes.py`, R006's qualifiers) on the source model's parameters.
"""

from __future__ import annotations

from regrapht.rules.fixes import qualifier_edits
from regrapht.search.appliers.common import ApplierInput, Rewrite, kernel_header, kernel_model
from regrapht.text import TextEdit, offset_of


class RestrictPointers:
    technique = "restrict_const"
    also: tuple[str, ...] = ()

    def apply(self, given: ApplierInput) -> list[Rewrite]:
        # the parameters from the header alone; the body's facts (which pointers it writes)
        # only for an extern "C" kernel, the one case that may add `const`
        found = kernel_header(given)
        if found is None:
            return []
        kernel, function = found.kernel, found.function
        if len(function.parameters) != len(kernel.params):
            return []
        extern_c = 'extern "C"' in given.source[max(0, kernel.start - 40) : kernel.body_start]
        written = _written_pointers(given) if extern_c else frozenset()
        edits: list[TextEdit] = []
        for parameter in function.parameters:
            declared = given.source[offset_of(given.source, parameter.span.start) : offset_of(given.source, parameter.span.end)]
            if not parameter.is_pointer or declared.count("*") != 1:
                continue
            const = extern_c and "const" not in declared.split("*")[0] and parameter.name not in written
            edits += qualifier_edits(parameter, const=const, restrict=True, text=given.source)
        if not edits:
            return []
        return [Rewrite(given.source, given.launch, "__restrict__ on pointer parameters", edits=tuple(edits))]


def _written_pointers(given: ApplierInput) -> frozenset[str]:
    """The pointer parameters the kernel writes through or passes on (the whole source model)."""
    found = kernel_model(given)
    return found.function.written_pointers if found is not None else frozenset()


def with_restricted_pointers(rewrite: Rewrite, kernel: str) -> Rewrite:
    """`rewrite` followed by `__restrict__` on `kernel`'s pointer parameters, for rewrites that repeat a
    kernel's statements for several outputs: each output's stores fall between the next one's
    loads, and without it the compiler must reload every read after each store. Only for
    rewrites whose kernel never writes an array it reads (or whose outputs alias nothing)."""
    restricted = RestrictPointers().apply(ApplierInput(rewrite.source, kernel, rewrite.launch))
    return rewrite.then(restricted[0].edits) if restricted else rewrite
