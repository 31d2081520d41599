"""`OptimizeRequest`: one Optimize run as asked, the one type every caller builds.

The editor's code action (`app/controller.py`), `regrapht optimize`, `regrapht eval`, `graph
distill` and the bench scripts make an `OptimizeRequest`; the workflow
(`regrapht.app.optimize.run_optimize`) chooses its spec and wires its collaborators, and the
search (`regrapht.search.pipeline.optimize`) reads its kernel, text, strategy, budget, seed and
search options. Plain frozen data: no engine is imported here, so the language server can
build a request without loading the search.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from regrapht.limits import (
    DEFAULT_MODEL_CONTEXT,
    DEFAULT_MODEL_GPU_LAYERS,
    DEFAULT_MODEL_THREADS,
    DEFAULT_SEARCH_BUDGET,
    DEFAULT_SEARCH_STRATEGY,
)
from regrapht.search.options import SearchOptions
from regrapht.spec.launch import LaunchConfig
from regrapht.spec.model import Spec
from regrapht.validate.compile_db import CompileSetup
from regrapht.validate.profile_report import Profile

__all__ = ["KernelTarget", "ModelConfig", "OptimizeOptions", "OptimizeRequest"]


@dataclass(frozen=True)
class ModelConfig:
    """Which GGUF model and how to run it (the `model*` settings, the CLI's `--model*` flags)."""

    path: str | None = None  # None: $REGRAPHT_MODEL, else the embedded SmolLM2
    threads: int = DEFAULT_MODEL_THREADS
    gpu_layers: int = DEFAULT_MODEL_GPU_LAYERS
    context: int = DEFAULT_MODEL_CONTEXT


@dataclass(frozen=True)
class OptimizeOptions:
    model: ModelConfig = field(default_factory=ModelConfig)
    use_model: bool = True  # False: appliers only, even for the model strategies
    arch: str | None = None  # None: the device's, else sm_90
    graph_path: Path | None = None  # None: the bundled reasoning graph
    search: SearchOptions = field(default_factory=SearchOptions)
    infer_spec: bool = False  # no spec given or beside the file: infer one (editor and CLI) or fail
    # time on a spec whose `guessed` lists values not proven from the kernel (the editor asked the
    # user; the CLI's --accept-guesses); False: such a spec is refused before anything is timed
    accept_guesses: bool = False
    require_device: bool = False  # no device: stop before searching ("no_gpu"), judge nothing
    time_limit_s: float | None = None  # stop the search after this long, keeping the best so far
    # keep the model's outcomes per kernel in the cache dir and skip it where it kept failing
    # (app/model_memory.py); False: neither read nor written
    model_memory: bool = True
    # each file's compile flags: its compile_commands.json entry, then the user's (compile_db.py)
    compile: CompileSetup = field(default_factory=CompileSetup)
    # run the answer under compute-sanitizer (memcheck, racecheck, synccheck) before offering it,
    # where a device is present; a finding rejects it for the next verified faster candidate
    sanitize: bool = True


@dataclass(frozen=True)
class OptimizeRequest:
    kernel: str
    source: str  # the text to optimize (the file's, or the editor's snapshot of it)
    file: Path | None = None  # the file on disk (its folder is the include dir); None: untitled
    spec: Spec | Path | None = None  # None: the spec beside `file`
    strategy: str = DEFAULT_SEARCH_STRATEGY
    budget: int = DEFAULT_SEARCH_BUDGET
    seed: int = 0
    options: OptimizeOptions = field(default_factory=OptimizeOptions)
    # Nsight Compute's profile of `source`'s kernel (`regrapht optimize --profile`, the editor's
    # background validation): the techniques it names are raised in the search's order
    # (search/profile_evidence.py); None: no profile, the search as before
    profile: Profile | None = None


@dataclass(frozen=True)
class KernelTarget:
    """What search needs from the kernel's spec once it is chosen (`app.optimize.kernel_target`):
    how it is launched now, and constants."""

    launch: LaunchConfig
    # Pointer element counts (and scalars) the spec fixes to integer literals, e.g. {"bins": 256}.
    constants: Mapping[str, int] = field(default_factory=dict)
    # Whether a buffer the kernel writes holds floating-point values: then a reordered sum can
    # round differently (the edit's title says so); integer results are exact in any order.
    floating_outputs: bool = True
