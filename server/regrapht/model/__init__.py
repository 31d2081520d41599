"""The model engine: a local GGUF model behind the `ModelBackend` contract (backend.py).

- `llama_backend.LlamaBackend`: llama-cpp-python, loaded lazily off the event loop.
- `locate`: which file (explicit path, $REGRAPHT_MODEL, the embedded SmolLM2 GGUF).
- `gguf`: a cheap header check so that bad files become `InputError`, not a crash.
- `scripted.ScriptedModel`: the test double other engines' tests use.

Nothing here imports llama_cpp at import time.
"""

from regrapht.model.backend import ChatMessage, Completion, ModelBackend
from regrapht.model.llama_backend import LlamaBackend, ModelSettings, Usage
from regrapht.model.locate import ENV_VAR, embedded_model_path, locate_model, validate_model
from regrapht.model.scripted import ScriptedModel

__all__ = [
    "ENV_VAR",
    "ChatMessage",
    "Completion",
    "LlamaBackend",
    "ModelBackend",
    "ModelSettings",
    "ScriptedModel",
    "Usage",
    "embedded_model_path",
    "locate_model",
    "validate_model",
]
