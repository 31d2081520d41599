"""Hashes of every deterministic applier rewrite of a set of kernels: the refactoring guard.

    python bench/applier_hashes.py write OUT.json [DIR...]    # record today's rewrites
    python bench/applier_hashes.py compare OLD.json [DIR...]  # exit 1 and list what differs

A rewrite is hashed with everything a caller sees of it: the new file text, the launch (grid,
block, shared bytes), the note and the parameter point. Each kernel is asked twice, once with no
device and once with an H200's limits, through `rewrites_of` (the plain-form retry included), so
the tally covers what the search and `bench/verify_appliers.py` hand to the evaluator. No GPU and
no nvcc are needed. The default kernels are both corpus splits, `bench/tasks` and the red-team
kernels (`tests/data/redteam`); only hashes are written, never the kernels' text.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from regrapht.app.optimize import kernel_target
from regrapht.search.appliers import APPLIERS, ApplierInput, DeviceLimits, rewrites_of
from regrapht.spec.model import load_spec

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DIRS = ("bench/corpus/train", "bench/corpus/test", "bench/tasks", "tests/data/redteam")
H200 = DeviceLimits(132, 2048, 1024, 48 * 1024)


def specs_under(directory: Path) -> list[Path]:
    return sorted(directory.rglob("*.regrapht.toml"))


def rewrite_hash(source: str, grid: Any, block: Any, shared: Any, note: str, params: Any) -> str:
    record = [source, list(grid), list(block), str(shared), note, [list(p) for p in params]]
    return hashlib.sha256(json.dumps(record).encode()).hexdigest()[:20]


def hashes_of(spec_path: Path) -> dict[str, list[str]]:
    """`kernel/device/Applier` -> the hashes of its rewrites, in order ("error: ..." for a raise)."""
    source = spec_path.with_name(spec_path.name.removesuffix(".regrapht.toml") + ".cu").read_text(encoding="utf-8")
    out: dict[str, list[str]] = {}
    for kernel in load_spec(spec_path).kernels:
        target = kernel_target(kernel)
        for device_name, device in (("none", None), ("h200", H200)):
            given = ApplierInput(source, kernel.name, target.launch, target.constants, device)
            for applier in APPLIERS:
                key = f"{kernel.name}/{device_name}/{type(applier).__name__}"
                try:
                    rewrites = rewrites_of(applier, given)
                except Exception as error:  # noqa: BLE001 - a raising applier is a result to compare
                    out[key] = [f"error: {type(error).__name__}"]
                    continue
                if rewrites:
                    out[key] = [rewrite_hash(r.source, r.launch.grid, r.launch.block, r.launch.shared_bytes,
                                             r.note, r.params) for r in rewrites]
    return out


def collect(dirs: list[str]) -> dict[str, dict[str, list[str]]]:
    result: dict[str, dict[str, list[str]]] = {}
    for raw in dirs:
        base = (ROOT / raw) if not Path(raw).is_absolute() else Path(raw)
        for spec in specs_under(base):
            result[str(spec.relative_to(ROOT))] = hashes_of(spec)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("write", "compare"):
        p = sub.add_parser(name)
        p.add_argument("file")
        p.add_argument("dirs", nargs="*", default=list(DEFAULT_DIRS))
    args = parser.parse_args(argv)
    current = collect(args.dirs)
    total = sum(len(v) for kernel in current.values() for v in kernel.values())
    if args.command == "write":
        Path(args.file).write_text(json.dumps(current, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"{total} rewrites of {len(current)} spec files -> {args.file}")
        return 0
    old = json.loads(Path(args.file).read_text(encoding="utf-8"))
    differing = []
    for spec in sorted(set(old) | set(current)):
        before, after = old.get(spec, {}), current.get(spec, {})
        for key in sorted(set(before) | set(after)):
            if before.get(key) != after.get(key):
                differing.append(f"{spec} {key}: {len(before.get(key, []))} -> {len(after.get(key, []))} rewrites"
                                 + ("" if len(before.get(key, [])) != len(after.get(key, [])) else " (text differs)"))
    for line in differing:
        print(line)
    print(f"{total} rewrites of {len(current)} spec files; {len(differing)} applier results differ from {args.file}",
          file=sys.stderr)
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
