"""What Optimize needs, as `regrapht.environment` reports it (lsp/features/environment.py)."""

from regrapht.lsp.features.environment import Environment


def test_missing_names_what_to_install_once_each():
    ready = Environment("NVIDIA H200", "", "/usr/local/cuda/bin/nvcc", True, "m.gguf", "")
    assert ready.missing == [] and ready.to_wire()["optimize"] is True
    no_device = Environment(None, "no CUDA device found", None, True, "m.gguf", "")
    assert no_device.missing == ["a CUDA GPU (no CUDA device found)", "nvcc (the CUDA toolkit) on PATH"]
    no_pycuda = Environment(None, "not looked for: pycuda is not installed", "/nvcc", False, None, "no model")
    wire = no_pycuda.to_wire()
    assert wire["missing"] == ["pycuda in the server's Python (to reach the GPU)"] and wire["optimize"] is False
    assert wire["model"] is None and wire["modelReason"] == "no model" and wire["nvcc"] == "/nvcc"
