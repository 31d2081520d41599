"""End-to-end: the real server over stdio, VS Code and Neovim capability profiles."""

from __future__ import annotations

import re

import pytest
from lsp_harness import (
    DATA,
    encoding_of,
    offset_of,
    open_document,
    position_of,
    send_raw_notification,
    send_raw_request,
    wait_for_publication,
    wait_until,
)
from lsprotocol import types
from pygls.exceptions import JsonRpcException

KERNELS = (DATA / "diagnostics" / "kernels.cu").read_text()
URI = "file:///work/kernels.cu"


async def opened(client, uri=URI, text=KERNELS):
    open_document(client, uri, text)
    return await wait_for_publication(client, uri, version=1)


async def test_ready_status_and_encoding(client):
    await wait_until(client, lambda: any(s.get("state") == "ready" for s in client.statuses), 4, "the ready status")
    states = [s["state"] for s in client.statuses]
    assert "ready" in states
    assert client.init_seconds < 5  # generous: the 1 s target is measured by bench/lsp_latency.py
    caps = client.init_result.capabilities
    assert caps.position_encoding in ("utf-16", "utf-32")
    offered = client.capabilities.general.position_encodings if client.capabilities.general else None
    assert caps.position_encoding == ("utf-32" if offered and "utf-32" in offered else "utf-16")
    assert caps.text_document_sync.change == types.TextDocumentSyncKind.Incremental


async def test_diagnostics_appear_with_code_and_docs(client):
    published = await opened(client)
    assert published.version == 1
    diagnostics = published.diagnostics
    assert diagnostics, "expected findings in kernels.cu"
    for d in diagnostics:
        assert re.fullmatch(r"R\d{3}", str(d.code))
        assert d.source == "regrapht"
        assert d.severity is not None
        assert d.code_description is not None
        assert d.code_description.href.endswith(f"rules/{d.code}.md")
        assert d.data["rule"] == d.code and "fixes" in d.data
    kernels = {d.data["kernel"] for d in diagnostics}
    assert "scale" in kernels


async def test_hover_on_kernel_name_and_launch_site(client):
    await opened(client)
    encoding = encoding_of(client)
    on_name = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=URI),
            position=position_of(KERNELS, "void scale", encoding, offset=6),
        )
    )
    assert on_name is not None
    card = on_name.contents.value
    assert "```cuda" in card and "void scale(int n, float a," in card
    assert "Launch sites" in card and "(n + 99) / 100" in card and "100 threads/block" in card
    assert "Findings" in card
    # on the launch site that follows an astral character: columns differ in UTF-16
    on_launch = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=URI),
            position=position_of(KERNELS, "scale<<<", encoding, offset=2),
        )
    )
    assert on_launch is not None and "scale(int n" in on_launch.contents.value
    start = on_launch.range.start
    assert start == position_of(KERNELS, "scale<<<", encoding)
    nothing = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=URI),
            position=position_of(KERNELS, "#include", encoding),
        )
    )
    assert nothing is None


async def test_document_symbols(client):
    await opened(client)
    symbols = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=URI))
    )
    names = [s.name for s in symbols]
    for expected in ("twice", "scale", "strided_copy", "run"):
        assert expected in names
    if isinstance(symbols[0], types.DocumentSymbol):
        scale = next(s for s in symbols if s.name == "scale")
        assert scale.detail == "__global__"
        assert [c.name for c in scale.children][:2] == ["n", "a"]
        run = next(s for s in symbols if s.name == "run")
        assert any(c.name.startswith("scale<<<") for c in run.children)


async def test_code_lens_per_kernel(client):
    published = await opened(client)
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=URI))
    )
    commands = [(lens.command.title, lens.command.command, lens.command.arguments) for lens in lenses]
    optimize = [c for c in commands if c[1] == "regrapht.optimizeKernel"]
    assert sorted(c[2][0]["kernel"] for c in optimize) == ["scale", "strided_copy"]
    assert all(c[0] == "Optimize" for c in optimize)
    summaries = [c for c in commands if c[1] == "regrapht.showKernelReport"]
    # counted by severity as Problems counts them, techniques in words (no snake_case ids)
    assert any(re.match(r"\d+ (errors?|warnings?|infos?|hints?)(, \d+ \w+)*: [a-z ]+", c[0]) for c in summaries)
    assert all("_" not in c[0] for c in summaries)
    # the lens ends by naming the hints that have a quick fix: of scale's two, the double literal
    titles = {}
    for title, _, arguments in summaries:
        titles[arguments[0]["kernel"]] = title
        fixable = [d for d in published.diagnostics if d.severity == types.DiagnosticSeverity.Hint
                   and d.data["kernel"] == arguments[0]["kernel"] and d.data["fixes"]]
        assert ("quick fix" in title) == bool(fixable), title
    assert titles["scale"].endswith("; 1 of 2 hints has a quick fix"), titles["scale"]


BOUNDED = """#define BLOCK 128
__global__ void __launch_bounds__(256, 2) after_global(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i];
}

__launch_bounds__(BLOCK)
__global__ void before_global(float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 1.0f;
}

extern "C" __global__ void
__launch_bounds__(
    64)  // one warp pair
c_kernel(float *y)
{
    y[threadIdx.x] = 0.0f;
}
"""


async def test_kernels_declared_with_launch_bounds_get_lenses_and_cards(client):
    """`__launch_bounds__` before or after `__global__` is not the kernel's name: each kernel gets
    its Optimize lens under its own name and a card with its bound."""
    uri = "file:///work/bounded.cu"
    await opened(client, uri, BOUNDED)
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    optimize = [lens.command.arguments[0]["kernel"] for lens in lenses if lens.command.command == "regrapht.optimizeKernel"]
    assert sorted(optimize) == ["after_global", "before_global", "c_kernel"]
    encoding = encoding_of(client)
    cards = {}
    for name in ("after_global", "before_global", "c_kernel"):
        hover = await client.text_document_hover_async(
            types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri),
                              position=position_of(BOUNDED, f"{name}(", encoding, offset=2))
        )
        assert hover is not None, name
        cards[name] = hover.contents.value
    assert "__global__ void after_global(const float *x, float *y, int n)" in cards["after_global"]
    assert "__global__ void c_kernel(float *y)" in cards["c_kernel"]
    assert "`__launch_bounds__(256, 2)`" in cards["after_global"]
    assert "`__launch_bounds__(BLOCK)`" in cards["before_global"]
    assert "`__launch_bounds__(64)`" in cards["c_kernel"] and "one warp" not in cards["c_kernel"]


async def test_kernel_report_command(client):
    await opened(client)
    report = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="regrapht.showKernelReport", arguments=[{"uri": URI, "kernel": "scale"}])
    )
    assert "| parameter |" in report and "Technique:" in report
    with pytest.raises(JsonRpcException):
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="regrapht.showKernelReport", arguments=[{"uri": URI, "kernel": "missing"}]
            )
        )


async def test_kernel_report_command_with_detail_gives_the_report_data(client):
    """`detail: true`: the card's Markdown plus the structured parts the VS Code report draws."""
    await opened(client)
    data = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="regrapht.showKernelReport",
                                   arguments=[{"uri": URI, "kernel": "scale", "detail": True}])
    )
    assert data["kernel"] == "scale" and data["uri"] == URI and "| parameter |" in data["markdown"]
    assert data["findings"] and all(f["doc"] is None or f["doc"].startswith("file://") for f in data["findings"])
    assert {f["rule"] for f in data["findings"]} <= {m.group(1) for m in re.finditer(r"\*\*(R\d+)\*\*",
                                                                                      data["markdown"])}
    assert data["run"] is None and data["roofline"] is None  # no Optimize run, no GPU measurement yet


def apply_text_edits(text: str, edits: list[types.TextEdit], encoding: str) -> tuple[str, list]:
    """Apply edits like an editor; also return them as incremental didChange content changes."""
    located = sorted(
        ((offset_of(text, e.range.start, encoding), offset_of(text, e.range.end, encoding), e) for e in edits),
        key=lambda item: item[0],
        reverse=True,
    )
    changes = []
    for start, end, edit in located:  # last first, so earlier ranges stay valid
        text = text[:start] + edit.new_text + text[end:]
        changes.append(types.TextDocumentContentChangePartial(range=edit.range, text=edit.new_text))
    return text, changes


async def test_quick_fix_applies_and_rule_goes_silent(client):
    published = await opened(client)
    encoding = encoding_of(client)
    fixable = [d for d in published.diagnostics if d.data["fixes"]]
    assert fixable, "expected a finding with a quick fix"
    target = fixable[0]
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=URI),
            range=target.range,
            context=types.CodeActionContext(diagnostics=[target], only=[types.CodeActionKind.QuickFix]),
        )
    )
    action = next(a for a in actions if a.diagnostics and a.diagnostics[0].message == target.message)
    assert action.kind == types.CodeActionKind.QuickFix
    edit = action.edit
    if edit.document_changes:
        edits = list(edit.document_changes[0].edits)
        assert edit.document_changes[0].text_document.version == 1
    else:
        edits = list(edit.changes[URI])
    new_text, changes = apply_text_edits(KERNELS, edits, encoding)
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=URI, version=2), content_changes=changes
        )
    )
    after = await wait_for_publication(client, URI, version=2)
    same = [d for d in after.diagnostics if d.code == target.code and d.message == target.message]
    assert same == [], f"{target.code} still reported after its fix"
    assert len(after.diagnostics) < len(published.diagnostics)
    # the incremental edits reached the server intact: its report reflects the new text
    report = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="regrapht.showKernelReport", arguments=[{"uri": URI, "kernel": "scale"}])
    )
    assert report is not None


async def test_typing_quickly_publishes_only_the_last_version(client):
    await opened(client)
    encoding = encoding_of(client)
    position = position_of(KERNELS, "int i = blockIdx.x", encoding)
    for version in range(2, 12):
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=URI, version=version),
                content_changes=[
                    types.TextDocumentContentChangePartial(
                        range=types.Range(start=position, end=position), text=" "
                    )
                ],
            )
        )
    final = await wait_for_publication(client, URI, version=11)
    assert final.diagnostics
    versions = [p.version for p in client.published if p.uri == URI]
    assert versions == sorted(versions)


async def test_unknown_and_closed_documents_get_errors(client):
    with pytest.raises(JsonRpcException) as unknown:
        await client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri="file:///nowhere.cu"),
                position=types.Position(line=0, character=0),
            )
        )
    assert "not open" in str(unknown.value)
    await opened(client)
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=URI)))
    with pytest.raises(JsonRpcException):
        await client.text_document_code_lens_async(
            types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=URI))
        )
    cleared = await wait_for_publication(client, URI, version=None)
    assert list(cleared.diagnostics) == []


async def test_malformed_params_get_an_error_and_the_server_keeps_serving(client):
    await opened(client)
    with pytest.raises(JsonRpcException) as bad:
        await send_raw_request(client, types.TEXT_DOCUMENT_HOVER, {"textDocument": {"uri": 42}, "position": "top"})
    assert bad.value.code == -32602
    with pytest.raises(JsonRpcException):
        await send_raw_request(
            client, types.WORKSPACE_EXECUTE_COMMAND, {"command": "regrapht.showKernelReport", "arguments": ["nope"]}
        )
    # a malformed notification is logged and ignored
    send_raw_notification(client, types.TEXT_DOCUMENT_DID_CHANGE, {"textDocument": {"uri": URI}})
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=URI),
            position=position_of(KERNELS, "void scale", encoding_of(client), offset=6),
        )
    )
    assert hover is not None


async def test_settings_change_applies_without_restart(client):
    await opened(client)
    first = await wait_for_publication(client, URI, version=1)
    codes = sorted({str(d.code) for d in first.diagnostics})
    keep = codes[0]
    client.set_configuration({"enabledRules": [keep], "debounceMs": 5}, section="regrapht")
    client.published.clear()
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    again = await wait_for_publication(client, URI, version=1)
    assert {str(d.code) for d in again.diagnostics} == {keep}


async def test_bad_setting_is_shown_once(client):
    asked = client.configuration_requests
    client.set_configuration({"debounceMs": "soon"}, section="regrapht")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    await opened(client)
    await wait_until(client, lambda: client.configuration_requests >= asked + 2, 10, "both changes pulled")
    # The server reads the second answer, and applies it, before this request: once it is
    # answered, a second popup would have been sent.
    await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=URI), position=types.Position(line=0, character=0)))
    shown = [m for m in client.messages if "debounceMs" in m.message]
    assert len(shown) == 1 and "default" in shown[0].message
