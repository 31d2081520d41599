"""Spec inference on real CUDA code bases: how many of the kernels a project's host code launches
get a spec that is right or marks its guesses, and whether the originals compile.

A tree is given by its `compile_commands.json` (CMake's; `--database PATH`, repeatable). For
every `.cu` entry: every `kernel<<<...>>>` launch in the file is a launched kernel (its name as the
launch writes it, template arguments included); its spec is inferred with the file's flags
(`spec/infer.py`: typedefs through the project's include dirs); then, independently, each count
and role the spec does not list in `guessed` is held against the access proofs again
(`spec/proofs.py`): one that is not proven is "silently wrong". A kernel is counted as
"right or marked" when a spec came out and nothing in it is silently wrong or provably wrong.
With `--compile N`, the first N files with a launched kernel are compiled with their database
flags through the tool's own compile path (nvcc, `-cubin`), to check that every original compiles:
`--jobs J` of them at once, `--extra-arg ARG` (repeatable) added as the `extraCompilerArgs`
setting would (e.g. `-isystem DIR` for a toolkit's cuBLAS headers when CMake's machine had them
and this one does not).

    python bench/real_projects.py --database ggml/build/compile_commands.json --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from regrapht.cuda.view import kernels_of
from regrapht.errors import InputError
from regrapht.spec.host_templates import parameter_names
from regrapht.spec.infer import infer_spec
from regrapht.spec.infer_types import launched_name
from regrapht.spec.model import parse_spec
from regrapht.spec.proofs import buffer_facts, spec_problems
from regrapht.validate.compile_db import compile_setup, load_database


def launched_kernels(text: str) -> list[str]:
    """The kernels `text`'s host code launches, as each launch names them (first launch each)."""
    model = kernels_of(text).model
    names: list[str] = []
    defined = {k.name for k in model.kernels}
    for function in model.functions:
        for site in function.launches:
            name = launched_name(site, text).split("::")[-1]
            if name.split("<", 1)[0].strip() in defined and name not in names:
                names.append(name)
    return names


def silently_wrong(spec_text: str, source: str) -> list[str]:
    """Counts and roles the spec claims (not in `guessed`) that the proofs do not confirm, and a
    template instance named with a template parameter of the file (`k<T, 1>`, `norm<block_size>`
    of a template host function) that is not marked as a guess: no compiled kernel has that name."""
    kernel = parse_spec(spec_text).kernels[0]
    parameters = {name for f in kernels_of(source).model.functions for name, _ in parameter_names(f)}
    unbound = set(re.findall(r"[A-Za-z_]\w*", kernel.template_args or "")) & parameters
    named = [f"name ({', '.join(sorted(unbound))} unbound)"] if unbound and "name" not in kernel.guessed else []
    found = buffer_facts(kernel, source)
    if found is None:
        return ["the kernel's definition is not in the file"]
    facts = found[0]
    wrong = []
    for arg in kernel.args:
        if not arg.is_pointer or arg.name not in facts:
            continue
        fact = facts[arg.name]
        unused = fact.use.complete and not fact.use.accesses
        if f"{arg.name}.count" not in kernel.guessed and not (fact.proven_enough or unused):
            wrong.append(f"{arg.name}.count")
        # a const pointer's role is `in` by its type (the kernel cannot write through it)
        if f"{arg.name}.role" not in kernel.guessed and not fact.use.complete and not arg.ctype.const:
            wrong.append(f"{arg.name}.role")
    return named + wrong + [str(p) for p in spec_problems(kernel, source)]


def survey(database: Path, compile_files: int, extra_args: tuple[str, ...] = (), jobs: int = 1) -> dict[str, Any]:
    db = load_database(database)
    setup = compile_setup(str(database), extra_args)
    kernels: list[dict[str, Any]] = []
    to_compile: list[tuple[Path, str, Any]] = []
    for entry in db.entries:
        if entry.file.suffix != ".cu" or not entry.file.is_file():
            continue
        text = entry.file.read_text(encoding="utf-8", errors="replace")
        names = launched_kernels(text)
        if not names:
            continue
        flags = setup.lookup(entry.file).flags
        for name in names:
            row: dict[str, Any] = {"file": str(entry.file.relative_to(database.parent.parent)), "kernel": name}
            started = time.monotonic()
            try:
                spec = infer_spec(text, name, file=str(entry.file), include_dirs=flags.include_dirs,
                                  compile_defines=flags.defines)
            except InputError as error:
                row.update(outcome="refused", reason=error.message)
            else:
                kernel = parse_spec(spec).kernels[0]
                wrong = silently_wrong(spec, text)
                row.update(outcome="silently wrong" if wrong else ("marked" if kernel.guessed else "proven"),
                           guessed=list(kernel.guessed), wrong=wrong)
            row["seconds"] = round(time.monotonic() - started, 2)
            kernels.append(row)
        if len(to_compile) < compile_files:
            to_compile.append((entry.file, text, flags))
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:  # each compile is an nvcc subprocess
        compiled = list(pool.map(lambda job: _compile(*job), to_compile))
    outcomes = Counter(k["outcome"] for k in kernels)
    good = outcomes["proven"] + outcomes["marked"]
    return {"database": str(database), "kernels": len(kernels), "outcomes": dict(outcomes),
            "right_or_marked": good, "share": round(good / len(kernels), 3) if kernels else None,
            "refusals": Counter(k["reason"].split(":")[0] for k in kernels if k["outcome"] == "refused").most_common(),
            "compiled": compiled, "list": kernels}


def _compile(file: Path, text: str, flags: Any) -> dict[str, Any]:
    from regrapht.validate.compiler import DEFAULT_ARCH, Compiler

    compiler = Compiler.found(os.environ, None)
    if compiler is None:
        return {"file": str(file), "ok": None, "reason": "no nvcc"}
    started = time.monotonic()
    result = compiler.compile(text, arch=DEFAULT_ARCH, file=str(file), include_dirs=(str(file.parent),), flags=flags)
    return {"file": file.name, "ok": result.ok, "seconds": round(time.monotonic() - started, 1),
            "error": "" if result.ok else result.first_error()[:300]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database", action="append", required=True, type=Path)
    parser.add_argument("--compile", type=int, default=0, metavar="N", help="compile the first N files")
    parser.add_argument("--jobs", type=int, default=1, help="compiles at once")
    parser.add_argument("--extra-arg", action="append", default=[], metavar="ARG",
                        help="a compiler argument added to every file's flags (as extraCompilerArgs)")
    parser.add_argument("--json", type=Path, help="write the full results here")
    args = parser.parse_args(argv)
    results = [survey(db.resolve(), args.compile, tuple(args.extra_arg), args.jobs) for db in args.database]
    total = sum(r["kernels"] for r in results)
    good = sum(r["right_or_marked"] for r in results)
    for r in results:
        print(f"{r['database']}: {r['kernels']} launched kernels, {r['outcomes']}; right or marked "
              f"{r['right_or_marked']} ({r['share']}); compiled "
              f"{sum(1 for c in r['compiled'] if c['ok'])}/{len(r['compiled'])}")
        for reason, count in r["refusals"][:8]:
            print(f"  refused x{count}: {reason}")
        for c in r["compiled"]:
            if not c["ok"]:
                print(f"  DOES NOT COMPILE {c['file']}: {c.get('error') or c.get('reason')}")
        for k in r["list"]:
            if k["outcome"] == "silently wrong":
                print(f"  SILENTLY WRONG {k['file']} {k['kernel']}: {k['wrong']}")
    print(f"all: {good}/{total} right or marked ({good / total:.0%})" if total else "no launched kernels")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
