"""Regenerates the command samples in README.md (and docs/) from the real commands.

A sample is a fenced block right after a marker line naming the command:

    <!-- sample: regrapht analyze examples/saxpy.cu -->
    ```
    ...what the command prints...
    ```

`python scripts/readme_samples.py` rewrites every such block with the command's current output
(run from the repository root with this interpreter's `regrapht`); `--check` changes nothing and
exits 1 naming each sample that drifted (tests/unit/test_readme_samples.py runs it).
"""

from __future__ import annotations

import argparse
import re
import shlex
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PAGES = ("README.md", "docs/kernel-spec.md", "docs/cli-contract.md")
SAMPLE = re.compile(r"(<!-- sample: (?P<command>[^\n]*?) -->\n```[a-z]*\n)(?P<body>.*?)(```)", re.S)


def run_sample(command: str) -> str:
    """What `command` (which starts with `regrapht`) prints on stdout, run from the repo root."""
    argv = shlex.split(command)
    if not argv or argv[0] != "regrapht":
        raise ValueError(f"a sample command must start with `regrapht`: {command!r}")
    done = subprocess.run(
        [sys.executable, "-m", "regrapht", *argv[1:]], cwd=REPO, capture_output=True, text=True,
        stdin=subprocess.DEVNULL, timeout=300, check=False,
    )
    if done.returncode not in (0, 1):
        raise RuntimeError(f"`{command}` exited {done.returncode}: {done.stderr.strip()[-500:]}")
    return done.stdout if done.stdout.endswith("\n") else done.stdout + "\n"


def regenerate(text: str) -> tuple[str, list[str]]:
    """The page with every sample replaced by fresh output, and the commands whose output changed."""
    drifted: list[str] = []

    def fresh(match: re.Match[str]) -> str:
        output = run_sample(match["command"])
        if output != match["body"]:
            drifted.append(match["command"])
        return match.group(1) + output + match.group(4)

    return SAMPLE.sub(fresh, text), drifted


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 when a sample drifted")
    args = parser.parse_args(argv)
    any_drift = False
    for name in PAGES:
        page = REPO / name
        new_text, drifted = regenerate(page.read_text(encoding="utf-8"))
        for command in drifted:
            any_drift = True
            print(f"{name}: the sample of `{command}` differs from what the command prints now")
        if drifted and not args.check:
            page.write_text(new_text, encoding="utf-8")
    if any_drift and args.check:
        print("run `python scripts/readme_samples.py` to regenerate them")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
