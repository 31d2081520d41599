"""The README's command samples are what the commands print now (scripts/readme_samples.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_every_sample_matches_its_command():
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "readme_samples.py"), "--check"],
        cwd=REPO, capture_output=True, text=True, timeout=600, check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_readme_has_samples_and_no_path_leaves_the_repository():
    text = (REPO / "README.md").read_text()
    assert text.count("<!-- sample: regrapht ") >= 2
    for page in [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md")), REPO / "client-vscode" / "README.md"]:
        body = page.read_text()
        assert "../shared" not in body and "shared/wheels" not in body and "shared/docs" not in body, page
        assert "](http" not in body, f"{page} links outside the repository"
