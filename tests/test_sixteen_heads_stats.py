"""BLEU, significance tests, pruning counts and the summaries the claims rest on, on hand-made inputs."""

import numpy as np
import pandas as pd
import pytest
from sacrebleu.metrics import BLEU

from repro.analysis.bleu import bleu_from_stats, corpus_bleu, ids_to_text, sentence_stats
from repro.analysis.head_pruning import order_by_score, pruning_counts, random_order
from repro.analysis.metrics import classification_score, confusion_stats
from repro.analysis.significance import bootstrap_indices, mcnemar_p, paired_bleu_p
from repro.papers.sixteen_heads import head_summaries as S
from repro.papers.sixteen_heads.head_sweeps import best_kept_heads


def random_corpus(seed, n=60, noise=0.3):
    rng = np.random.default_rng(seed)
    refs, hyps = [], []
    for _ in range(n):
        ref = rng.integers(3, 40, size=rng.integers(3, 12)).tolist()
        hyp = [t if rng.random() > noise else int(rng.integers(3, 40)) for t in ref]
        hyp = hyp[: max(1, len(hyp) - int(rng.integers(0, 3)))]
        refs.append(" ".join(map(str, ref)))
        hyps.append(" ".join(map(str, hyp)))
    return hyps, refs


def test_ids_to_text_cuts_at_eos_and_drops_bos_and_pad():
    assert ids_to_text([1, 7, 8, 0, 9, 2, 5, 6], stop_ids=[2], skip_ids=[0, 1]) == "7 8 9"
    assert ids_to_text([2, 4], stop_ids=[2]) == ""


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bleu_from_stats_equals_sacrebleu(seed):
    hyps, refs = random_corpus(seed)
    stats = sentence_stats(hyps, refs)
    assert stats.shape == (len(hyps), 10)
    assert bleu_from_stats(stats.sum(0)) == pytest.approx(corpus_bleu(hyps, refs), abs=1e-9)
    # Resampled corpora, including ones with n-gram orders without any match (exp smoothing).
    metric = BLEU(tokenize="none")
    idx = np.random.default_rng(seed).integers(0, len(hyps), size=(30, 4))
    sums = stats[idx].sum(axis=1)
    expected = [metric._compute_score_from_stats(s.tolist()).score for s in sums]
    np.testing.assert_allclose(bleu_from_stats(sums), expected, rtol=0, atol=1e-9)


@pytest.mark.parametrize("seed", [0, 1])
def test_sentence_stats_equal_sacrebleus_counts(seed):
    hyps, refs = random_corpus(seed, noise=0.5)
    hyps += ["", "7", "7 7 7 7 7", "5 6 5 6 5 6 "]  # empty, one word, clipped repeats, trailing space
    refs += ["3 4", "7 7", "7 7", "5 6 5"]
    expected = BLEU(tokenize="none")._extract_corpus_statistics(hyps, [refs])
    np.testing.assert_array_equal(sentence_stats(hyps, refs), np.asarray(expected, dtype=np.int64))
    np.testing.assert_array_equal(sentence_stats(hyps, refs), np.asarray(expected, dtype=np.int64))  # cached refs


def test_bleu_edge_cases_match_sacrebleu():
    metric = BLEU(tokenize="none")
    cases = [
        [5, 6, 0, 0, 0, 0, 5, 4, 3, 2],  # no match at all
        [5, 6, 3, 0, 0, 0, 5, 4, 3, 2],  # matches only at order 1
        [2, 6, 2, 1, 0, 0, 2, 1, 0, 0],  # an order with no n-grams (short hypothesis)
        [0, 6, 0, 0, 0, 0, 0, 0, 0, 0],  # empty hypothesis
        [8, 6, 6, 4, 3, 2, 8, 7, 6, 5],  # longer than the reference
    ]
    for case in cases:
        assert bleu_from_stats(np.array(case)) == pytest.approx(metric._compute_score_from_stats(case).score, abs=1e-9)


def sacrebleu_paired_bs_p(base_stats, sys_stats, idx):
    """sacrebleu's _paired_bs_test statistic, written out with its own BLEU, on given resamples."""
    metric = BLEU(tokenize="none")
    score = lambda s: metric._compute_score_from_stats(s.tolist()).score  # noqa: E731
    observed = abs(score(base_stats.sum(0)) - score(sys_stats.sum(0)))
    bl = np.array([score(base_stats[i].sum(0)) for i in idx])
    sy = np.array([score(sys_stats[i].sum(0)) for i in idx])
    diffs = np.abs(sy - bl)
    stats = diffs - diffs.mean()
    return (np.sum(stats > observed) + 1) / (len(stats) + 1)


def test_paired_bootstrap_equals_sacrebleus_statistic():
    hyps, refs = random_corpus(3, noise=0.2)
    worse, _ = random_corpus(3, noise=0.4)
    base, system = sentence_stats(hyps, refs), sentence_stats(worse, refs)
    idx = bootstrap_indices(len(refs), 200, seed=7)
    assert paired_bleu_p(base, system, idx) == pytest.approx(sacrebleu_paired_bs_p(base, system, idx), abs=1e-12)
    # Identical systems: p = 1 (sacrebleu's formula would give 1/(R+1), i.e. "significant").
    assert sacrebleu_paired_bs_p(base, base, idx) == pytest.approx(1 / 201)
    assert paired_bleu_p(base, base, idx) == 1.0  # exact: 1.0 returned for identical systems


def test_bootstrap_indices_are_seeded():
    a, b = bootstrap_indices(50, 10, 3), bootstrap_indices(50, 10, 3)
    assert np.array_equal(a, b) and a.shape == (10, 50) and a.max() < 50
    with pytest.raises(ValueError):
        bootstrap_indices(0, 10, 0)


def test_mcnemar_by_hand():
    base = np.array([1, 1, 1, 1, 1, 0, 1, 0], dtype=bool)
    assert mcnemar_p(base, base) == 1.0  # exact: 1.0 returned without discordant pairs
    worse = base.copy()
    worse[:5] = False  # 5 discordant pairs, all against the system: p = 2 · 0.5^5
    assert mcnemar_p(base, worse) == pytest.approx(2 * 0.5**5)
    mixed = base.copy()
    mixed[0], mixed[5] = False, True  # one each way
    assert mcnemar_p(base, mixed) == pytest.approx(1.0)


def test_classification_scores_by_hand():
    labels = np.array([0, 0, 1, 1, 1, 2])
    preds = np.array([0, 1, 1, 1, 0, 2])
    stats = confusion_stats(preds, labels, 3)
    assert classification_score(stats.sum(0), "accuracy", 3) == pytest.approx(100 * 4 / 6)
    # Binary F1 and MCC: tp=2, fp=1, fn=1, tn=2.
    y, p = np.array([1, 1, 1, 0, 0, 0]), np.array([1, 1, 0, 1, 0, 0])
    b = confusion_stats(p, y, 2).sum(0)
    assert classification_score(b, "f1", 2) == pytest.approx(100 * 2 * 2 / (2 * 2 + 1 + 1))
    assert classification_score(b, "mcc", 2) == pytest.approx(100 * (2 * 2 - 1 * 1) / np.sqrt(3 * 3 * 3 * 3))
    # Resampled sums are scored row by row.
    both = np.stack([b, b])
    assert classification_score(both, "mcc", 2).shape == (2,)


def test_pruning_counts_floor_and_ceil():
    assert pruning_counts(144, [0, 5, 10, 100], "floor") == [0, 7, 14, 144]
    assert pruning_counts(288, [10, 30, 90], "ceil") == [29, 87, 260]
    assert pruning_counts(288, [10, 30, 90], "floor") == [28, 86, 259]
    assert pruning_counts(96, [10], "ceil") == [10]
    with pytest.raises(ValueError):
        pruning_counts(10, [110], "ceil")
    with pytest.raises(ValueError):
        pruning_counts(10, [10], "round")


def test_orders():
    scores = {("self", 1, 0): 0.5, ("self", 0, 1): 0.1, ("self", 0, 0): 0.5, ("self", 1, 1): 0.9}
    assert order_by_score(scores) == [("self", 0, 1), ("self", 0, 0), ("self", 1, 0), ("self", 1, 1)]
    assert order_by_score(scores, ascending=False)[0] == ("self", 1, 1)
    # The oracle's tie-break: equal scores by the continuous statistic, not by (layer, head).
    loss = {("self", 1, 0): 0.01, ("self", 0, 1): 0.0, ("self", 0, 0): 0.03, ("self", 1, 1): 0.0}
    assert order_by_score(scores, ascending=False, tiebreak=loss)[1:3] == [("self", 1, 0), ("self", 0, 0)]
    assert order_by_score(scores, tiebreak=loss) == [("self", 0, 1), ("self", 1, 0), ("self", 0, 0), ("self", 1, 1)]
    with pytest.raises(ValueError, match="tie-break has no value"):
        order_by_score(scores, tiebreak={("self", 1, 0): 0.0})
    heads = list(scores)
    assert random_order(heads, 4) == random_order(list(reversed(heads)), 4)  # depends on the set only
    assert sorted(random_order(heads, 4)) == sorted(heads)


def test_best_kept_heads_chooses_on_one_set_and_reports_on_another():
    rows = []
    for head, (sel, test) in enumerate([(70.0, 60.0), (80.0, 50.0), (80.0, 55.0)]):
        rows.append(
            dict(seed=0, type="self", layer=0, kept_head=head, set="selection", score=sel, delta=sel - 90, p_value=0.5)
        )
        rows.append(
            dict(
                seed=0,
                type="self",
                layer=0,
                kept_head=head,
                set="test",
                score=test,
                delta=test - 65,
                p_value=0.001 * (head + 1),
            )
        )
    table = pd.DataFrame(rows)
    held = best_kept_heads(table, "selection", "test", by=("seed", "type", "layer"))
    # exact (here and below): deltas and p-values selected from the given rows
    assert held["kept_head"].tolist() == [1]  # tie on selection (80, 80): lowest head id
    assert held["delta"].tolist() == [-15.0] and held["p_value"].tolist() == [0.002]
    same = best_kept_heads(table, "test", "test", by=("seed", "type", "layer"))
    assert same["kept_head"].tolist() == [0] and same["delta"].tolist() == [-5.0]
    # With a loss column, a tie on the choosing set goes to the lower loss there.
    table["loss"] = [0.9, 0.5, 0.7, 0.6, 0.3, 0.4]  # selection rows: head 0 0.9, head 1 0.7, head 2 0.3
    held = best_kept_heads(table, "selection", "test", by=("seed", "type", "layer"))
    assert held["kept_head"].tolist() == [2] and held["delta"].tolist() == [-10.0]


def test_curve_summaries_by_hand():
    percent, score = [0, 10, 20, 30], [80.0, 79.5, 78.0, 79.9]
    # 79.5 at 10%, 78.0 at 20%: 79 is crossed a third of the way; the recovery at 30% does not count
    assert S.safe_crossing(percent, score, 79.0) == pytest.approx(10.0 + 10.0 / 3)
    assert S.safe_crossing(percent, score, 81.0) == 0.0  # exact: the unpruned model is already below
    assert S.safe_crossing(percent, score, 70.0) == 30.0  # exact: never crossed, the last level
    assert S.curve_auc([0, 10, 20], [80.0, 60.0, 40.0], 20) == pytest.approx(60.0)
    assert S.curve_auc([0, 10, 20, 30], [80.0, 60.0, 40.0, 0.0], 20) == pytest.approx(60.0)


# scikit-learn warns on inputs with a single class, which the constant-predictor cases are on purpose
@pytest.mark.filterwarnings("ignore:A single label was found")
@pytest.mark.parametrize("n_classes", [2, 3])
def test_classification_metrics_equal_scikit_learns(n_classes):
    sklearn = pytest.importorskip("sklearn.metrics")
    from repro.analysis.metrics import score

    rng = np.random.default_rng(n_classes)
    for trial in range(50):
        n = int(rng.integers(1, 40))
        labels = rng.integers(0, n_classes, n)
        predictions = np.where(rng.random(n) < trial / 50, labels, rng.integers(0, n_classes, n))
        if trial % 10 == 0:
            predictions[:] = predictions[0]  # a constant predictor: MCC 0
        assert score("accuracy", predictions, labels) == pytest.approx(
            100 * sklearn.accuracy_score(labels, predictions)
        )
        assert score("mcc", predictions, labels) == pytest.approx(100 * sklearn.matthews_corrcoef(labels, predictions))
        if n_classes == 2:
            expected = 100 * sklearn.f1_score(labels, predictions, zero_division=0)
            assert score("f1", predictions, labels) == pytest.approx(expected)


def test_head_z_scores_and_the_best_of_noise():
    z = S.signed_z([1.0, -1.0, 0.0, 0.5], [0.05, 0.05, 1.0, 1.0])
    assert z == pytest.approx([1.959964, -1.959964, 0.0, 0.0], abs=1e-6)
    assert np.isfinite(S.signed_z([2.0], [0.0])).all()
    assert S.expected_max_normal(1) == pytest.approx(0.0, abs=1e-9)
    assert S.expected_max_normal(2) == pytest.approx(1 / np.sqrt(np.pi), abs=1e-9)  # E[max of two] = 1/√π
    draws = np.random.default_rng(0).standard_normal((20000, 32)).max(axis=1)
    assert S.expected_max_normal(32) == pytest.approx(draws.mean(), abs=0.01)
