"""The rules on real expert CUDA, against labels (tests/data/realworld/labels.tsv): a labelled
true positive must stay, a labelled false positive must not come back as a warning or error,
every warning and error must be labelled, and precision must hold (>= 90%, no false errors).

expert/ is always here; ggml-cuda/ is fetched by scripts/fetch-ggml-cuda.sh (CI runs it): the
ggml test skips with that instruction when it is missing."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from regrapht.evaluation.labelled_findings import Comparison, compare, corpus_findings, load_labels

CORPUS = Path(__file__).resolve().parents[2] / "data" / "realworld"
LABELS = load_labels(CORPUS / "labels.tsv")


def _check(comparison: Comparison) -> None:
    problems = [f"labelled true positive is gone: {label.location} {label.rule} ({label.reason})"
                for label in comparison.lost_true_positives]
    problems += [f"labelled false positive is back as a {hit.severity}: {label.location} {label.rule} "
                 f"({label.reason})" for label, hit in comparison.returned_false_positives]
    problems += [f"unlabelled {r.severity}: {r.location} {r.rule}: {r.message} (label it in labels.tsv)"
                 for r in comparison.unlabelled]
    assert not problems, "\n".join(problems)
    rows = comparison.table(LABELS)
    right = sum(r[2] for r in rows)
    total = sum(r[1] for r in rows)
    assert total == 0 or right / total >= 0.9
    assert not comparison.false_errors


def test_expert_kernels_match_their_labels() -> None:
    comparison = compare(LABELS, corpus_findings(CORPUS, ["expert"]))
    _check(comparison)
    assert comparison.reported  # the set has true positives to lose


def test_ggml_cuda_matches_its_labels() -> None:
    if not (CORPUS / "ggml-cuda" / ".version").is_file():
        pytest.skip("ggml-cuda not fetched: run `bash scripts/fetch-ggml-cuda.sh`")
    _check(compare(LABELS, corpus_findings(CORPUS, ["ggml-cuda"])))


def test_every_label_names_a_line_of_an_existing_file() -> None:
    for label in LABELS:
        file, line = label.location.rsplit(":", 1)
        path = CORPUS / file
        if file.startswith("ggml-cuda/") and not path.exists():
            continue
        assert path.is_file(), f"labels.tsv:{label.line_number}: no file {file}"
        assert 1 <= int(line) <= len(path.read_text(encoding="utf-8", errors="replace").splitlines())


def _toolkit_cub() -> Path | None:
    roots = [Path(os.environ[k]) for k in ("CUDA_HOME", "CUDA_PATH") if os.environ.get(k)]
    nvcc = shutil.which("nvcc")
    if nvcc is not None:
        roots.append(Path(nvcc).resolve().parents[1])
    roots.append(Path("/usr/local/cuda"))
    for root in roots:
        for candidate in (root / "include" / "cccl" / "cub", root / "include" / "cub"):
            if candidate.is_dir():
                return candidate
    return None


def test_cub_from_the_cuda_toolkit_raises_no_warning_or_error() -> None:
    """NVIDIA's CUB (headers of the installed toolkit, not committed): expert primitives where
    every warning or error would be a false positive."""
    cub = _toolkit_cub()
    if cub is None:
        pytest.skip("no CUDA toolkit with CUB headers")
    findings = corpus_findings(cub.parent, [cub.name])
    assert len(findings) > 50
    reported = [f"{file}:{f.span.start.line + 1} {f.rule} {f.severity}" for file, found in findings.items()
                for f in found if f.severity in ("warning", "error")]
    assert reported == []
