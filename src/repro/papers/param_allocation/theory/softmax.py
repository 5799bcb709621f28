"""The softmax Jacobian and the saturation bound for bounded logits.

For logits z ∈ R^L and p = softmax(z), the Jacobian of p with respect to z is

    J(z) = diag(p) − p pᵀ                      (symmetric, positive semi-definite, J·1 = 0).

Saturation (Yu et al. 2025, arXiv v1 Theorem 2 = ICLR Theorem 5.1; catalog §1.4): if |z_i| ≤ Λ
for every i, then e^{−2Λ}/L ≤ p_i ≤ e^{2Λ}/L, and since J ≼ diag(p),

    ‖J(z)‖₂ ≤ max_i p_i ≤ e^{2Λ}/L.

So the sensitivity of attention weights to their logits falls like 1/L.

Score error (Corollary 2 = ICLR Corollary 5.1; catalog §1.5): for two logit vectors z, z′ both
bounded by Λ, the mean-value theorem along the segment (every point of which is bounded by Λ) and
(J v)_i = p_i (v_i − pᵀv) give

    |p_i − p′_i| ≤ 2 e^{2Λ}/L · ‖z − z′‖_∞        (per entry, O(Λ/L) since ‖z − z′‖_∞ ≤ 2Λ)
    ‖p − p′‖₂    ≤   e^{2Λ}/L · ‖z − z′‖₂          (ℓ2, O(Λ/√L))

and no decaying bound in ℓ1. All functions work on the last axis, in float64.

The spectral norm is exact: J is a rank-one downdate of diag(p), so its largest eigenvalue is the
root in [p₍₂₎, p₍₁₎] of the secular equation 1 = Σ_i p_i² / (p_i − λ) (p₍₁₎ ≥ p₍₂₎ the two largest
entries), found to machine precision by bisection. This costs O(L) per vector, where an
eigendecomposition would cost O(L³), and lets the measurement reach L = 4096 and beyond.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

import numpy as np

LOGIT_KINDS = ("uniform", "signs", "spike")
_BISECTION_STEPS = 200  # an upper limit; float64 brackets shrink to machine precision in ~55


def softmax(z: np.ndarray) -> np.ndarray:
    """softmax over the last axis, float64, stable for any finite z."""
    z = np.asarray(z, dtype=np.float64)
    shifted = np.exp(z - z.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


def jacobian(p: np.ndarray) -> np.ndarray:
    """J = diag(p) − p pᵀ for a probability vector p [..., L] -> [..., L, L]."""
    p = np.asarray(p, dtype=np.float64)
    return p[..., :, None] * np.eye(p.shape[-1]) - p[..., :, None] * p[..., None, :]


def jacobian_spectral_norm(p: np.ndarray) -> np.ndarray:
    """‖diag(p) − p pᵀ‖₂ for probability vectors p [..., L], exactly (see module docstring); shape [...].

    The largest eigenvalue λ of the downdate lies in [p₍₂₎, p₍₁₎]. If the two largest entries tie,
    λ = p₍₁₎ (the vector e₁ − e₂ is orthogonal to p). Otherwise f(λ) = 1 − Σ p_i²/(p_i − λ) falls
    strictly from +∞ to −∞ on (p₍₂₎, p₍₁₎) and bisection finds its single root (Newton steps
    overshoot near the pole at p₍₁₎, so plain bisection is used: about 50 halvings).
    """
    p = np.asarray(p, dtype=np.float64)
    if p.shape[-1] < 1:
        raise ValueError("jacobian_spectral_norm needs at least one entry")
    flat = p.reshape(-1, p.shape[-1])
    if flat.shape[1] == 1:  # softmax of one logit is constant: J = 0
        return np.zeros(p.shape[:-1])
    top2 = -np.partition(-flat, 1, axis=1)[:, :2]  # [N, 2]: p(1) ≥ p(2)
    lo, hi = top2[:, 1].copy(), top2[:, 0].copy()
    tied = hi - lo <= 0.0
    squares = flat**2
    tolerance = 4 * np.finfo(np.float64).eps * np.maximum(hi, np.finfo(np.float64).tiny)
    for _ in range(_BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        with np.errstate(divide="ignore", invalid="ignore"):
            f = 1.0 - np.sum(squares / (flat - mid[:, None]), axis=1)
        above = f > 0  # f is decreasing: the root lies above mid
        lo = np.where(above, mid, lo)
        hi = np.where(above, hi, mid)
        if np.all((hi - lo <= tolerance) | tied):
            break
    lam = 0.5 * (lo + hi)
    result = np.where(tied, top2[:, 0], lam)
    return result.reshape(p.shape[:-1])


def probability_bounds(length: int | np.ndarray, logit_bound: float) -> tuple[np.ndarray, np.ndarray]:
    """(e^{−2Λ}/L, e^{2Λ}/L): the range of every softmax weight when |z_i| ≤ Λ."""
    length = np.asarray(length, dtype=np.float64)
    return np.exp(-2.0 * logit_bound) / length, np.exp(2.0 * logit_bound) / length


def jacobian_bound(length: int | np.ndarray, logit_bound: float) -> np.ndarray:
    """e^{2Λ}/L, the saturation bound on ‖J(z)‖₂ for |z_i| ≤ Λ."""
    return probability_bounds(length, logit_bound)[1]


def per_entry_error_bound(length, logit_bound: float, logit_change_inf) -> np.ndarray:
    """2 e^{2Λ}/L · ‖z − z′‖_∞: the corollary's bound on max_i |p_i − p′_i|."""
    return 2.0 * jacobian_bound(length, logit_bound) * np.asarray(logit_change_inf, dtype=np.float64)


def l2_error_bound(length, logit_bound: float, logit_change_l2) -> np.ndarray:
    """e^{2Λ}/L · ‖z − z′‖₂: the corollary's bound on ‖p − p′‖₂."""
    return jacobian_bound(length, logit_bound) * np.asarray(logit_change_l2, dtype=np.float64)


def sample_bounded_logits(kind: str, n: int, length: int, logit_bound: float, rng: np.random.Generator) -> np.ndarray:
    """n logit vectors of length L with |z_i| ≤ Λ, [n, L].

    uniform: z_i ~ U[−Λ, Λ] i.i.d. (typical logits);
    signs:   z_i = ±Λ with random signs (the extreme points of the box);
    spike:   one entry +Λ (at a random place), all others −Λ: the vector that makes max_i p_i
             largest, so ‖J‖₂ approaches the bound e^{2Λ}/L once L ≫ e^{2Λ}.
    """
    if kind not in LOGIT_KINDS:
        raise ValueError(f"unknown logit kind {kind!r}; choose one of: {', '.join(LOGIT_KINDS)}")
    if logit_bound < 0 or n < 1 or length < 1:
        raise ValueError(f"need logit_bound ≥ 0, n ≥ 1 and length ≥ 1 (got {logit_bound}, {n}, {length})")
    if kind == "uniform":
        return rng.uniform(-logit_bound, logit_bound, size=(n, length))
    if kind == "signs":
        return logit_bound * rng.choice([-1.0, 1.0], size=(n, length))
    z = np.full((n, length), -float(logit_bound))
    z[np.arange(n), rng.integers(0, length, size=n)] = logit_bound
    return z


def jacobian_norm_table(lengths, logit_bounds, samples: int, seed: int, kinds=LOGIT_KINDS) -> pd.DataFrame:
    """‖J(z)‖₂ for `samples` random bounded logit vectors per (kind, Λ, L), one row per vector.

    Columns: kind, logit_bound, length, sample, spectral_norm, max_prob, bound (e^{2Λ}/L),
    scaled_norm (L·‖J‖₂) and ratio (‖J‖₂ / bound, ≤ 1 by the theorem). Each (kind, Λ, L) cell
    draws from its own stream, so adding a length does not change the others.
    """
    import pandas as pd

    rows = []
    for kind in kinds:
        for bound in logit_bounds:
            for length in lengths:
                rng = np.random.default_rng([int(seed), LOGIT_KINDS.index(kind), int(round(1000 * bound)), int(length)])
                p = softmax(sample_bounded_logits(kind, samples, int(length), float(bound), rng))
                norms = jacobian_spectral_norm(p)
                limit = float(jacobian_bound(length, bound))
                for index, (norm, top) in enumerate(zip(norms, p.max(axis=1))):
                    rows.append((kind, float(bound), int(length), index, norm, top, limit, length * norm, norm / limit))
    columns = ["kind", "logit_bound", "length", "sample", "spectral_norm", "max_prob", "bound", "scaled_norm", "ratio"]
    return pd.DataFrame(rows, columns=columns)


__all__ = [
    "LOGIT_KINDS",
    "jacobian_norm_table",
    "jacobian",
    "jacobian_bound",
    "jacobian_spectral_norm",
    "l2_error_bound",
    "per_entry_error_bound",
    "probability_bounds",
    "sample_bounded_logits",
    "softmax",
]
