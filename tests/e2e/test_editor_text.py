"""End-to-end over stdio: what the editor shows as plain text is plain, the CodeLens agrees with
the diagnostics and is asked for again when they or the settings change.

- Diagnostics messages, related information and quick-fix titles carry no Markdown code spans
  (clients show them as plain text: Problems, squiggle hovers, the lightbulb menu); the hover
  card is Markdown, its code fence `cuda-cpp`.
- The lens above a kernel counts its diagnostics by severity as Problems does.
- `workspace/codeLens/refresh` is sent after a publication that changes the findings and after a
  settings change, to clients that support it (the VS Code profile), and never to others (Neovim).
- A client that says it runs `command:` links (initializationOptions `commandLinks`) gets a
  "Show the kernel report" link on the hover card; others do not.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest_lsp
from lsp_harness import CONFIG, INIT_SETTINGS, open_document, position_of, wait_for_publication, wait_until
from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities

URI = "file:///work/editor/text.cu"
TEXT = """__global__ void halve(float *y, const float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 0.5 * x[i] + 0.25 * y[i];
    for (int k = 0; k < 4; ++k) y[i] += 1.0f;
}

void run(float *y, const float *x, int n) { halve<<<(n + 255) / 256, 256>>>(y, x, n); }
"""
SEVERITY_WORDS = {types.DiagnosticSeverity.Error: "error", types.DiagnosticSeverity.Warning: "warning",
                  types.DiagnosticSeverity.Information: "info", types.DiagnosticSeverity.Hint: "hint"}


def _lens_counts(title: str) -> Counter[str]:
    counts: Counter[str] = Counter()
    for number, word in re.findall(r"(\d+) (error|warning|info|hint)s?", title.split(":")[0]):
        counts[word] += int(number)
    return counts


async def test_plain_text_places_have_no_markdown_and_the_lens_agrees(client):
    open_document(client, URI, TEXT)
    published = await wait_for_publication(client, URI, version=1)
    diagnostics = published.diagnostics
    assert diagnostics
    for diagnostic in diagnostics:
        assert "`" not in diagnostic.message, diagnostic.message
        for related in diagnostic.related_information or []:
            assert "`" not in related.message, related.message
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=URI),
        range=types.Range(types.Position(0, 0), types.Position(6, 0)),
        context=types.CodeActionContext(diagnostics=list(diagnostics))))
    quick_fixes = [a for a in actions or [] if isinstance(a, types.CodeAction) and a.kind == types.CodeActionKind.QuickFix]
    assert quick_fixes
    assert all("`" not in a.title for a in quick_fixes), [a.title for a in quick_fixes]
    assert any("'" in a.title for a in quick_fixes)  # code is quoted instead ("Write '0.5f'")

    lenses = await client.text_document_code_lens_async(types.CodeLensParams(
        text_document=types.TextDocumentIdentifier(uri=URI)))
    (summary,) = [lens.command for lens in lenses or [] if lens.command and lens.command.command == "regrapht.showKernelReport"]
    expected = Counter(SEVERITY_WORDS[d.severity or types.DiagnosticSeverity.Warning] for d in diagnostics
                       if isinstance(d.data, dict) and d.data.get("kernel") == "halve")
    assert _lens_counts(summary.title) == expected, summary.title
    assert "_" not in summary.title

    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=URI), position=position_of(TEXT, "halve", "utf-16")))
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    if hover.contents.kind == types.MarkupKind.Markdown:
        assert hover.contents.value.startswith("```cuda-cpp\n__global__ void halve(float *y, const float *x, int n)")
    assert "command:" not in hover.contents.value  # this client did not ask for command links


async def test_code_lens_refresh_follows_findings_and_settings(client):
    supports = client_capabilities_of(client)
    open_document(client, URI, TEXT)
    await wait_for_publication(client, URI, version=1)
    if not supports:
        assert client.lens_refreshes == 0  # Neovim's profile has no refreshSupport: never asked
        return
    await wait_until(client, lambda: client.lens_refreshes >= 1, 10, "a codeLens refresh after the publication")
    before = client.lens_refreshes
    first = await _summary(client)
    client.set_configuration({**INIT_SETTINGS, "enabledRules": ["R007"]}, section="regrapht")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    await wait_until(client, lambda: client.lens_refreshes > before, 10, "a codeLens refresh after the settings change")
    await wait_until(client, lambda: client.published[-1].uri == URI and all(
        d.code == "R007" for d in client.published[-1].diagnostics), 10, "the R007-only publication")
    after = await _summary(client)
    assert after != first and after.startswith(f"{len(client.published[-1].diagnostics)} "), (first, after)


async def _summary(client) -> str:
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(
        text_document=types.TextDocumentIdentifier(uri=URI)))
    (title,) = [lens.command.title for lens in lenses or [] if lens.command and lens.command.command == "regrapht.showKernelReport"]
    return title


def client_capabilities_of(client) -> bool:
    workspace = client.capabilities.workspace if getattr(client, "capabilities", None) else None
    return bool(workspace and workspace.code_lens and workspace.code_lens.refresh_support)


@pytest_lsp.fixture(config=CONFIG)
async def linking_client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        initialization_options={"settings": INIT_SETTINGS, "commandLinks": True}))
    yield
    await lsp_client.shutdown_session()


async def test_the_hover_card_links_to_the_report_where_the_client_runs_command_links(linking_client):
    client = linking_client
    open_document(client, URI, TEXT)
    await wait_for_publication(client, URI, version=1)
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=URI), position=position_of(TEXT, "halve", "utf-16")))
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert "[Show the kernel report](command:regrapht.showKernelReportAtCursor?" in hover.contents.value


async def test_the_environment_command_says_what_optimize_needs_here(client):
    """The real server on this machine: nvcc found or not as `shutil.which` finds it; whether a GPU
    is there as the GPU worker finds it (on a machine without one, Optimize is not available)."""
    import shutil

    found = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="regrapht.environment", arguments=[{}]))
    assert set(found) >= {"gpu", "gpuReason", "nvcc", "pycuda", "model", "optimize", "missing"}
    assert (found["nvcc"] is not None) == (shutil.which("nvcc") is not None)
    assert found["optimize"] == (not found["missing"])
    if found["gpu"] is None:
        assert not found["optimize"] and found["missing"]


async def test_disable_rule_for_this_line_and_file_are_quick_fixes_that_work(client):
    open_document(client, URI, TEXT)
    published = await wait_for_publication(client, URI, version=1)
    r007 = [d for d in published.diagnostics if d.code == "R007"]
    assert r007
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=URI), range=r007[0].range,
        context=types.CodeActionContext(diagnostics=r007)))
    titles = [a.title for a in actions or [] if isinstance(a, types.CodeAction)]
    assert "Disable R007 for this line" in titles and "Disable R007 for this file" in titles
    (line_action,) = [a for a in actions if isinstance(a, types.CodeAction) and a.title == "Disable R007 for this line"]
    edits = [e for change in (line_action.edit.document_changes or []) for e in getattr(change, "edits", [])] or \
        [e for found in (line_action.edit.changes or {}).values() for e in found]
    (edit,) = edits
    assert edit.new_text == "    // regrapht-disable-next-line R007\n" and edit.range.start.line == r007[0].range.start.line
    lines = TEXT.splitlines(keepends=True)
    at = edit.range.start.line
    changed = "".join(lines[:at]) + edit.new_text + "".join(lines[at:])
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=URI, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=changed)]))
    after = await wait_for_publication(client, URI, version=2)
    assert not [d for d in after.diagnostics if d.code == "R007" and d.range.start.line == at + 1]
    assert len([d for d in after.diagnostics if d.code != "R007"]) == len([d for d in published.diagnostics if d.code != "R007"])
