"""Where the one cache directory is: compile cache, device peaks and the GPU lock file.

A module of its own, with no heavy imports, because the language server needs this path at
start-up and must not pay for the evaluator (pycuda glue, numpy) to get it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path


def default_cache_dir(env: Mapping[str, str], home: Path | None = None) -> Path:
    """The one cache dir (compile cache, device peaks, GPU lock): $REGRAPHT_CACHE_DIR, else
    $XDG_CACHE_HOME/regrapht, else ~/.cache/regrapht."""
    if env.get("REGRAPHT_CACHE_DIR"):
        return Path(env["REGRAPHT_CACHE_DIR"])
    if env.get("XDG_CACHE_HOME"):
        return Path(env["XDG_CACHE_HOME"]) / "regrapht"
    return (home if home is not None else Path(env.get("HOME", "."))) / ".cache" / "regrapht"
