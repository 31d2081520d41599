"""The start-up code cache (attrs_code_cache.py): classes built through it are the classes attrs
builds without it, the second start reads what the first compiled, and a file that is broken,
of another Python or not writable only makes the start slower."""

from __future__ import annotations

import importlib.util
import marshal
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import attr._make
import attrs
import pytest

from regrapht.attrs_code_cache import compiled_attrs_methods

MODULE = "regrapht_cache_probe"
SOURCE = '''
import attrs

@attrs.define
class Point:
    x: int
    y: int = 0

@attrs.frozen
class Named:
    name: str
    tags: tuple[str, ...] = ()
'''


def build_module() -> ModuleType:
    """A fresh module of attrs classes (as an import of lsprotocol.types builds them)."""
    sys.modules.pop(MODULE, None)
    module = ModuleType(MODULE)
    sys.modules[MODULE] = module
    exec(compile(SOURCE, f"<{MODULE}>", "exec"), module.__dict__)
    return module


def behaviour(module: ModuleType) -> tuple[object, ...]:
    point, named = module.Point(1), module.Named("a", ("t",))
    return (repr(point), point == module.Point(1, 0), point != module.Point(2), repr(named), hash(named) == hash(
        module.Named("a", ("t",))), attrs.asdict(point), [f.name for f in attrs.fields(module.Named)])


def test_the_second_start_reads_what_the_first_compiled_and_the_classes_are_the_same(tmp_path: Path) -> None:
    plain = behaviour(build_module())
    path = tmp_path / "cache.marshal"
    with compiled_attrs_methods(path) as first:
        module = build_module()
    assert first.compiled >= 2 and first.read == 0 and path.is_file()
    assert "compile" not in vars(attr._make)  # the builtin again once the block ends
    assert behaviour(module) == plain
    written = path.stat().st_mtime_ns
    with compiled_attrs_methods(path) as second:
        module = build_module()
    assert second.read == first.compiled and second.compiled == 0
    assert behaviour(module) == plain
    with compiled_attrs_methods(path) as third:
        pass  # no attrs class built (say, lsprotocol was imported before the block)
    assert third.read == third.compiled == 0
    assert path.stat().st_mtime_ns == written  # nothing new: not rewritten, not emptied


def test_a_broken_or_foreign_file_is_rebuilt_and_an_unreadable_one_set_aside(tmp_path: Path) -> None:
    path = tmp_path / "cache.marshal"
    foreign = marshal.dumps(((b"\0\0\r\n", 0), {}))  # another Python's bytecode version
    for content, set_aside in ((b"not marshal data", True), (marshal.dumps(42), True),
                               (marshal.dumps(((importlib.util.MAGIC_NUMBER, sys.flags.optimize), [1])), True),
                               (foreign, False)):
        aside = path.with_name(path.name + ".corrupt")
        aside.unlink(missing_ok=True)
        path.write_bytes(content)
        with compiled_attrs_methods(path) as cache:
            module = build_module()
        assert cache.read == 0 and cache.compiled >= 2 and behaviour(module)[1] is True
        assert aside.exists() == set_aside and (not set_aside or aside.read_bytes() == content)
        with compiled_attrs_methods(path) as cache:
            build_module()
        assert cache.compiled == 0


def test_an_unwritable_place_only_means_no_cache(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    with compiled_attrs_methods(blocker / "cache.marshal") as cache:  # its folder is a file
        module = build_module()
    assert cache.compiled >= 2 and behaviour(module)[1] is True
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_calls_other_than_attrs_exec_compiles_go_to_the_builtin(tmp_path: Path) -> None:
    target = ModuleType("target")
    with compiled_attrs_methods(tmp_path / "cache.marshal", target) as cache:
        serving = vars(target)["compile"]
        assert eval(serving("1 + 1", "<expr>", "eval")) == 2
        code = serving("x = 3", "<probe>", "exec")
        namespace: dict[str, int] = {}
        exec(code, namespace)
    assert namespace["x"] == 3 and cache.compiled == 1 and "compile" not in vars(target)


def test_future_flags_are_those_of_the_module_that_calls_compile(tmp_path: Path) -> None:
    """attrs' module has `from __future__ import annotations`: code compiled for it must carry
    that flag, as the builtin `compile` would give it, and code compiled for a module without
    it must not."""
    source = "def f(a: undefined_name) -> None: pass\n"
    build = "def build(source):\n    return compile(source, '<f>', 'exec')\n"
    with_future, without = ModuleType("with_future"), ModuleType("without")
    with (compiled_attrs_methods(tmp_path / "a.marshal", with_future),
          compiled_attrs_methods(tmp_path / "b.marshal", without)):
        exec(compile("from __future__ import annotations\n" + build, "<a>", "exec", dont_inherit=True),
             vars(with_future))
        exec(compile(build, "<b>", "exec", dont_inherit=True), vars(without))
        namespace: dict[str, Any] = {}
        exec(with_future.build(source), namespace)
        assert namespace["f"].__annotations__["a"] == "undefined_name"
        with pytest.raises(NameError, match="undefined_name"):
            exec(without.build(source), {})


LSPROTOCOL_START = """
import sys
from pathlib import Path
from regrapht.attrs_code_cache import compiled_attrs_methods
with compiled_attrs_methods(Path(sys.argv[1])) as cache:
    import lsprotocol.types
print(cache.read, cache.compiled)
"""


def test_the_lsp_types_compile_once_then_come_from_the_cache(tmp_path: Path) -> None:
    """What `regrapht serve` wraps, in fresh interpreters: lsprotocol's classes."""
    path = str(tmp_path / "cache.marshal")

    def start() -> tuple[int, int]:
        done = subprocess.run([sys.executable, "-c", LSPROTOCOL_START, path], capture_output=True, text=True,
                              timeout=120, check=True)
        read, compiled = done.stdout.split()
        return int(read), int(compiled)

    first = start()
    assert first[0] == 0 and first[1] > 500
    read, compiled = start()
    assert read + compiled == first[1] and compiled * 10 < first[1]  # (hashable classes' __hash__ differ)
