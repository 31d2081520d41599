"""A kernel launched from a template host function: the host's template arguments, read from the
file that instantiates it (spec inference, `infer_types.py`).

Owns binding a host function's template parameters (`template <typename T> static void
clamp_cuda(const T * x, ...)`, whose launch writes `op_clamp_kernel<<<...>>>(x, ...)` or
`concat_cont<T, 1><<<...>>>`) from where the file instantiates the host: an explicit
instantiation (`template void f<float, double>(const float *, size_t, double *);`), a call or a
reference with explicit arguments (`f<float, 4>(...)`, `return f<QK4_0, QR4_0, dq>;`), a call
whose arguments deduce them (a cast `(const float *) src0_d`, a variable declared `float * y`).
A caller that is itself a template is followed the same way (up to MAX_DEPTH callers up). Every
binding found is a real instance of the host in the file, in source order; nothing is guessed
here: a parameter no instantiation binds is left out of that binding (the caller decides).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from regrapht.cuda.model import Function

MAX_DEPTH = 6  # template callers followed up
MAX_INSTANCES = 256  # bindings of one host function kept (the first ones in the file)
_CAST = re.compile(r"^\(\s*((?:const\s+)?[A-Za-z_][\w:]*(?:\s+[A-Za-z_]\w*)?)\s*\*\s*(?:__restrict__\s*)?\)")
_STATIC_CAST = re.compile(r"^(?:static|reinterpret)_cast\s*<\s*((?:const\s+)?[A-Za-z_][\w:]*(?:\s+[A-Za-z_]\w*)?)\s*\*")


@dataclass(frozen=True)
class HostInstance:
    """One instantiation of a template host function: its parameters' arguments as the file
    writes them (`(("T", "float"), ("dim", "1"))`) and the 1-based line it was read from."""

    bindings: tuple[tuple[str, str], ...]
    line: int

    def as_dict(self) -> dict[str, str]:
        return dict(self.bindings)


def parameter_names(function: Function) -> list[tuple[str, str | None]]:
    """`typename T` -> ("T", None); `int B = 256` -> ("B", "256"), for each template parameter."""
    names = []
    for declaration in function.template_parameters:
        head, _, default = declaration.partition("=")
        words = head.replace("...", " ").split()
        names.append(((words[-1] if words else ""), (default.strip() or None)))
    return names


def substitute(text: str, bindings: dict[str, str]) -> str:
    """`text` with each whole-word template parameter replaced by its argument."""
    return re.sub(r"[A-Za-z_]\w*", lambda m: bindings.get(m.group(0), m.group(0)), text)


def split_top(text: str, *, angles: bool = True) -> list[str]:
    """`text` split at its top-level commas (not inside () [] {}, nor <> with `angles`: template
    arguments and declarations, not call arguments, where `<` compares and `->` selects), each
    part stripped."""
    brackets = {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1} | ({"<": 1, ">": -1} if angles else {})
    parts, depth, current = [], 0, ""
    for char in text:
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
            continue
        depth += brackets.get(char, 0)
        current += char
    if current.strip():
        parts.append(current.strip())
    return parts


def _balanced(text: str, start: int, opening: str, closing: str) -> int | None:
    """The index just past the `closing` that matches the `opening` at `start`; None if none."""
    depth = 0
    for index in range(start, min(len(text), start + 20000)):
        char = text[index]
        if char == opening:
            depth += 1
        elif char == closing:
            depth -= 1
            if depth == 0:
                return index + 1
        elif char in ";{}" and opening != "{":
            return None
    return None


def _offset(text: str, line: int, character: int) -> int:
    lines = text.splitlines(keepends=True)
    return sum(len(row) for row in lines[:line]) + character


def _enclosing(functions: tuple[Function, ...], line: int) -> Function | None:
    inside = [f for f in functions if f.body_span is not None and f.body_span.start.line <= line <= f.body_span.end.line]
    return min(inside, key=lambda f: f.body_span.end.line - f.body_span.start.line if f.body_span else 0, default=None)


def declared_pointee(text: str, variable: str) -> str | None:
    """The pointee type of the last declaration of `variable` in `text` (`const float * x` ->
    `float`, `dst_t *y` -> `dst_t`), or None."""
    pattern = re.compile(rf"\b((?:const\s+)?[A-Za-z_][\w:]*(?:\s+[A-Za-z_]\w*)?)\s*\*+\s*(?:__restrict__\s*)?"
                         rf"(?:const\s+)?{re.escape(variable)}\b\s*[;=,)\[]")
    matches = list(pattern.finditer(text))
    if not matches:
        return None
    words = [w for w in matches[-1].group(1).split() if w not in ("const", "static", "auto", "return")]
    return " ".join(words) if words else None


def argument_pointee(argument: str, before: str) -> str | None:
    """The pointee type an argument expression has, when it shows it: a cast (`(const float *)
    p`, `static_cast<half *>(p)`) or a pointer variable declared in `before` (the text before the
    call), maybe with an offset added (`p + i3 * n`)."""
    text = argument.strip()
    for pattern in (_CAST, _STATIC_CAST):
        match = pattern.match(text)
        if match is not None:
            return " ".join(w for w in match.group(1).split() if w != "const")
    variable = re.fullmatch(r"([A-Za-z_]\w*)(?:\s*[+-][^,]*)?", text)  # `p`, `p + i * n`: p's type
    if variable is not None:
        return declared_pointee(before, variable.group(1))
    return None


def host_instances(host: Function, text: str, functions: tuple[Function, ...], depth: int = 0, *,
                   returned: dict[str, list[str] | None] | None = None) -> tuple[HostInstance, ...]:
    """The instantiations of template function `host` that `text` (the file holding it, whose
    functions are `functions`) writes, in source order, without repeats. `returned`: function
    name -> the parameter types of the function pointer it returns, when it returns one
    (`return dequantize_row_cuda;` in a function returning `to_fp32_cuda_t` binds `dst_t * y`
    to `float * y`)."""
    names = parameter_names(host)
    if not names or depth > MAX_DEPTH:
        return ()
    own = _offset(text, host.name_span.start.line, host.name_span.start.character)
    found: list[HostInstance] = []
    for match in re.finditer(rf"(?<![\w.>:]){re.escape(host.name)}\b", text):
        if match.start() == own or len(found) >= MAX_INSTANCES:
            continue
        position = match.end()
        while position < len(text) and text[position].isspace():
            position += 1
        explicit: list[str] = []
        if position < len(text) and text[position] == "<":
            end = _balanced(text, position, "<", ">")
            if end is None:
                continue
            explicit = split_top(text[position + 1: end - 1])
            position = end
            while position < len(text) and text[position].isspace():
                position += 1
        call_args: list[str] = []
        line = text.count("\n", 0, match.start())
        caller = _enclosing(functions, line)
        if caller is host:
            continue  # a recursive call writes the host's own parameters
        pointer_type = (returned or {}).get(caller.name) if caller is not None else None
        if position < len(text) and text[position] == "(":
            end = _balanced(text, position, "(", ")")
            if end is None:
                continue
            call_args = split_top(text[position + 1: end - 1], angles=False)
        elif pointer_type and re.search(r"\breturn\s*&?\s*$", text[max(0, match.start() - 40): match.start()]):
            # `return host;`: the function pointer type the caller returns gives the parameter types
            call_args = [f"({_pointee_cast(t)})" if _pointee_cast(t) else "" for t in pointer_type]
        elif not explicit:
            continue
        declaration = re.search(r"\btemplate\b[^;{}]*$", text[max(0, match.start() - 300): match.start()])
        bound = _bind(host, names, explicit, call_args if declaration is None else [], text[: match.start()])
        for binding in _through_caller(bound, caller, text, functions, depth, returned):
            for name, default in names:
                if name not in binding and default is not None:
                    binding[name] = substitute(default, binding)
            instance = HostInstance(tuple((n, binding[n]) for n, _ in names if n in binding), line + 1)
            if instance.bindings and all(instance.bindings != f.bindings for f in found):
                found.append(instance)
    return tuple(found)


def _pointee_cast(parameter: str) -> str:
    """`const float * y` -> `float *` (a cast `argument_pointee` reads); "" for a non-pointer."""
    match = re.match(r"\s*(?:const\s+)?([A-Za-z_][\w:]*(?:\s+[A-Za-z_]\w*)?)\s*\*", parameter)
    if match is None:
        return ""
    return f"{' '.join(match.group(1).split())} *"


def _bind(host: Function, names: list[tuple[str, str | None]], explicit: list[str], call_args: list[str],
          before: str) -> dict[str, str]:
    binding = {name: " ".join(arg.split()) for (name, _), arg in zip(names, explicit, strict=False)}
    parameters = {n for n, _ in names}
    for param, arg in zip(host.parameters, call_args, strict=False):
        base = param.base_type.replace("const", " ").strip()
        if base in parameters and base not in binding and param.is_pointer:
            pointee = argument_pointee(arg, before)
            if pointee is not None:
                binding[base] = pointee
    return binding


def _through_caller(binding: dict[str, str], caller: Function | None, text: str, functions: tuple[Function, ...],
                    depth: int, returned: dict[str, list[str] | None] | None) -> list[dict[str, str]]:
    """`binding`, or, where its arguments name the template parameters of the caller (itself a
    template), one binding per instantiation of the caller."""
    if caller is None or not caller.template_parameters:
        return [binding]
    outer = {n for n, _ in parameter_names(caller)}
    if not any(set(re.findall(r"[A-Za-z_]\w*", value)) & outer for value in binding.values()):
        return [binding]
    resolved = []
    for instance in host_instances(caller, text, functions, depth + 1, returned=returned):
        values = instance.as_dict()
        resolved.append({k: substitute(v, values) for k, v in binding.items()})
    return resolved
