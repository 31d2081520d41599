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

With --trust train|test: the labelled trust set of issue 27 instead (ggml-cuda, DeepSpeed,
LightGBM and Warp, fetched by scripts/fetch-labelled-corpus.sh; the labels in
tests/data/realworld/trust/labels-<split>.tsv): per rule, warnings and errors and, apart,
hints, labelled fix (right and worth fixing) / right / wrong. --unlabelled lists the findings
of that split without a label (to label them); --write-manifest records every file's sha256 and
split in tests/data/realworld/trust/manifest.tsv.
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
from regrapht.evaluation.labelled_findings import compare, corpus_findings, files_findings, load_labels
from regrapht.evaluation.trust_set import CODE_BASES, file_sha256, read_manifest, split_of, tally, unlabelled
from regrapht.rules.confirm import confirm_findings
from regrapht.validate.compiler import Compiler, find_demangler, find_nvcc
from regrapht.validate.ptx import ptx_facts

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "data" / "realworld"
TRUST = CORPUS / "trust"


def _trust(split: str, list_unlabelled: bool, write_manifest: bool, as_json: bool) -> int:
    missing = [name for name in CODE_BASES if not (CORPUS / name / ".version").is_file()]
    if missing:
        print(f"{', '.join(missing)} missing: run `bash scripts/fetch-labelled-corpus.sh` first", file=sys.stderr)
        return 2
    files = sorted(p.relative_to(CORPUS).as_posix() for name in CODE_BASES for p in (CORPUS / name).rglob("*")
                   if p.suffix in (".cu", ".cuh") and p.is_file())
    if write_manifest:
        versions = {name: (CORPUS / name / ".version").read_text(encoding="utf-8").strip() for name in CODE_BASES}
        lines = ["# The trust set's files (issue 27): path under tests/data/realworld/, sha256, split.",
                 "# Versions: " + ", ".join(f"{n} {v}" for n, v in versions.items()) +
                 " (scripts/fetch-labelled-corpus.sh pins the source distributions' sha256)."]
        lines += [f"{f}\t{file_sha256(CORPUS / f)}\t{split_of(f)}" for f in files]
        (TRUST / "manifest.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    manifest = read_manifest(TRUST / "manifest.tsv")
    changed = [f for f in files if f in manifest and manifest[f][0] != file_sha256(CORPUS / f)]
    if changed or set(files) != set(manifest):
        print(f"the fetched files differ from manifest.tsv ({len(changed)} changed, "
              f"{len(set(files) ^ set(manifest))} added or missing)", file=sys.stderr)
        return 2
    chosen = [f for f in files if manifest[f][1] == split]
    started = time.perf_counter()
    findings = files_findings(CORPUS, chosen)
    seconds = time.perf_counter() - started
    label_file = TRUST / f"labels-{split}.tsv"
    labels = load_labels(label_file) if label_file.is_file() else []
    if list_unlabelled:
        for location, finding in unlabelled(labels, findings):
            print(f"{location}\t{finding.rule}\t{finding.severity}\t{finding.message}")
        return 0
    rows = tally(labels, findings)
    if as_json:
        json.dump({"split": split, "files": len(chosen), "seconds": round(seconds, 2),
                   "rows": [vars(row) for row in rows]}, sys.stdout, indent=2)
        print()
        return 0
    print(f"{split} split: {len(chosen)} files, analysed in {seconds:.1f} s")
    for kind in ("reported", "hint"):
        print(f"\n{'warnings + errors' if kind == 'reported' else 'hints'}")
        print("| rule | findings | right and worth fixing | right | wrong | unlabelled | right share |")
        print("|---|---|---|---|---|---|---|")
        chosen_rows = [row for row in rows if row.kind == kind]
        for row in chosen_rows:
            print(f"| {row.rule} | {row.total} | {row.fix} | {row.right} | {row.wrong} | {row.unlabelled} | "
                  f"{row.right_share:.0%} |")
        total = sum(r.total for r in chosen_rows)
        fix, right, wrong = (sum(getattr(r, a) for r in chosen_rows) for a in ("fix", "right", "wrong"))
        if total:
            print(f"| all | {total} | {fix} ({fix / total:.0%}) | {right} | {wrong} | {total - fix - right - wrong} | "
                  f"{(fix + right) / total:.0%} |")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--confirm", action="store_true", help="apply nvcc's PTX verdicts first")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--trust", choices=("train", "test"), help="the labelled trust set's split instead")
    parser.add_argument("--unlabelled", action="store_true", help="with --trust: list unlabelled findings")
    parser.add_argument("--write-manifest", action="store_true", help="with --trust: record the files' sha256")
    add_compile_arguments(parser)
    args = parser.parse_args()
    if args.trust:
        return _trust(args.trust, args.unlabelled, args.write_manifest, args.json)
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
