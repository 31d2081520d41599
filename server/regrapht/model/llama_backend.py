"""`LlamaBackend`: the `ModelBackend` that runs a GGUF model locally with llama-cpp-python.

Threading: the server only ever calls `complete` (and so the lazy first load) off the event
loop, in a worker thread; the model is loaded in whichever thread first calls it, and one lock
serialises loading and generation, because a llama.cpp context is not safe to share.

Offline: the model is opened from a local file with `Llama(model_path=...)`; nothing here
downloads (no `Llama.from_pretrained`), and llama.cpp itself opens no network connection.

Prompting uses the chat template stored in the GGUF (`tokenizer.chat_template`), rendered by
llama-cpp-python's Jinja2 formatter: the same template `create_chat_completion` would pick for
SmolLM2 (its template is not the stock ChatML one, so llama-cpp-python uses the GGUF's). We
tokenize and sample token by token ourselves so that `should_stop` is checked between tokens
and the token counts are exact.
"""

from __future__ import annotations

import codecs
import contextlib
import io
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from regrapht.errors import InputError
from regrapht.model.backend import ChatMessage, Completion, PromptSize
from regrapht.model.gguf import GgufInfo
from regrapht.model.locate import locate_model, validate_model

logger = logging.getLogger(__name__)

# Used only when a GGUF carries no chat template: plain ChatML, which most small instruct
# models (SmolLM2, Qwen) were trained on.
FALLBACK_CHAT_TEMPLATE = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content']"
    " + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}"
    "{% endif %}"
)


@dataclass(frozen=True)
class ModelSettings:
    """How to run the model (the `model*` editor settings and the CLI flags)."""

    path: str | None = None  # explicit GGUF; None/"" = $REGRAPHT_MODEL, else the embedded one
    threads: int = 0  # 0 = llama.cpp's default
    gpu_layers: int = 0  # layers offloaded to the GPU (-1 = all)
    context: int = 4096
    seed: int = 0  # the context's default; each `complete` call passes its own


@dataclass(frozen=True)
class Usage:
    """Tokens spent by one backend since it was created."""

    prompt_tokens: int
    completion_tokens: int
    calls: int


LlamaFactory = Callable[..., Any]


# The ctypes log callback handed to llama.cpp: process-wide C state, so it is kept here for
# the life of the process (llama.cpp would call a freed callback otherwise).
_llama_log_callback: list[Any] = []


def _route_llama_logs_to_logging() -> None:
    """llama.cpp's own log lines go to the `regrapht.model.llama_cpp` logger at DEBUG."""
    if _llama_log_callback:
        return
    import ctypes

    import llama_cpp

    native = logging.getLogger(f"{__name__.rsplit('.', 1)[0]}.llama_cpp")

    @llama_cpp.llama_log_callback
    def forward(level: int, text: bytes, user_data: Any) -> None:
        line = text.decode("utf-8", "replace").rstrip()
        if line:
            native.debug("%s", line)

    llama_cpp.llama_log_set(forward, ctypes.c_void_p(0))
    _llama_log_callback.append(forward)


def _default_llama_factory(**kwargs: Any) -> Any:
    # Imported here: importing llama_cpp loads the native library, which `regrapht analyze`
    # and the tests of other engines must not pay for.
    from llama_cpp import Llama

    _route_llama_logs_to_logging()
    # Never verbose=False while loading: llama-cpp-python then points file descriptors 1 and 2
    # at /dev/null for the duration (suppress_stdout_stderr). In the language server fd 1 is the
    # JSON-RPC stream, and a response another thread writes meanwhile is lost (seen on the H200:
    # a hover never answered). Its Python-level chatter is captured and logged at DEBUG instead,
    # and verbose is switched off once loaded (it only gates prints after that).
    chatter = io.StringIO()
    with contextlib.redirect_stderr(chatter):
        llama = Llama(**{**kwargs, "verbose": True})
    llama.verbose = False
    if chatter.getvalue().strip():
        logger.debug("llama-cpp-python while loading:\n%s", chatter.getvalue().rstrip())
    return llama


class LlamaBackend:
    """A GGUF model run by llama.cpp; implements `regrapht.model.backend.ModelBackend`.

    Construction is cheap (it only decides the file); the file is checked and loaded on the
    first `complete` (or `load`) call, in the calling worker thread.
    """

    def __init__(
        self,
        settings: ModelSettings | None = None,
        *,
        model_path: Path | None = None,
        llama_factory: LlamaFactory = _default_llama_factory,
    ) -> None:
        self.settings = settings or ModelSettings()
        self.path = model_path or locate_model(self.settings.path or None)
        self.name = self.path.name
        self.device = self._requested_device()
        self._factory = llama_factory
        self._lock = threading.Lock()
        self._llama: Any = None
        self._formatter: Any = None
        self._info: GgufInfo | None = None
        self._prompt_tokens = 0
        self._completion_tokens = 0
        self._calls = 0

    def _requested_device(self) -> str:
        layers = self.settings.gpu_layers
        if layers == 0:
            return "cpu"
        return "gpu (all layers)" if layers < 0 else f"gpu ({layers} layers)"

    @property
    def loaded(self) -> bool:
        return self._llama is not None

    @property
    def usage(self) -> Usage:
        return Usage(self._prompt_tokens, self._completion_tokens, self._calls)

    @property
    def info(self) -> GgufInfo:
        """The checked GGUF header (checks the file now if not yet done)."""
        if self._info is None:
            self._info = validate_model(self.path)
        return self._info

    def load(self) -> None:
        """Check and load the model now (idempotent). Call off the event loop."""
        with self._lock:
            self._ensure_loaded()

    def _ensure_loaded(self) -> Any:
        if self._llama is not None:
            return self._llama
        info = self.info  # InputError before llama.cpp ever sees a bad file
        started = time.monotonic()
        llama = self._factory(
            model_path=str(self.path),
            n_ctx=self.settings.context,
            n_threads=self.settings.threads or None,
            # prompt processing too: llama-cpp-python's default for it is every core, which
            # thrashes when several searches (or the editor and a build) share the machine
            n_threads_batch=self.settings.threads or None,
            n_gpu_layers=self.settings.gpu_layers,
            seed=self.settings.seed,
        )
        self._formatter = self._make_formatter(llama, info)
        self._llama = llama
        if self.settings.gpu_layers != 0 and not _supports_gpu_offload():
            self.device = "cpu"
            logger.warning("this llama.cpp build cannot offload to a GPU; running on the CPU")
        logger.info(
            "loaded model %s (%s) on %s in %.2f s",
            info.name, self.path.name, self.device, time.monotonic() - started,
        )
        return llama

    def _make_formatter(self, llama: Any, info: GgufInfo) -> Any:
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        template = info.chat_template
        if template is None:
            logger.warning("%s has no chat template; using ChatML", self.path.name)
            template = FALLBACK_CHAT_TEMPLATE
        eos = llama.token_eos()
        bos = llama.token_bos()
        return Jinja2ChatFormatter(
            template=template,
            eos_token=llama.detokenize([eos], special=True).decode("utf-8", "replace") if eos >= 0 else "",
            bos_token=llama.detokenize([bos], special=True).decode("utf-8", "replace") if bos >= 0 else "",
            stop_token_ids=[eos],
        )

    def format_prompt(self, messages: list[ChatMessage]) -> str:
        """The prompt text the chat template makes of `messages` (loads the model)."""
        with self._lock:
            self._ensure_loaded()
            return str(self._render(messages).prompt)

    def _render(self, messages: list[ChatMessage]) -> Any:
        return self._formatter(messages=[{"role": m.role, "content": m.content} for m in messages])

    def _tokens(self, llama: Any, messages: list[ChatMessage], prefill: str) -> list[int]:
        rendered = self._render(messages)
        return list(llama.tokenize((rendered.prompt + prefill).encode("utf-8"), add_bos=not rendered.added_special,
                                   special=True))

    def measure_prompt(self, messages: list[ChatMessage], *, prefill: str = "") -> PromptSize:
        """The prompt's tokens as `complete` would send them, and the context (loads the model)."""
        with self._lock:
            llama = self._ensure_loaded()
            return PromptSize(len(self._tokens(llama, messages, prefill)), int(llama.n_ctx()))

    def complete(
        self,
        messages: list[ChatMessage],
        *,
        max_tokens: int,
        temperature: float,
        seed: int,
        should_stop: Callable[[], bool] | None = None,
        on_token: Callable[[str], None] | None = None,
        prefill: str = "",
        grammar: str | None = None,
    ) -> Completion:
        with self._lock:
            llama = self._ensure_loaded()
            prompt = self._tokens(llama, messages, prefill)
            n_ctx = int(llama.n_ctx())
            if len(prompt) >= n_ctx:
                raise InputError(
                    f"prompt of {len(prompt)} tokens does not fit the model context of {n_ctx} "
                    "(raise the context setting)",
                    file=str(self.path),
                )
            budget = min(max_tokens, n_ctx - len(prompt))
            text, generated, finish = self._generate(llama, prompt, budget, temperature, seed, should_stop, on_token,
                                                     grammar)
            self._prompt_tokens += len(prompt)
            self._completion_tokens += generated
            self._calls += 1
            return Completion(text=prefill + text, prompt_tokens=len(prompt), completion_tokens=generated,
                              finish_reason=finish)

    def _generate(
        self,
        llama: Any,
        prompt: list[int],
        budget: int,
        temperature: float,
        seed: int,
        should_stop: Callable[[], bool] | None,
        on_token: Callable[[str], None] | None,
        grammar: str | None = None,
    ) -> tuple[str, int, str]:
        if should_stop is not None and should_stop():
            return "", 0, "cancelled"
        if budget <= 0:
            return "", 0, "length"
        import llama_cpp

        llama.set_seed(seed)
        # Tokens may split a UTF-8 character; the incremental decoder holds partial bytes back.
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        pieces: list[str] = []
        generated = 0
        finish = "length"
        # A GBNF grammar is parsed by llama.cpp; a malformed one is the caller's bug, not input.
        constraint = llama_cpp.LlamaGrammar.from_string(grammar, verbose=False) if grammar else None
        tokens = llama.generate(prompt, temp=max(temperature, 0.0), top_k=40, top_p=0.95, min_p=0.05, reset=True,
                                grammar=constraint)
        try:
            for token in tokens:
                if llama_cpp.llama_vocab_is_eog(llama._model.vocab, token):
                    finish = "stop"
                    break
                generated += 1
                piece = decoder.decode(llama.detokenize([token]))
                if piece:
                    pieces.append(piece)
                    if on_token is not None:
                        on_token(piece)
                if generated >= budget:
                    break
                if should_stop is not None and should_stop():
                    finish = "cancelled"
                    break
        finally:
            tokens.close()
        tail = decoder.decode(b"", final=True)
        if tail:
            pieces.append(tail)
            if on_token is not None:
                on_token(tail)
        return "".join(pieces), generated, finish


def _supports_gpu_offload() -> bool:
    import llama_cpp

    return bool(llama_cpp.llama_supports_gpu_offload())
