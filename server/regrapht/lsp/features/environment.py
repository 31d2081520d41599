"""`regrapht.environment {}` -> what Optimize needs and whether this machine has it.

The VS Code client shows the answer as a language status item beside `{} CUDA C++` (GPU and its
name, nvcc, the model, pycuda) and says on the Optimize CodeLens, lightbulb and command what is
missing before a click. Reply (camelCase, docs/architecture.md):
`{"gpu": str | null, "gpuReason": str, "nvcc": str | null, "pycuda": bool, "model": str | null,
"modelReason": str, "optimize": bool, "missing": [str]}`.

Asking starts the GPU worker once (it is what Optimize starts anyway); without a device the worker
is closed again and its reason cached (`GpuResources.worker`). Runs in a worker thread.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from typing import Any

from pygls.lsp.server import LanguageServer

from regrapht.app.resources import GpuResources
from regrapht.errors import InputError
from regrapht.lsp.features.common import in_worker
from regrapht.lsp.state import ServerState

ENVIRONMENT_COMMAND = "regrapht.environment"


@dataclass(frozen=True)
class Environment:
    gpu: str | None  # the device's name
    gpu_reason: str  # why there is no device ("" with one)
    nvcc: str | None  # its path
    pycuda: bool
    model: str | None  # the model file's name
    model_reason: str

    @property
    def missing(self) -> list[str]:
        """What Optimize needs and does not have, as the user would install it."""
        needs = []
        if not self.pycuda:
            needs.append("pycuda in the server's Python (to reach the GPU)")
        elif self.gpu is None:
            needs.append(f"a CUDA GPU ({self.gpu_reason})" if self.gpu_reason else "a CUDA GPU")
        if self.nvcc is None:
            needs.append("nvcc (the CUDA toolkit) on PATH")
        return needs

    def to_wire(self) -> dict[str, Any]:
        return {"gpu": self.gpu, "gpuReason": self.gpu_reason, "nvcc": self.nvcc, "pycuda": self.pycuda,
                "model": self.model, "modelReason": self.model_reason, "optimize": not self.missing,
                "missing": self.missing}


def environment_for(resources: GpuResources, model_path: str) -> Environment:
    """Blocking (starts the GPU worker, looks for nvcc): call it in a worker thread. The model
    package is imported here, not at start-up (tests/unit/server/test_startup_imports.py)."""
    from regrapht.model.locate import locate_model

    pycuda = importlib.util.find_spec("pycuda") is not None
    if pycuda:
        info = resources.worker().info()
        device = info.get("device")
        gpu = str(device.get("name")) if isinstance(device, dict) else None
        gpu_reason = "" if gpu else str(info.get("reason") or "no CUDA device")
    else:
        gpu, gpu_reason = None, "not looked for: pycuda is not installed"
    compiler = resources.compiler_if_found()
    try:
        model: str | None = locate_model(model_path or None).name
        model_reason = ""
    except InputError as error:
        model, model_reason = None, str(error)
    return Environment(gpu, gpu_reason, str(compiler.nvcc) if compiler else None, pycuda, model, model_reason)


def register(server: LanguageServer, state: ServerState, resources: GpuResources) -> None:
    @server.command(ENVIRONMENT_COMMAND)
    async def environment(*arguments: Any) -> dict[str, Any]:
        """Async; the look-ups run in a worker thread."""
        found = await in_worker(server, environment_for, resources, state.settings.model_path)
        return found.to_wire()
