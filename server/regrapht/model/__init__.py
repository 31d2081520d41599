"""The model engine: a local GGUF model behind the `ModelBackend` contract (backend.py).

- `process_backend.ProcessModelBackend`: what the CLI and the server use; the model runs in
  a worker process (`model_worker`), so an abort or crash in llama.cpp is an error, not a crash.
- `llama_backend.LlamaBackend`: llama-cpp-python in this process (what the worker runs).
- `locate`: which file (explicit path, $REGRAPHT_MODEL, the embedded SmolLM2 GGUF).
- `gguf`: a cheap header check so that bad files become `InputError`, not a crash.
- `scripted.ScriptedModel`: the test double other engines' tests use.

Nothing here imports llama_cpp at import time.
"""

from regrapht.model.backend import ChatMessage, Completion, ModelBackend
from regrapht.model.llama_backend import LlamaBackend, ModelSettings, Usage
from regrapht.model.locate import ENV_VAR, embedded_model_path, locate_model, validate_model
from regrapht.model.process_backend import ProcessModelBackend
from regrapht.model.scripted import ScriptedModel

__all__ = [
    "ENV_VAR",
    "ChatMessage",
    "Completion",
    "LlamaBackend",
    "ModelBackend",
    "ModelSettings",
    "ProcessModelBackend",
    "ScriptedModel",
    "Usage",
    "embedded_model_path",
    "locate_model",
    "validate_model",
]
