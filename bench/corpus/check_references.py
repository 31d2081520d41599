"""Proves the corpus's naive kernels right: each runs on the GPU and is compared with NumPy.

    python bench/corpus/check_references.py [TASKDIR...] [--out FILE.md]

The search only ever compares candidates with the original kernel, so an original that computes
the wrong thing would go unnoticed; this check is independent of the search's own worker: each
kernel is compiled with nvcc (the project's compiler), loaded with pycuda, launched per its spec
at the spec's smaller odd size (so tails are exercised and the NumPy side stays quick) on inputs
drawn with the spec's initialisers, and every output buffer is compared with a NumPy reference
written from the kernel's one-line description (float64 arithmetic; float32 outputs within
rtol/atol 1e-3 relative to the output's scale, float64 within 1e-9, integers exactly).

Exit 0 when every kernel matches, 1 when one does not, 2 without a CUDA device or pycuda.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from regrapht.evaluation.runner import load_task
from regrapht.spec.draw import generate
from regrapht.spec.model import KernelSpec
from regrapht.spec.resolve import ResolvedKernel, odd_size_variant, resolve
from regrapht.validate.compiler import Compiler
from regrapht.validate.evaluator import CudaEvaluator

Arrays = dict[str, object]
CORPUS = Path(__file__).resolve().parent


def m(a: Arrays, name: str, *shape: object) -> np.ndarray:
    return np.asarray(a[name], dtype=np.float64).reshape(*[int(s) for s in shape])


def i(a: Arrays, name: str) -> int:
    return int(a[name])


def _pad(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    widths = [(1, 1) if k in axes else (0, 0) for k in range(x.ndim)]
    return np.pad(x, widths)


def _csr_rows(ptr: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Row sums of per-non-zero values (rows may be empty)."""
    out = np.zeros((len(ptr) - 1, *values.shape[1:]))
    csum = np.concatenate([np.zeros((1, *values.shape[1:])), np.cumsum(values, axis=0)])
    out[:] = csum[ptr[1:]] - csum[ptr[:-1]]
    return out


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _jacobi(a: Arrays) -> dict[str, np.ndarray]:
    u = m(a, "u", a["ny"], a["nx"])
    out = u.copy()
    out[1:-1, 1:-1] = 0.25 * (u[1:-1, :-2] + u[1:-1, 2:] + u[:-2, 1:-1] + u[2:, 1:-1])
    return {"u_new": out}


def _heat(a: Arrays) -> dict[str, np.ndarray]:
    t = m(a, "t", a["nz"], a["ny"], a["nx"])
    out = t.copy()
    c = t[1:-1, 1:-1, 1:-1]
    lap = (t[1:-1, 1:-1, :-2] + t[1:-1, 1:-1, 2:] + t[1:-1, :-2, 1:-1] + t[1:-1, 2:, 1:-1]
           + t[:-2, 1:-1, 1:-1] + t[2:, 1:-1, 1:-1] - 6 * c)
    out[1:-1, 1:-1, 1:-1] = c + float(a["alpha"]) * lap
    return {"t_next": out}


def _depthwise_nchw(a: Arrays) -> dict[str, np.ndarray]:
    n, c, h, w = i(a, "N"), i(a, "C"), i(a, "H"), i(a, "W")
    x = _pad(m(a, "input", n, c, h, w), (2, 3))
    k = m(a, "filt", c, 3, 3)
    out = sum(x[:, :, dy:dy + h, dx:dx + w] * k[None, :, dy, dx, None, None] for dy in range(3) for dx in range(3))
    return {"output": np.asarray(out)}


def _depthwise_nhwc(a: Arrays) -> dict[str, np.ndarray]:
    h, w, c = i(a, "H"), i(a, "W"), i(a, "C")
    x = _pad(m(a, "x", h, w, c), (0, 1))
    k = m(a, "k", 3, 3, c)
    return {"y": np.asarray(sum(x[dy:dy + h, dx:dx + w, :] * k[dy, dx] for dy in range(3) for dx in range(3)))}


def _conv_valid(a: Arrays) -> dict[str, np.ndarray]:
    h, w = i(a, "H"), i(a, "W")
    img, k = m(a, "img", h, w), m(a, "kern", 3, 3)
    return {"res": np.asarray(sum(k[ky, kx] * img[ky:ky + h - 2, kx:kx + w - 2] for ky in range(3) for kx in range(3)))}


def _conv_mc(a: Arrays) -> dict[str, np.ndarray]:
    cin, cout, h, w = i(a, "cin"), i(a, "cout"), i(a, "h"), i(a, "w")
    x = _pad(m(a, "in", cin, h, w), (1, 2))
    wt = m(a, "weight", cout, cin, 3, 3)
    out = np.zeros((cout, h, w)) + m(a, "bias", cout)[:, None, None]
    for ky in range(3):
        for kx in range(3):
            out += np.einsum("oc,chw->ohw", wt[:, :, ky, kx], x[:, ky:ky + h, kx:kx + w])
    return {"out": out}


def _life(a: Arrays) -> dict[str, np.ndarray]:
    w, h = i(a, "width"), i(a, "height")
    cur = np.asarray(a["cur"], dtype=np.int64).reshape(h, w)
    p = _pad(cur, (0, 1))
    alive = sum(p[1 + dy:1 + dy + h, 1 + dx:1 + dx + w] for dy in (-1, 0, 1) for dx in (-1, 0, 1) if dy or dx)
    return {"next": ((alive == 3) | ((cur == 1) & (alive == 2))).astype(np.uint8)}


def _jacobi_f64_flat(a: Arrays) -> dict[str, np.ndarray]:
    nx, ny = i(a, "nx"), i(a, "ny")
    u = m(a, "u", ny, nx)
    out = u.copy()
    out[1:-1, 1:-1] = 0.25 * (u[1:-1, :-2] + u[1:-1, 2:] + u[:-2, 1:-1] + u[2:, 1:-1])
    return {"u_new": out}


def _heat_insulated(a: Arrays) -> dict[str, np.ndarray]:
    nx, ny, nz, r = i(a, "nx"), i(a, "ny"), i(a, "nz"), float(a["r"])
    t = m(a, "T", nz, ny, nx)
    p = np.pad(t, 1, mode="edge")  # a missing neighbour is the point itself
    near = sum(p[1 + dz:1 + dz + nz, 1 + dy:1 + dy + ny, 1 + dx:1 + dx + nx]
               for dz, dy, dx in ((-1, 0, 0), (1, 0, 0), (0, -1, 0), (0, 1, 0), (0, 0, -1), (0, 0, 1)))
    return {"T_next": t + r * (near - 6 * t)}


def _d2_fourth_order(a: Arrays) -> dict[str, np.ndarray]:
    f, h = m(a, "f", -1), float(a["inv_h2"])
    out = f.copy()
    out[2:-2] = h * (-2.5 * f[2:-2] + (4 / 3) * (f[1:-3] + f[3:-1]) - (1 / 12) * (f[:-4] + f[4:]))
    return {"d2f": out}


def _conv5x5(a: Arrays) -> dict[str, np.ndarray]:
    rows, cols = i(a, "rows"), i(a, "cols")
    x = np.pad(m(a, "image", rows, cols), 2)
    k = m(a, "filter", 5, 5)
    return {"result": np.asarray(sum(k[u, v] * x[u:u + rows, v:v + cols] for u in range(5) for v in range(5)))}


def _depthwise_nchw_batched(a: Arrays) -> dict[str, np.ndarray]:
    planes, channels, h, w = i(a, "planes"), i(a, "channels"), i(a, "height"), i(a, "width")
    x = _pad(m(a, "src", planes, h, w), (1, 2))
    k = m(a, "taps", channels, 3, 3)[np.arange(planes) % channels]
    return {"dst": np.asarray(sum(k[:, dy, dx, None, None] * x[:, dy:dy + h, dx:dx + w]
                                  for dy in range(3) for dx in range(3)))}


def _stencil1d(a: Arrays) -> dict[str, np.ndarray]:
    x, w = np.pad(m(a, "in", -1), 4), m(a, "w", 9)
    n = i(a, "n")
    return {"out": np.asarray(sum(w[o] * x[o:o + n] for o in range(9)))}


def _spmm(a: Arrays) -> dict[str, np.ndarray]:
    ptr, idx = np.asarray(a["indptr"], dtype=np.int64), np.asarray(a["indices"], dtype=np.int64)
    b = m(a, "B", a["n_cols"], a["n_dense"])
    data = m(a, "data", -1)
    out = np.zeros((i(a, "n_rows"), i(a, "n_dense")))
    for start in range(0, len(out), 8192):  # bounded memory: 8192 rows of products at a time
        rows = slice(start, min(start + 8192, len(out)))
        lo, hi = ptr[rows.start], ptr[rows.stop]
        out[rows] = _csr_rows(ptr[rows.start:rows.stop + 1] - lo, data[lo:hi, None] * b[idx[lo:hi]])
    return {"C": out}


def _topk(a: Arrays) -> dict[str, np.ndarray]:
    x = m(a, "x", a["rows"], a["cols"])
    order = np.argsort(-x, axis=1, kind="stable")[:, :4]
    return {"top_val": np.take_along_axis(x, order, axis=1), "top_idx": order}


def _argmax_packed(a: Arrays) -> dict[str, np.ndarray]:
    v = np.asarray(a["v"], dtype=np.float32)
    keys = (v.view(np.uint32).astype(np.uint64) << np.uint64(32)) | np.arange(len(v), dtype=np.uint64)
    return {"best": np.array([keys.max()], dtype=np.uint64)}


def _first_index(hits: np.ndarray, none: int, dtype: type) -> np.ndarray:
    """The least index where `hits` holds, else `none` (what atomicMin leaves in a result set to it)."""
    found = np.flatnonzero(hits)
    return np.array([found[0] if found.size else none], dtype=dtype)


REFERENCES: dict[str, Callable[[Arrays], dict[str, np.ndarray]]] = {
    # test split
    "gelu_tanh": lambda a: {"y": (x := m(a, "x", -1)) * 0.5 * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x**3)))},
    "logistic_f64": lambda a: {"out": 1 / (1 + np.exp(-m(a, "in", -1)))},
    "int_total_atomic": lambda a: {"total": np.array([np.asarray(a["values"], dtype=np.int64).sum()])},
    "column_mean": lambda a: {"mean": m(a, "data", a["rows"], a["cols"]).mean(axis=0)},
    "row_max": lambda a: {"out": m(a, "m", a["nrows"], a["ncols"]).max(axis=1)},
    "softmax_rows": lambda a: {"y": _softmax(m(a, "x", a["rows"], a["cols"]))},
    "rmsnorm": lambda a: {"out": (x := m(a, "in", a["rows"], a["hidden"]))
                          / np.sqrt((x**2).mean(axis=1, keepdims=True) + float(a["eps"])) * m(a, "weight", -1)},
    "row_cumsum": lambda a: {"dst": np.cumsum(m(a, "src", a["rows"], a["cols"]), axis=1)},
    "array_scan_int": lambda a: {"out": np.cumsum(np.asarray(a["in"], dtype=np.int64))},
    "gemv_rowmajor": lambda a: {"y": m(a, "A", a["M"], a["N"]) @ m(a, "x", -1)},
    "gemv_transposed": lambda a: {"out": m(a, "a", a["m"], a["n"]).T @ m(a, "v", -1)},
    "gemm_alpha_beta": lambda a: {"C": float(a["alpha"]) * (m(a, "A", a["M"], a["K"]) @ m(a, "B", a["K"], a["N"]))
                                  + float(a["beta"]) * m(a, "C", a["M"], a["N"])},
    "bmm_small": lambda a: {"C": m(a, "A", a["batch"], a["M"], a["K"]) @ m(a, "B", a["batch"], a["K"], a["N"])},
    "transpose_f64": lambda a: {"dst": m(a, "src", a["rows"], a["cols"]).T},
    "rotate_cw": lambda a: {"rot": np.rot90(m(a, "img", a["height"], a["width"]), -1)},
    "jacobi2d": _jacobi,
    "heat3d": _heat,
    "depthwise3x3_nchw": _depthwise_nchw,
    "conv2d_valid3x3": _conv_valid,
    "hist_few_bins": lambda a: {"hist": np.bincount(np.asarray(a["keys"]) % i(a, "nbins"), minlength=i(a, "nbins"))},
    "spmv_csr": lambda a: {"y": _csr_rows(np.asarray(a["row_ptr"], dtype=np.int64),
                                          m(a, "vals", -1) * m(a, "x", -1)[np.asarray(a["col_idx"])])},
    "gather_table": lambda a: {"out": m(a, "table", -1)[np.asarray(a["index"])]},
    "row_argmax": lambda a: {"best_idx": m(a, "scores", a["rows"], a["cols"]).argmax(axis=1)},
    # train split
    "swish_template": lambda a: {"y": (x := m(a, "x", -1)) / (1 + np.exp(-x))},
    "axpby_int": lambda a: {"z": i(a, "a") * np.asarray(a["x"], dtype=np.int64) + i(a, "b") * np.asarray(a["y"], dtype=np.int64)},
    "softplus_f64": lambda a: {"out": np.log(1 + np.exp(m(a, "in", -1)))},
    "float_sum_atomic": lambda a: {"result": np.array([m(a, "data", -1).sum()])},
    "abs_sum_interleaved_f32": lambda a: {"result": np.array([np.abs(m(a, "x", -1)).sum()])},
    "max_i32_sequential_atomic": lambda a: {"result": np.array([np.asarray(a["values"]).astype(np.int64).max()])},
    "l1_norm_shared_interleaved": lambda a: {"norm": np.array([np.abs(m(a, "x", -1)).sum()])},
    "byte_hist_global_atomic": lambda a: {"bins": np.bincount(np.asarray(a["bytes"]).astype(np.int64), minlength=256)},
    "row_sumsq_f64": lambda a: {"out": (m(a, "mat", a["rows"], a["cols"]) ** 2).sum(axis=1)},
    "col_max_int": lambda a: {"colmax": np.asarray(a["a"]).reshape(i(a, "nr"), i(a, "nc")).max(axis=0)},
    "layernorm": lambda a: {"y": ((x := m(a, "x", a["n_rows"], a["n_cols"])) - x.mean(axis=1, keepdims=True))
                            / np.sqrt(x.var(axis=1, keepdims=True) + float(a["eps"]))
                            * m(a, "gamma", -1) + m(a, "beta", -1)},
    "log_softmax": lambda a: {"logp": np.log(_softmax(m(a, "logits", a["batch"], a["classes"])))},
    "row_exclusive_int": lambda a: {"offsets": np.cumsum(x := np.asarray(a["counts"], dtype=np.int64).reshape(
        i(a, "nrows"), i(a, "width")), axis=1) - x},
    "array_exclusive_f64": lambda a: {"out": np.cumsum(x := m(a, "in", -1)) - x},
    "scan_recurrence_i32": lambda a: {"out": np.cumsum(np.asarray(a["in"], dtype=np.int64)).astype(np.int32)},
    "scan_offsets_total_u32": lambda a: {"offsets": (np.cumsum(x := np.asarray(a["lengths"], dtype=np.uint64)) - x)
                                         .astype(np.uint32), "total": np.array([x.sum()], dtype=np.uint32)},
    "scan_template_i64": lambda a: {"b": np.cumsum(np.asarray(a["a"], dtype=np.int64))},
    "scan_inplace_f32": lambda a: {"x": np.cumsum(m(a, "x", -1))},
    "scan_chunks_f32": lambda a: {"dst": np.cumsum(m(a, "src", -1))},
    "scan_exclusive_recurrence_f64": lambda a: {"out": np.cumsum(x := m(a, "in", -1)) - x},
    "dgemv_accumulate": lambda a: {"y": m(a, "y", -1) + m(a, "A", a["rows"], a["cols"]) @ m(a, "x", -1)},
    "gemv_colmajor": lambda a: {"y": m(a, "A", a["n"], a["m"]).T @ m(a, "x", -1)},
    "sgemv_t_beta": lambda a: {"y": float(a["alpha"]) * (m(a, "A", a["rows"], a["cols"]).T @ m(a, "x", -1))
                               + float(a["beta"]) * m(a, "y", -1)},
    "dgemv_colmajor_ld": lambda a: {"out": m(a, "a", a["ncols"], a["lda"])[:, :i(a, "nrows")].T @ m(a, "v", -1)},
    "gemm_nt": lambda a: {"c": m(a, "a", a["m"], a["k"]) @ m(a, "b", a["n"], a["k"]).T},
    "bmm_fixed16": lambda a: {"C": m(a, "A", a["nmat"], 16, 16) @ m(a, "B", a["nmat"], 16, 16)},
    "bmm_flat_f64": lambda a: {"C": float(a["alpha"]) * (m(a, "A", a["batch"], a["M"], a["K"])
                                                        @ m(a, "Bt", a["batch"], a["N"], a["K"]).transpose(0, 2, 1))},
    "bmm_tpl_gridstride": lambda a: {"out": m(a, "lhs", a["nbatch"], 8, 32) @ m(a, "rhs", a["nbatch"], 32, 16)},
    "bmm_z_tn": lambda a: {"C": m(a, "At", a["batch"], a["K"], a["M"]).transpose(0, 2, 1) @ m(a, "B", a["batch"], a["K"], a["N"])
                           + float(a["beta"]) * m(a, "C", a["batch"], a["M"], a["N"])},
    "bmm_helper_alpha_beta": lambda a: {"C": float(a["alpha"]) * (m(a, "A", a["batch"], a["M"], a["K"])
                                                                 @ m(a, "B", a["batch"], a["K"], a["N"]))
                                        + float(a["beta"]) * m(a, "C", a["batch"], a["M"], a["N"])},
    "ibmm_while_z": lambda a: {"C": np.asarray(a["A"], dtype=np.int64).reshape(i(a, "batch"), i(a, "M"), i(a, "K"))
                               @ np.asarray(a["B"], dtype=np.int64).reshape(i(a, "batch"), i(a, "K"), i(a, "N"))},
    "permute3d_021": lambda a: {"out": m(a, "in", a["d0"], a["d1"], a["d2"]).transpose(0, 2, 1)},
    "transpose_i32": lambda a: {"out": np.asarray(a["in"]).reshape(i(a, "height"), i(a, "width")).T},
    "stencil1d_r4": _stencil1d,
    "life_step": _life,
    "conv3x3_multichannel": _conv_mc,
    "depthwise3x3_nhwc": _depthwise_nhwc,
    "jacobi2d_f64_flat": _jacobi_f64_flat,
    "heat3d_insulated": _heat_insulated,
    "stencil1d_5pt_const": _d2_fourth_order,
    "conv5x5_zero_pad": _conv5x5,
    "depthwise3x3_nchw_batched": _depthwise_nchw_batched,
    "hist_4096_bins": lambda a: {"bins": np.bincount(np.asarray(a["vals"], dtype=np.uint32) >> 20, minlength=4096)},
    "hist_unit_floats": lambda a: {"counts": np.bincount(np.clip(
        (np.asarray(a["samples"], dtype=np.float32) * np.float32(i(a, "nbins"))).astype(np.int64), 0, i(a, "nbins") - 1),
        minlength=i(a, "nbins"))},
    "spmm_csr": _spmm,
    "spmv_csr_scaled": lambda a: {"y": float(a["alpha"]) * _csr_rows(np.asarray(a["rp"], dtype=np.int64),
                                      m(a, "a", -1) * m(a, "x", -1)[np.asarray(a["ci"])]) + float(a["beta"]) * m(a, "y", -1)},
    "spmv_csr_short_int": lambda a: {"totals": _csr_rows(np.asarray(a["start"], dtype=np.int64), np.asarray(
        a["weights"], dtype=np.int64) * np.asarray(a["counts"], dtype=np.int64)[np.asarray(a["cols"])]).astype(np.int64)},
    "spmv_csr_f64": lambda a: {"res": _csr_rows(np.asarray(a["rowstart"], dtype=np.int64),
                                                m(a, "val", -1) * m(a, "vec", -1)[np.asarray(a["colind"])])},
    "scatter_add": lambda a: {"dst": m(a, "dst", -1) + np.bincount(np.asarray(a["dst_index"]), weights=m(a, "src", -1),
                                                                   minlength=i(a, "dst_size"))},
    "embedding_gather": lambda a: {"out": m(a, "weight", a["vocab"], a["dim"])[np.asarray(a["tokens"])]},
    "gather_rows_walk": lambda a: {"dst": m(a, "weights", a["vocab"], a["dim"])[np.asarray(a["ids"])]},
    "gather_flat_f64": lambda a: {"out": m(a, "table", a["table_rows"], a["d"])[np.asarray(a["rows"])].reshape(-1)[
        :i(a, "total")]},
    "global_argmax": _argmax_packed,
    "row_top4": _topk,
    "first_negative_f32": lambda a: {"first": _first_index(m(a, "x", -1) < 0, i(a, "n"), np.int32)},
    "find_key_i32": lambda a: {"where": _first_index(np.asarray(a["keys"]) == i(a, "key"), i(a, "count"), np.uint32)},
    "hist_size_t_bytes": lambda a: {"counts": np.bincount(np.asarray(a["data"], dtype=np.uint8) >> 4, minlength=16)
                                    .astype(np.uint64)},
    "hist_u64_mod_bins": lambda a: {"bins": np.bincount(np.asarray(a["keys"], dtype=np.uint64) % 1000, minlength=1000)
                                    .astype(np.uint64)},
    "hist_uint64_float_bins": lambda a: {"hist": np.bincount(np.clip((np.asarray(a["samples"], dtype=np.float32)
                                                                      * np.float32(512)).astype(np.int64), 0, 511),
                                                             minlength=512).astype(np.uint64)},
    "first_above_f64": lambda a: {"pos": _first_index(m(a, "data", -1) > np.asarray(a["limit"], dtype=np.float64), i(a, "n"),
                                                      np.uint64)},
}


def close(got: np.ndarray, want: np.ndarray) -> str | None:
    """None when `got` matches `want`, else where and how it differs."""
    want = np.asarray(want).reshape(-1)
    got = got.reshape(-1)
    if got.shape != want.shape:
        return f"{got.size} elements, reference has {want.size}"
    if got.dtype.kind in "iub":
        bad = np.flatnonzero(got.astype(np.int64) != want.astype(np.int64)) if got.dtype != np.uint64 \
            else np.flatnonzero(got != want.astype(np.uint64))
    else:
        rtol = 1e-9 if got.dtype == np.float64 else 1e-3
        atol = rtol * max(1.0, float(np.abs(want).max(initial=0.0)))
        bad = np.flatnonzero(~(np.abs(got.astype(np.float64) - want) <= atol + rtol * np.abs(want)))
    if len(bad):
        k = int(bad[0])
        return f"{len(bad)} of {got.size} differ, first [{k}]: {got[k]} != {want[k]}"
    return None


@dataclass
class Prepared:
    source: str
    kernel: KernelSpec
    resolved: ResolvedKernel
    host: dict[str, np.ndarray]  # every buffer as it is before the launch (outputs poisoned)
    expected: dict[str, np.ndarray]  # the NumPy reference of every out / inout buffer


def prepare(directory: Path, seed: int = 1234) -> Prepared:
    """Inputs per the spec at its smaller odd size, and the NumPy reference for them."""
    task = load_task(directory)
    kernel = task.spec.kernels[0]
    base = resolve(kernel)
    resolved = resolve(kernel, overrides=odd_size_variant(kernel, base) or None)
    rng = np.random.default_rng(seed)
    values: Arrays = dict(resolved.scalars)
    host: dict[str, np.ndarray] = {}
    for buffer in resolved.buffers:
        if buffer.init is not None:
            host[buffer.name] = generate(buffer.init, buffer.count, buffer.dtype, rng)
        else:  # poisoned, as the checker does: an element the kernel does not write is caught
            host[buffer.name] = np.full(buffer.nbytes, 0xFF, dtype=np.uint8).view(buffer.dtype)
        values[buffer.name] = host[buffer.name].copy()
    expected = REFERENCES[directory.name](values)
    return Prepared(task.source_path.read_text(encoding="utf-8"), kernel, resolved, host, expected)


def check(directory: Path, compiler: Compiler, cache: Path) -> str | None:
    """None when the kernel's outputs match NumPy, else what differs."""
    import pycuda.driver as drv

    ready = prepare(directory)
    resolved = ready.resolved
    evaluator = CudaEvaluator(ready.source, ready.kernel.name, ready.kernel, arch="sm_90", worker=None,
                              cache_dir=cache, compiler=compiler, file=str(directory / f"{directory.name}.cu"))
    assert evaluator.original.cubin is not None
    function = drv.module_from_buffer(evaluator.original.cubin).get_function(evaluator.original_entry)
    args: list[object] = []
    device: dict[str, object] = {}
    for name, kind in resolved.args:
        if kind == "buffer":
            device[name] = drv.to_device(ready.host[name])
            args.append(device[name])
        else:
            args.append(np.dtype(resolved.scalar_dtypes[name]).type(resolved.scalars[name]))
    function(*args, grid=resolved.grid, block=resolved.block, shared=resolved.shared_bytes)
    drv.Context.synchronize()
    problems = []
    for buffer in resolved.buffers:
        if buffer.role == "in":
            continue
        got = drv.from_device(device[buffer.name], (buffer.count,), np.dtype(buffer.dtype))
        if buffer.name not in ready.expected:
            problems.append(f"{buffer.name}: no reference")
        elif (why := close(got, ready.expected[buffer.name])) is not None:
            problems.append(f"{buffer.name}: {why}")
    return "; ".join(problems) or None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tasks", nargs="*", help="task directories (default: both corpus splits)")
    parser.add_argument("--out", help="also write the results as a markdown table here")
    args = parser.parse_args(argv)
    tasks = [Path(t) for t in args.tasks] or sorted(p for s in ("test", "train") for p in (CORPUS / s).iterdir()
                                                    if p.is_dir())
    missing = [t.name for t in tasks if t.name not in REFERENCES]
    if missing:
        print(f"check_references: no NumPy reference for {', '.join(missing)}", file=sys.stderr)
        return 2
    try:
        import pycuda.autoinit  # noqa: F401 - creates the context
        import pycuda.driver as drv
    except Exception as error:  # noqa: BLE001 - ImportError or a CUDA init failure: both mean no device
        print(f"check_references: no CUDA device ({type(error).__name__}: {error})", file=sys.stderr)
        return 2
    lines = [f"# Naive corpus kernels against NumPy ({drv.Device(0).name()})", "", "| task | result |", "|---|---|"]
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp)
        compiler = Compiler.from_environment(os.environ, cache)
        for directory in tasks:
            try:
                problem = check(directory, compiler, cache)
            except Exception as error:  # noqa: BLE001 - a launch failure of one kernel is that kernel's result
                problem = f"{type(error).__name__}: {error}"
            failed += problem is not None
            lines.append(f"| {directory.parent.name}/{directory.name} | {problem or 'matches NumPy'} |")
            print(lines[-1], flush=True)
    lines += ["", f"{len(tasks) - failed} of {len(tasks)} match."]
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(lines[-1])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
