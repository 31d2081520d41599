"""Finding a kernel's declared parameter list in source text, to refuse contract-breaking candidates.

Owns the check of a candidate's `__global__` declarations (name, template parameter names,
parameter types, read from the candidate's `cuda.view.FileView`: its tree-sitter parse, or the
lexical scanner for text that does not parse cleanly, so any candidate text is read, even one that
does not compile), so a renamed kernel or a changed parameter list
is rejected before compiling.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from regrapht.cuda.scan import split_top_level
from regrapht.cuda.view import kernels_of
from regrapht.errors import InputError
from regrapht.spec.ctypes_ import CType, parse_ctype


@dataclass(frozen=True)
class KernelDecl:
    name: str
    params: tuple[str, ...]  # parameter declarations as written (comments removed)
    template_params: tuple[str, ...]
    line: int  # 1-based


def kernel_decls(text: str) -> list[KernelDecl]:
    """Every `__global__` declaration of `text` (`FileView.declarations`: specifiers and
    `__launch_bounds__` before or after `__global__`)."""
    view = kernels_of(text)
    masked = view.masked
    decls = []
    for found in view.declarations:
        params_text = " ".join(masked[found.paren + 1 : found.close].split())
        params = tuple(split_top_level(params_text)) if params_text not in ("", "void") else ()
        tparams = tuple(p.split("=")[0].split()[-1] for p in found.template_parameters if p.split("=")[0].split())
        decls.append(KernelDecl(found.name, params, tparams, masked.count("\n", 0, found.start) + 1))
    return decls


def param_type(declaration: str) -> str:
    """`const float* __restrict__ x` -> `const float* __restrict__` (drops the name and defaults)."""
    declaration = declaration.split("=")[0].strip()
    declaration = re.sub(r"\[\s*\]$", "", declaration)
    match = re.match(r"(.*?)([A-Za-z_]\w*)\s*$", declaration)
    if match and match.group(1).strip() and match.group(2) not in ("int", "float", "double", "char", "short",
                                                                      "long", "bool", "unsigned", "size_t"):
        return match.group(1).strip()
    return declaration


def contract_violation(text: str, name: str, params: tuple[CType, ...]) -> str | None:
    """Why a candidate's text breaks the contract (renamed kernel, changed parameters), or None.
    Parameters whose types cannot be read here (template parameters, typedefs) are not judged."""
    base = name.split("<", 1)[0].strip()
    decls = kernel_decls(text)
    mine = [d for d in decls if d.name == base]
    if not mine:
        others = ", ".join(sorted({d.name for d in decls})) or "none"
        return f"the candidate has no __global__ kernel named {base!r} (its kernels: {others}); renaming is not allowed"
    reasons = []
    for decl in mine:
        if len(decl.params) != len(params):
            reasons.append(f"{base} takes {len(decl.params)} parameters in the candidate, {len(params)} in the original")
            continue
        for i, (written, wanted) in enumerate(zip(decl.params, params, strict=True)):
            type_text = param_type(written)
            try:
                got = parse_ctype(type_text)
            except InputError:
                continue  # a template parameter or typedef: the compiled lookup decides
            if got.base != wanted.base or got.pointer != wanted.pointer:
                reasons.append(f"parameter {i + 1} of {base} is {type_text!r} in the candidate, "
                               f"{wanted.spelled()!r} in the original")
                break
        else:
            return None
    return reasons[0] if reasons else None
