"""The compiled methods of attrs classes, kept between language server start-ups.

attrs writes the source of `__init__`, `__eq__`, `__repr__`, ... for every class it builds and
compiles it; for lsprotocol's ~570 LSP types that is about a third of the server's start-up,
the same at every start. Inside `compiled_attrs_methods(path)`, attrs' calls to `compile` are
answered from the file at `path` when the same source, file name and future flags were compiled
before (by the same Python: the file carries the bytecode magic number), and compiled
otherwise. A code object is what `compile` returns for its source, so the classes are the same
either way. At the end, if a tenth or more was compiled, the file is rewritten with what this
block used (so code of an older lsprotocol or attrs does not pile up); less is not worth
rewriting ~2 MB for (attrs writes a per-process string hash into the `__hash__` of hashable
classes, so a few methods differ at every start and are always compiled). A file that cannot be
read is set aside and rebuilt; one that cannot be written is left (the start is only slower).
The hook is a module global `compile` in `attr._make`, shadowing the builtin for the block: an
attrs that compiles otherwise just gets no cache hits.
"""

from __future__ import annotations
import __future__

import contextlib
import functools
import importlib
import importlib.util
import logging
import marshal
import operator
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType, ModuleType
from typing import Any

from regrapht.set_aside import set_aside

log = logging.getLogger(__name__)

Key = tuple[str, str, int]  # (file name, source, future flags)
REWRITE_FRACTION = 10  # the file is rewritten when at least 1/10 of what a block used was compiled

# the flags of `from __future__` statements, which `compile` inherits from the code calling it
_FUTURE_FLAGS = functools.reduce(operator.or_, (getattr(__future__, name).compiler_flag
                                                for name in __future__.all_feature_names))


def _file_version() -> tuple[bytes, int]:
    """What a cached code object depends on besides its key: the bytecode format and -O."""
    return importlib.util.MAGIC_NUMBER, sys.flags.optimize


@dataclass
class CodeCache:
    """The code objects read from the file, and those this block used (read or compiled)."""

    known: dict[Key, CodeType]
    used: dict[Key, CodeType] = field(default_factory=dict)
    read: int = 0
    compiled: int = 0

    def compile(self, source: Any, filename: Any, mode: str, flags: int = 0, dont_inherit: bool = False,
                optimize: int = -1) -> Any:
        """`compile` as attrs' module sees it, from the module's own calls (caller's frame)."""
        inherited = 0 if dont_inherit else sys._getframe(1).f_code.co_flags & _FUTURE_FLAGS
        if not (isinstance(source, str) and isinstance(filename, str) and mode == "exec" and optimize == -1):
            return compile(source, filename, mode, flags | inherited, True, optimize)
        key = (filename, source, flags | inherited)
        code = self.known.get(key)
        if code is None:
            code = compile(source, filename, mode, flags | inherited, True)
            self.compiled += 1
        else:
            self.read += 1
        self.used[key] = code
        return code


def load(path: Path) -> dict[Key, CodeType]:
    """The cached code objects in `path`; none if it is missing or of another Python. An
    unreadable file is set aside (`set_aside.py`) and rebuilt."""
    try:
        data = path.read_bytes()
    except OSError:
        return {}
    try:
        version, entries = marshal.loads(data)
    except (EOFError, ValueError, TypeError) as error:
        set_aside(path, "start-up code cache", str(error) or type(error).__name__)
        return {}
    if version != _file_version():
        return {}  # another Python's or -O level's: rebuilt
    if not isinstance(entries, dict):
        set_aside(path, "start-up code cache", f"{type(entries).__name__} instead of a dict")
        return {}
    return {key: code for key, code in entries.items() if isinstance(code, CodeType)}


def save(path: Path, entries: dict[Key, CodeType]) -> None:
    """Writes `path` atomically (a concurrent start reads the old file or the new one)."""
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_bytes(marshal.dumps((_file_version(), entries)))
        os.replace(temporary, path)
    except OSError as error:
        log.info("could not write the start-up code cache %s: %s", path, error)
        with contextlib.suppress(OSError):
            temporary.unlink()


@contextlib.contextmanager
def compiled_attrs_methods(path: Path, module: ModuleType | None = None) -> Iterator[CodeCache]:
    """The block's attrs classes compile their methods through the cache in `path`.

    `module`: the module whose `compile` calls are served (default `attr._make`; tests pass
    their own)."""
    namespace = vars(module if module is not None else importlib.import_module("attr._make"))
    cache = CodeCache(load(path))
    if "compile" in namespace:  # already served (a nested block): the outer one caches
        yield cache
        return
    namespace["compile"] = cache.compile
    try:
        yield cache
    finally:
        del namespace["compile"]
    if cache.compiled * REWRITE_FRACTION >= len(cache.used) > 0:
        save(path, cache.used)
    log.debug("start-up code cache %s: %d read, %d compiled", path, cache.read, cache.compiled)
