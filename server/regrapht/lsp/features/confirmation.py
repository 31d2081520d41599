"""Compiler confirmation of findings in the editor (setting `compilerConfirmation`, on by default
where nvcc exists): after the rules' diagnostics of a text are published, and the text stayed
unchanged for `CONFIRM_DELAY_S`, nvcc compiles it to PTX in a background thread (one at a time,
never on the event loop); the per-line facts (validate/ptx.py) are stored with the text they
describe (`state.set_confirmation`) and the diagnostics republished: R007/R008 then say
"Confirmed by nvcc: 3 f64 instructions in saxpy" or are downgraded to hints, R001/R002 likewise
from the global accesses nvcc emitted (rules/confirm.py). A text that does not compile (a
half-typed edit, missing headers) leaves the findings as the source analysis decided them.
The compiler is the server's one `Compiler` (`GpuResources.compiler_if_found`, also validation's
and Optimize's); its module is imported by that background thread on first use, not at server
start.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from pygls.lsp.server import LanguageServer

from regrapht.limits import DEFAULT_ARCH
from regrapht.lsp.features.common import file_path
from regrapht.lsp.features.compile_flags import project_flags, record_flags
from regrapht.lsp.state import Analysis, ServerState
from regrapht.rules.confirm import CONFIRMABLE
from regrapht.validate.ptx import PtxFacts, ptx_facts

if TYPE_CHECKING:
    from regrapht.app.resources import GpuResources
    from regrapht.snapshot import DocumentSnapshot
    from regrapht.validate.compiler import Compiler

log = logging.getLogger(__name__)

CONFIRM_DELAY_S = 1.0  # idle time after the last publication before nvcc runs
CONFIRM_TIMEOUT_S = 120.0
MEMO_ENTRIES = 32


class ConfirmationService:
    """The confirmations of one server: its one background compile thread over the server's
    compiler (`compiler` gives it, None where nvcc is not installed; called from that thread)."""

    def __init__(self, state: ServerState, compiler: Callable[[], Compiler | None], server: LanguageServer) -> None:
        self.state = state
        self.compiler = compiler
        self.server = server  # for the compile database's one-time notices (compile_flags.py)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="regrapht-confirm")
        self._lock = threading.Lock()
        self._memo: OrderedDict[str, PtxFacts | None] = OrderedDict()  # by text, file and arch

    def wanted(self, uri: str, analysis: Analysis) -> bool:
        """Is a compile worth it: confirmable findings on a text not confirmed yet."""
        if not self.state.settings_for(uri).compiler_confirmation or analysis.model is None:
            return False
        if not any(f.rule in CONFIRMABLE for f in analysis.findings):
            return False
        return self.state.confirmed_lines(uri) != analysis.lines

    def on_published(self, uri: str, analysis: Analysis) -> None:
        """On the loop, after a publication: schedule a confirmation when the text settles."""
        if not self.wanted(uri, analysis):
            return
        self.state.debouncer.schedule(("confirm", uri), CONFIRM_DELAY_S, lambda: self._confirm(uri, analysis))

    async def _confirm(self, uri: str, analysis: Analysis) -> None:
        document = self.state.get(uri)
        if document is None or document.version != analysis.version:
            return  # edited meanwhile: its own publication schedules the next one
        loop = asyncio.get_running_loop()
        snapshot = self.state.snapshot(document, analysis, file_path(uri))
        kernels = tuple(str(k.name) for k in analysis.model.kernels) if analysis.model is not None else ()
        facts = await loop.run_in_executor(self._executor, self._facts, snapshot, kernels)
        if facts is None:
            return
        self.state.set_confirmation(uri, analysis.lines, facts)
        if self.state.publisher is not None:
            self.state.publisher.refresh(uri)

    def _facts(self, document: DocumentSnapshot, kernels: tuple[str, ...]) -> PtxFacts | None:
        """Background thread: nvcc (memoised by text, file, arch and flags); reads the snapshot
        and the project's flags."""
        import hashlib  # here: OpenSSL's load is not needed to start the server

        compiler = self.compiler()
        if compiler is None:
            return None
        path = document.path
        arch = document.settings.arch or DEFAULT_ARCH
        text = document.text
        flags = project_flags(self.server, self.state, document.uri, document.settings)
        key = hashlib.sha256("\0".join((text, str(path), arch, *flags.arguments())).encode()).hexdigest()
        with self._lock:
            if key in self._memo:
                self._memo.move_to_end(key)
                return self._memo[key]
        facts = ptx_facts(compiler, text, path, arch, flags, timeout_s=CONFIRM_TIMEOUT_S)
        if facts is not None:
            record_flags(self.state, document.uri, kernels, flags)
        with self._lock:
            self._memo[key] = facts
            while len(self._memo) > MEMO_ENTRIES:
                self._memo.popitem(last=False)
        return facts


def register(server: LanguageServer, state: ServerState, resources: GpuResources) -> ConfirmationService:
    service = ConfirmationService(state, resources.compiler_if_found, server)
    state.publish_listeners.append(service.on_published)
    return service
