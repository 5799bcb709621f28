"""Exact identities of the bias–diversity and information decompositions (float64), and small hand examples."""

import numpy as np
import pytest

from repro.analysis import bias_diversity as bd
from repro.papers.layer_diversity import information as it


@pytest.fixture
def ensemble():
    rng = np.random.default_rng(0)
    members = rng.normal(scale=3.0, size=(200, 7, 4))  # [N, M, K]
    labels = rng.integers(0, 4, size=200)
    return members, labels


# --------------------------------------------------------------------------- squared error


def test_hand_example():
    # two members [0, 0] and [2, 0] around the target [1, 0]: the mean is exact, all error is diversity
    d = bd.decompose(np.array([[[0.0, 0.0], [2.0, 0.0]]]), np.array([[1.0, 0.0]]))
    # exact: small integer inputs, every difference, square, sum and mean is a small integer
    assert d.mse[0] == 0.0 and d.bias[0] == 1.0 and d.diversity[0] == 1.0
    assert d.omega[0] == 2.0 and d.mean_norm[0] == 1.0  # exact: as above


@pytest.mark.parametrize("kind", bd.TARGET_KINDS)
def test_mse_is_bias_minus_diversity_per_example(ensemble, kind):
    members, labels = ensemble
    members, target = bd.targets_for(kind, members, labels, 4, margin=2.5)
    d = bd.decompose(members, target)
    assert np.all(np.abs(d.identity_residual) <= 1e-12 * np.maximum(1.0, d.bias))
    assert np.all(np.abs(d.omega_bias_residual) <= 1e-12 * np.maximum(1.0, d.omega))
    assert np.all(np.abs(d.omega_diversity_residual) <= 1e-12 * np.maximum(1.0, d.omega))
    assert np.all(d.diversity <= d.bias)  # Theorem 2: MSE ≥ 0


def test_centering_and_margin_targets(ensemble):
    members, labels = ensemble
    centred, y = bd.targets_for("centered", members, labels, 4)
    assert np.allclose(centred.sum(axis=-1), 0.0, atol=1e-12) and np.allclose(y.sum(axis=-1), 0.0, atol=1e-15)
    _, scaled = bd.targets_for("margin", members, labels, 4, margin=3.0)
    assert np.array_equal(scaled, 3.0 * bd.onehot(labels, 4))  # exact: 3.0 times 0 or 1
    with pytest.raises(ValueError, match="needs the margin"):
        bd.targets_for("margin", members, labels, 4)
    with pytest.raises(ValueError, match="unknown target kind"):
        bd.targets_for("softmax", members, labels, 4)


def test_members_split_bias_and_diversity(ensemble):
    members, labels = ensemble
    target = bd.onehot(labels, 4)
    d = bd.decompose(members, target)
    assert np.allclose(bd.member_bias(members, target).mean(axis=1), d.bias, rtol=1e-13)
    assert np.allclose(bd.member_diversity(members).sum(axis=1), d.diversity, rtol=1e-13)


def test_group_split_is_exact(ensemble):
    members, _ = ensemble
    groups = ["embed", "attn", "mlp", "attn", "mlp", "attn", "mlp"]
    split = bd.group_diversity(members, groups)
    total = bd.decompose(members, np.zeros(members.shape[::2])).diversity
    assert split.groups == ("embed", "attn", "mlp")
    assert np.all(np.abs(split.total - total) <= 1e-12 * np.maximum(1.0, total))
    # one member has no spread of its own; exact: a one-member mean is the member, x − x = 0
    assert np.all(split.within["embed"] == 0.0)
    with pytest.raises(ValueError, match="names 2 members"):
        bd.group_diversity(members, ["a", "b"])


def test_module_form_mean_is_the_sum():
    c = np.random.default_rng(1).normal(size=(5, 9, 3))
    assert np.allclose(bd.module_form(c).mean(axis=1), c.sum(axis=1), rtol=0, atol=1e-14)


def test_prefixes_and_accuracy():
    readouts = np.array([[[0.0, 1.0], [1.0, 0.0], [3.0, 0.0]]])  # one example, three layers
    prefixes = bd.prefix_decompositions(readouts, np.array([[1.0, 0.0]]))
    # a single member has no diversity; exact: a one-member mean is the member, x − x = 0
    assert [p.diversity[0] for p in prefixes][0] == 0.0
    assert bd.accuracy(readouts.mean(axis=1), [0]) == 1.0  # exact: 1 of 1, the argmax [4/3, 1/3] far from a tie
    assert bd.logit_margin(np.array([[2.0, 0.0, 1.0]]), [0]) == 1.5  # exact: 2 − (3 − 2) / 2, dyadic values


def test_bad_shapes_are_refused():
    with pytest.raises(ValueError, match=r"\[N, M, K\]"):
        bd.decompose(np.zeros((3, 4)), np.zeros((3, 4)))
    with pytest.raises(ValueError, match="target must have shape"):
        bd.decompose(np.zeros((3, 2, 4)), np.zeros((3, 5)))
    with pytest.raises(ValueError, match="class indices"):
        bd.onehot([0, 4], 4)


# --------------------------------------------------------------------------- information


def test_entropies_by_hand():
    # entropies go through np.log2, whose vectorised kernels may differ in the last bits between CPUs:
    # float64 rounding of a few ulps is far below 1e-12 bits, any real error far above
    assert it.entropy([0, 0, 1, 1]) == pytest.approx(1.0, abs=1e-12)
    assert it.entropy([3, 3, 3]) == pytest.approx(0.0, abs=1e-12)
    x = np.array([0, 1, 2, 3])
    assert it.entropy(x) == pytest.approx(2.0, abs=1e-12)
    assert it.mutual_information(x, x % 2) == pytest.approx(1.0, abs=1e-12)
    assert it.conditional_entropy(x, x % 2) == pytest.approx(1.0, abs=1e-12)
    assert it.conditional_mutual_information(x % 2, x % 2, x // 2) == pytest.approx(1.0, abs=1e-12)
    codes = it.joint_codes(np.array([[5, 1], [5, 1], [2, 1], [5, 0]]))
    assert codes[0] == codes[1] and len(set(codes.tolist())) == 3


def test_information_decomposition_identity():
    rng = np.random.default_rng(2)
    labels = rng.integers(0, 4, size=3000)
    members = np.stack([np.where(rng.random(3000) < 0.6, labels, rng.integers(0, 4, 3000)) for _ in range(5)], axis=1)
    members[:, 3] = members[:, 1]  # a dependent member: redundancy > 0
    for d in it.prefix_information(members, labels):
        assert abs(d.identity_residual) <= 1e-12
        assert d.redundancy >= -1e-12 and d.conditional_redundancy >= -1e-12
    terms = it.prefix_information(members, labels)
    # redundancy and conditional redundancy never fall when a member is added (Theorems 5, 6)
    assert all(b.redundancy >= a.redundancy - 1e-12 for a, b in zip(terms, terms[1:]))
    assert all(b.conditional_redundancy >= a.conditional_redundancy - 1e-12 for a, b in zip(terms, terms[1:]))
    assert all(b.joint_information >= a.joint_information - 1e-12 for a, b in zip(terms, terms[1:]))


def test_duplicate_member_adds_exactly_nothing_and_a_fresh_one_adds():
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 3, size=2000)
    members = it.conditionally_independent_members(labels, 3, [0.5, 0.6, 0.4], rng)
    duplicate = it.marginal_gain(members, members[:, 1], labels)
    assert duplicate.gain == 0.0  # exact: the same cell counts give bit-identical entropies, x − x = 0
    assert abs(duplicate.identity_residual) <= 1e-12
    fresh = it.marginal_gain(members, it.conditionally_independent_members(labels, 3, [0.3], rng)[:, 0], labels)
    assert fresh.gain > 0.05
    assert abs(fresh.identity_residual) <= 1e-12
    assert it.marginal_gain(np.zeros((2000, 0), dtype=int), labels, labels).gain == pytest.approx(it.entropy(labels))


def test_conditionally_independent_members_are_submodular_on_prefixes():
    # Theorem 7 holds for the true distribution; plug-in estimates at N = 20k still break it by
    # ~7e-3 bits for these members (estimation noise), so the test uses enough samples to be exact-ish.
    rng = np.random.default_rng(4)
    labels = rng.integers(0, 4, size=200_000)
    members = it.conditionally_independent_members(labels, 4, [0.3, 0.5, 0.4, 0.6], rng)
    assert (members == labels[:, None]).mean(axis=0) == pytest.approx([0.7, 0.5, 0.6, 0.4], abs=0.02)
    checks = it.submodularity_checks(members, labels)
    assert len(checks) == 10  # pairs a < b ≤ i < 4
    assert max(c.violation for c in checks) <= 1e-3


def test_error_bounds():
    assert it.hellman_raviv_upper_bound(0.6) == 0.3  # exact: halving is exact and fl(0.6) / 2 == fl(0.3)
    assert it.fano_lower_bound(0.5, 4) == 0.0  # exact: a negative bound clipped to the constant 0.0
    assert it.fano_lower_bound(1.5, 4) == pytest.approx(0.25)
    with pytest.raises(ValueError):
        it.fano_lower_bound(1.0, 1)


def test_discrete_inputs_are_checked():
    with pytest.raises(ValueError, match="integers"):
        it.entropy(np.array([0.5, 1.0]))
    with pytest.raises(ValueError, match="different numbers of observations"):
        it.mutual_information([0, 1], [0, 1, 1])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        it.conditionally_independent_members([0, 1], 2, [1.5], np.random.default_rng(0))


def test_fast_cell_counts_match_the_general_path():
    rng = np.random.default_rng(5)
    x = rng.integers(0, 4, size=(3000, 3))
    dense = it.cell_counts(x)
    general = np.bincount(it.joint_codes(x)).astype(float)
    assert np.array_equal(dense, general[general > 0])  # same cells, same lexicographic order
    shifted = x - 2  # negative codes take the general path
    assert it.entropy(shifted) == it.entropy(x)  # exact: the same counts in the same order, one computation
    wide = np.concatenate([x, rng.integers(0, 10**9, size=(3000, 1))], axis=1)  # too many cells for a bincount
    assert it.entropy(wide) == pytest.approx(np.log2(3000), abs=1e-3)


def test_noisy_copies_information_by_hand():
    assert it.noisy_copies_information([0.0], 4) == pytest.approx(2.0, abs=1e-15)
    assert it.noisy_copies_information([0.75], 4) == pytest.approx(0.0, abs=1e-15)  # uniform: no information
    p = 0.3  # 2 − H(0.7, 0.1, 0.1, 0.1)
    assert it.noisy_copies_information([p], 4) == pytest.approx(2 + 0.7 * np.log2(0.7) + 0.3 * np.log2(0.1), abs=1e-14)
    assert it.noisy_copies_information([], 4) == 0.0  # exact: the constant 0.0 for no members
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        it.noisy_copies_information([1.2], 4)


def test_theorem7_holds_exactly_for_the_true_distribution():
    flips = [0.3, 0.4, 0.5, 0.6, 0.45]
    f = {m: it.noisy_copies_information(flips[:m], 4) for m in range(len(flips) + 1)}

    def gain(size, added):
        return it.noisy_copies_information(flips[:size] + [flips[added]], 4) - f[size]

    worst = max(gain(b, i) - gain(a, i) for a in range(5) for b in range(a + 1, 5) for i in range(b, 5))
    assert worst <= 1e-12
    assert all(f[m + 1] >= f[m] for m in range(5))


def test_plugin_estimate_and_its_bias():
    # first-order bias of I(X;Y) with 4 x 4 cells: (16 − 4 − 4 + 1)/(2 n ln 2)
    assert it.plugin_information_bias(16, 4, 4, 1000) == pytest.approx(9 / (2000 * np.log(2)))
    rng = np.random.default_rng(6)
    labels = rng.integers(0, 4, size=100_000)
    members = it.conditionally_independent_members(labels, 4, [0.3, 0.5], rng)
    exact = it.noisy_copies_information([0.3, 0.5], 4)
    estimate = it.mutual_information(members, labels)
    assert abs(estimate - exact) < 0.01
    with pytest.raises(ValueError):
        it.plugin_information_bias(16, 4, 4, 0)


# --------------------------------------------------------------------------- toy ensembles and depth scaling


def test_toy_ensembles():
    from repro.papers.layer_diversity.toy_ensemble import toy_curves, toy_members

    curves = toy_curves(n_examples=4000, n_classes=4, max_members=16, noise_sd=1.0, offset=0.3, seed=0)
    identical = curves[curves["ensemble"] == "identical"]
    # the mean of m copies of a value can differ from it in the last bit (and kernels sum in other orders):
    # float64 rounding, a few ulps
    np.testing.assert_allclose(identical["mse"], identical["mse"].iloc[0], rtol=1e-13, atol=0)
    assert (identical["diversity"].abs() < 1e-12).all()
    independent = curves[curves["ensemble"] == "independent"].sort_values("n_members")
    assert (np.diff(independent["mse"]) < 0).all()
    assert independent["mse"].to_numpy() == pytest.approx(independent["expected_mse"].to_numpy(), rel=0.05)
    assert curves["identity_residual"].max() <= 1e-12
    members, target = toy_members("identical", 3, 2, 4, 1.0, 0.0, np.random.default_rng(0))
    # exact: np.repeat copies the draw; the target sums three ones
    assert members.shape == (3, 4, 2) and (members == members[:, :1]).all() and target.sum() == 3
    with pytest.raises(ValueError, match="unknown toy ensemble"):
        toy_members("random", 3, 2, 4, 1.0, 0.0, np.random.default_rng(0))


def test_log_fit_and_doublings():
    from repro.papers.layer_diversity.depth_scaling import (
        diminishing_doublings,
        doubling_chain,
        doubling_gains,
        log_depth_fit,
    )

    depths = [1, 2, 3, 4, 6, 8]
    a, b, r2 = log_depth_fit(depths, [0.5 + 0.1 * np.log(d) for d in depths])
    assert (a, b, r2) == pytest.approx((0.5, 0.1, 1.0), abs=1e-12)
    assert np.isnan(log_depth_fit([1, 2], [0.7, 0.7])[2])
    acc = {1: 0.5, 2: 0.7, 3: 0.72, 4: 0.8, 6: 0.9, 8: 0.82}
    gains = doubling_gains(acc)
    assert gains == pytest.approx({(1, 2): 0.2, (2, 4): 0.1, (3, 6): 0.18, (4, 8): 0.02})
    assert doubling_chain(gains) == [(1, 2), (2, 4), (4, 8)]  # 3→6 is not on the chain
    assert diminishing_doublings(gains)
    # Δ(4→8) = 0.13 > Δ(2→4) + 0.02 = 0.12: a late jump breaks the check
    assert not diminishing_doublings(doubling_gains({1: 0.5, 2: 0.7, 4: 0.8, 8: 0.93}))
    assert diminishing_doublings(doubling_gains({1: 0.5, 2: 0.51, 4: 0.53, 8: 0.55}))  # within the tolerance
    with pytest.raises(ValueError, match="two consecutive"):
        diminishing_doublings(doubling_gains({1: 0.5, 2: 0.6}))
