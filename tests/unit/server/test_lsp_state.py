"""Document state, incremental edits, debounce and the publish-or-drop decision (no pygls)."""

import asyncio

import pytest

from regrapht.cards import KernelFacts
from regrapht.lsp.state import MAX_ANALYZED_CHARS, Debouncer, ServerState
from regrapht.rules.types import Finding
from regrapht.text import Span, apply_edits
from regrapht.text import TextEdit as EngineEdit


class RecordingEngine:
    """Keeps the text it was told about; `analyze` returns it as the model."""

    def __init__(self, fail_with: type[Exception] | None = None):
        self.opens = 0
        self.changes = 0
        self.fail_with = fail_with

    def open(self, text):
        self.opens += 1
        return {"text": text}

    def change(self, document, span, new_text):
        self.changes += 1
        document["text"] = new_text if span is None else apply_edits(document["text"], [EngineEdit(span, new_text)])
        return document

    def analyze(self, document, settings):
        if self.fail_with is not None:
            raise self.fail_with("boom")
        finding = Finding("R001", "warning", Span.of(0, 0, 0, 1), None, "m", "t", "rules/R001.md")
        return document["text"], (finding,)


def test_incremental_edits_reach_the_engine_in_order():
    engine = RecordingEngine()
    state = ServerState(engine=engine)
    doc = state.open("file:///a.cu", "line one\nline two\n", 1)
    first = state.ensure_analysis(doc)
    assert first.model == "line one\nline two\n" and first.version == 1
    doc.apply(Span.of(0, 5, 0, 8), "1", 2)
    doc.apply(Span.of(1, 0, 1, 0), "> ", 3)
    doc.apply(Span.of(1, 10, 2, 0), "", 4)  # join with the (empty) last line
    second = state.ensure_analysis(doc)
    assert second.model == "line 1\n> line two" == doc.text
    assert second.version == 4
    assert engine.opens == 1 and engine.changes == 3
    assert state.ensure_analysis(doc) is second  # cached while nothing changed


def test_full_replacement_keeps_the_engine_document():
    """A whole-text change goes to the same engine document (whose caches survive it: a full
    sync of a file of 5,000 kernels must not re-extract all of them)."""
    engine = RecordingEngine()
    state = ServerState(engine=engine)
    doc = state.open("file:///a.cu", "x", 1)
    state.ensure_analysis(doc)
    doc.replace_all("y\nz", 2)
    doc.apply(Span.of(1, 1, 1, 1), "!", 3)
    analysis = state.ensure_analysis(doc)
    assert analysis.model == "y\nz!" and engine.opens == 1 and engine.changes == 2


class SettingsRecordingEngine(RecordingEngine):
    def __init__(self):
        super().__init__()
        self.settings = []

    def analyze(self, document, settings):
        self.settings.append(settings)
        return super().analyze(document, settings)


def test_a_debounced_analysis_reads_its_snapshot_and_drains_edits_only_up_to_it():
    """The diagnostics worker analyses the request frozen on the loop (snapshot text, settings,
    the edits it includes); an edit made after it stays queued, and the engine still gets every
    edit incrementally (one open)."""
    from regrapht.settings import Settings

    engine = SettingsRecordingEngine()
    state = ServerState(engine=engine)
    doc = state.open("file:///a.cu", "ab\ncd", 1)
    state.ensure_analysis(doc)
    doc.apply(Span.of(0, 2, 0, 2), "!", 2)
    request = state.analysis_request(doc, None)
    assert request.snapshot.text == "ab!\ncd" and request.snapshot.version == 2
    doc.apply(Span.of(1, 0, 1, 0), ">", 3)  # after the snapshot, before the worker runs
    state.apply_settings(Settings(enabled_rules=("R002",)))  # so are new settings
    analysis = state.analysis_of(doc, request)
    assert analysis.version == 2 and analysis.model == "ab!\ncd" and analysis.lines == ("ab!", "cd")
    assert engine.settings[-1].enabled_rules == () and analysis.settings_generation == request.settings_generation
    assert state.analysis_of(doc, request) is analysis  # the same request again: nothing to redo
    latest = state.ensure_analysis(doc)  # a hover: the live version, from the edit left queued
    assert latest.version == 3 and latest.model == "ab!\n>cd" == doc.text
    assert engine.opens == 1 and engine.changes == 2 and engine.settings[-1].enabled_rules == ("R002",)
    assert state.analysis_of(doc, request) is latest  # an older request gets the newer analysis


def test_a_debounced_analysis_after_a_full_replacement_and_a_reopened_engine():
    engine = RecordingEngine(fail_with=ValueError)
    state = ServerState(engine=engine)
    doc = state.open("file:///a.cu", "x", 1)
    assert state.analysis_of(doc, state.analysis_request(doc, None)).skipped  # the engine failed
    engine.fail_with = None
    doc.replace_all("y\nz", 2)
    request = state.analysis_request(doc, None)
    doc.apply(Span.of(1, 1, 1, 1), "!", 3)
    assert state.analysis_of(doc, request).model == "y\nz"  # reopened from the snapshot's text
    assert state.ensure_analysis(doc).model == "y\nz!" and engine.opens == 2


def test_publish_only_current_version_of_open_document():
    state = ServerState(engine=RecordingEngine())
    doc = state.open("file:///a.cu", "x", 1)
    assert state.is_current("file:///a.cu", doc.open_id, 1)
    doc.apply(Span.of(0, 1, 0, 1), "y", 2)
    assert not state.is_current("file:///a.cu", doc.open_id, 1)  # changed meanwhile
    state.close("file:///a.cu")
    assert not state.is_current("file:///a.cu", doc.open_id, 2)  # closed meanwhile
    reopened = state.open("file:///a.cu", "x", 2)
    assert not state.is_current("file:///a.cu", doc.open_id, 2)  # a different opening
    assert state.is_current("file:///a.cu", reopened.open_id, 2)


def test_huge_document_is_skipped_and_reported_once():
    state = ServerState(engine=RecordingEngine())
    skipped = []
    state.on_skip = lambda uri, reason: skipped.append(reason)
    doc = state.open("file:///big.cu", "a" * (MAX_ANALYZED_CHARS + 1), 1)
    analysis = state.ensure_analysis(doc)
    assert analysis.model is None and analysis.findings == () and "not analysed" in (analysis.skipped or "")
    doc.apply(Span.of(0, 0, 0, 0), "b", 2)
    state.ensure_analysis(doc)
    assert len(skipped) == 1
    doc.replace_all("small", 3)
    assert state.ensure_analysis(doc).model == "small"


def test_engine_failure_becomes_a_skipped_analysis():
    state = ServerState(engine=RecordingEngine(fail_with=RecursionError))
    doc = state.open("file:///deep.cu", "((((", 1)
    analysis = state.ensure_analysis(doc)
    assert analysis.model is None and "RecursionError" in (analysis.skipped or "")


def test_settings_change_invalidates_cached_analysis():
    from regrapht.settings import Settings

    state = ServerState(engine=RecordingEngine())
    doc = state.open("file:///a.cu", "x", 1)
    first = state.ensure_analysis(doc)
    assert state.apply_settings(Settings(debounce_ms=10)) is False  # not a rule setting
    assert state.ensure_analysis(doc) is first
    assert state.apply_settings(Settings(enabled_rules=("R002",))) is True
    assert state.ensure_analysis(doc) is not first


def test_external_findings_are_merged_and_dropped_on_close():
    state = ServerState(engine=RecordingEngine())
    doc = state.open("file:///a.cu", "x", 1)
    analysis = state.ensure_analysis(doc)
    slow = Finding("R100", "information", Span.of(0, 0, 0, 1), "k", "measured slow", "tiling", "")
    state.set_external_findings("file:///a.cu", "timing", [slow])
    assert state.all_findings("file:///a.cu", analysis)[-1] is slow
    assert state.kernel_findings("file:///a.cu", analysis, "k") == (slow,)
    state.close("file:///a.cu")
    assert state.external_findings == {}


def test_kernel_facts_merge():
    from regrapht.cards import Resources

    state = ServerState(engine=RecordingEngine())
    state.update_kernel_facts("u", "k", resources=Resources(registers=32))
    facts = state.update_kernel_facts("u", "k", technique_path=("tiling",))
    assert facts.resources == Resources(registers=32) and facts.technique_path == ("tiling",)


def test_kernel_facts_are_dropped_when_their_document_closes():
    from regrapht.cards import Resources

    state = ServerState(engine=RecordingEngine())
    state.open("file:///a.cu", "x", 1)
    state.open("file:///b.cu", "x", 1)
    state.update_kernel_facts("file:///a.cu", "k", resources=Resources(registers=32))
    state.update_kernel_facts("file:///b.cu", "k", resources=Resources(registers=40))
    state.close("file:///a.cu")
    assert state.facts_for("file:///a.cu", "k") is None
    assert state.facts_for("file:///b.cu", "k") == KernelFacts(resources=Resources(registers=40))


async def test_debouncer_runs_only_the_last_scheduled_work():
    debouncer = Debouncer()
    ran = []

    def work(n):
        async def run():
            ran.append(n)

        return run

    tasks = [debouncer.schedule("uri", 0.02, work(n)) for n in range(5)]
    assert debouncer.pending("uri")
    await asyncio.wait(tasks)  # the first four end cancelled, the last after its delay
    assert [t.cancelled() for t in tasks] == [True, True, True, True, False]
    assert ran == [4]
    assert not debouncer.pending("uri")


async def test_debouncer_cancel_and_errors():
    errors = []
    debouncer = Debouncer(on_error=lambda key, error: errors.append((key, str(error))))

    async def fail():
        raise ValueError("bad")

    async def never():
        raise AssertionError("cancelled work ran")

    debouncer.schedule("a", 0.01, never)
    debouncer.cancel("a")
    task = debouncer.schedule("b", 0, fail)
    with pytest.raises(ValueError):
        await task
    # The debouncer's done-callback was added before this test awaited the task, so it has run.
    assert errors == [("b", "bad")]
