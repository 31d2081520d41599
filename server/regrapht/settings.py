"""Typed server settings: the `regrapht` section of the client's configuration.

The wire format is camelCase (see docs/architecture.md); `Settings` uses snake_case. Parsing is
forgiving per key: a value of the wrong type or out of range is replaced by its default and
reported as a `SettingProblem`, so one typo never disables the whole server. Unknown keys are
reported at debug level only (the VS Code client also stores keys such as `python` that are
meant for it).

Pure: no pygls, no I/O. The server decides how to show problems (once each, see
`ProblemMemory`).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, get_args

import cattrs

from regrapht.limits import (
    ARCH_PATTERN,
    DEBOUNCE_MS_RANGE,
    DEFAULT_COMPILE_COMMANDS,
    DEFAULT_DEBOUNCE_MS,
    DEFAULT_LOG_LEVEL,
    DEFAULT_MODEL_CONTEXT,
    DEFAULT_MODEL_GPU_LAYERS,
    DEFAULT_MODEL_THREADS,
    DEFAULT_SEARCH_BUDGET,
    DEFAULT_SEARCH_STRATEGY,
    EXTRA_COMPILER_ARGS_MAX,
    LOG_LEVELS,
    MODEL_CONTEXT_RANGE,
    MODEL_GPU_LAYERS_RANGE,
    MODEL_THREADS_RANGE,
    REFUSED_COMPILER_ARGS,
    RULE_CODE_PATTERN,
    SEARCH_BUDGET_RANGE,
    SEARCH_STRATEGIES,
)
from regrapht.rules.types import Severity

SEVERITIES: tuple[str, ...] = get_args(Severity)
RULE_CODE = re.compile(RULE_CODE_PATTERN)


@dataclass(frozen=True)
class Settings:
    enabled_rules: tuple[str, ...] = ()
    severity_overrides: Mapping[str, Severity] = field(default_factory=dict)
    debounce_ms: int = DEFAULT_DEBOUNCE_MS
    model_path: str = ""
    model_gpu_layers: int = DEFAULT_MODEL_GPU_LAYERS
    model_threads: int = DEFAULT_MODEL_THREADS
    model_context: int = DEFAULT_MODEL_CONTEXT
    arch: str = ""
    search_budget: int = DEFAULT_SEARCH_BUDGET
    search_strategy: str = DEFAULT_SEARCH_STRATEGY
    background_validation: bool = False
    compiler_confirmation: bool = True  # confirm R001/R002/R007/R008/R015 from nvcc's PTX, in the background
    log_level: str = DEFAULT_LOG_LEVEL
    compile_commands: str = DEFAULT_COMPILE_COMMANDS  # compile_commands.json to read; "" = the nearest one
    extra_compiler_args: tuple[str, ...] = ()  # nvcc arguments after the database's (-I, -D, ...)
    # Optimize may offer rewrites that approximate (fast-math intrinsics, float for double);
    # off: such techniques are left out of the search (regrapht/techniques.py `numerics`)
    allow_fast_math: bool = True
    # run Optimize's answer under compute-sanitizer (memcheck, racecheck, synccheck) before offering it
    sanitize: bool = True
    # background validation also profiles each measured kernel once with Nsight Compute (ncu)
    profile_enabled: bool = False


@dataclass(frozen=True)
class SettingProblem:
    key: str  # camelCase, as the user wrote it
    value: Any
    message: str

    def describe(self) -> str:
        return f"regrapht.{self.key}: {self.message} (got {self.value!r}); using the default"


def to_camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


WIRE_NAMES: dict[str, str] = {to_camel(f.name): f.name for f in dataclasses.fields(Settings)}

# The settings a workspace folder may set for its own files (VS Code `"scope": "resource"`,
# client-vscode/package.json): what describes a project's code and build. The others belong to
# the window (the editor session, the machine and its one GPU and model), whatever a folder says.
FOLDER_SCOPED: tuple[str, ...] = (
    "arch", "compile_commands", "extra_compiler_args", "enabled_rules", "severity_overrides",
    "compiler_confirmation", "allow_fast_math",
)
# The ones the rules engine reads: a change re-analyses the documents it applies to.
RULE_SETTINGS: tuple[str, ...] = ("enabled_rules", "severity_overrides")


def in_folder(window: Settings, folder: Settings, given: Iterable[str] = FOLDER_SCOPED) -> Settings:
    """The settings of a file in a workspace folder: the folder's own for the `FOLDER_SCOPED`
    fields its answer `given` (`given_fields`), the window's for the rest."""
    return dataclasses.replace(window, **{name: getattr(folder, name) for name in FOLDER_SCOPED if name in given})


def given_fields(raw: object) -> frozenset[str]:
    """The fields the wire object gives a value (null and unknown keys give none). VS Code answers
    a folder with every key resolved; a client that answers with the folder's own keys only
    leaves the others to the window."""
    if not isinstance(raw, Mapping):
        return frozenset()
    return frozenset(WIRE_NAMES[key] for key, value in raw.items() if key in WIRE_NAMES and value is not None)


def rule_settings(settings: Settings) -> tuple[object, ...]:
    """What of `settings` the rules engine reads (equal tuples: the same findings)."""
    return tuple(getattr(settings, name) for name in RULE_SETTINGS)


def folder_problems(problems: Iterable[SettingProblem]) -> list[SettingProblem]:
    """Of a folder's problems, those of the settings a folder may set (the rest are the window's)."""
    return [p for p in problems if p.key == "" or WIRE_NAMES.get(p.key) in FOLDER_SCOPED]


def _strict_converter() -> cattrs.Converter:
    """cattrs with JSON-strict scalars: "150" is not an int, 1 is not a bool."""
    converter = cattrs.Converter()

    def strict(kind: type, label: str) -> Callable[[Any, type], Any]:
        def structure(value: Any, _: type) -> Any:
            if isinstance(value, bool) and kind is not bool:
                raise TypeError(f"expected {label}")
            if not isinstance(value, kind):
                raise TypeError(f"expected {label}")
            return value

        return structure

    converter.register_structure_hook(int, strict(int, "an integer"))
    converter.register_structure_hook(bool, strict(bool, "true or false"))
    converter.register_structure_hook(str, strict(str, "a string"))
    return converter


_CONVERTER = _strict_converter()

# Extra checks after the type is right: return an error message or None.
_Check = Callable[[Any], "str | None"]


def _int_range(limits: tuple[int, int]) -> _Check:
    low, high = limits
    return lambda v: None if low <= v <= high else f"must be between {low} and {high}"


def _one_of(choices: Iterable[str]) -> _Check:
    allowed = tuple(choices)
    return lambda v: None if v in allowed else f"must be one of {', '.join(allowed)}"


def _rule_codes(codes: tuple[str, ...]) -> str | None:
    bad = [c for c in codes if not RULE_CODE.match(c)]
    return f"not rule codes like R001: {', '.join(bad)}" if bad else None


def _severity_map(mapping: Mapping[str, str]) -> str | None:
    bad_codes = _rule_codes(tuple(mapping))
    if bad_codes:
        return bad_codes
    bad = [f"{c}={s}" for c, s in mapping.items() if s not in SEVERITIES]
    return f"severities must be one of {', '.join(SEVERITIES)}: {', '.join(bad)}" if bad else None


def _compiler_args(args: tuple[str, ...]) -> str | None:
    if len(args) > EXTRA_COMPILER_ARGS_MAX:
        return f"at most {EXTRA_COMPILER_ARGS_MAX} arguments"
    refused = [a for a in args if a.startswith("-M") or any(a == f or a.startswith(f + "=") for f in REFUSED_COMPILER_ARGS)]
    return f"ReGraphT sets these itself (arch, outputs, dependencies): {', '.join(refused)}" if refused else None


# The limits of the integer and the enumerated settings (regrapht.limits), by field name.
INT_RANGES: dict[str, tuple[int, int]] = {
    "debounce_ms": DEBOUNCE_MS_RANGE,
    "model_gpu_layers": MODEL_GPU_LAYERS_RANGE,
    "model_threads": MODEL_THREADS_RANGE,
    "model_context": MODEL_CONTEXT_RANGE,
    "search_budget": SEARCH_BUDGET_RANGE,
}
CHOICES: dict[str, tuple[str, ...]] = {"search_strategy": SEARCH_STRATEGIES, "log_level": LOG_LEVELS}

_CHECKS: dict[str, _Check] = {
    "enabled_rules": _rule_codes,
    "severity_overrides": _severity_map,
    **{name: _int_range(limits) for name, limits in INT_RANGES.items()},
    **{name: _one_of(choices) for name, choices in CHOICES.items()},
    "arch": lambda v: None if re.match(ARCH_PATTERN, v) else "must look like sm_90",
    "extra_compiler_args": _compiler_args,
}

_TYPES: dict[str, Any] = {
    "enabled_rules": tuple[str, ...],
    "extra_compiler_args": tuple[str, ...],
    "severity_overrides": dict[str, str],
}


def parse_settings(raw: object) -> tuple[Settings, list[SettingProblem]]:
    """Settings from the wire object; bad values become defaults and are reported."""
    problems: list[SettingProblem] = []
    if raw is None:
        return Settings(), problems
    if not isinstance(raw, Mapping):
        problems.append(SettingProblem("", raw, "the regrapht settings must be an object"))
        return Settings(), problems
    hints = {f.name: f.type for f in dataclasses.fields(Settings)}
    values: dict[str, Any] = {}
    for key, value in raw.items():
        name = WIRE_NAMES.get(key)
        if name is None or value is None:
            continue  # unknown keys belong to the client (e.g. `python`); null = default
        wanted = _TYPES.get(name) or {"int": int, "str": str, "bool": bool}[str(hints[name])]
        if wanted == tuple[str, ...] and not isinstance(value, list):  # cattrs would split a string
            problems.append(SettingProblem(key, value, "expected a list of strings"))
            continue
        try:
            typed = _CONVERTER.structure(value, wanted)
        except (TypeError, ValueError, cattrs.BaseValidationError) as error:
            problems.append(SettingProblem(key, value, _type_message(error)))
            continue
        check = _CHECKS.get(name)
        message = check(typed) if check else None
        if message:
            problems.append(SettingProblem(key, value, message))
            continue
        values[name] = typed
    return Settings(**values), problems


def unknown_keys(raw: object) -> list[str]:
    if not isinstance(raw, Mapping):
        return []
    return sorted(str(k) for k in raw if k not in WIRE_NAMES)


def _type_message(error: Exception) -> str:
    if isinstance(error, cattrs.BaseValidationError):
        leaves = [str(e) for e in error.exceptions]
        return "; ".join(leaves) if leaves else "wrong type"
    return str(error) or "wrong type"


class ProblemMemory:
    """Remembers which problems were already shown, so each is shown once per session."""

    def __init__(self) -> None:
        self._shown: set[str] = set()

    def new(self, problems: Iterable[SettingProblem]) -> list[SettingProblem]:
        fresh = []
        for problem in problems:
            text = problem.describe()
            if text not in self._shown:
                self._shown.add(text)
                fresh.append(problem)
        return fresh
