"""Rule precision on the labelled real-world corpus (tests/data/realworld/): the table in docs/benchmarks.md.

For each rule: the warnings and errors it raises on ggml-cuda (llama-cpp-python 0.3.36, fetch
with scripts/fetch-ggml-cuda.sh) and on the expert kernels written here, how many are labelled
right (tp) and wrong (fp/minor or unlabelled), the precision, and the hints (not counted).
With --confirm, the findings first go through nvcc's PTX (as in the editor) for the files that
compile, each with the project's flags (validate/compile_db.py: the nearest compile_commands.json,
then `--compile-commands`, `-I`, `-D` as `regrapht analyze` takes them); ggml-cuda needs ggml's
headers, which the fetched corpus lacks, so most of its files stay unconfirmed. The line after the
table says how many files compiled and how many findings nvcc confirmed, refuted (demoted) or
dropped (an R015 loop nvcc unrolled).

    python bench/rule_precision.py [--confirm [-I DIR] [-D NAME]] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

from regrapht.commands.compiling import add_compile_arguments, compile_setup_of
from regrapht.evaluation.labelled_findings import compare, corpus_findings, load_labels
from regrapht.rules.confirm import confirm_findings
from regrapht.validate.compiler import Compiler, find_demangler, find_nvcc
from regrapht.validate.ptx import ptx_facts

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "data" / "realworld"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--confirm", action="store_true", help="apply nvcc's PTX verdicts first")
    parser.add_argument("--json", action="store_true")
    add_compile_arguments(parser)
    args = parser.parse_args()
    confirmed = Counter[str]()
    subdirectories = [d for d in ("ggml-cuda", "expert") if (CORPUS / d).is_dir()]
    if "ggml-cuda" not in subdirectories:
        print("ggml-cuda is missing: run `bash scripts/fetch-ggml-cuda.sh` first", file=sys.stderr)
    started = time.perf_counter()
    findings = corpus_findings(CORPUS, subdirectories)
    seconds = time.perf_counter() - started
    if args.confirm:
        nvcc = find_nvcc(os.environ)
        if nvcc is None:
            print("--confirm: nvcc not found", file=sys.stderr)
            return 2
        compiler = Compiler(nvcc, demangler=find_demangler(nvcc, os.environ))
        setup = compile_setup_of(args)
        for file, found in findings.items():
            path = CORPUS / file
            flags = setup.lookup(path).flags
            facts = ptx_facts(compiler, path.read_text(encoding="utf-8", errors="replace"), path, "sm_90", flags)
            if facts is None:
                continue
            confirmed["compiled"] += 1
            after = list(confirm_findings(found, facts))
            confirmed["dropped"] += len(found) - len(after)
            confirmed["confirmed"] += sum("Confirmed by nvcc" in f.message or "nvcc shows" in f.message for f in after)
            confirmed["refuted"] += sum("Not confirmed by nvcc" in f.message for f in after)
            findings[file] = after
    labels = load_labels(CORPUS / "labels.tsv")
    comparison = compare(labels, findings)
    hints: Counter[str] = Counter(f.rule for found in findings.values() for f in found if f.severity == "hint")
    rows = comparison.table(labels)
    files = len(findings)
    if args.json:
        json.dump({"files": files, "seconds": round(seconds, 2),
                   "rules": [{"rule": r, "reported": n, "right": ok, "wrong": bad, "hints": hints[r]}
                             for r, n, ok, bad in rows],
                   "false_errors": len(comparison.false_errors), "unlabelled": len(comparison.unlabelled)},
                  sys.stdout, indent=2)
        print()
        return 0
    print(f"{files} files ({', '.join(subdirectories)}), analysed in {seconds:.1f} s")
    print("| rule | warnings + errors | right | wrong | precision | hints (not counted) |")
    print("|---|---|---|---|---|---|")
    for rule, reported, right, wrong in rows:
        print(f"| {rule} | {reported} | {right} | {wrong} | {right / reported:.0%} | {hints[rule]} |")
    total = sum(r[1] for r in rows)
    right = sum(r[2] for r in rows)
    print(f"| all | {total} | {right} | {total - right} | {right / total if total else 1:.0%} | "
          f"{sum(hints.values())} |")
    print(f"false errors: {len(comparison.false_errors)}; unlabelled warnings/errors: {len(comparison.unlabelled)}")
    if args.confirm:
        print(f"--confirm: {confirmed['compiled']} of {files} files compiled; findings confirmed "
              f"{confirmed['confirmed']}, refuted {confirmed['refuted']}, dropped {confirmed['dropped']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
