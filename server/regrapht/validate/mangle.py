"""Itanium C++ names of kernels: mangling `name(params)` and matching ptxas entry names.

Owns how a spec's kernel (name + parameter types) is found in a compiled module. The lookup is:
1. an `extern "C"` kernel: the entry whose name is the plain kernel name;
2. a non-template kernel: the Itanium mangled name computed here (`saxpy(int, float, float*,
   float*)` -> `_Z5saxpyifPfS_`, `const float*` -> `PKf`, `__restrict__` ignored; a struct passed
   by value by its class name, `step(Params, Params)` -> `_Z4step6ParamsS_`);
3. anything else (templates, namespaces): every entry is demangled with `cu++filt`/`c++filt`
   (passed in by the caller) and its normalised signature compared with the spec's.
Computing template manglings here is not attempted: they depend on how the parameters are
written in the template (`T*` vs `float*`), which only the compiler knows.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from regrapht.errors import InputError
from regrapht.spec.ctypes_ import VECTORS, CType, parse_ctype


def _source_name(name: str) -> str:
    parts = [p for p in name.split("::") if p]
    if len(parts) == 1:
        return f"{len(parts[0])}{parts[0]}"
    return "N" + "".join(f"{len(p)}{p}" for p in parts) + "E"


def mangle(name: str, params: Sequence[CType]) -> str:
    """The Itanium mangled name of the non-template function `name(params)`."""
    out = "_Z" + _source_name(name)
    if not params:
        return out + "v"
    substitutions: list[str] = []

    def sub_ref(index: int) -> str:
        return "S_" if index == 0 else f"S{_base36(index - 1)}_"

    def encoded(component: str, inner: str | None, substitutable: bool) -> str:
        """`component` (whose encoding is `inner` prefixed), a reference if seen before."""
        if substitutable and component in substitutions:
            return sub_ref(substitutions.index(component))
        return inner if inner is not None else component

    for param in params:
        if param.is_struct:
            out += _struct_code(param.base, substitutions, sub_ref)
            continue
        if not param.pointer:
            out += param.info.code
            continue
        # components in completion order: the vector's name (a class name: substitutable),
        # `K name` when const, `P (K) name`; each seen before is written as a reference
        name = param.code
        pieces = []
        named_class = bool(param.vector) or param.is_struct_pointer or param.base == "half"  # a class name: substitutable
        text = encoded(name, None, named_class)
        if named_class and name not in substitutions:
            pieces.append(name)
        if param.const:
            const_text = encoded("K" + name, "K" + text, True)
            if "K" + name not in substitutions:
                pieces.append("K" + name)
            text = const_text
        full = "P" + ("K" if param.const else "") + name
        text = encoded(full, "P" + text, True)
        if full not in substitutions:
            pieces.append(full)
        out += text
        substitutions.extend(pieces)
    return out


def _struct_code(name: str, substitutions: list[str], sub_ref: Callable[[int], str]) -> str:
    """A class passed by value, `ns::Params` -> `N2ns6ParamsE`: the class and each enclosing
    namespace are substitution candidates (a builtin type is not), so a repeat is `S0_` and a
    second class of a namespace already seen is `NS_6OtherE`."""
    parts = [p for p in name.split("::") if p]
    keys = ["C:" + "::".join(parts[:k]) for k in range(1, len(parts) + 1)]
    if keys[-1] in substitutions:
        return sub_ref(substitutions.index(keys[-1]))
    seen = max((k for k in range(len(parts) - 1) if keys[k] in substitutions), default=None)
    tail = "".join(f"{len(p)}{p}" for p in parts[(seen + 1 if seen is not None else 0):])
    if seen is not None:
        code = f"N{sub_ref(substitutions.index(keys[seen]))}{tail}E"
    else:
        code = tail if len(parts) == 1 else f"N{tail}E"
    substitutions.extend(key for key in keys if key not in substitutions)
    return code


def _base36(value: int) -> str:
    digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    if value == 0:
        return "0"
    text = ""
    while value:
        value, rem = divmod(value, 36)
        text = digits[rem] + text
    return text


def normalise_signature(demangled: str) -> tuple[str, str | None, tuple[CType, ...]] | None:
    """`void scale<float, 4>(float*, int)` -> ("scale", "float,4", (float*, int)); None if the
    text is not a function signature with supported parameter types."""
    match = re.fullmatch(r"\s*(?:void\s+)?([A-Za-z_][\w:]*)\s*(?:<(.*)>)?\s*\((.*)\)\s*", demangled)
    if match is None:
        return None
    name, targs, params_text = match.group(1), match.group(2), match.group(3).strip()
    if targs is not None:
        # CUDA's cu++filt prints a parameter written with a template parameter as `T1`, `T2`, ...
        # (the first, second template parameter) where binutils' c++filt prints the argument.
        arguments = _split_top(targs)
        params_text = re.sub(
            r"\bT(\d+)\b",
            lambda ref: arguments[int(ref.group(1)) - 1] if 0 < int(ref.group(1)) <= len(arguments) else ref.group(0),
            params_text,
        )
    params: list[CType] = []
    if params_text and params_text != "void":
        for part in _split_top(params_text):
            by_value = re.fullmatch(r"(?:const\s+)?([A-Za-z_]\w*(?:::[A-Za-z_]\w*)*)(?:\s+const)?", part.strip())
            if by_value is not None and by_value.group(1) in VECTORS:
                # a vector passed by value, which a spec gives as a struct's bytes (its size is the
                # spec's; only the name is compared)
                params.append(CType(base=by_value.group(1), struct_size=1))
                continue
            pointer = re.fullmatch(r"(const\s+)?([A-Za-z_]\w*(?:::[A-Za-z_]\w*)*)\s*(const\s*)?\*", part.strip())
            try:
                params.append(parse_ctype(part))
            except InputError:
                if pointer is not None:  # a pointer to a class: a spec's buffer of structs
                    params.append(CType(base=pointer.group(2), pointer=True,
                                        const=bool(pointer.group(1) or pointer.group(3)), struct_size=1))
                    continue
                if by_value is None or by_value.group(1) in ("void", "unsigned", "signed"):
                    return None
                params.append(CType(base=by_value.group(1), struct_size=1))  # a class or enumeration by value
    template = re.sub(r"\s+", "", targs) if targs is not None else None
    return name, template, tuple(params)


def split_top(text: str) -> list[str]:
    """`text` split at its top-level commas (not inside <...> or (...)), each part stripped."""
    return _split_top(text)


def _split_top(text: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for char in text:
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
            continue
        depth += {"<": 1, "(": 1, ">": -1, ")": -1}.get(char, 0)
        current += char
    parts.append(current.strip())
    return parts


def _normal_targs(text: str | None) -> str | None:
    if text is None:
        return None
    # c++filt writes `4` as `4`, cu++filt as `(int)4`; bools as `true`; unsigned literals as `4u`
    compact = re.sub(r"\s+", "", text)
    compact = re.sub(r"\btrue\b", "1", re.sub(r"\bfalse\b", "0", compact))
    uncast = re.sub(r"\((?:unsigned|signed|int|long|short|char|bool|size_t)+\)(?=-?\d)", "", compact)
    uncast = re.sub(r"(?<![\w)])&(?=[A-Za-z_])", "", uncast)  # a function as an argument: `&dequantize_q4_0`
    uncast = re.sub(r"\b__half\b", "half", uncast)  # CUDA's half is the class __half
    return re.sub(r"(?<=\d)[uUlL]+", "", uncast)


def _abi(param: CType, ignore_const: bool) -> tuple[str, bool, bool]:
    """What the compiled kernel's signature knows of a parameter type: its Itanium code, so
    aliases are the same type (`size_t` is printed back as `unsigned long`, `int64_t` as `long`)."""
    if param.struct_size > 0:  # a class by its own name: the demangler qualifies it (`LightGBM::Task`)
        last = param.base.split("::")[-1]
        return f"{len(last)}{last}", param.pointer, param.const and not ignore_const
    return param.code, param.pointer, param.const and not ignore_const


def find_entry(
    entries: Sequence[str],
    name: str,
    params: Sequence[CType],
    demangle: Callable[[Sequence[str]], dict[str, str]] | None,
    *,
    ignore_const: bool = False,
    ignore_template_args: bool = False,
) -> str | None:
    """The entry (mangled name) of kernel `name` (maybe `f<float, 4>`) with `params`, or None."""
    base = name.split("<", 1)[0].strip()
    targs = _normal_targs(name[name.index("<") + 1: name.rindex(">")]) if "<" in name else None
    if targs is None and base in entries:
        return base
    if targs is None:
        mangled = mangle(base, params)
        if mangled in entries:
            return mangled
    if demangle is None:
        return None
    wanted = tuple(_abi(p, ignore_const) for p in params)
    names = demangle([e for e in entries if e.startswith("_Z")])
    matches = []
    for entry, text in names.items():
        parsed = normalise_signature(text)
        if parsed is None:
            continue
        got_name, got_targs, got_params = parsed
        if got_name != base and got_name.split("::")[-1] != base:
            continue
        if not ignore_template_args and _normal_targs(got_targs) != targs:
            continue
        if tuple(_abi(p, ignore_const) for p in got_params) == wanted:
            matches.append(entry)
    return matches[0] if len(matches) == 1 else None
