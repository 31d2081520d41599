"""Headless Neovim as a real second client: diagnostics arrive and hover shows the kernel card."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from lsp_harness import DATA

NVIM = shutil.which("nvim")


@pytest.mark.skipif(NVIM is None, reason="nvim is not installed (apt-get install -y neovim)")
def test_neovim_hover_shows_the_kernel_card(tmp_path):
    source = tmp_path / "kernels.cu"
    source.write_text((DATA / "diagnostics" / "kernels.cu").read_text())
    out = tmp_path / "report.json"
    env = dict(os.environ, RG_PYTHON=sys.executable, RG_FILE=str(source), RG_OUT=str(out), HOME=str(tmp_path))
    assert NVIM is not None
    subprocess.run(
        [NVIM, "--headless", "--clean", "-u", "NONE", "-c", "filetype on",
         "-c", f"luafile {DATA / 'neovim' / 'drive.lua'}"],
        env=env, cwd=tmp_path, timeout=90, check=False, capture_output=True,
    )
    report = json.loads(out.read_text())
    assert report.get("error") is None, report.get("error")
    assert report["diagnostics"], "no diagnostics reached Neovim"
    assert all(d["source"] == "regrapht" for d in report["diagnostics"])
    assert "R006" in {d["code"] for d in report["diagnostics"]}
    card = report.get("hover")
    assert card and "```cuda" in card and "void scale(" in card and "Launch sites" in card
