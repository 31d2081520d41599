"""Hostile sources against the real nvcc: none may read the server's stdin, run away with time,
memory or disk, or leave a process or a temporary file behind (issue 13, item 1).

Each test points Python's temporary directory at its own `tmp_path`, so every private TMPDIR a
child gets lies there: afterwards that folder must be empty (no `tmpxft*`, no `regrapht-*`) and
no live process may still have it in its environment (a killed nvcc's orphaned cc1plus would).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from regrapht.children import Child, ToolLimits, group_anon_rss_bytes, run_tool
from regrapht.validate.compiler import Compiler, find_demangler, find_nvcc

SERVER = Path(__file__).resolve().parents[2] / "server"
needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")
KERNEL = "__global__ void k(int* out) { out[threadIdx.x] = 1; }\n"


@pytest.fixture
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


def processes_using(folder: Path) -> list[str]:
    """Live processes whose environment mentions `folder` (their TMPDIR lies under it)."""
    needle = str(folder).encode()
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if needle in Path(entry.path, "environ").read_bytes():
                found.append(f"{entry.name} {Path(entry.path, 'comm').read_text().strip()}")
        except OSError:
            continue
    return found


def assert_nothing_left(folder: Path) -> None:
    assert processes_using(folder) == []
    assert sorted(p.name for p in folder.iterdir()) == []


def compiler(timeout_s: float = 120.0) -> Compiler:
    nvcc = find_nvcc(os.environ)
    assert nvcc is not None
    return Compiler(nvcc, demangler=find_demangler(nvcc, os.environ), timeout_s=timeout_s)


# -- the helper itself (no nvcc needed) ---------------------------------------------------------

def test_tool_gets_devnull_stdin_private_tmpdir_and_its_group_is_killed(private_tmp: Path) -> None:
    script = textwrap.dedent("""
        import os, subprocess, sys, tempfile, time
        print(repr(sys.stdin.read()), tempfile.gettempdir(), os.getpgrp() == os.getpid(), flush=True)
        open(os.path.join(tempfile.gettempdir(), "tmpxft_left"), "w").close()
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])  # a grandchild
        time.sleep(300)
    """)
    started = time.monotonic()
    done = run_tool([sys.executable, "-c", script], ToolLimits(timeout_s=8))  # slack for a loaded machine
    assert time.monotonic() - started < 20
    assert done.timed_out
    text, tmpdir, leader = done.stdout.split()
    assert text == "''"  # /dev/null, not the test runner's stdin
    assert Path(tmpdir).parent == private_tmp and leader == "True"
    assert_nothing_left(private_tmp)


def test_memory_limit_is_set_in_the_tool(private_tmp: Path) -> None:
    done = run_tool([sys.executable, "-c", "b = bytearray(1 << 30)"], ToolLimits(timeout_s=60, memory_bytes=256 << 20))
    assert done.returncode != 0 and "MemoryError" in done.stderr
    assert_nothing_left(private_tmp)


def test_file_size_limit_is_set_in_the_tool(private_tmp: Path) -> None:
    script = "import tempfile,os\nwith open(os.path.join(tempfile.gettempdir(), 'big'), 'wb') as f: f.write(bytes(4 << 20))"
    done = run_tool([sys.executable, "-c", script], ToolLimits(timeout_s=60, file_bytes=1 << 20))
    assert done.returncode != 0
    assert_nothing_left(private_tmp)


def test_worker_child_memory_is_measured_over_its_group(private_tmp: Path) -> None:
    child = Child([sys.executable, "-c", "import sys; b = bytearray(200 << 20); b[::4096] = b'x' * len(b[::4096]); "
                   "print(1, flush=True); sys.stdin.read()"], pipe_stdin=True)
    try:
        assert child.process.stdout is not None and child.process.stdout.readline() == b"1\n"
        assert group_anon_rss_bytes(child.pid) > 150 << 20
    finally:
        child.end()
    assert_nothing_left(private_tmp)


def test_gpu_worker_over_its_memory_limit_is_stopped_and_restarted(private_tmp: Path) -> None:
    from regrapht.validate.worker import GpuWorker, WorkerFailure

    balloon = ("import sys, time; b = bytearray(400 << 20); b[::4096] = b'x' * len(b[::4096]); "
               "sys.stdin.buffer.read(1); time.sleep(60)")
    worker = GpuWorker([sys.executable, "-c", balloon])
    worker.memory_bytes = 200 << 20
    try:
        started = time.monotonic()
        reply = worker.call({"op": "hello"}, timeout_s=30)
        assert time.monotonic() - started < 20
        assert isinstance(reply, WorkerFailure) and reply.kind == "crashed"
        assert reply.reason == "the GPU worker used more than 200 MiB of host memory; it was stopped"
        assert worker.pid is None
    finally:
        worker.close()
    assert_nothing_left(private_tmp)


def test_demangler_input_larger_than_a_pipe_does_not_block(private_tmp: Path) -> None:
    names = [f"_Z{len(n)}{n}v" for n in (f"kernel_number_{i:06d}" for i in range(20000))]
    done = run_tool(["cat"], ToolLimits(timeout_s=60), input_text="\n".join(names) + "\n")
    assert done.stdout.splitlines() == names
    assert_nothing_left(private_tmp)


# -- hostile sources, real nvcc ---------------------------------------------------------------

@needs_nvcc
def test_include_dev_stdin_never_reads_the_servers_stdin(tmp_path: Path) -> None:
    """The compile runs in a child Python whose stdin is a pipe this test holds open; before
    the fix nvcc inherited it and read the 'client messages' (or waited on them forever)."""
    work = tmp_path / "tmp"
    work.mkdir()
    script = textwrap.dedent(f"""
        import os, sys, tempfile
        tempfile.tempdir = {str(work)!r}
        from regrapht.validate.compiler import Compiler, find_nvcc
        compiler = Compiler(find_nvcc(os.environ), timeout_s=60)
        via_macro = '#define STDIN "/dev/stdin"\\n#include STDIN\\n' + {KERNEL!r}
        literal = '#include "/dev/stdin"\\n' + {KERNEL!r}
        for source in (via_macro, literal):
            result = compiler.compile(source, file="/work/evil.cu")
            print(result.ok, result.first_error() if not result.ok else "", flush=True)
        print("STDIN:" + sys.stdin.read(), flush=True)
    """)
    env = {**os.environ, "PYTHONPATH": str(SERVER)}
    with subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, env=env, text=True) as child:
        assert child.stdin is not None
        message = 'Content-Length: 30\r\n\r\n{"jsonrpc":"2.0","method":"x"}'
        child.stdin.write("int leaked = 1;\n" + message)
        child.stdin.flush()
        try:
            # the pipe stays open until the compiles are done: a compiler reading it would block
            out, err = _finish(child)
        finally:
            child.kill()
    lines = out.splitlines()
    assert lines[0] == "True ", err  # the include was /dev/null: empty, nothing read
    assert lines[1].startswith("False /work/evil.cu:1: error: #include of '/dev/stdin' refused")
    assert lines[2] == "STDIN:int leaked = 1;" and message.splitlines()[-1] in out
    assert_nothing_left(work)


def _finish(child: subprocess.Popen[str]) -> tuple[str, str]:
    """Wait for the two compile lines with the stdin pipe still open, then close it."""
    assert child.stdout is not None and child.stdin is not None
    deadline = time.monotonic() + 120
    lines = []
    while len(lines) < 2 and time.monotonic() < deadline:
        line = child.stdout.readline()
        if not line:
            break
        lines.append(line)
    child.stdin.close()
    assert child.stderr is not None
    rest, err = child.stdout.read(), child.stderr.read()
    child.wait(timeout=60)
    return "".join(lines) + rest, err


@needs_nvcc
def test_include_dev_zero_ends_at_the_memory_limit(private_tmp: Path) -> None:
    source = '#define ZERO "/dev/zero"\n#include ZERO\n' + KERNEL
    started = time.monotonic()
    result = compiler().compile(source, file="/work/zero.cu")
    assert time.monotonic() - started < 60
    assert not result.ok
    assert result.first_error().startswith("/work/zero.cu: error: ")
    assert "resource limits" in result.first_error() and "2 GiB of memory" in result.first_error()
    assert_nothing_left(private_tmp)


@needs_nvcc
def test_literal_include_of_a_device_file_is_refused_with_its_line(private_tmp: Path) -> None:
    result = compiler().compile(KERNEL + '#include </dev/zero>\n', file="/work/zero.cu")
    assert not result.ok
    assert result.first_error() == ("/work/zero.cu:2: error: #include of '/dev/zero' refused: device and "
                                    "process files are never compiled")
    assert_nothing_left(private_tmp)


MACRO_BOMB = "".join(
    ["#define A0 x x\n"]
    + [f"#define A{i} A{i - 1} A{i - 1} A{i - 1} A{i - 1}\n" for i in range(1, 16)]
    + ["int y = A15;\n", KERNEL]
)


@needs_nvcc
def test_macro_bomb_is_stopped_whole_at_the_timeout(private_tmp: Path) -> None:
    started = time.monotonic()
    result = compiler(timeout_s=8).compile(MACRO_BOMB, file="/work/bomb.cu")
    assert time.monotonic() - started < 30
    assert not result.ok
    assert result.first_error() == ("/work/bomb.cu: error: nvcc did not finish within 8 s; it and every "
                                    "process it started were stopped")
    assert_nothing_left(private_tmp)  # cc1plus (nvcc's child) too


@needs_nvcc
def test_template_recursion_is_a_clear_error(private_tmp: Path) -> None:
    source = "template <int N> struct R { static const int v = R<N + 1>::v + 1; };\n" \
             "__global__ void k(int* o) { o[0] = R<0>::v; }\n"
    started = time.monotonic()
    result = compiler().compile(source, file="/work/templ.cu")
    assert time.monotonic() - started < 60
    assert not result.ok
    assert result.first_error().startswith("/work/templ.cu:1: error: excessive recursion")
    assert_nothing_left(private_tmp)
