"""Language server latency on large files (a script, not a test).

Generates two .cu files: a 5,000-line file with 100 kernels ("100 kernels") and a ~450 KB file
with 5,000 small kernels and one host function launching them all ("5,000 kernels": hover and
code actions must not cost more with the number of kernels beyond the one asked about). For
each, it starts the real server over stdio (`python -m regrapht serve`) and measures with a raw
JSON-RPC client (timestamps taken when a message's bytes arrive):

- time to ready: process start -> initialize response; initialize sent (right after the process
  started, as editors do) -> `regrapht/status` "ready"; and initialize response -> ready (the
  server's own part: settings pulled, features ready);
- diagnostics after a change: an incremental didChange inside a kernel -> publishDiagnostics for
  that version (with `debounceMs: 0`, so this is the analysis + publication latency; editors
  add the debounce on top);
- hover on a kernel name and code action on a fixable diagnostic (document already analysed);
- hover right after an edit (no target: it includes the re-analysis of the edited file).

Start-up is one sample per file; `--startups N` also starts the server N more times, one after
the other, with no file (spawn, initialize, ready, shutdown), for a p50/p95 of start-up alone.
The figures are those of an installed server: `pip install` compiles the package's bytecode
(`__pycache__/*.pyc`), which an editable checkout lacks until a first import writes it (and never
under PYTHONDONTWRITEBYTECODE=1, where each start would compile every module it imports), so the
`regrapht` package this interpreter imports is compiled first; then the server is started once,
uncounted (files read into the OS cache, as for any server started before).
Each report records the load average at its start: on a shared machine, read figures with it.
Start-up also records the server process's CPU time (user + system, from /proc/<pid>/stat, in
clock ticks of 10 ms) when "ready" arrives: on a loaded machine the wall-clock figures grow with
the other processes' share of the cores, the CPU time much less (it is what an idle machine's
wall clock is bounded by, less the waits for the client).

Targets: diagnostics <= 50 ms after a change (100 kernels), hover and code action <= 20 ms p95
(both files), ready <= 1 s.

    python bench/lsp_latency.py [--iterations 100] [--files 100,5000] [--startups 10]
                                [--markdown bench/results/lsp-latency-DATE.md]
"""

from __future__ import annotations

import argparse
import asyncio
import compileall
import importlib.util
import os
import random
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

# The raw JSON-RPC client is shared with the GPU LSP tests (tests/gpu/lsp_client.py); that
# folder is not a package, so it is put on the path for this script.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "gpu"))

import lsp_client  # noqa: E402
from lsp_client import LspClient, Received, percentile  # noqa: E402

URI = "file:///bench/big.cu"
TARGETS_MS = {"diagnostics after change": 50.0, "hover": 20.0, "code action": 20.0, "ready after initialize": 1000.0}
# The file of 5,000 kernels: what must not grow with the number of kernels (a change re-publishes
# every diagnostic of the file, so diagnostics latency has no target there).
MANY_TARGETS_MS = {"hover": 20.0, "code action": 20.0}


def kernel_source(index: int) -> list[str]:
    """About 45 lines: a kernel with a few typical findings (double literal, read-only pointers,
    a strided access, a one-element-per-thread body)."""
    lines = [
        f"// kernel {index}: scaled strided accumulate",
        f"__global__ void kernel_{index}(int n, int stride, float alpha, float *in, float *out, float *aux)",
        "{",
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;",
        "    if (i >= n) {",
        "        return;",
        "    }",
        "    float acc = 0.0f;",
        "    float base = in[i * stride];",
    ]
    for step in range(8):
        lines += [
            f"    // step {step}: polynomial term {step}",
            f"    float t{step} = base * {step + 1}.0f + acc;",
            f"    acc = t{step} * alpha + {step}.25f;",
            f"    acc = acc > {step * 10}.0f ? acc - {step}.5f : acc;",
        ]
    lines += [
        "    acc += aux[i] * 0.5;",
        "    out[i] = acc;",
        "}",
        "",
    ]
    return lines


def small_kernel_source(index: int) -> list[str]:
    """Two lines, about 90 bytes: a guarded scale with a double literal (a fixable finding)."""
    return [
        f"__global__ void kernel_{index}(float *x, int n)",
        "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = x[i] * 0.5; }",
    ]


def generate_many(kernels: int = 5000) -> str:
    """`kernels` small kernels and one host function launching each of them."""
    lines = ["// Generated by bench/lsp_latency.py: many small kernels", "#include <cuda_runtime.h>", ""]
    for index in range(kernels):
        lines += small_kernel_source(index)
    lines += ["void launch_all(int n, float *d_x)", "{"]
    lines += [f"    kernel_{index}<<<(n + 255) / 256, 256>>>(d_x, n);" for index in range(kernels)]
    lines.append("}")
    return "\n".join(lines) + "\n"


def generate(kernels: int = 100, target_lines: int = 5000) -> str:
    lines = ["// Generated by bench/lsp_latency.py", "#include <cuda_runtime.h>", ""]
    for index in range(kernels):
        lines += kernel_source(index)
    lines += ["void launch_all(int n, float *d_in, float *d_out, float *d_aux)", "{"]
    for index in range(kernels):
        lines.append(f"    kernel_{index}<<<(n + 127) / 128, 128>>>(n, 1 + {index % 4}, 2.0f, d_in, d_out, d_aux);")
    lines.append("}")
    while len(lines) < target_lines:
        lines.append(f"// padding {len(lines)}")
    return "\n".join(lines) + "\n"


def unpack(received: Received) -> tuple[dict[str, Any], float]:
    return received.message, received.arrived


def published(version: int) -> Any:
    return lsp_client.published(URI, version)


async def run_bench(server_command: list[str], iterations: int, text: str) -> dict[str, Any]:
    spawn = time.perf_counter()
    async with LspClient.spawn(server_command, stderr=None, settings={"debounceMs": 0}) as client:
        return await measure(client, spawn, iterations, text)


def compile_server_package() -> None:
    """The bytecode of the `regrapht` package, as `pip install` compiles it."""
    spec = importlib.util.find_spec("regrapht")
    if spec is not None and spec.origin is not None:
        compileall.compile_dir(Path(spec.origin).parent, quiet=1)


async def prime(server_command: list[str]) -> None:
    """One start-up, not counted."""
    async with LspClient.spawn(server_command, stderr=None, settings={"debounceMs": 0}) as client:
        await start_up(client, time.perf_counter())


async def run_startups(server_command: list[str], count: int) -> dict[str, Any]:
    """`count` server processes, one after the other: only their start-up is measured."""
    results: dict[str, Any] = {}
    for _ in range(count):
        spawn = time.perf_counter()
        async with LspClient.spawn(server_command, stderr=None, settings={"debounceMs": 0}) as client:
            for name, values in (await start_up(client, spawn)).items():
                results.setdefault(name, []).extend(values)
    return results


async def start_up(client: LspClient, spawn: float) -> dict[str, Any]:
    """initialize (sent right after the process started, as editors do) -> initialized -> ready."""
    ready = client.next_matching(lsp_client.status("ready"))
    sent = time.perf_counter()
    capabilities = {
        "general": {"positionEncodings": ["utf-16"]},
        "workspace": {"configuration": True},
        "textDocument": {"hover": {"contentFormat": ["markdown"]}},
    }
    _, initialized = await client.request_timed(
        "initialize",
        {"processId": None, "rootUri": None, "capabilities": capabilities,
         "initializationOptions": {"settings": {"debounceMs": 0}}},
    )
    client.notify("initialized", {})
    ready_at = (await asyncio.wait_for(ready, 30)).arrived
    cpu_ms = process_cpu_ms(client.process.pid)
    return {
        "spawn to initialize response": [(initialized - spawn) * 1000],
        "ready after initialize": [(ready_at - sent) * 1000],
        "initialize response to ready": [(ready_at - initialized) * 1000],
        **({"server CPU time at ready": [cpu_ms]} if cpu_ms is not None else {}),
    }


def process_cpu_ms(pid: int) -> float | None:
    """User + system CPU time of a running process so far (Linux); None where /proc lacks it."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()  # after the command name, which may hold spaces
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")  # utime, stime


async def measure(client: LspClient, spawn: float, iterations: int, text: str) -> dict[str, Any]:
    results = await start_up(client, spawn)
    lines = text.split("\n")
    first = client.next_matching(published(1))
    opened = time.perf_counter()
    client.notify(
        "textDocument/didOpen", {"textDocument": {"uri": URI, "languageId": "cuda", "version": 1, "text": text}}
    )
    latest, arrived = unpack(await asyncio.wait_for(first, 600))
    results["first diagnostics after open"] = [(arrived - opened) * 1000]

    kernel_lines = [n for n, line in enumerate(lines) if line.startswith("__global__ void kernel_")]
    rng = random.Random(7)
    # Where a space goes in and out: before `int i = ...` (the kernel's 4th line, or in the
    # one-line body `{ int i = ...` of the small kernels)
    body_row, body_column = (3, 4) if lines[kernel_lines[0] + 1] == "{" else (1, 1)

    # diagnostics after a change: insert, then delete, a space inside a random kernel body
    change_ms = []
    for iteration in range(iterations):
        line = rng.choice(kernel_lines) + body_row
        version = iteration + 2
        end = body_column if iteration % 2 == 0 else body_column + 1
        change = {
            "range": {"start": {"line": line, "character": body_column}, "end": {"line": line, "character": end}},
            "text": " " if iteration % 2 == 0 else "",
        }
        waiter = client.next_matching(published(version))
        start = time.perf_counter()
        client.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": URI, "version": version}, "contentChanges": [change]},
        )
        latest, arrived = unpack(await asyncio.wait_for(waiter, 120))
        change_ms.append((arrived - start) * 1000)
        await asyncio.sleep(0.01)  # an editor does not send the next keystroke within 0 ms either
    results["diagnostics after change"] = change_ms

    hover_ms = []
    for _ in range(iterations):
        line = rng.choice(kernel_lines)
        start = time.perf_counter()
        hover, arrived = await client.request_timed(
            "textDocument/hover", {"textDocument": {"uri": URI}, "position": {"line": line, "character": 18}}
        )
        hover_ms.append((arrived - start) * 1000)
        assert hover is not None, f"no hover at line {line}"
    results["hover"] = hover_ms

    # hover right after an edit: waits for the analysis of the new version
    after_edit_ms = []
    version = iterations + 2
    for _ in range(max(iterations // 5, 5)):
        line = rng.choice(kernel_lines)
        version += 1
        change = {"range": {"start": {"line": line + 1, "character": 0}, "end": {"line": line + 1, "character": 0}},
                  "text": " "}
        waiter = client.next_matching(published(version))
        client.notify("textDocument/didChange",
                      {"textDocument": {"uri": URI, "version": version}, "contentChanges": [change]})
        start = time.perf_counter()
        hover, arrived = await client.request_timed(
            "textDocument/hover", {"textDocument": {"uri": URI}, "position": {"line": line, "character": 18}}
        )
        after_edit_ms.append((arrived - start) * 1000)
        assert hover is not None, f"no hover at line {line} after an edit"
        latest, _ = unpack(await asyncio.wait_for(waiter, 120))
    results["hover right after an edit"] = after_edit_ms

    diagnostics = latest["params"]["diagnostics"]
    fixable = [d for d in diagnostics if d.get("data", {}).get("fixes")]
    assert fixable, "no fixable diagnostics in the generated file"
    action_ms = []
    for _ in range(iterations):
        diagnostic = rng.choice(fixable)
        start = time.perf_counter()
        actions, arrived = await client.request_timed(
            "textDocument/codeAction",
            {"textDocument": {"uri": URI}, "range": diagnostic["range"], "context": {"diagnostics": [diagnostic]}},
        )
        action_ms.append((arrived - start) * 1000)
        assert actions, "no code action for a fixable diagnostic"
    results["code action"] = action_ms
    results["_diagnostics"] = len(diagnostics)

    return results


def git_commit() -> str:
    completed = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False,
        cwd=Path(__file__).resolve().parent,
    )
    return completed.stdout.strip() or "unknown"


def report(results: dict[str, Any], iterations: int, machine: str, text: str | None, label: str,
           targets: dict[str, float], load: tuple[float, float, float]) -> str:
    date = time.strftime("%Y-%m-%d")
    if text is None:
        about = [f"- file: none; {iterations} server start-ups, one after the other (spawn, initialize, ready, shutdown), "
                 "after compiling the package's bytecode (as pip install does) and one uncounted start-up"]
    else:
        about = [f"- file: generated, {text.count(chr(10))} lines, {len(text) // 1024} KB, {label}, "
                 f"{results.get('_diagnostics', '?')} diagnostics",
                 f"- iterations: {iterations} per measurement; debounceMs 0 (analysis + publication latency)"]
    rows = [
        "| measurement | n | p50 ms | p95 ms | max ms | target | met |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, values in results.items():
        if name.startswith("_"):
            continue
        target = targets.get(name)
        p95 = percentile(values, 0.95)
        met = "" if target is None else ("yes" if p95 <= target else "NO")
        rows.append(
            f"| {name} | {len(values)} | {statistics.median(values):.1f} | {p95:.1f} | {max(values):.1f} "
            f"| {'' if target is None else f'<= {target:.0f} ms (p95)'} | {met} |"
        )
    return "\n".join(
        [
            f"# LSP latency, {label}, {date}",
            "",
            f"- machine: {machine}",
            f"- commit: {git_commit()}",
            f"- python: {sys.version.split()[0]}",
            f"- load average (1, 5, 15 min) at the start: {load[0]:.2f}, {load[1]:.2f}, {load[2]:.2f}",
            *about,
            f"- command: `{shlex.join(['python', 'bench/lsp_latency.py', *sys.argv[1:]])}`",
            "",
            *rows,
            "",
        ]
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=100)
    parser.add_argument("--machine", default="2-core Debian 12 VM")
    parser.add_argument("--markdown", type=Path, help="also write the report to this file")
    parser.add_argument(
        "--server", nargs="+", default=[sys.executable, "-m", "regrapht", "serve"],
        help="the server command (default: python -m regrapht serve)",
    )
    parser.add_argument("--files", default="100,5000",
                        help="which files: 100 (100 kernels, 5,000 lines) and/or 5000 (5,000 small kernels); "
                             "empty with --startups: start-up only")
    parser.add_argument("--startups", type=int, default=0, metavar="N",
                        help="also measure N start-ups alone (a server process each, no file)")
    args = parser.parse_args()
    reports = []
    failed = []
    compile_server_package()
    asyncio.run(prime(args.server))
    if args.startups > 0:
        load = os.getloadavg()
        startup_targets = {"ready after initialize": TARGETS_MS["ready after initialize"]}
        results = asyncio.run(run_startups(args.server, args.startups))
        reports.append(report(results, args.startups, args.machine, None, "start-up", startup_targets, load))
        print(reports[-1], flush=True)
        failed += [f"start-up: {name}" for name, target in startup_targets.items()
                   if percentile(results[name], 0.95) > target]
    for which in [name.strip() for name in args.files.split(",") if name.strip()]:
        if which == "100":
            text, label, targets = generate(), "100 kernels", TARGETS_MS
        elif which == "5000":
            text, label, targets = generate_many(), "5,000 kernels", MANY_TARGETS_MS
        else:
            parser.error(f"--files: unknown file {which!r} (100 or 5000)")
        load = os.getloadavg()
        results = asyncio.run(run_bench(args.server, args.iterations, text))
        reports.append(report(results, args.iterations, args.machine, text, label, targets, load))
        print(reports[-1], flush=True)
        failed += [f"{label}: {name}" for name, target in targets.items()
                   if name in results and percentile(results[name], 0.95) > target]
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text("\n".join(reports))
    for name in failed:
        print(f"target missed: {name}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
