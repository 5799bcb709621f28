"""Low-rank attention heads: truncated-SVD students of a bilinear teacher and their attention-score error.

A head's logits are bilinear in the query and key inputs, z_s = x_qᵀ A x_s with A = W_Q W_Kᵀ/√d_h.
A head of dimension r can realise any A of rank ≤ r; the best one in spectral norm is the
truncated SVD A_r (Eckart–Young), with ‖A − A_r‖₂ = σ_{r+1}(A). For inputs on the unit sphere,
|z_s − z′_s| ≤ σ_{r+1}(A), and |z_s| ≤ ‖A‖₂ = Λ bounds the logits of both heads (‖A_r‖₂ ≤ ‖A‖₂).
Corollary 2 of Yu et al. (2025) (catalog §1.5) then bounds the score error per entry by
2e^{2Λ}σ_{r+1}/L and in ℓ2 by e^{2Λ}‖z − z′‖₂/L: see `repro.papers.param_allocation.theory.softmax`.

`score_error_table` measures those errors against the number of keys L for a random teacher,
together with the error of the head's output o = Σ_s p_s v_s for white-noise values v_s,
which falls like ‖p − p′‖₂ = O(1/√L).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

import numpy as np

from repro.papers.param_allocation.theory.softmax import l2_error_bound, per_entry_error_bound, softmax


def unit_sphere(rng: np.random.Generator, *shape: int) -> np.ndarray:
    """Points drawn uniformly from the unit sphere of R^shape[-1], float64 [*shape]."""
    x = rng.standard_normal(shape)
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def random_orthogonal(dim: int, rng: np.random.Generator) -> np.ndarray:
    """A Haar-random orthogonal matrix [dim, dim] (QR of a Gaussian matrix, signs fixed)."""
    q, r = np.linalg.qr(rng.standard_normal((dim, dim)))
    return q * np.sign(np.diag(r))


def teacher_spectrum(dim: int, decay: float) -> np.ndarray:
    """Singular values s_i = i^{−decay}, i = 1..dim (s_1 = 1; decay 0 gives a flat spectrum)."""
    if dim < 1 or decay < 0:
        raise ValueError(f"teacher_spectrum needs dim ≥ 1 and decay ≥ 0 (got {dim}, {decay})")
    return np.arange(1, dim + 1, dtype=np.float64) ** (-float(decay))


def bilinear_teacher(dim: int, logit_bound: float, decay: float, rng: np.random.Generator) -> np.ndarray:
    """A = Λ·U diag(s) Vᵀ with random orthogonal U, V and s from `teacher_spectrum`, [dim, dim].

    ‖A‖₂ = Λ, so unit-sphere inputs give logits bounded by Λ, as Theorem 2 assumes.
    """
    u, v = random_orthogonal(dim, rng), random_orthogonal(dim, rng)
    return float(logit_bound) * (u * teacher_spectrum(dim, decay)) @ v.T


def truncate(matrix: np.ndarray, rank: int) -> np.ndarray:
    """The best rank-`rank` approximation of `matrix` (truncated SVD)."""
    if rank < 0:
        raise ValueError(f"rank must be ≥ 0, got {rank}")
    u, s, vt = np.linalg.svd(matrix)
    return (u[:, :rank] * s[:rank]) @ vt[:rank]


def score_errors(
    teacher: np.ndarray,  # [d, d]
    student: np.ndarray,  # [d, d]
    queries: np.ndarray,  # [N, d]
    keys: np.ndarray,  # [N, L, d]
    values: np.ndarray,  # [N, L, dv]
) -> dict[str, np.ndarray]:
    """Per query: the largest |logit| of either head, the logit change (‖·‖_∞, ‖·‖₂), the score error
    (max entry, ℓ2, ℓ1), the output error ‖o − o′‖₂ and the teacher's output norm ‖o‖₂."""
    z = np.einsum("ne,nle->nl", queries @ teacher, keys)  # [N, L]
    z_student = np.einsum("ne,nle->nl", queries @ student, keys)
    p, p_student = softmax(z), softmax(z_student)
    dp = p - p_student
    output_error = np.einsum("nl,nlv->nv", dp, values)
    output = np.einsum("nl,nlv->nv", p, values)
    dz = z - z_student
    return {
        "max_abs_logit": np.maximum(np.abs(z).max(axis=1), np.abs(z_student).max(axis=1)),
        "logit_change_inf": np.abs(dz).max(axis=1),
        "logit_change_l2": np.linalg.norm(dz, axis=1),
        "max_entry_error": np.abs(dp).max(axis=1),
        "l2_error": np.linalg.norm(dp, axis=1),
        "l1_error": np.abs(dp).sum(axis=1),
        "output_error": np.linalg.norm(output_error, axis=1),
        "output_norm": np.linalg.norm(output, axis=1),
    }


def score_error_table(
    dim: int,
    logit_bound: float,
    spectrum_decay: float,
    ranks,
    lengths,
    queries: int,
    seed: int,
    chunk: int = 32,
) -> pd.DataFrame:
    """Errors of truncated-SVD students of one random teacher, one row per (length, rank, query).

    Queries, keys and values are uniform on the unit sphere of R^dim (values are white noise, as
    in the paper's setting). Columns: length, rank, query, sigma_next (σ_{r+1}), the measured
    errors of `score_errors`, logit_bound (the configured Λ), and the corollary's bounds:
    per_entry_bound = 2e^{2Λ}/L·‖z − z′‖_∞ and l2_bound = e^{2Λ}/L·‖z − z′‖₂ (both exact bounds for
    this pair of heads), and per_entry_bound_worst = 2e^{2Λ}/L·σ_{r+1}.
    """
    import pandas as pd

    for rank in ranks:
        if not 0 <= int(rank) <= dim:
            raise ValueError(f"rank {rank} outside [0, dim={dim}]")
    rng = np.random.default_rng([int(seed), 0])
    teacher = bilinear_teacher(dim, logit_bound, spectrum_decay, rng)
    sigma = np.append(np.linalg.svd(teacher, compute_uv=False), 0.0)
    students = {int(r): truncate(teacher, int(r)) for r in ranks}
    frames = []
    for length in lengths:
        data_rng = np.random.default_rng([int(seed), 1, int(length)])
        for start in range(0, queries, chunk):
            n = min(chunk, queries - start)
            q = unit_sphere(data_rng, n, dim)
            k = unit_sphere(data_rng, n, int(length), dim)
            v = unit_sphere(data_rng, n, int(length), dim)
            for rank, student in students.items():
                errors = score_errors(teacher, student, q, k, v)
                frame = pd.DataFrame(errors)
                frame.insert(0, "query", np.arange(start, start + n))
                frame.insert(0, "sigma_next", sigma[rank])
                frame.insert(0, "rank", rank)
                frame.insert(0, "length", int(length))
                frames.append(frame)
    table = pd.concat(frames, ignore_index=True)
    table["logit_bound"] = float(logit_bound)
    table["per_entry_bound"] = per_entry_error_bound(table["length"], logit_bound, table["logit_change_inf"])
    table["l2_bound"] = l2_error_bound(table["length"], logit_bound, table["logit_change_l2"])
    table["per_entry_bound_worst"] = per_entry_error_bound(table["length"], logit_bound, table["sigma_next"])
    return table.sort_values(["length", "rank", "query"], ignore_index=True)


__all__ = [
    "bilinear_teacher",
    "random_orthogonal",
    "score_error_table",
    "score_errors",
    "teacher_spectrum",
    "truncate",
    "unit_sphere",
]
