"""The GPU paths of the language server, end to end over stdio (real server, real GPU, nvcc).

Driven by the raw client in lsp_client.py (the GPU host has no pytest-lsp), from plain tests:

- background validation: didSave on examples/saxpy.cu (spec beside it) publishes the V001
  slow-kernel diagnostic naming the GPU and GB/s, and the hover card shows registers,
  occupancy and the measured time;
- Optimize: `regrapht.optimizeKernel` with the "rules" strategy reports named stages and the
  best speedup, then sends a confirmed, versioned `workspace/applyEdit` titled
  "Apply N.Nx faster saxpy on <this GPU>, verified (4 seeds, odd size), <path>"; the edited file passes `regrapht check`;
- no answer is lost while a model-driven search runs in the server (`model` too): every hover sent
  during a model-driven search is answered (loading the model once redirected the JSON-RPC stream).

Skips cleanly without pycuda, a CUDA device or nvcc (the `gpu_worker` and `compiler` fixtures).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from lsp_client import LspClient, apply_text_edits, method, progress_end, published

from regrapht.spec.infer import infer_spec
from regrapht.spec.model import parse_spec
from regrapht.validate.compiler import Compiler
from regrapht.validate.profiler import find_ncu
from regrapht.validate.worker import GpuWorker

pytestmark = [pytest.mark.gpu, pytest.mark.slow]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
KERNEL = "saxpy"
# app/messages.py edit_title: speedup, GPU, what the check compared, the technique path, sanitizer, numerics
TITLE = re.compile(r"^Apply (\d+\.\d)x faster saxpy on (.+?), verified \((\d+ seeds?(?:, odd size)?)\), (\S.*?)"
                   r"(?:, sanitizer: clean|, unsanitized)?(?:; .*)?$")
# progress.py's report for a search step: "<stage>: <message> (<evaluated>/<budget>[, best N.NNx])"
STEP = re.compile(r"^(generating|compiling|checking|timing|done): .* \((\d+)/(\d+)(?:, best (\d+\.\d\d)x)?\)$")


@pytest.fixture
def gpu_name(gpu_worker: GpuWorker, compiler: Compiler) -> str:
    """The device's name; requesting it skips the test without pycuda, a device or nvcc."""
    device = gpu_worker.info()["device"]
    assert device is not None
    return str(device["name"])


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A copy of examples/saxpy.cu with its spec beside it (results are cached in the one cache dir)."""
    root = tmp_path / "workspace"
    root.mkdir()
    for name in ("saxpy.cu", "saxpy.regrapht.toml"):
        shutil.copy(EXAMPLES / name, root / name)
    return root


def position_of(text: str, needle: str) -> tuple[int, int]:
    """(line, character) of the first `needle` (ASCII files: characters are UTF-16 units)."""
    offset = text.index(needle)
    return text.count("\n", 0, offset), offset - (text.rfind("\n", 0, offset) + 1)


def kernel_name_position(text: str) -> tuple[int, int]:
    line, character = position_of(text, f"__global__ void {KERNEL}(")
    return line, character + len("__global__ void ")


def hover_text(hover: Any) -> str:
    contents = hover["contents"]
    return str(contents["value"] if isinstance(contents, dict) else contents)


def test_background_validation_publishes_slow_kernel_and_fills_the_card(
    gpu_name: str, workspace: Path, tmp_path: Path
) -> None:
    path = workspace / "saxpy.cu"
    text, uri = path.read_text(), path.as_uri()

    async def scenario() -> tuple[dict[str, Any], str]:
        with (tmp_path / "server-validation.log").open("w") as log:
            async with LspClient.spawn(cwd=workspace, stderr=log) as client:
                await client.initialize(root_uri=workspace.as_uri(),
                                        settings={"debounceMs": 0, "backgroundValidation": True})
                client.open(uri, text)
                await client.wait_for(published(uri, 1), 60)
                client.save(uri, text)

                def slow(message: dict[str, Any]) -> bool:
                    return published(uri)(message) and any(
                        d.get("code") == "V001" for d in message["params"]["diagnostics"])

                diagnostics = await client.wait_for(slow, 90)
                line, character = kernel_name_position(text)
                hover = await client.hover(uri, line, character)
                return diagnostics, hover_text(hover)

    diagnostics, card = asyncio.run(scenario())
    (v001,) = [d for d in diagnostics["params"]["diagnostics"] if d.get("code") == "V001"]
    message = v001["message"]
    assert message.startswith(f"{KERNEL} reaches "), message
    assert "memory bandwidth" in message and "GB/s" in message and gpu_name in message, message
    assert re.search(r"\d+ of \d+ GB/s measured on ", message), message
    assert v001["range"]["start"]["line"] == kernel_name_position(text)[0]
    assert "registers/thread" in card and "occupancy" in card, card
    assert re.search(r"\*\*Measured\*\*: median \d+\.\d{3} ms", card), card


def test_profiled_validation_puts_nsight_compute_in_the_card(gpu_name: str, workspace: Path, tmp_path: Path) -> None:
    """Issue 31 point 1 through the server: with `profileEnabled`, background validation also
    profiles the measured kernel with ncu and the hover card has the "Profile (Nsight Compute)"
    section (DRAM/SM % of peak, occupancy, stalls, ncu's rules). The card and the diagnostics are
    written to $REGRAPHT_GPU_HOVER_OUT (default test-artifacts/gpu-hover.json) for the VS Code e2e
    to show and capture (REGRAPHT_STUB_HOVER, tests/vscode/fixtures/optimize_stub_server.py)."""
    if find_ncu(os.environ) is None:
        pytest.skip("ncu not found")
    path = workspace / "saxpy.cu"
    text, uri = path.read_text(), path.as_uri()

    async def scenario() -> tuple[dict[str, Any], Any]:
        with (tmp_path / "server-profile.log").open("w") as log:
            async with LspClient.spawn(cwd=workspace, stderr=log) as client:
                await client.initialize(root_uri=workspace.as_uri(), settings={
                    "debounceMs": 0, "backgroundValidation": True, "profileEnabled": True})
                client.open(uri, text)
                await client.wait_for(published(uri, 1), 60)
                client.save(uri, text)
                diagnostics = await client.wait_for(lambda m: published(uri)(m) and any(
                    d.get("code") == "V001" for d in m["params"]["diagnostics"]), 180)
                line, character = kernel_name_position(text)
                return diagnostics, await client.hover(uri, line, character)

    diagnostics, hover = asyncio.run(scenario())
    card = hover_text(hover)
    out = Path(os.environ.get("REGRAPHT_GPU_HOVER_OUT", Path(__file__).resolve().parents[2] / "test-artifacts"
                              / "gpu-hover.json"))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"gpu": gpu_name, "hover": hover, "diagnostics": diagnostics["params"]["diagnostics"]},
                              indent=1))
    assert "Profile (Nsight Compute)" in card, card
    assert "Not profiled" not in card, card
    assert re.search(r"DRAM \d+(\.\d+)?% of peak, SM \d+(\.\d+)?%, achieved occupancy \d+(\.\d+)?%", card), card
    # ncu's rules read for people (tests/unit/validate/test_profile_rules_h200.py has the 2026-12-02 texts)
    profile_part = card.split("**Profile (Nsight Compute)**", 1)[1]
    assert "  " not in profile_part and "Est. " not in profile_part and "optional metric" not in profile_part, card
    assert "**Compiled with**: `none`" not in card, card
    p001 = [d for d in diagnostics["params"]["diagnostics"] if d.get("code") == "P001"]
    techniques = [d["data"]["technique"] for d in p001]
    assert len(techniques) == len(set(techniques)) and all(techniques), p001  # one per technique


def test_optimize_offers_a_confirmed_verified_edit(gpu_name: str, workspace: Path, tmp_path: Path) -> None:
    path = workspace / "saxpy.cu"
    text, uri = path.read_text(), path.as_uri()
    settings = {"debounceMs": 0, "searchStrategy": "rules", "searchBudget": 6}

    async def scenario() -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]], list[Any]]:
        with (tmp_path / "server-optimize.log").open("w") as log:
            async with LspClient.spawn(cwd=workspace, stderr=log) as client:
                await client.initialize(root_uri=workspace.as_uri(), settings=settings)
                client.open(uri, text)
                await client.wait_for(published(uri, 1), 60)
                started = await client.execute("regrapht.optimizeKernel", {"uri": uri, "kernel": KERNEL})
                assert started["started"] is True, started
                token = started["token"]
                request = await client.wait_for(method("workspace/applyEdit"), 120)
                await client.wait_for(progress_end(token), 30)
                return started, request["params"], client.progress_of(token), client.messages("window/showMessage")

    started, params, progress, shown = asyncio.run(scenario())

    # the confirmed edit: label, annotation, versioned document edit
    title = TITLE.match(params["label"])
    assert title is not None, params["label"]
    assert title.group(2) == gpu_name
    edit = params["edit"]
    (change,) = edit["documentChanges"]
    assert change["textDocument"] == {"uri": uri, "version": 1}
    assert change["edits"] and all(e.get("annotationId") for e in change["edits"])
    (annotation,) = [edit["changeAnnotations"][i] for i in {e["annotationId"] for e in change["edits"]}]
    assert annotation["needsConfirmation"] is True
    assert annotation["label"] == params["label"]
    assert not [m for m in shown if m.get("type") == 1], shown  # no error popup

    # the progress: begin, named stages with the best speedup, end with the result
    begin, *reports, end = progress
    assert begin["kind"] == "begin" and begin["cancellable"] is True and KERNEL in begin["title"]
    messages = [r.get("message") or "" for r in reports]
    assert any(m.startswith("spec saxpy.regrapht.toml") for m in messages), messages
    steps = [match for m in messages if (match := STEP.match(m))]
    assert {s.group(1) for s in steps} >= {"compiling", "timing"}, messages
    assert all(int(s.group(3)) == 6 for s in steps), messages
    best = [float(s.group(4)) for s in steps if s.group(4)]
    # the title rounds the speedup to .1f, the progress to .2f
    assert best and abs(best[-1] - float(title.group(1))) <= 0.051, (messages, params["label"])
    assert end["kind"] == "end" and end["message"] == f"{best[-1]:.2f}x faster", end

    # the edited file verifies with the CLI engine, at the launch configuration the edit wrote
    new_text = apply_text_edits(text, change["edits"])
    assert new_text != text
    candidate = tmp_path / "candidate" / "saxpy.cu"
    candidate.parent.mkdir()
    candidate.write_text(new_text)
    launch = parse_spec(infer_spec(new_text, KERNEL), file="(inferred)").kernel(KERNEL)
    command = [sys.executable, "-m", "regrapht", "check", str(path), str(candidate), "--kernel", KERNEL, "--json",
               "--grid", *[str(g) for g in launch.grid], "--block", *[str(b) for b in launch.block]]
    checked = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    report = json.loads(checked.stdout)
    assert report["verified"] is True and report["gpu"] == gpu_name, report
    assert report["speedup"] > 1.0, report


def test_the_report_has_the_runs_candidates_and_the_roofline(gpu_name: str, workspace: Path, tmp_path: Path) -> None:
    """Issue 32 point 1 on a GPU: after background validation and an Optimize run,
    `regrapht.showKernelReport {detail: true}` has every judged candidate and the roofline
    (original, verified versions, floor). The data is written to $REGRAPHT_GPU_REPORT_OUT
    (default test-artifacts/gpu-report.json) for the VS Code e2e to draw and capture
    (REGRAPHT_STUB_REPORT, tests/vscode/fixtures/optimize_stub_server.py)."""
    path = workspace / "saxpy.cu"
    text, uri = path.read_text(), path.as_uri()
    settings = {"debounceMs": 0, "backgroundValidation": True, "searchStrategy": "rules", "searchBudget": 8}

    async def scenario() -> tuple[dict[str, Any], str]:
        with (tmp_path / "server-report.log").open("w") as log:
            async with LspClient.spawn(cwd=workspace, stderr=log) as client:
                await client.initialize(root_uri=workspace.as_uri(), settings=settings)
                client.open(uri, text)
                await client.wait_for(published(uri, 1), 60)
                client.save(uri, text)
                await client.wait_for(lambda m: published(uri)(m) and any(
                    d.get("code") == "V001" for d in m["params"]["diagnostics"]), 90)
                started = await client.execute("regrapht.optimizeKernel", {"uri": uri, "kernel": KERNEL})
                request = await client.wait_for(method("workspace/applyEdit"), 180)
                await client.wait_for(progress_end(started["token"]), 60)
                await asyncio.sleep(1.0)  # the run's history is recorded after the edit's answer
                data = await client.execute("regrapht.showKernelReport", {"uri": uri, "kernel": KERNEL, "detail": True})
                return data, request["params"]["label"]

    data, label = asyncio.run(scenario())
    out = Path(os.environ.get("REGRAPHT_GPU_REPORT_OUT", Path(__file__).resolve().parents[2] / "test-artifacts"
                              / "gpu-report.json"))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1))
    title = TITLE.match(label)
    assert title is not None and title.group(2) == gpu_name and "seed" in title.group(3), label
    run = data["run"]
    assert run is not None and run["kind"] == "found" and run["gpu"] == gpu_name, run
    candidates = run["candidates"]
    assert len(candidates) == run["counters"]["generated"] > 0
    assert [c["index"] for c in candidates] == list(range(1, len(candidates) + 1))
    assert all(c["compile_s"] is not None for c in candidates if c["outcome"] != "rejected"), candidates
    verified = [c for c in candidates if c["outcome"] in ("faster", "slower")]
    assert verified and all(c["time_ms"] and c["check_s"] is not None and c["time_s"] is not None for c in verified)
    assert "seed" in run["best"]["checked"], run["best"]
    roof = data["roofline"]
    assert roof is not None and roof["peak_gbps"] and roof["floor_ms"], roof
    kinds = [p["kind"] for p in roof["points"]]
    assert kinds[0] == "original" and kinds[-1] == "floor" and kinds.count("verified") == len(verified), kinds
    assert data["resources"]["registers"] and data["timing"]["median_ms"] > 0, data


@pytest.fixture
def model_file() -> Path:
    """The GGUF the server will use ($REGRAPHT_MODEL, else the embedded one); skips without."""
    import importlib.util

    from regrapht.errors import InputError
    from regrapht.model.locate import locate_model

    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python not installed")
    try:
        return locate_model()
    except InputError as error:
        pytest.skip(str(error))


@pytest.mark.model
def test_no_answer_is_lost_while_a_model_search_runs(gpu_name: str, model_file: Path, workspace: Path,
                                                       tmp_path: Path) -> None:
    path = workspace / "saxpy.cu"
    text, uri = path.read_text(), path.as_uri()
    # cot: the model from the first step (mcgs may spend a small budget on appliers alone)
    settings = {"debounceMs": 0, "searchStrategy": "cot", "searchBudget": 4, "modelPath": str(model_file),
                "modelThreads": 4}
    line, character = kernel_name_position(text)

    async def scenario() -> tuple[int, list[dict[str, Any]]]:
        with (tmp_path / "server-model-search.log").open("w") as log:
            async with LspClient.spawn(cwd=workspace, stderr=log) as client:
                client.apply_edits = False
                await client.initialize(root_uri=workspace.as_uri(), settings=settings)
                client.open(uri, text)
                await client.wait_for(published(uri, 1), 60)
                started = await client.execute("regrapht.optimizeKernel", {"uri": uri, "kernel": KERNEL})
                token = started["token"]
                ended = client.next_matching(progress_end(token))
                answered = 0
                while not ended.done():
                    # a lost response shows as a timeout here, not as a slow answer
                    assert await client.hover(uri, line, character, timeout=20) is not None
                    answered += 1
                    await asyncio.sleep(0.02)
                return answered, client.progress_of(token)

    answered, progress = asyncio.run(scenario())
    assert answered >= 5, answered  # hovers really fell inside the search
    messages = [r.get("message") or "" for r in progress]
    assert any(m.startswith("generating") for m in messages), messages  # the model ran meanwhile


# saxpy made slower without changing its results: 32 scattered reads whose products with 0.0f
# add +0.0 (x is finite), which nvcc may not fold away without fast math
SLOWER = "        float s = 0.0f;\n        for (int r = 0; r < 32; ++r) s += x[(i + r * 4099) % n] * 0.0f;\n" \
         "        y[i] = a * x[i] + y[i] * 1.0 + s;\n"


def test_a_slower_kernel_after_a_save_is_a_regression_with_its_faster_version(
    gpu_name: str, workspace: Path, tmp_path: Path
) -> None:
    path = workspace / "saxpy.cu"
    text, uri = path.read_text(), path.as_uri()
    slower = text.replace("        y[i] = a * x[i] + y[i] * 1.0;\n", SLOWER)
    assert slower != text

    async def scenario() -> tuple[dict[str, Any], list[Any], Any]:
        with (tmp_path / "server-regression.log").open("w") as log:
            async with LspClient.spawn(cwd=workspace, stderr=log) as client:
                await client.initialize(root_uri=workspace.as_uri(),
                                        settings={"debounceMs": 0, "backgroundValidation": True})
                client.open(uri, text)
                await client.wait_for(published(uri, 1), 60)
                first = await client.execute("regrapht.validateKernel", {"uri": uri, "kernel": KERNEL}, timeout=120)
                assert first.get("kernels") and first["kernels"][0]["time_ms"], first
                path.write_text(slower)
                client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                                         "contentChanges": [{"text": slower}]})
                client.save(uri, slower)

                def regressed(message: dict[str, Any]) -> bool:
                    return published(uri)(message) and any(
                        d.get("code") == "V003" for d in message["params"]["diagnostics"])

                diagnostics = await client.wait_for(regressed, 120)
                # the cursor on the kernel's name, where V003 is (the lightbulb asks for its range)
                line, character = kernel_name_position(slower)
                actions = await client.request("textDocument/codeAction", {
                    "textDocument": {"uri": uri}, "range": {"start": {"line": line, "character": character},
                                                            "end": {"line": line, "character": character + 1}},
                    "context": {"diagnostics": []}})
                shows = [a for a in actions if a["title"] == f"Show the faster version of {KERNEL}"]
                assert shows, [a["title"] for a in actions]
                show = shows[0]
                shown = await client.execute(show["command"]["command"], *show["command"]["arguments"])
                return diagnostics, actions, shown

    diagnostics, _actions, shown = asyncio.run(scenario())
    (v002,) = [d for d in diagnostics["params"]["diagnostics"] if d.get("code") == "V003"]
    assert re.match(rf"{KERNEL} is \d+\.\dx slower than at \d\d:\d\d: [\d.e-]+ -> [\d.e-]+ ms", v002["message"]), v002
    assert v002["severity"] == 2  # a warning
    assert Path(shown["path"]).read_text() == text and shown["gpu"] == gpu_name
