"""Corrupt state files (issue 13, item 3): an empty or garbage graph overlay, compile-cache,
validation-cache and device-peaks entries that are valid msgpack of the wrong shape. Each is
set aside (renamed `.corrupt`, a warning naming it logged) and rebuilt; never fatal, never a
traceback."""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import msgpack
import pytest

from regrapht.graph import open_graph
from regrapht.graph.overlay import Overlay, load_overlay, merge_into_file
from regrapht.graph.types import EdgeStats
from regrapht.validate import background
from regrapht.validate.compiler import CompileCache, Compiler, find_nvcc
from regrapht.validate.peaks import device_peaks
from regrapht.validate.worker_protocol import DeviceInfo, Peaks, PeaksReply

GARBAGE = bytes([0x81, 0x91, 0x01, 0x02])  # a map whose key is a list: TypeError in msgpack


def assert_set_aside(path: Path, caplog: pytest.LogCaptureFixture) -> None:
    aside = path.with_name(path.name + ".corrupt")
    assert aside.is_file()
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(str(path) in w and "set aside as " + aside.name in w for w in warnings), warnings


@pytest.mark.parametrize("content", [b"", GARBAGE, msgpack.packb([1, 2]),
                                     msgpack.packb({"format": "regrapht-graph-overlay", "version": 1, "edges": 7})],
                         ids=["empty", "81-91-01-02", "a-list", "edges-not-a-list"])
def test_corrupt_overlay_is_set_aside_and_rebuilt(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                                  content: bytes) -> None:
    overlay = tmp_path / "graph-overlay.msgpack"
    overlay.write_bytes(content)
    graph = open_graph(None, overlay)  # was: exit 2 "corrupt graph overlay" / TypeError
    assert graph.techniques() and len(graph.overlay) == 0  # the bundled graph, no statistics
    assert_set_aside(overlay, caplog)
    assert not overlay.exists()
    new = Overlay()
    new.set("a", "b", EdgeStats(1, 0.5, {"sm_90": 1.5}))
    merge_into_file(overlay, new)
    assert load_overlay(overlay) == new


def test_merge_into_a_corrupt_overlay_keeps_the_bad_file_aside(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    overlay = tmp_path / "graph-overlay.msgpack"
    overlay.write_bytes(GARBAGE)
    new = Overlay()
    new.set("a", "b", EdgeStats(2, 1.0, {}))
    assert merge_into_file(overlay, new) == new
    assert_set_aside(overlay, caplog)
    assert overlay.with_name(overlay.name + ".corrupt").read_bytes() == GARBAGE


def good_entry(key: str) -> dict[str, Any]:
    return {"format": 1, "ok": True, "key": key, "arch": "sm_90", "cubin": b"\x7fELF", "log": "", "seconds": 0.5,
            "command": ["nvcc"], "diagnostics": [["k.cu", 3, "warning", "unused", None]],
            "kernels": [["_Z1kv", "k()", 10, 0, 0, 0, 0, 0, 0]]}


@pytest.mark.parametrize("change", [
    {"kernels": 5}, {"kernels": [["_Z1kv"]]}, {"diagnostics": [[1, 2]]}, {"seconds": "soon"},
    {"ok": None}, {"key": "another"}, {"cubin": None}, {"command": [1]},
], ids=lambda c: next(iter(c)) + "=" + repr(next(iter(c.values())))[:12])
def test_misshapen_compile_cache_entry_is_set_aside(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                                    change: dict[str, Any]) -> None:
    cache = CompileCache(tmp_path)
    path = tmp_path / "compile" / "abc.msgpack"
    path.parent.mkdir()
    path.write_bytes(msgpack.packb({**good_entry("abc"), **change}, use_bin_type=True))
    assert cache.get("abc") is None  # was: KeyError / TypeError / a wrong result
    assert_set_aside(path, caplog)


@pytest.mark.parametrize("content", [b"", GARBAGE, msgpack.packb([1]), msgpack.packb({"format": 1})])
def test_unreadable_compile_cache_entry_is_set_aside(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                                     content: bytes) -> None:
    path = tmp_path / "compile" / "abc.msgpack"
    path.parent.mkdir()
    path.write_bytes(content)
    assert CompileCache(tmp_path).get("abc") is None
    assert_set_aside(path, caplog)


def test_good_compile_cache_entry_still_read(tmp_path: Path) -> None:
    path = tmp_path / "compile" / "abc.msgpack"
    path.parent.mkdir()
    path.write_bytes(msgpack.packb(good_entry("abc"), use_bin_type=True))
    hit = CompileCache(tmp_path).get("abc")
    assert hit is not None and hit.cached and hit.kernels["_Z1kv"].registers == 10


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")
def test_compile_over_a_misshapen_entry_rebuilds_it(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    nvcc = find_nvcc(os.environ)
    assert nvcc is not None
    compiler = Compiler(nvcc, cache=CompileCache(tmp_path))
    source = "__global__ void k(int* o) { o[threadIdx.x] = 1; }\n"
    key = compiler.cache_key(source, "sm_90", ("k.cu",))
    path = tmp_path / "compile" / f"{key}.msgpack"
    path.parent.mkdir()
    path.write_bytes(msgpack.packb({"format": 1, "ok": True, "kernels": {"x": 1}}))
    result = compiler.compile(source, file="k.cu")
    assert result.ok and not result.cached
    assert_set_aside(path, caplog)
    assert compiler.compile(source, file="k.cu").cached  # rebuilt


class StubWorker:
    def __init__(self) -> None:
        self.measured = 0

    def info(self) -> dict[str, Any]:
        return {"device": {"name": "H200"}}

    def request(self, request: Peaks, *, timeout_s: float) -> PeaksReply:
        self.measured += 1
        return PeaksReply(4000.0, 60000.0, DeviceInfo("H200", (9, 0), 50 << 20, 132, 141 << 30, 0))


class StubCompiler:
    def compile(self, source: str, *, arch: str, file: str) -> Any:
        return SimpleNamespace(ok=True, cubin=b"\x7fELF")


@pytest.mark.parametrize("table", [
    {"H200": {"gbps": 0, "gflops": 1.0}}, {"H200": [1, 2]}, {"H200": {"gbps": "fast", "gflops": 1.0}},
    {"H200": {"gbps": float("nan"), "gflops": 1.0}}, [1], "peaks",
], ids=["zero-gbps", "a-list", "a-string", "nan", "top-list", "top-string"])
def test_misshapen_peaks_cache_is_set_aside_and_measured_again(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                                               table: object) -> None:
    path = tmp_path / "peaks.msgpack"
    path.write_bytes(msgpack.packb(table))
    worker = StubWorker()
    peaks = device_peaks(worker, StubCompiler(), tmp_path, arch="sm_90")  # type: ignore[arg-type]
    assert peaks is not None and peaks.gbps == 4000.0 and worker.measured == 1
    assert_set_aside(path, caplog)
    assert device_peaks(worker, StubCompiler(), tmp_path, arch="sm_90") == peaks  # type: ignore[arg-type]
    assert worker.measured == 1  # rebuilt: read from the cache the second time


@pytest.mark.parametrize("content", [GARBAGE, msgpack.packb({"format": 1, "diagnostics": [[1]], "kernels": []}),
                                     msgpack.packb({"format": 1, "diagnostics": [], "kernels": [["k", 5, None, None]]})])
def test_misshapen_validation_cache_entry_is_set_aside(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                                       content: bytes) -> None:
    path = tmp_path / "entry.msgpack"
    path.write_bytes(content)
    assert background._load(path) is None
    assert_set_aside(path, caplog)
