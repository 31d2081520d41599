"""Every child process ReGraphT starts (nvcc, ptxas, cu++filt, the GPU and model workers).

Owns how a child is started and ended, so that no child can reach the server's JSON-RPC
stream, outlive a timeout, eat the machine's memory or litter /tmp:
- stdin is /dev/null unless the caller talks to the child over a pipe; a child never inherits
  the server's stdin (`#include "/dev/stdin"` in a candidate would read the client's messages);
- the child leads its own process group (its own session), and the whole group is killed on a
  timeout or when the caller is done, so grandchildren (nvcc's cc1plus, cicc, ptxas) go too;
- a memory limit: `RLIMIT_AS` and `RLIMIT_FSIZE`, set in the child by a tiny trampoline before
  it execs the tool (never `preexec_fn`, which can deadlock a threaded server), for one-shot
  tools; CUDA reserves terabytes of address space, so the long-lived workers get an anonymous
  memory watchdog instead (`anon_rss_bytes`, checked by the parent while it waits);
- a private temporary directory (TMPDIR, TMP, TEMP) removed with everything in it afterwards
  (nvcc's `tmpxft*` files land there, never in /tmp).
`run_tool` runs a one-shot tool to completion; `Child` + `FrameChannel` are a long-lived worker
and its framed msgpack conversation (4-byte big-endian length, then one map), read with a
deadline and the memory watchdog.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import msgpack

GIB = 1 << 30
# One-shot tools: well above a real compile (cc1plus with the CUB headers, cicc and ptxas each
# stay under 0.5 GiB of address space), far below what a macro bomb or `#include "/dev/zero"`
# wants (the limit applies to each process of the tool separately).
TOOL_MEMORY_BYTES = 2 * GIB
TOOL_FILE_BYTES = 1 * GIB  # the largest file a tool may write (preprocessed output of a bomb)
TOOL_OUTPUT_BYTES = 8 << 20  # stdout/stderr kept per stream; the rest is dropped, not buffered


def _half_of_physical_memory() -> int:
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        total = 32 * GIB
    return max(4 * GIB, total // 2)


# Long-lived workers: anonymous (non-file) resident memory of the whole group, checked by the
# parent; half the machine leaves the editor and the rest of the desktop alive.
WORKER_MEMORY_BYTES = _half_of_physical_memory()
MEMORY_CHECK_EVERY_S = 1.0  # a /proc scan per check: cheap, but not on every poll

_TRAMPOLINE = (
    "import os,resource,sys\n"
    "for name,value in (('RLIMIT_AS',int(sys.argv[1])),('RLIMIT_FSIZE',int(sys.argv[2]))):\n"
    "    if value>0:\n"
    "        resource.setrlimit(getattr(resource,name),(value,value))\n"
    "os.execvp(sys.argv[3],sys.argv[3:])\n"
)


@dataclass(frozen=True)
class ToolLimits:
    """What one run of a tool may use; 0 means unlimited for that resource."""

    timeout_s: float
    memory_bytes: int = TOOL_MEMORY_BYTES
    file_bytes: int = TOOL_FILE_BYTES
    output_bytes: int = TOOL_OUTPUT_BYTES

    def describe(self) -> str:
        parts = [f"{self.timeout_s:.0f} s"]
        if self.memory_bytes:
            parts.append(f"{size_text(self.memory_bytes)} of memory")
        if self.file_bytes:
            parts.append(f"{size_text(self.file_bytes)} per file written")
        return ", ".join(parts)


@dataclass(frozen=True)
class ToolRun:
    """How a one-shot tool ended. `signal` is set when the tool itself was killed by one."""

    returncode: int
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool = False
    truncated: bool = False  # output beyond `ToolLimits.output_bytes` was dropped

    @property
    def signal(self) -> int | None:
        return -self.returncode if self.returncode < 0 and not self.timed_out else None

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def size_text(count: int) -> str:
    """A byte count as people read it: '2 GiB', '200 MiB'."""
    return f"{count / GIB:g} GiB" if count >= GIB else f"{count >> 20} MiB"


def private_environment(base: Mapping[str, str], tmpdir: Path) -> dict[str, str]:
    """`base` with every temporary-directory variable pointing at `tmpdir`."""
    env = dict(base)
    for name in ("TMPDIR", "TMP", "TEMP"):
        env[name] = str(tmpdir)
    return env


def python_module_env(base: Mapping[str, str]) -> dict[str, str]:
    """`base` with this package importable, for a child run as `python -m regrapht....`."""
    env = dict(base)
    server_dir = str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = server_dir + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def limited_command(command: Sequence[str], memory_bytes: int, file_bytes: int) -> list[str]:
    """`command` run through the rlimit trampoline (unchanged when no limit is asked for)."""
    if not memory_bytes and not file_bytes:
        return list(command)
    return [sys.executable, "-I", "-S", "-c", _TRAMPOLINE, str(memory_bytes), str(file_bytes), *command]


class Child:
    """One started child: its own process group and private TMPDIR; `end()` removes both."""

    def __init__(
        self,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        pipe_stdin: bool = False,
        memory_bytes: int = 0,
        file_bytes: int = 0,
        tmp_prefix: str = "regrapht-",
    ) -> None:
        self.tmpdir = Path(tempfile.mkdtemp(prefix=tmp_prefix))
        try:
            self.process: subprocess.Popen[bytes] = subprocess.Popen(
                limited_command(command, memory_bytes, file_bytes),
                stdin=subprocess.PIPE if pipe_stdin else subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                env=private_environment(os.environ if env is None else env, self.tmpdir),
                cwd=cwd, start_new_session=True, close_fds=True,
            )
        except BaseException:
            shutil.rmtree(self.tmpdir, ignore_errors=True)
            raise
        self.pid = self.process.pid

    def kill_group(self) -> None:
        """SIGKILL every process of the child's group (the child and whatever it started).

        While the child is unreaped its pid, and so the group id, cannot be reused; once Popen
        has reaped it, the group is killed only if /proc still shows members of it."""
        if self.process.returncode is not None and not group_members(self.pid):
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)

    def wait_unreaped(self, timeout_s: float) -> bool:
        """Wait until the child has exited, leaving it unreaped (so `kill_group` stays exact)."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                if os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                    return True
            except ChildProcessError:  # already reaped
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)

    def end(self, wait_s: float = 10.0, *, close_stderr: bool = True) -> int | None:
        """Kill the group, reap the child, close its pipes, remove its TMPDIR; its exit code.

        `close_stderr=False` leaves stderr to a thread draining it (it sees EOF and closes it)."""
        self.kill_group()
        code: int | None = None
        with contextlib.suppress(subprocess.TimeoutExpired):
            code = self.process.wait(timeout=wait_s)
        # SIGKILL is delivered asynchronously: a grandchild can still be running for a moment
        # after the child has been reaped. Wait (bounded) until none of the group is alive, so
        # that nothing the child started outlives `end()` (seen on a fresh CI clone).
        deadline = time.monotonic() + wait_s
        while group_members(self.pid) and time.monotonic() < deadline:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGKILL)
            time.sleep(0.01)
        streams = (self.process.stdin, self.process.stdout, self.process.stderr if close_stderr else None)
        for stream in streams:
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        shutil.rmtree(self.tmpdir, ignore_errors=True)
        return code

    def anon_rss_bytes(self) -> int:
        """Anonymous resident memory of the child's whole process group (0 when gone)."""
        return group_anon_rss_bytes(self.pid)


def group_members(pgid: int) -> list[Path]:
    """The /proc folders of the live (not zombie) processes in process group `pgid`."""
    members = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            # after the name (field 2, which may hold spaces): state, ppid, pgrp
            stat = Path(entry.path, "stat").read_text()
            fields = stat[stat.rindex(")") + 2 :].split()
        except (OSError, ValueError):
            continue  # the process ended meanwhile
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] != "Z":
            members.append(Path(entry.path))
    return members


def group_anon_rss_bytes(pgid: int) -> int:
    """Sum of RssAnon over the live processes in process group `pgid` (Linux /proc)."""
    total = 0
    for folder in group_members(pgid):
        try:
            for line in (folder / "status").read_text().splitlines():
                if line.startswith("RssAnon:"):
                    total += int(line.split()[1]) * 1024
                    break
        except (OSError, ValueError):
            continue
    return total


def run_tool(
    command: Sequence[str],
    limits: ToolLimits,
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    input_text: str | None = None,
) -> ToolRun:
    """Run a one-shot tool to completion within `limits`; its output decoded as UTF-8.

    On a timeout the whole process group is killed. Nothing of the tool survives the call:
    not a grandchild, not a temporary file."""
    started = time.monotonic()
    child = Child(command, env=env, cwd=cwd, pipe_stdin=input_text is not None,
                  memory_bytes=limits.memory_bytes, file_bytes=limits.file_bytes,
                  tmp_prefix="regrapht-tool-")
    try:
        out, err, timed_out, truncated = _collect(child, limits, input_text, started + limits.timeout_s)
    finally:
        code = child.end()
    return ToolRun(
        returncode=code if code is not None else -signal.SIGKILL,
        stdout=out.decode("utf-8", "replace"), stderr=err.decode("utf-8", "replace"),
        seconds=time.monotonic() - started, timed_out=timed_out, truncated=truncated,
    )


def _collect(child: Child, limits: ToolLimits, input_text: str | None,
             deadline: float) -> tuple[bytes, bytes, bool, bool]:
    """Feed stdin and drain stdout/stderr together (no pipe can fill up and block either side)."""
    process = child.process
    assert process.stdout is not None and process.stderr is not None
    out_fd, err_fd = process.stdout.fileno(), process.stderr.fileno()
    kept = {out_fd: bytearray(), err_fd: bytearray()}
    pending = memoryview((input_text or "").encode("utf-8"))
    truncated = False
    timed_out = False
    with selectors.DefaultSelector() as selector:
        for fd in kept:
            os.set_blocking(fd, False)
            selector.register(fd, selectors.EVENT_READ)
        if process.stdin is not None:
            os.set_blocking(process.stdin.fileno(), False)
            selector.register(process.stdin.fileno(), selectors.EVENT_WRITE)
        while any(key.fd in kept for key in selector.get_map().values()):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            for key, _ in selector.select(timeout=min(remaining, 1.0)):
                fd = int(key.fd)
                if fd not in kept:
                    pending = _feed(process, selector, pending)
                    continue
                try:
                    chunk = os.read(fd, 1 << 16)
                except BlockingIOError:
                    continue
                if not chunk:
                    selector.unregister(fd)
                    continue
                room = limits.output_bytes - len(kept[fd])
                if room > 0:
                    kept[fd] += chunk[:room]
                truncated = truncated or len(chunk) > room
    if not timed_out:
        # both streams closed: the tool (and anything holding its pipes) is done; it is left
        # unreaped so that `end` kills exactly its group
        timed_out = not child.wait_unreaped(max(0.0, deadline - time.monotonic()))
    if timed_out:
        child.kill_group()
    return bytes(kept[out_fd]), bytes(kept[err_fd]), timed_out, truncated


def _feed(process: subprocess.Popen[bytes], selector: selectors.BaseSelector, pending: memoryview) -> memoryview:
    """Write what the child's stdin takes now; close it when all is written or the child left."""
    assert process.stdin is not None
    try:
        pending = pending[os.write(process.stdin.fileno(), pending):] if pending else pending
    except BlockingIOError:
        return pending
    except OSError:  # the tool closed its stdin or exited: the rest is not wanted
        pending = pending[:0]
    if not pending:
        selector.unregister(process.stdin.fileno())
        process.stdin.close()
    return pending


# -- talking to a long-lived worker child ----------------------------------------------------------

FRAME_HEADER = struct.Struct(">I")  # 4-byte big-endian length, then one msgpack map
MAX_FRAME_BYTES = 1 << 31


def encode_frame(message: Mapping[str, Any]) -> bytes:
    payload = msgpack.packb(message, use_bin_type=True)
    return FRAME_HEADER.pack(len(payload)) + payload


@dataclass(frozen=True)
class ChannelFault:
    """Why no reply came: the child went silent, exited, wrote non-protocol bytes or grew too big."""

    kind: Literal["timeout", "exited", "garbled", "memory"]
    detail: str


class FrameChannel:
    """Framed msgpack maps to and from a `Child` started with `pipe_stdin=True`.

    Reading never blocks past a deadline and, while waiting, checks the child's anonymous
    memory against `memory_bytes` and calls `on_idle` (a cancellation check) about every
    `poll_s`. The caller ends the child after any fault."""

    def __init__(self, child: Child, *, memory_bytes: int = WORKER_MEMORY_BYTES, poll_s: float = 0.2,
                 max_frame_bytes: int = MAX_FRAME_BYTES) -> None:
        self.child = child
        self.memory_bytes = memory_bytes
        self.poll_s = poll_s
        self.max_frame_bytes = max_frame_bytes

    def send(self, message: Mapping[str, Any]) -> bool:
        """False when the child no longer reads (its stdin pipe is broken)."""
        stdin = self.child.process.stdin
        assert stdin is not None
        try:
            stdin.write(encode_frame(message))
            stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            return False
        return True

    def receive(self, timeout_s: float, on_idle: Callable[[], None] | None = None) -> dict[str, Any] | ChannelFault:
        deadline = time.monotonic() + timeout_s
        header = self._read_exactly(FRAME_HEADER.size, deadline, on_idle)
        if isinstance(header, ChannelFault):
            return header
        (length,) = FRAME_HEADER.unpack(header)
        if length > self.max_frame_bytes:
            return ChannelFault("garbled", f"it wrote bytes that are not a reply: {header!r}")
        payload = self._read_exactly(length, deadline, on_idle)
        if isinstance(payload, ChannelFault):
            return payload
        try:
            reply = msgpack.unpackb(payload, raw=False)
        except (ValueError, msgpack.UnpackException):
            return ChannelFault("garbled", f"it wrote bytes that are not a reply: {(header + payload)[:60]!r}")
        if not isinstance(reply, dict):
            return ChannelFault("garbled", f"it wrote a reply that is not a map: {reply!r:.60}")
        return reply

    def _read_exactly(self, size: int, deadline: float,
                      on_idle: Callable[[], None] | None) -> bytes | ChannelFault:
        stdout = self.child.process.stdout
        assert stdout is not None
        fd = stdout.fileno()
        chunks: list[bytes] = []
        needed = size
        next_memory_check = time.monotonic() + MEMORY_CHECK_EVERY_S
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            while needed:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return ChannelFault("timeout", "it sent nothing in time")
                if not selector.select(timeout=min(remaining, self.poll_s)):
                    if self.memory_bytes and time.monotonic() >= next_memory_check:
                        next_memory_check = time.monotonic() + MEMORY_CHECK_EVERY_S
                        if self.child.anon_rss_bytes() > self.memory_bytes:
                            return ChannelFault("memory", f"it used more than {size_text(self.memory_bytes)} of memory")
                    if on_idle is not None:
                        on_idle()
                    continue
                chunk = os.read(fd, min(needed, 1 << 20))
                if not chunk:
                    return ChannelFault("exited", "it exited")
                chunks.append(chunk)
                needed -= len(chunk)
        return b"".join(chunks)
