"""Settings per workspace folder: which folder holds a document, the per-folder cache, and the
server state's per-document settings (no pygls)."""

from __future__ import annotations

import asyncio
from typing import Any, cast

from lsprotocol import types

from regrapht.lsp.features.configuration import apply_pulled, configuration_items, initial_folders, pull
from regrapht.lsp.folders import FolderAnswer, FolderSettings, contains, folder_of, folders_after
from regrapht.lsp.state import ServerState
from regrapht.rules.types import Finding
from regrapht.settings import (
    FOLDER_SCOPED,
    RULE_SETTINGS,
    Settings,
    folder_problems,
    given_fields,
    in_folder,
    parse_settings,
)
from regrapht.text import Span

A = "file:///work/a"
B = "file:///work/a/nested"
C = "file:///work/c"


def test_the_longest_folder_holding_the_document_is_its_folder():
    folders = (A, B, C)
    assert folder_of("file:///work/a/k.cu", folders) == A
    assert folder_of("file:///work/a/nested/deep/k.cu", folders) == B  # nested: the inner folder
    assert folder_of("file:///work/a/nested/deep/k.cu", (B, A)) == B  # whatever the order
    assert folder_of("file:///work/c/k.cu", folders) == C
    assert folder_of("file:///work/ab/k.cu", folders) is None  # a path boundary, not a string prefix
    assert folder_of("file:///elsewhere/k.cu", folders) is None
    assert folder_of("untitled:Untitled-1", folders) is None
    assert folder_of("file:///work/a/k.cu", ()) is None


def test_folder_uris_compare_without_a_trailing_slash_and_percent_decoded():
    assert contains("file:///work/a/", "file:///work/a/k.cu")
    assert contains("file:///work/a", "file:///work/a")  # the folder itself
    assert contains("file:///c%3A/proj", "file:///c:/proj/k.cu")  # clients encode a drive's colon or not
    assert contains("file:///work/my%20proj", "file:///work/my proj/k.cu")
    assert not contains("file:///work/a", "file:///work/a.cu")
    assert folder_of("file:///work/a/k.cu", ("file:///work/a/",)) == "file:///work/a/"  # returned as given


def test_folder_changes_keep_the_order_and_each_folder_once():
    assert folders_after((A, C), [B], [C]) == (A, B)
    assert folders_after((A,), ["file:///work/a/"], []) == (A,)  # the same folder again
    assert folders_after((A, C), [], ["file:///work/a/"]) == (C,)
    assert folders_after((), [A, A], []) == (A,)


def test_a_document_takes_its_folders_project_settings_and_the_windows_others():
    window = Settings(arch="sm_80", enabled_rules=("R001",), debounce_ms=40, search_budget=8)
    own = Settings(arch="sm_90", enabled_rules=("R002",), severity_overrides={"R002": "error"},
                   extra_compiler_args=("-DX=1",), debounce_ms=999, search_budget=64, allow_fast_math=False)
    folders = FolderSettings((A, C)).with_pulled({A: FolderAnswer(own)})
    inside = folders.for_uri("file:///work/a/k.cu", window)
    assert (inside.arch, inside.enabled_rules, inside.severity_overrides) == ("sm_90", ("R002",), {"R002": "error"})
    assert inside.extra_compiler_args == ("-DX=1",) and inside.allow_fast_math is False
    assert (inside.debounce_ms, inside.search_budget) == (40, 8)  # window settings: never a folder's
    assert folders.for_uri("file:///work/c/k.cu", window) is window  # a folder not pulled (yet)
    assert folders.for_uri("file:///elsewhere/k.cu", window) is window  # outside every folder
    assert in_folder(window, own) == inside


def test_the_cache_drops_removed_folders_and_answers_for_unknown_ones():
    own = FolderAnswer(Settings(arch="sm_90"))
    folders = FolderSettings((A, C)).with_pulled({A: own, C: own, "file:///gone": own})
    assert set(folders.pulled) == {A, C}  # the folder removed while the pull was in flight
    fewer = folders.with_folders((C,))
    assert fewer.folders == (C,) and set(fewer.pulled) == {C}
    assert fewer.for_uri("file:///work/a/k.cu", Settings()) == Settings()  # back to the window's
    assert folders.with_pulled({A: None}).pulled == {C: own}  # the client has none for A now
    assert folders.with_pulled({C: FolderAnswer(Settings(arch="sm_75"))}).pulled[A] is own  # others kept


def test_a_folder_answer_without_a_key_leaves_it_to_the_window():
    """VS Code answers a folder with every key resolved; a client answering with the folder's own
    keys only (or null for one) leaves the others to the window."""
    raw = {"arch": "sm_90", "enabledRules": None, "debounceMs": 5, "python": "/usr/bin/python3"}
    assert given_fields(raw) == {"arch", "debounce_ms"}
    assert given_fields("not an object") == frozenset()
    window = Settings(arch="sm_80", enabled_rules=("R001",))
    folder, _ = parse_settings(raw)
    answer = FolderAnswer(folder, given_fields(raw))
    inside = FolderSettings((A,)).with_pulled({A: answer}).for_uri("file:///work/a/k.cu", window)
    assert (inside.arch, inside.enabled_rules, inside.debounce_ms) == ("sm_90", ("R001",), window.debounce_ms)
    assert FolderAnswer(folder).given == frozenset(FOLDER_SCOPED)  # a whole answer by default


def test_only_the_folder_scoped_problems_of_a_folder_are_its_own():
    _, problems = parse_settings({"arch": "hopper", "debounceMs": "soon", "enabledRules": ["x"]})
    assert sorted(p.key for p in folder_problems(problems)) == ["arch", "enabledRules"]
    assert [p.key for p in folder_problems(parse_settings("sm_90")[1])] == [""]  # not an object at all
    assert set(RULE_SETTINGS) <= set(FOLDER_SCOPED)


def test_one_request_asks_for_the_window_then_each_folder():
    items = configuration_items((A, C))
    assert [(i.section, i.scope_uri) for i in items] == [("regrapht", None), ("regrapht", A), ("regrapht", C)]
    params = types.InitializeParams(capabilities=types.ClientCapabilities(), workspace_folders=[
        types.WorkspaceFolder(uri=A, name="a"), types.WorkspaceFolder(uri=A + "/", name="a again")])
    assert initial_folders(params) == (A,)
    assert initial_folders(types.InitializeParams(capabilities=types.ClientCapabilities())) == ()


class SettingsEngine:
    """Records the settings of each analysis; one finding of each enabled rule."""

    def __init__(self) -> None:
        self.seen: list[Settings] = []

    def open(self, text):
        return text

    def change(self, document, span, new_text):
        return new_text

    def analyze(self, document, settings):
        self.seen.append(settings)
        rules = settings.enabled_rules or ("R001", "R002")
        return document, tuple(Finding(rule, "warning", Span.of(0, 0, 0, 1), None, "m", "t", f"rules/{rule}.md")
                               for rule in rules)


def test_the_state_analyses_each_document_with_its_folders_rules():
    engine = SettingsEngine()
    state = ServerState(engine=engine)
    state.apply_settings(Settings(arch="sm_80"))
    state.apply_folder_settings(FolderSettings((A, C)))
    in_a = state.open("file:///work/a/k.cu", "x", 1)
    in_c = state.open("file:///work/c/k.cu", "x", 1)
    outside = state.open("file:///elsewhere/k.cu", "x", 1)
    first = {doc.uri: state.ensure_analysis(doc) for doc in (in_a, in_c, outside)}
    assert all(len(a.findings) == 2 for a in first.values())

    # A turns R001 off: an open document's rules changed, so analyses are redone
    assert state.apply_folder_settings(state.folder_settings.with_pulled({A: FolderAnswer(Settings(enabled_rules=("R002",)))}))
    assert [f.rule for f in state.ensure_analysis(in_a).findings] == ["R002"]
    assert len(state.ensure_analysis(in_c).findings) == 2 and len(state.ensure_analysis(outside).findings) == 2
    assert state.settings_for(in_a.uri).arch == "" and state.settings_for(in_c.uri).arch == "sm_80"
    assert state.analysis_request(in_a, None).snapshot.settings.enabled_rules == ("R002",)  # what Optimize gets
    assert state.snapshot_now(in_c, None).settings.arch == "sm_80"

    # the same rules again, or a folder setting the rules do not read: nothing to redo
    again = state.folder_settings.with_pulled({A: FolderAnswer(Settings(enabled_rules=("R002",), arch="sm_90"))})
    assert not state.apply_folder_settings(again)
    assert state.settings_for(in_a.uri).arch == "sm_90"
    # C's folder removed: its document takes the window's settings (the same rules here)
    assert not state.apply_folder_settings(state.folder_settings.with_folders((A,)))
    assert state.settings_for(in_c.uri) is state.settings


def test_a_folder_change_that_touches_no_open_document_redoes_nothing():
    state = ServerState(engine=SettingsEngine())
    state.apply_folder_settings(FolderSettings((A, C)))
    doc = state.open("file:///work/c/k.cu", "x", 1)
    first = state.ensure_analysis(doc)
    assert not state.apply_folder_settings(state.folder_settings.with_pulled({A: FolderAnswer(Settings(enabled_rules=("R002",)))}))
    assert state.ensure_analysis(doc) is first


def test_optimize_runs_with_the_arch_flags_and_numerics_of_the_documents_folder():
    from regrapht.app.jobs import optimize_request

    state = ServerState(engine=SettingsEngine())
    state.apply_settings(Settings(arch="sm_80", search_budget=8))
    own = Settings(arch="sm_90", compile_commands="/proj/a/build/compile_commands.json",
                   extra_compiler_args=("-DFOLDER_A=1",), allow_fast_math=False, search_budget=99)
    state.apply_folder_settings(FolderSettings((A,)).with_pulled({A: FolderAnswer(own)}))
    in_a = state.open("file:///work/a/k.cu", "x", 1)
    outside = state.open("file:///elsewhere/k.cu", "x", 1)
    request = optimize_request(state.snapshot(in_a, state.ensure_analysis(in_a), None), "k")
    assert request.options.arch == "sm_90" and request.options.search.allow_approximations is False
    assert str(request.options.compile.database) == "/proj/a/build/compile_commands.json"
    assert "-DFOLDER_A=1" in request.options.compile.user.arguments()
    assert request.budget == 8  # the window's: a folder does not set the search
    window = optimize_request(state.snapshot_now(outside, None), "k")
    assert window.options.arch == "sm_80" and window.options.search.allow_approximations is True
    assert window.options.compile.database is None and "-DFOLDER_A=1" not in window.options.compile.user.arguments()


class AnsweringServer:
    """`workspace/configuration` answered when the test says; the popups and log messages sent."""

    def __init__(self) -> None:
        self.asked: list[types.ConfigurationParams] = []
        self.answers: list[asyncio.Future[Any]] = []
        self.shown: list[str] = []
        self.logged: list[str] = []

    def window_show_message(self, params: types.ShowMessageParams) -> None:
        self.shown.append(params.message)

    def window_log_message(self, params: types.LogMessageParams) -> None:
        self.logged.append(params.message)

    async def workspace_configuration_async(self, params: types.ConfigurationParams) -> Any:
        self.asked.append(params)
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.answers.append(answer)
        return await answer


def _pulling_state() -> ServerState:
    state = ServerState(engine=SettingsEngine())
    state.supports_configuration = True
    state.apply_folder_settings(FolderSettings((A, C)))
    return state


async def test_a_pull_asks_for_each_folder_and_the_latest_of_overlapping_pulls_wins():
    state, server = _pulling_state(), AnsweringServer()
    first = asyncio.ensure_future(pull(cast(Any, server), state))
    await asyncio.sleep(0)
    second = asyncio.ensure_future(pull(cast(Any, server), state))
    await asyncio.sleep(0)
    assert [[i.scope_uri for i in p.items] for p in server.asked] == [[None, A, C]] * 2
    server.answers[1].set_result([{"arch": "sm_80"}, {"arch": "sm_90"}, None])
    await second
    server.answers[0].set_result([{"arch": "sm_70"}, {"arch": "sm_75"}, {"arch": "sm_75"}])  # older, later
    await first
    assert state.settings.arch == "sm_80"
    assert state.settings_for("file:///work/a/k.cu").arch == "sm_90"
    assert state.settings_for("file:///work/c/k.cu").arch == "sm_80"  # null for C: the window's


async def test_a_failed_pull_keeps_the_settings_and_a_bad_folder_value_is_shown_once():
    from pygls.exceptions import JsonRpcInternalError

    state, server = _pulling_state(), AnsweringServer()
    state.loop = asyncio.get_running_loop()
    window = {"arch": "hopper", "debounceMs": 5}
    apply_pulled(cast(Any, server), state, window, {A: {"arch": "hopper", "debounceMs": "soon"}, C: {"arch": "sm_90"}})
    await asyncio.sleep(0)
    assert state.settings.arch == "" and state.settings_for("file:///work/a/k.cu").arch == ""  # the default
    assert server.shown == ["regrapht.arch: must look like sm_90 (got 'hopper'); using the default"]  # once
    # a folder's window-scoped key is not the folder's to set: neither used nor reported
    assert state.settings_for("file:///work/a/k.cu").debounce_ms == 5
    failing = asyncio.ensure_future(pull(cast(Any, server), state))
    await asyncio.sleep(0)
    server.answers[0].set_exception(JsonRpcInternalError("no"))
    await failing
    await asyncio.sleep(0)
    assert state.settings_for("file:///work/c/k.cu").arch == "sm_90" and state.settings.debounce_ms == 5
    assert len(server.logged) == 1 and "could not read settings" in server.logged[0]
