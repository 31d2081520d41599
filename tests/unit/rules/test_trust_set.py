"""The trust set of issue 27 (tests/data/realworld/trust/): the split is fixed by the paths alone,
the manifest and both label files are well formed and name lines of the set's files, and, where
the code bases are fetched (scripts/fetch-labelled-corpus.sh), the files are the labelled
versions and every warning and error of the test split carries an honest label. Plus the rule
change the train split asked for outside R004/R005/R013 (R009 on bookkeeping launches)."""

from __future__ import annotations

from pathlib import Path

import pytest

from regrapht.evaluation.labelled_findings import files_findings, load_labels
from regrapht.evaluation.trust_set import CODE_BASES, file_sha256, read_manifest, split_of, tally
from regrapht.rules import analyze_text

CORPUS = Path(__file__).resolve().parents[2] / "data" / "realworld"
TRUST = CORPUS / "trust"
MANIFEST = read_manifest(TRUST / "manifest.tsv")


def test_the_split_depends_on_the_path_alone_and_halves_the_set() -> None:
    assert split_of("ggml-cuda/convert.cu") == split_of("ggml-cuda/convert.cu")
    assert all(split == split_of(path) for path, (_, split) in MANIFEST.items())
    tests = sum(1 for _, split in MANIFEST.values() if split == "test")
    assert 0.4 < tests / len(MANIFEST) < 0.6
    assert {path.split("/")[0] for path in MANIFEST} == set(CODE_BASES)


@pytest.mark.parametrize("split", ["test", "train"])
def test_labels_name_lines_of_their_split(split: str) -> None:
    labels = load_labels(TRUST / f"labels-{split}.tsv")
    assert labels
    for label in labels:
        file, line = label.location.rsplit(":", 1)
        assert MANIFEST[file][1] == split, f"labels-{split}.tsv:{label.line_number}: {file} is not in {split}"
        assert label.verdict in ("fix", "right", "wrong") and int(line) >= 1


def _fetched() -> bool:
    return all((CORPUS / name / ".version").is_file() for name in CODE_BASES)


def test_fetched_files_are_the_labelled_versions() -> None:
    if not _fetched():
        pytest.skip("trust set not fetched: run `bash scripts/fetch-labelled-corpus.sh`")
    for path, (sha, _) in MANIFEST.items():
        assert file_sha256(CORPUS / path) == sha, path


def test_every_warning_and_error_of_the_test_split_is_labelled() -> None:
    """Not a precision gate: a new finding must get its own honest label, never a relabel."""
    if not _fetched():
        pytest.skip("trust set not fetched: run `bash scripts/fetch-labelled-corpus.sh`")
    files = [path for path, (_, split) in MANIFEST.items() if split == "test"]
    rows = tally(load_labels(TRUST / "labels-test.tsv"), files_findings(CORPUS, files))
    unlabelled = [(row.rule, row.unlabelled) for row in rows if row.kind == "reported" and row.unlabelled]
    assert unlabelled == []


def found(text: str, rule: str) -> list[tuple[str, int]]:
    return [(f.severity, f.span.start.line + 1) for f in analyze_text(text) if f.rule == rule]


def test_r009_a_fixed_handful_of_bookkeeping_threads_is_silent() -> None:
    """LightGBM's split kernels: `<<<3, 5>>>`, each thread writes a few fields of one tree node."""
    text = """__global__ void split(int *a) { a[threadIdx.x + blockIdx.x * blockDim.x] = 1; }
void host(int *a, int n, cudaStream_t s) {
  split<<<3, 5, 0, s>>>(a);
  dim3 grid(2, 2);
  split<<<grid, 6>>>(a);
  split<<<(n + 99) / 100, 100>>>(a);
  split<<<64, 100>>>(a);
}"""
    assert found(text, "R009") == [("warning", 6), ("warning", 7)]
