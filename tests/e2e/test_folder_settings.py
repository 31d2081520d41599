"""End-to-end: settings per workspace folder. The real server over stdio in a workspace of two
folders whose settings differ: the same kernel text gets each folder's diagnostics and a
document outside both the window's; a folder's settings changed, and a folder removed, apply
without a restart."""

from __future__ import annotations

from typing import Any

import pytest_lsp
from lsp_harness import CONFIG, DATA, INIT_SETTINGS, open_document, wait_for_publication, wait_until
from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities

from regrapht.rules.registry import ALL_RULES

KERNELS = (DATA / "diagnostics" / "kernels.cu").read_text()
ONE = "file:///work/one"
TWO = "file:///work/two"
IN_ONE = f"{ONE}/src/kernels.cu"
IN_TWO = f"{TWO}/kernels.cu"
OUTSIDE = "file:///elsewhere/kernels.cu"
# folder one makes R006 an error; folder two runs every rule but R007
ONE_SETTINGS = {**INIT_SETTINGS, "severityOverrides": {"R006": "error"}}
TWO_SETTINGS = {**INIT_SETTINGS, "enabledRules": sorted(set(ALL_RULES) - {"R007"})}


@pytest_lsp.fixture(config=CONFIG)
async def workspace(lsp_client: LanguageClient):
    lsp_client.set_configuration(INIT_SETTINGS, section="regrapht")
    lsp_client.set_configuration(ONE_SETTINGS, section="regrapht", scope_uri=ONE)
    lsp_client.set_configuration(TWO_SETTINGS, section="regrapht", scope_uri=TWO)
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        initialization_options={"settings": INIT_SETTINGS},
        workspace_folders=[types.WorkspaceFolder(uri=ONE, name="one"), types.WorkspaceFolder(uri=TWO, name="two")]))
    yield
    await lsp_client.shutdown_session()


def codes(client: Any, uri: str) -> set[str]:
    return {str(d.code) for d in client.diagnostics.get(uri, [])}


def severities(client: Any, uri: str, rule: str) -> set[types.DiagnosticSeverity | None]:
    return {d.severity for d in client.diagnostics.get(uri, []) if d.code == rule}


async def test_the_same_kernel_gets_each_folders_diagnostics(workspace):
    client = workspace
    await wait_until(client, lambda: any(s["state"] == "ready" for s in client.statuses), 30, "the server ready")
    for uri in (IN_ONE, IN_TWO, OUTSIDE):
        open_document(client, uri, KERNELS)
    for uri in (IN_ONE, IN_TWO, OUTSIDE):
        await wait_for_publication(client, uri, version=1)

    window = codes(client, OUTSIDE)
    assert {"R006", "R007"} <= window, window  # the kernel text triggers both
    assert codes(client, IN_ONE) == window
    assert severities(client, IN_ONE, "R006") == {types.DiagnosticSeverity.Error}
    assert types.DiagnosticSeverity.Error not in severities(client, OUTSIDE, "R006")
    assert codes(client, IN_TWO) == window - {"R007"}  # folder two does not run R007
    asked = [item for params in client.configuration_params for item in params.items]
    assert {(item.section, item.scope_uri) for item in asked} == {("regrapht", None), ("regrapht", ONE),
                                                                  ("regrapht", TWO)}

    # folder one now runs R009 only: its document is analysed again, the others keep theirs
    client.set_configuration({**INIT_SETTINGS, "enabledRules": ["R009"]}, section="regrapht", scope_uri=ONE)
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    await wait_until(client, lambda: codes(client, IN_ONE) == {"R009"}, 10, "folder one's R009-only diagnostics")
    assert codes(client, IN_TWO) == window - {"R007"} and codes(client, OUTSIDE) == window

    # folder two leaves the workspace: its file takes the window's settings
    client.workspace_did_change_workspace_folders(types.DidChangeWorkspaceFoldersParams(
        event=types.WorkspaceFoldersChangeEvent(added=[], removed=[types.WorkspaceFolder(uri=TWO, name="two")])))
    await wait_until(client, lambda: codes(client, IN_TWO) == window, 10, "the window's diagnostics in folder two's file")
    assert codes(client, IN_ONE) == {"R009"}

    # and comes back: its settings are pulled again
    client.workspace_did_change_workspace_folders(types.DidChangeWorkspaceFoldersParams(
        event=types.WorkspaceFoldersChangeEvent(added=[types.WorkspaceFolder(uri=TWO, name="two")], removed=[])))
    await wait_until(client, lambda: codes(client, IN_TWO) == window - {"R007"}, 10, "folder two's diagnostics again")
