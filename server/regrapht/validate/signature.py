"""Finding a kernel's declared parameter list in source text, to refuse contract-breaking candidates.

Owns a light, comment-aware scan for `__global__` function declarations (name, template
parameter names, parameter types) that works on any candidate text, even one that does not
compile, so a renamed kernel or a changed parameter list is rejected before compiling.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from regrapht.errors import InputError
from regrapht.spec.ctypes_ import CType, parse_ctype


@dataclass(frozen=True)
class KernelDecl:
    name: str
    params: tuple[str, ...]  # parameter declarations as written (comments removed)
    template_params: tuple[str, ...]
    line: int  # 1-based


def strip_comments(text: str) -> str:
    """Comments replaced by spaces (newlines kept, so lines still match)."""
    def blank(match: re.Match[str]) -> str:
        return re.sub(r"[^\n]", " ", match.group(0))
    return re.sub(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"", blank, text, flags=re.S)


_KERNEL = re.compile(
    r"(?:template\s*<(?P<tparams>[^{};]*?)>\s*)?"
    r"(?:(?:extern\s+\"C\"\s*)|(?:static|inline|__forceinline__)\s+)*__global__\s+"
    r"(?:__launch_bounds__\s*\([^)]*\)\s*|[A-Za-z_]\w*\s+)*?"
    r"(?P<name>(?!__launch_bounds__\b)[A-Za-z_]\w*)\s*\((?P<params>[^)]*)\)"
)


def kernel_decls(text: str) -> list[KernelDecl]:
    clean = strip_comments(text)
    clean = re.sub(r"extern\s+\"C\"", 'extern "C"', clean)
    decls = []
    for match in _KERNEL.finditer(clean):
        params_text = " ".join(match.group("params").split())
        params = tuple(p.strip() for p in params_text.split(",")) if params_text.strip() not in ("", "void") else ()
        tparams = tuple(
            p.strip().split()[-1].split("=")[0] for p in (match.group("tparams") or "").split(",") if p.strip()
        )
        decls.append(KernelDecl(match.group("name"), params, tparams, clean.count("\n", 0, match.start()) + 1))
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
