"""Rewrite the golden applier cases' expectations from today's appliers (for intended changes).

    python tests/golden/update.py                       # every case
    python tests/golden/update.py --applier FastMath    # one applier's cases
    python tests/golden/update.py FastMath/float_literals softplus_expf   # named cases
    python tests/golden/update.py --list FastMath/float_literals          # show the rewrites

For each case it writes after.cu and the `[expect]` tables of case.toml from the rewrite its
`[select]` table picks, and prints which cases changed (and what); a new case (a case.toml
without `[expect]` yet) gets them added, a new one without `[select]` is recorded as a near-miss. It uses this checkout's
`server/`. A case it cannot update (a near-miss the applier now rewrites, a selector that no
longer picks exactly one rewrite, a malformed case.toml) is printed and the exit status is 1:
which rewrite is golden is a person's decision. `--list` prints a case's rewrites (index,
parameter point, note) to write a `[select]` table from, and changes nothing.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "server"), str(ROOT / "tests/support")]

from golden_cases import (  # noqa: E402 - the paths above make this checkout's modules importable
    GOLDEN,
    CaseError,
    case_folders,
    case_id,
    listing,
    load_case,
    rewrites_for,
    update_case,
)


def chosen(names: list[str], applier: str | None) -> list[Path]:
    folders = case_folders(GOLDEN)
    if applier is not None:
        folders = [f for f in folders if f.parent.name == applier]
    if names:
        folders = [f for f in folders if case_id(f) in names or f.name in names]
        unknown = [n for n in names if not any(n in (case_id(f), f.name) for f in folders)]
        if unknown:
            raise SystemExit(f"no such case: {', '.join(unknown)}")
    return folders


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="*", help="Applier/case or case (default: every case)")
    parser.add_argument("--applier", help="only this applier's cases (its class name)")
    parser.add_argument("--list", action="store_true", help="print the cases' rewrites; change nothing")
    args = parser.parse_args(argv)
    failed = 0
    changed = 0
    folders = chosen(args.cases, args.applier)
    for folder in folders:
        try:
            case = load_case(folder, new=True)
            if args.list:
                print(f"{case.name}:\n{listing(rewrites_for(case))}")
                continue
            changes = update_case(case)
        except CaseError as error:
            print(f"NOT UPDATED {case_id(folder)}: {error}")
            failed += 1
            continue
        if changes:
            changed += 1
            print(f"updated {case.name}:" + "".join(f"\n    {line}" for line in changes))
    if not args.list:
        print(f"{len(folders)} cases: {changed} updated, {failed} not updated, "
              f"{len(folders) - changed - failed} unchanged")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
