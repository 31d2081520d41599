import asyncio
from concurrent.futures import Future
from types import SimpleNamespace

from lsprotocol import types

from regrapht.lsp.features.progress import CancellableProgress
from regrapht.lsp.state import ServerState


class FakeProgress:
    def __init__(self):
        self.tokens: dict[str, Future] = {}
        self.sent: list[tuple[str, object]] = []

    async def create_async(self, token):
        self.tokens[token] = Future()

    def begin(self, token, value):
        self.sent.append(("begin", value))

    def report(self, token, value):
        self.sent.append(("report", value))

    def end(self, token, value):
        self.sent.append(("end", value))


async def scheduled_callbacks_ran():
    """Returns once the loop has run every callback scheduled before the call (`on_loop` sends
    progress with call_soon_threadsafe; a callback scheduled now runs after them, in order)."""
    loop = asyncio.get_running_loop()
    turn = loop.create_future()
    loop.call_soon(turn.set_result, None)
    await turn


def fake_server(progress_support: bool):
    capabilities = types.ClientCapabilities(window=types.WindowClientCapabilities(work_done_progress=progress_support))
    return SimpleNamespace(client_capabilities=capabilities, work_done_progress=FakeProgress())


async def test_progress_reports_and_client_cancel():
    state = ServerState()
    state.loop = asyncio.get_running_loop()
    server = fake_server(True)
    progress = CancellableProgress(server, state, "Optimizing k")
    await progress.begin()
    progress.report("candidate 1", 10)
    assert not progress.cancelled
    server.work_done_progress.tokens[progress.token].cancel()  # window/workDoneProgress/cancel
    assert progress.cancelled
    progress.end("stopped")
    await scheduled_callbacks_ran()
    kinds = [kind for kind, _ in server.work_done_progress.sent]
    assert kinds == ["begin", "report", "end"]
    assert progress.token not in server.work_done_progress.tokens


async def test_without_client_support_only_the_flag_works():
    state = ServerState()
    state.loop = asyncio.get_running_loop()
    server = fake_server(False)
    progress = CancellableProgress(server, state, "Optimizing k")
    await progress.begin()
    progress.report("x")
    progress.cancel()
    assert progress.cancelled
    progress.end()
    await scheduled_callbacks_ran()
    assert server.work_done_progress.sent == []
