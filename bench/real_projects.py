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
With `--optimize N`, each of the first N kernels that got a spec is sent to `regrapht optimize` as
a user would (its file, the inferred spec with `--accept-guesses`, the database; `--strategy rules
--no-model --budget B`): without a GPU each candidate is compiled and left unverified, so this
shows whether Optimize starts on the kernel, how many candidates compile and which techniques
(structural or refinements) it proposes.

    python bench/real_projects.py --database ggml/build/compile_commands.json --json out.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from regrapht.cuda.view import kernels_of
from regrapht.errors import InputError
from regrapht.spec.host_templates import parameter_names
from regrapht.spec.infer import infer_spec
from regrapht.spec.infer_types import launched_name
from regrapht.spec.model import parse_spec
from regrapht.spec.proofs import buffer_facts, spec_problems
from regrapht.techniques import is_structural
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


@dataclass(frozen=True)
class Options:
    compile_files: int = 0
    extra_args: tuple[str, ...] = ()
    jobs: int = 1
    optimize_kernels: int = 0
    budget: int = 3
    work: Path = Path("/tmp/regrapht-real-projects")  # the specs handed to `regrapht optimize`


def optimize(file: Path, spec_text: str, database: Path, options: Options) -> dict[str, Any]:
    """`regrapht optimize` on one kernel, as a user would run it (a subprocess); what it did."""
    kernel = parse_spec(spec_text).kernels[0].name
    options.work.mkdir(parents=True, exist_ok=True)
    spec_path = options.work / f"{file.stem}.{hashlib.sha256(f'{file}:{kernel}'.encode()).hexdigest()[:12]}.regrapht.toml"
    spec_path.write_text(spec_text, encoding="utf-8")
    # the extra arguments as the CLI's own flags: -I/-isystem DIR -> -I DIR, -DNAME -> -D NAME
    flags: list[str] = []
    extra = list(options.extra_args)
    for i, arg in enumerate(extra):
        if arg in ("-I", "-isystem") and i + 1 < len(extra):
            flags += ["-I", extra[i + 1]]
        elif arg.startswith("-D") and len(arg) > 2:
            flags += ["-D", arg[2:]]
    command = [sys.executable, "-m", "regrapht", "optimize", str(file), "--kernel", kernel, "--spec", str(spec_path),
               "--strategy", "rules", "--no-model", "--budget", str(options.budget), "--accept-guesses",
               "--compile-commands", str(database), *flags, "--json"]
    started = time.monotonic()
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=600)
    except subprocess.TimeoutExpired:
        return {"kernel": kernel, "started": False, "error": "timed out after 600 s"}
    row: dict[str, Any] = {"kernel": kernel, "file": file.name, "seconds": round(time.monotonic() - started, 1)}
    if done.returncode not in (0, 1) or not done.stdout.strip():  # 1: ran, nothing verified (no GPU)
        error = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"
        return {**row, "started": False, "error": error[:400]}
    answer = json.loads(done.stdout)
    judged = answer.get("judged", [])
    techniques = sorted({t for c in judged for t in c["techniques"]})
    return {**row, "started": True, "candidates": answer["candidates"], "reason": answer.get("reason"),
            "outcomes": dict(Counter(c["outcome"] for c in judged)), "techniques": techniques,
            "structural": [t for t in techniques if is_structural(t)]}


def survey(database: Path, options: Options) -> dict[str, Any]:
    db = load_database(database)
    setup = compile_setup(str(database), options.extra_args)
    kernels: list[dict[str, Any]] = []
    to_compile: list[tuple[Path, str, Any]] = []
    to_optimize: list[tuple[Path, str]] = []
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
                if not wrong and len(to_optimize) < options.optimize_kernels:
                    to_optimize.append((entry.file, spec))
            row["seconds"] = round(time.monotonic() - started, 2)
            kernels.append(row)
        if len(to_compile) < options.compile_files:
            to_compile.append((entry.file, text, flags))
    with ThreadPoolExecutor(max_workers=max(1, options.jobs)) as pool:  # each job is a subprocess (nvcc, regrapht)
        compiled = list(pool.map(lambda job: _compile(*job), to_compile))
        optimized = list(pool.map(lambda job: optimize(job[0], job[1], database, options), to_optimize))
    outcomes = Counter(k["outcome"] for k in kernels)
    good = outcomes["proven"] + outcomes["marked"]
    return {"database": str(database), "kernels": len(kernels), "outcomes": dict(outcomes),
            "right_or_marked": good, "share": round(good / len(kernels), 3) if kernels else None,
            "refusals": Counter(k["reason"].split(":")[0] for k in kernels if k["outcome"] == "refused").most_common(),
            "compiled": compiled, "optimized": optimized, "list": kernels}


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
    parser.add_argument("--jobs", type=int, default=1, help="compiles (and optimize runs) at once")
    parser.add_argument("--optimize", type=int, default=0, metavar="N",
                        help="run `regrapht optimize` (rules, no model, compile-only without a GPU) on the first N specced kernels")
    parser.add_argument("--budget", type=int, default=3, help="candidates per optimize run")
    parser.add_argument("--extra-arg", action="append", default=[], metavar="ARG",
                        help="a compiler argument added to every file's flags (as extraCompilerArgs)")
    parser.add_argument("--json", type=Path, help="write the full results here")
    args = parser.parse_args(argv)
    options = Options(compile_files=args.compile, extra_args=tuple(args.extra_arg), jobs=args.jobs,
                      optimize_kernels=args.optimize, budget=args.budget)
    results = [survey(db.resolve(), options) for db in args.database]
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
        runs = r["optimized"]
        if runs:
            started = [o for o in runs if o["started"]]
            print(f"  optimize: {len(started)}/{len(runs)} started; {sum(1 for o in started if o['candidates']['compiled'])} "
                  f"compiled a candidate; {sum(1 for o in started if o['structural'])} proposed a structural technique")
            for o in runs:
                if not o["started"]:
                    print(f"  OPTIMIZE DID NOT START {o.get('file', '')} {o['kernel']}: {o['error']}")
        for k in r["list"]:
            if k["outcome"] == "silently wrong":
                print(f"  SILENTLY WRONG {k['file']} {k['kernel']}: {k['wrong']}")
    print(f"all: {good}/{total} right or marked ({good / total:.0%})" if total else "no launched kernels")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
