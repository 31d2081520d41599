"""Golden applier cases: the folders under `tests/golden/appliers`, read, checked and updated.

A case is `tests/golden/appliers/<ApplierClassName>/<case>/` holding `before.cu` (a whole .cu
file), `case.toml` (the kernel, its launch, constants and device, which rewrite is the golden
one and what it must be) and `after.cu` (that rewrite's whole file text), except for a near-miss:
a kernel the applier must leave alone, with `rewrites = 0` and no `after.cu`. The cases are data,
so a malformed one fails with a `CaseError` naming its file and key. Only the appliers' public
surface is used (`rewrites_of`, `Rewrite.source/.launch/.note/.params`), the way every caller
asks them. `tests/golden/README.md` describes the format; `tests/golden/update.py` rewrites the
expectations from today's appliers (`update_case`).
"""

from __future__ import annotations

import difflib
import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from regrapht.search.appliers import APPLIERS, ApplierInput, DeviceLimits, Rewrite, rewrites_of
from regrapht.search.appliers.common import Applier
from regrapht.spec.launch import LaunchConfig

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests/golden/appliers"
APPLIER_BY_NAME: dict[str, Applier] = {type(a).__name__: a for a in APPLIERS}
# The two devices a case may be asked with, as bench/applier_hashes.py asks every kernel.
DEVICES: dict[str, DeviceLimits | None] = {"none": None, "h200": DeviceLimits(132, 2048, 1024, 48 * 1024)}
TOP_KEYS = {"kernel", "why", "origin", "device", "launch", "constants", "select", "expect"}
LAUNCH_KEYS = {"grid", "block", "shared_bytes"}
EXPECT_KEYS = {"rewrites", "index", "note", "params", "launch"}

Params = tuple[tuple[str, int], ...]


class CaseError(ValueError):
    """A malformed case folder: the message names the file and, where there is one, the key."""


@dataclass(frozen=True)
class Selector:
    """Which of the applier's rewrites is `after.cu`: the one whose parameter point, note and
    block are these, where given (exactly one must match). The block tells apart the points of
    a grid whose parameter point leaves the block size out."""

    params: Params | None
    note: str | None
    block: tuple[str, ...] | None

    def matches(self, rewrite: Rewrite) -> bool:
        return (self.params is None or tuple(rewrite.params) == self.params) and \
            (self.note is None or rewrite.note == self.note) and \
            (self.block is None or tuple(rewrite.launch.block) == self.block)


@dataclass(frozen=True)
class Expected:
    rewrites: int  # how many rewrites the applier returns; 0 for a near-miss
    index: int | None  # where the selected rewrite sits in that list (the order the search tries them)
    note: str | None
    params: Params | None
    launch: LaunchConfig | None


@dataclass(frozen=True)
class GoldenCase:
    folder: Path
    applier: str
    kernel: str
    why: str
    device: str
    launch: LaunchConfig
    constants: Mapping[str, int]
    select: Selector | None
    expect: Expected | None  # None only for a new case read by `load_case(..., new=True)`
    before: str
    after: str | None  # None for a near-miss (and a new case)

    @property
    def name(self) -> str:
        return f"{self.applier}/{self.folder.name}"

    @property
    def given(self) -> ApplierInput:
        return ApplierInput(self.before, self.kernel, self.launch, dict(self.constants), DEVICES[self.device])


def case_folders(root: Path = GOLDEN) -> list[Path]:
    """Every case folder (`<root>/<Applier>/<case>/`), in name order."""
    return sorted(p for p in root.glob("*/*") if p.is_dir())


def case_id(folder: Path) -> str:
    return f"{folder.parent.name}/{folder.name}"


def read_text(path: Path) -> str:
    """The file's text exactly (no newline translation): goldens compare byte for byte."""
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as error:
        raise CaseError(f"{path}: not UTF-8 text: {error}") from error


def load_case(folder: Path, new: bool = False) -> GoldenCase:
    """The case in `folder`; `new`: a case.toml without `[expect]` tables yet (and then without
    an after.cu) is accepted, for `update_case` to fill in."""
    toml_path = folder / "case.toml"
    if folder.parent.name not in APPLIER_BY_NAME:
        raise CaseError(f"{folder}: folder {folder.parent.name!r} names no applier of APPLIERS "
                        f"({', '.join(sorted(APPLIER_BY_NAME))})")
    if not toml_path.is_file():
        raise CaseError(f"{toml_path}: missing")
    if not (folder / "before.cu").is_file():
        raise CaseError(f"{folder / 'before.cu'}: missing")
    try:
        data = tomllib.loads(read_text(toml_path))
    except tomllib.TOMLDecodeError as error:
        raise CaseError(f"{toml_path}: not valid TOML: {error}") from error
    reader = _Reader(toml_path)
    reader.only(data, TOP_KEYS, "")
    if "origin" in data:
        reader.string(data["origin"], "origin")  # where before.cu was copied from (provenance only)
    launch = reader.launch(reader.table(data, "launch"), "launch")
    constants = {k: reader.integer(v, f"constants.{k}") for k, v in reader.table(data, "constants", {}).items()}
    device = reader.string(data.get("device"), "device")
    if device not in DEVICES:
        raise CaseError(f"{toml_path}: key 'device': {device!r} is not one of {', '.join(map(repr, DEVICES))}")
    select = reader.selector(data["select"]) if "select" in data else None
    after_path = folder / "after.cu"
    kernel, why = reader.string(data.get("kernel"), "kernel"), reader.string(data.get("why"), "why")
    before = read_text(folder / "before.cu")
    if new and "expect" not in data:
        return GoldenCase(folder, folder.parent.name, kernel, why, device, launch, constants, select, None, before, None)
    if "expect" not in data:
        raise CaseError(f"{toml_path}: key 'expect': missing (a new case? `python tests/golden/update.py "
                        f"{case_id(folder)}` records what the applier gives today)")
    expect = reader.expected(reader.table(data, "expect"))
    if expect.rewrites == 0 and (select is not None or after_path.exists()):
        raise CaseError(f"{toml_path}: key 'expect.rewrites': 0 (a near-miss) but the case has "
                        f"{'a [select] table' if select is not None else 'an after.cu'}")
    if expect.rewrites > 0 and (select is None or not after_path.is_file()):
        raise CaseError(f"{toml_path}: key 'select': expect.rewrites is {expect.rewrites} but the case has "
                        f"{'no after.cu' if select is not None else 'no [select] table'}")
    return GoldenCase(folder, folder.parent.name, kernel, why, device, launch, constants, select, expect, before,
                      read_text(after_path) if expect.rewrites else None)


class _Reader:
    """Typed reads of one case.toml; every failure names the file and the dotted key."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, key: str, problem: str) -> CaseError:
        return CaseError(f"{self.path}: key '{key}': {problem}")

    def only(self, table: Mapping[str, Any], allowed: set[str], prefix: str) -> None:
        for key in table:
            if key not in allowed:
                raise self.fail(prefix + key, f"unknown key (allowed: {', '.join(sorted(allowed))})")

    def table(self, data: Mapping[str, Any], key: str, default: Mapping[str, Any] | None = None) -> Mapping[str, Any]:
        value = data.get(key, default)
        if value is None:
            raise self.fail(key, "missing")
        if not isinstance(value, dict):
            raise self.fail(key, f"must be a table, not {type(value).__name__}")
        return value

    def string(self, value: Any, key: str) -> str:
        if value is None:
            raise self.fail(key, "missing")
        if not isinstance(value, str) or not value.strip():
            raise self.fail(key, f"must be a non-empty string, not {value!r}")
        return value

    def integer(self, value: Any, key: str) -> int:
        if not isinstance(value, int) or isinstance(value, bool):
            raise self.fail(key, f"must be an integer, not {value!r}")
        return value

    def expressions(self, value: Any, key: str) -> tuple[str, ...]:
        if not isinstance(value, list) or not 1 <= len(value) <= 3 or \
                not all(isinstance(v, str) and v.strip() for v in value):
            raise self.fail(key, f"must be a list of 1-3 spec expressions (strings), not {value!r}")
        return tuple(value)

    def launch(self, table: Mapping[str, Any], key: str) -> LaunchConfig:
        self.only(table, LAUNCH_KEYS, key + ".")
        shared = table.get("shared_bytes", "0")
        if not isinstance(shared, str):
            raise self.fail(f"{key}.shared_bytes", f"must be a spec expression (a string), not {shared!r}")
        return LaunchConfig(self.expressions(table.get("grid"), f"{key}.grid"),
                            self.expressions(table.get("block"), f"{key}.block"), shared)

    def params(self, value: Any, key: str) -> Params:
        if not isinstance(value, dict):
            raise self.fail(key, f"must be a table of names to integers, not {value!r}")
        return tuple((name, self.integer(v, f"{key}.{name}")) for name, v in value.items())

    def selector(self, value: Any) -> Selector:
        if not isinstance(value, dict):
            raise self.fail("select", f"must be a table, not {type(value).__name__}")
        self.only(value, {"params", "note", "block"}, "select.")
        if not {"params", "note"} & set(value):
            raise self.fail("select", "needs `params` and/or `note` (and `block` where they leave a tie)")
        return Selector(self.params(value["params"], "select.params") if "params" in value else None,
                        self.string(value["note"], "select.note") if "note" in value else None,
                        self.expressions(value["block"], "select.block") if "block" in value else None)

    def expected(self, table: Mapping[str, Any]) -> Expected:
        self.only(table, EXPECT_KEYS, "expect.")
        count = self.integer(table.get("rewrites"), "expect.rewrites")
        if count < 0:
            raise self.fail("expect.rewrites", f"must be >= 0, not {count}")
        if count == 0:
            extra = sorted(set(table) - {"rewrites"})
            if extra:
                raise self.fail(f"expect.{extra[0]}", "a near-miss (rewrites = 0) expects nothing else")
            return Expected(0, None, None, None, None)
        for key in sorted(EXPECT_KEYS - {"rewrites"}):
            if key not in table:
                raise self.fail(f"expect.{key}", "missing")
        index = self.integer(table["index"], "expect.index")
        if not 0 <= index < count:
            raise self.fail("expect.index", f"{index} is outside the {count} rewrites")
        return Expected(count, index, self.string(table["note"], "expect.note"),
                        self.params(table["params"], "expect.params"),
                        self.launch(self.table(table, "launch"), "expect.launch"))


def rewrites_for(case: GoldenCase) -> list[Rewrite]:
    """What a caller gets from the case's applier (the plain-form retry included)."""
    return rewrites_of(APPLIER_BY_NAME[case.applier], case.given)


def listing(rewrites: list[Rewrite]) -> str:
    """One line per rewrite: its index, parameter point, block and note (to choose a selector by)."""
    return "\n".join(f"  [{i}] params={dict(r.params)} block={list(r.launch.block)} note={r.note!r}"
                     for i, r in enumerate(rewrites)) or "  (none)"


def selected(case: GoldenCase, rewrites: list[Rewrite]) -> tuple[int, Rewrite]:
    """The one rewrite the case's selector picks, with its index; a CaseError if none or several."""
    assert case.select is not None
    hits = [(i, r) for i, r in enumerate(rewrites) if case.select.matches(r)]
    if len(hits) != 1:
        raise CaseError(f"{case.folder / 'case.toml'}: key 'select': matches {len(hits)} of the "
                        f"{len(rewrites)} rewrites, not one; they are:\n{listing(rewrites)}")
    return hits[0]


def text_diff(expected: str, actual: str, name: str) -> str:
    return "".join(difflib.unified_diff(expected.splitlines(keepends=True), actual.splitlines(keepends=True),
                                        f"{name}/after.cu (golden)", f"{name} (today's rewrite)"))


def mismatches(case: GoldenCase, rewrites: list[Rewrite]) -> list[str]:
    """How today's rewrites differ from the case's expectations ([] when they agree)."""
    if case.expect is None:
        return [f"{case.name}: a new case (no [expect] tables yet)"]
    if case.expect.rewrites == 0:
        if rewrites:
            return [f"{case.name}: a near-miss ({case.why}) but the applier returns {len(rewrites)} rewrite(s):\n"
                    f"{listing(rewrites)}"]
        return []
    problems = []
    if len(rewrites) != case.expect.rewrites:
        problems.append(f"{case.name}: {len(rewrites)} rewrites, expected {case.expect.rewrites}")
    try:
        index, rewrite = selected(case, rewrites)
    except CaseError as error:
        return [*problems, str(error)]
    facts = {"index": (index, case.expect.index), "note": (rewrite.note, case.expect.note),
             "params": (tuple(rewrite.params), case.expect.params),
             "launch": (_launch(rewrite.launch), case.expect.launch)}
    problems += [f"{case.name}: {key} is {got!r}, expected {want!r}" for key, (got, want) in facts.items() if got != want]
    assert case.after is not None
    if rewrite.source != case.after:
        problems.append(f"{case.name}: the rewrite's text differs from after.cu:\n"
                        f"{text_diff(case.after, rewrite.source, case.name)}")
    return problems


def _launch(launch: LaunchConfig) -> LaunchConfig:
    """As case.toml spells a launch (tuples of strings), so a list from an applier compares equal."""
    return LaunchConfig(tuple(launch.grid), tuple(launch.block), str(launch.shared_bytes))


def expect_text(rewrites: list[Rewrite], picked: tuple[int, Rewrite] | None) -> str:
    """The `[expect]` tables for these rewrites (`picked`: the selected one and its index), in
    the layout the cases are written in (one line a key, params as an inline table)."""
    if picked is None:
        return f"[expect]\nrewrites = {len(rewrites)}\n"
    index, rewrite = picked
    launch = _launch(rewrite.launch)
    params = ", ".join(f"{name} = {value}" for name, value in rewrite.params)
    return (f"[expect]\nrewrites = {len(rewrites)}\nindex = {index}\nnote = {_string(rewrite.note)}\n"
            f"params = {{{' ' + params + ' ' if params else ''}}}\n\n[expect.launch]\n"
            f"grid = {_strings(launch.grid)}\nblock = {_strings(launch.block)}\n"
            f"shared_bytes = {_string(launch.shared_bytes)}\n")


def _string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a JSON string is a TOML basic string


def _strings(texts: tuple[str, ...]) -> str:
    return "[" + ", ".join(map(_string, texts)) + "]"


def update_case(case: GoldenCase) -> list[str]:
    """Rewrite the case's after.cu and `[expect]` tables from today's applier; what changed.
    The `[expect]` tables must come last in case.toml (everything above them is kept as written;
    a new case gets them appended).
    A near-miss the applier now rewrites, or a selector that no longer picks one rewrite, is a
    CaseError: which rewrite is golden is a person's choice."""
    rewrites = rewrites_for(case)
    toml_path = case.folder / "case.toml"
    if case.select is None and rewrites:
        raise CaseError(f"{toml_path}: a near-miss, but the applier now returns {len(rewrites)} rewrite(s); "
                        f"add a [select] table (and an after.cu) or fix the applier:\n{listing(rewrites)}")
    picked = selected(case, rewrites) if case.select is not None else None
    changed = [m.split("\n")[0] for m in mismatches(case, rewrites)]
    if picked is not None and picked[1].source != case.after:
        (case.folder / "after.cu").write_bytes(picked[1].source.encode("utf-8"))
    text = read_text(toml_path)
    if case.expect is None:
        new = text.rstrip("\n") + "\n\n" + expect_text(rewrites, picked)
    else:
        head, marker, _ = text.partition("\n[expect]")
        if not marker:
            raise CaseError(f"{toml_path}: key 'expect': the [expect] table must start a line and come last")
        new = head + "\n" + expect_text(rewrites, picked)
    if new != text:
        toml_path.write_bytes(new.encode("utf-8"))
    return changed
