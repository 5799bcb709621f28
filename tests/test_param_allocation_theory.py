"""Exact checks of the theory behind "Allocation of Parameters in Transformers" (repro.papers.param_allocation.theory).

Theorem 2 (‖J‖₂ ≤ e^{2Λ}/L) and Corollary 2 (per-entry and ℓ2 score-error bounds) are checked as
exact float64 statements on random and worst-case logits; the spectral norm against a dense
eigendecomposition; the allocation minimiser against brute-force enumeration.
"""

import itertools
import math

import numpy as np
import pytest

from repro.papers.param_allocation.theory.allocation import AllocationBound, sweep_table
from repro.papers.param_allocation.theory.low_rank import (
    bilinear_teacher,
    score_error_table,
    score_errors,
    truncate,
    unit_sphere,
)
from repro.papers.param_allocation.theory.softmax import (
    jacobian,
    jacobian_bound,
    jacobian_norm_table,
    jacobian_spectral_norm,
    l2_error_bound,
    per_entry_error_bound,
    probability_bounds,
    sample_bounded_logits,
    softmax,
)


# -- softmax Jacobian ---------------------------------------------------------------------------------
@pytest.mark.parametrize("length", [1, 2, 3, 7, 33, 200])
def test_spectral_norm_matches_dense_eigendecomposition(length):
    rng = np.random.default_rng(length)
    p = softmax(rng.normal(scale=2.0, size=(25, length)))
    dense = np.array([np.linalg.eigvalsh(jacobian(row)).max() for row in p])
    np.testing.assert_allclose(jacobian_spectral_norm(p), dense, rtol=1e-11, atol=1e-15)


def test_spectral_norm_hand_computed_cases():
    # Uniform p = 1/L: J = (I − 11ᵀ/L)/L, top eigenvalue 1/L. Two equal halves: 1/2 (tie case).
    # p = (a, 1 − a): J = a(1−a)·[[1,−1],[−1,1]], top eigenvalue 2a(1−a).
    p = np.array([[0.25] * 4 + [0.0] * 0, [0.5, 0.5, 0.0, 0.0], [0.3, 0.7, 0.0, 0.0]])
    np.testing.assert_allclose(jacobian_spectral_norm(p), [0.25, 0.5, 2 * 0.3 * 0.7], rtol=1e-13)
    assert jacobian_spectral_norm(np.array([1.0])) == 0.0  # exact: the code returns zeros for one entry


def test_jacobian_is_psd_with_constant_null_vector():
    rng = np.random.default_rng(0)
    p = softmax(rng.normal(size=12))
    J = jacobian(p)
    np.testing.assert_allclose(J, J.T)
    np.testing.assert_allclose(J @ np.ones(12), 0.0, atol=1e-16)
    assert np.linalg.eigvalsh(J).min() > -1e-15
    # The analytic Jacobian matches finite differences of softmax.
    eps = 1e-6
    z = rng.normal(size=12)
    numeric = np.stack([(softmax(z + eps * e) - softmax(z - eps * e)) / (2 * eps) for e in np.eye(12)], axis=1)
    np.testing.assert_allclose(jacobian(softmax(z)), numeric, atol=1e-9)


@pytest.mark.parametrize("kind", ["uniform", "signs", "spike"])
@pytest.mark.parametrize("bound", [0.5, 1.0, 3.0])
def test_theorem2_jacobian_bound_holds_exactly(kind, bound):
    rng = np.random.default_rng([7, int(10 * bound)])
    for length in (1, 2, 16, 300, 2048):
        z = sample_bounded_logits(kind, 40, length, bound, rng)
        assert np.abs(z).max() <= bound
        p = softmax(z)
        low, high = probability_bounds(length, bound)
        assert (p >= low * (1 - 1e-12)).all() and (p <= high * (1 + 1e-12)).all()
        norms = jacobian_spectral_norm(p)
        assert (norms <= p.max(axis=1) * (1 + 1e-12)).all()  # J ≼ diag(p)
        assert (norms <= jacobian_bound(length, bound) * (1 + 1e-12)).all()


def test_spike_logits_approach_the_bound():
    # One +Λ among −Λ: max p → e^{2Λ}/L once L ≫ e^{2Λ}, and ‖J‖₂ follows.
    bound, length = 1.0, 1 << 16
    p = softmax(sample_bounded_logits("spike", 1, length, bound, np.random.default_rng(0)))
    ratio = float(jacobian_spectral_norm(p)[0] / jacobian_bound(length, bound))
    assert 0.99 < ratio <= 1.0


def test_sample_bounded_logits_rejects_bad_input():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="unknown logit kind"):
        sample_bounded_logits("gauss", 2, 4, 1.0, rng)
    with pytest.raises(ValueError, match="logit_bound"):
        sample_bounded_logits("uniform", 2, 4, -1.0, rng)


def test_jacobian_table_is_deterministic_and_per_cell():
    a = jacobian_norm_table([16, 64], [1.0, 2.0], 5, seed=3)
    b = jacobian_norm_table([16, 64, 128], [1.0, 2.0], 5, seed=3)
    assert len(a) == 3 * 2 * 2 * 5
    # Adding a length leaves the other cells unchanged (each cell has its own stream).
    common = b[b["length"] != 128].reset_index(drop=True)
    # exact: each cell is the same computation on its own stream, run twice on one machine
    np.testing.assert_array_equal(a["spectral_norm"].to_numpy(), common["spectral_norm"].to_numpy())
    np.testing.assert_allclose(a["scaled_norm"], a["length"] * a["spectral_norm"])


# -- Corollary 2: score errors -----------------------------------------------------------------------
def test_corollary2_bounds_hold_for_arbitrary_bounded_logit_pairs():
    rng = np.random.default_rng(11)
    for length in (2, 5, 64, 1000):
        for bound in (0.5, 2.0):
            z = rng.uniform(-bound, bound, size=(50, length))
            z2 = rng.uniform(-bound, bound, size=(50, length))
            dp = softmax(z) - softmax(z2)
            dz = z - z2
            per_entry = per_entry_error_bound(length, bound, np.abs(dz).max(axis=1))
            l2 = l2_error_bound(length, bound, np.linalg.norm(dz, axis=1))
            assert (np.abs(dp).max(axis=1) <= per_entry * (1 + 1e-12)).all()
            assert (np.linalg.norm(dp, axis=1) <= l2 * (1 + 1e-12)).all()
            assert (length * np.abs(dp).max(axis=1) <= 4 * bound * math.exp(2 * bound) + 1e-12).all()


def test_truncated_svd_is_the_best_low_rank_head():
    rng = np.random.default_rng(2)
    A = bilinear_teacher(12, 3.0, 0.5, rng)
    s = np.linalg.svd(A, compute_uv=False)
    assert s[0] == pytest.approx(3.0)
    for r in (0, 1, 5, 12):
        Ar = truncate(A, r)
        assert np.linalg.matrix_rank(Ar, tol=1e-10) == r
        assert np.linalg.norm(A - Ar, 2) == pytest.approx(s[r] if r < 12 else 0.0, abs=1e-12)


def test_low_rank_score_errors_respect_the_corollary_and_vanish_at_full_rank():
    rng = np.random.default_rng(4)
    A = bilinear_teacher(8, 2.0, 0.5, rng)
    q, k, v = unit_sphere(rng, 16, 8), unit_sphere(rng, 16, 40, 8), unit_sphere(rng, 16, 40, 8)
    for r in (1, 3):
        e = score_errors(A, truncate(A, r), q, k, v)
        sigma = np.linalg.svd(A, compute_uv=False)[r]
        assert (e["max_abs_logit"] <= 2.0 + 1e-12).all()
        assert (e["logit_change_inf"] <= sigma + 1e-12).all()  # Eckart–Young on unit vectors
        assert (e["max_entry_error"] <= per_entry_error_bound(40, 2.0, e["logit_change_inf"]) * (1 + 1e-12)).all()
    full = score_errors(A, truncate(A, 8), q, k, v)
    assert full["output_error"].max() < 1e-12


def test_score_error_table_columns_and_bounds():
    table = score_error_table(6, 2.0, 0.5, [1, 6], [8, 32], queries=10, seed=0, chunk=4)
    assert len(table) == 2 * 2 * 10
    assert (table["max_entry_error"] <= table["per_entry_bound"] * (1 + 1e-12) + 1e-15).all()
    assert (table["l2_error"] <= table["l2_bound"] * (1 + 1e-12) + 1e-15).all()
    assert table.loc[table["rank"] == 6, "max_entry_error"].max() < 1e-12
    with pytest.raises(ValueError, match="rank 7"):
        score_error_table(6, 2.0, 0.5, [7], [8], queries=2, seed=0)


# -- allocation bound ---------------------------------------------------------------------------------
def _brute_force(bound: AllocationBound, budget: int) -> float:
    best = math.inf
    options = [(0, 1)] + [(h, d) for h in range(1, budget + 1) for d in range(1, budget + 1) if h * d <= budget]
    for combo in itertools.product(options, repeat=bound.groups):
        if sum(h * d for h, d in combo) <= budget:
            best = min(best, bound.value([h for h, _ in combo], [d for _, d in combo]))
    return best


def test_bound_terms_hand_computed():
    b = AllocationBound(input_dim=4, weights=(2.0,), lags=(1,), epsilon=0.5, constant=1.3, growth=0.02)
    # a·min{1, (1+ε)√(1 − d/4) + 1.3 e^{0.02}/H} with a = 2
    plain = AllocationBound(input_dim=4, weights=(2.0,), lags=(1,), epsilon=0.0)
    assert plain.value([4], [3]) == pytest.approx(2 * (math.sqrt(0.25) + 1.3 * math.exp(0.02) / 4))  # 0.83 < 1
    assert b.value([3], [4]) == pytest.approx(2 * 1.3 * math.exp(0.02) / 3)  # d = input dim: no projection loss
    assert b.value([0], [1]) == pytest.approx(2.0)  # no heads: the lag is missed
    # A bracket above 1 is capped at a: the heads can always output nothing, which misses the lag
    assert 1.5 * math.sqrt(0.75) + 1.3 * math.exp(0.02) / 2 > 1 and b.value([2], [1]) == pytest.approx(2.0)
    assert 1.3 * math.exp(0.02) > 1 and b.value([1], [9]) == pytest.approx(2.0)  # d > input dim, one head


@pytest.mark.parametrize("budget", [1, 4, 7, 10])
def test_minimiser_matches_brute_force(budget):
    bound = AllocationBound(input_dim=3, weights=(1.0, 0.7), lags=(1, 2), epsilon=0.1, constant=0.4)
    best = bound.minimise(budget)
    assert best.budget_used <= budget
    assert best.value == pytest.approx(_brute_force(bound, budget), abs=1e-12)


def test_uniform_heads_matches_brute_force_over_group_counts():
    bound = AllocationBound(input_dim=4, weights=(1.0, 2.0, 0.5))
    for n_heads in (1, 2, 4, 8):
        got = bound.uniform_heads(8, n_heads)
        dim = 8 // n_heads
        brute = min(
            bound.value(list(c), [dim] * 3)
            for c in itertools.product(range(n_heads + 1), repeat=3)
            if sum(c) == n_heads
        )
        assert sum(got.heads) == n_heads and got.value == pytest.approx(brute)
    with pytest.raises(ValueError, match="divide"):
        bound.uniform_heads(8, 3)


def test_sweep_table_and_continuous_reference():
    bound = AllocationBound(input_dim=16, weights=(4.0,) * 4)
    table = sweep_table(bound, 64, [1, 2, 4, 8, 16, 32, 64])
    assert list(table["head_dim"]) == [64, 32, 16, 8, 4, 2, 1]
    assert table["heads_per_group"].str.split("+").map(lambda parts: sum(map(int, parts))).tolist() == list(
        table["heads"]
    )
    heads = bound.continuous_heads(256)
    assert sum(heads) == pytest.approx(256 / 16)
    assert heads[0] < heads[-1]  # more heads for longer lags (e^{γ m})


def test_allocation_bound_rejects_bad_input():
    with pytest.raises(ValueError, match="one lag per weight"):
        AllocationBound(input_dim=4, weights=(1.0, 1.0), lags=(1,))
    with pytest.raises(ValueError, match="input_dim"):
        AllocationBound(input_dim=0, weights=(1.0,))
