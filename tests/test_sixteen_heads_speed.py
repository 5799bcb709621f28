"""Table 4 and Figs. 4-5 machinery: interleaved timing, physical pruning facts, per-type pruning curves.

- `time_interleaved` runs every callable warmup + rounds times, rotating the order each round.
- `pruned_copy` leaves the original untouched and removes exactly the Q/K/V/O weights of the pruned
  heads; `compare_masked_and_pruned` finds the pruned and masked logits equal to 1e-5 (float32),
  also with a layer emptied.
- `summarize_speed` medians and speedups by hand.
- `importance_curves` prunes within one attention type alone, nested, in importance order.
- The configuration check names bad during_training and speed settings.
"""

import copy

import numpy as np
import pandas as pd
import pytest
import torch

from repro.analysis import heads as H
from repro.analysis.throughput import time_interleaved
from repro.models import EncoderDecoder, Transformer, TransformerConfig
from repro.papers.sixteen_heads import pruned_speed as speed
from repro.papers.sixteen_heads.head_eval import Evaluation
from repro.papers.sixteen_heads.tables import importance_curves


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def classifier(seed=0):
    cfg = TransformerConfig(
        vocab_size=20,
        n_layers=3,
        d_model=24,
        n_heads=4,
        d_ff=32,
        max_seq_len=16,
        block="pre_ln",
        causal=False,
        output="classifier",
        n_classes=3,
        n_token_types=2,
        type_sep_id=2,
        vo_bias=True,
    )
    torch.manual_seed(seed)
    model = Transformer(cfg).eval()
    for p in model.parameters():
        p.data.add_(0.3 * torch.randn_like(p))
    return model


def inputs(n=50, seed=1):
    gen = torch.Generator().manual_seed(seed)
    ids = torch.randint(3, 20, (n, 12), generator=gen)
    ids[:, 6] = 2
    ids[::3, 9:] = 0
    return ids, torch.randint(0, 3, (n,), generator=gen)


def test_time_interleaved_rotates_and_counts_calls():
    calls = []
    steps = {name: (lambda name=name: calls.append(name)) for name in ("a", "b", "c")}
    table = time_interleaved(steps, rounds=4, warmup=2)
    assert calls[:6] == ["a", "a", "b", "b", "c", "c"]  # warm-up, untimed
    assert calls[6:] == ["a", "b", "c", "b", "c", "a", "c", "a", "b", "a", "b", "c"]
    assert len(table) == 12 and (table["seconds"] >= 0).all()
    assert table[table["round"] == 1]["variant"].tolist() == ["b", "c", "a"]
    assert table.groupby("variant")["position"].apply(sorted).tolist() == [[0, 0, 1, 2], [0, 1, 1, 2], [0, 1, 2, 2]]
    with pytest.raises(ValueError, match="at least one"):
        time_interleaved({}, rounds=1)


HEAD_SETS = [
    [("self", 0, 1), ("self", 1, 0), ("self", 1, 3), ("self", 2, 2)],
    [("self", 1, h) for h in range(4)] + [("self", 0, 0)],  # layer 1 emptied
]


@pytest.mark.parametrize("heads", HEAD_SETS)
def test_pruned_copy_equals_the_masked_model(heads):
    model = classifier()
    before = copy.deepcopy(model.state_dict())
    masks = H.masks_without(model, heads)
    pruned = speed.pruned_copy(model, masks)
    for name, tensor in model.state_dict().items():  # the original is untouched
        assert torch.equal(tensor, before[name]), name  # exact: untouched, compared with a copy
    ids, labels = inputs()
    result = speed.compare_masked_and_pruned(model, pruned, masks, ids, labels, batch_size=16)
    assert result["max_logit_difference"] <= 1e-5
    assert result["accuracy_pruned"] == result["accuracy_masked"]  # exact: counts of the same examples / n
    # Each removed head takes 4 blocks of d_h·d = 6·24 entries out of W^Q, W^K, W^V and W^O.
    assert speed.attention_weights(model) - speed.attention_weights(pruned) == len(heads) * 4 * 6 * 24
    facts = speed.model_facts({"original": model, "pruned": pruned}).set_index("variant")
    assert facts.loc["pruned", "heads"] == 12 - len(heads)
    assert facts.loc["original", "parameters"] - facts.loc["pruned", "parameters"] == len(heads) * (
        4 * 6 * 24 + 3 * 6
    )  # + Q, K, V biases


def test_half_the_heads_halve_the_attention_weights_and_timing_runs():
    model = classifier()
    heads = [("self", layer, h) for layer in range(3) for h in (0, 2)]
    pruned = speed.pruned_copy(model, H.masks_without(model, heads))
    assert 2 * speed.attention_weights(pruned) == speed.attention_weights(model)
    ids, _ = inputs(n=10)
    table = speed.time_inference({"original": model, "pruned": pruned}, ids, [1, 4], rounds=2, warmup=0)
    assert sorted(set(table["batch_size"])) == [1, 4]
    assert len(table) == 2 * 2 * 2 and (table["examples"] == 10).all()
    np.testing.assert_allclose(table["examples_per_s"], 10 / table["seconds"])


def test_summarize_speed_by_hand():
    timings = pd.DataFrame(
        {
            "batch_size": [1] * 6 + [8] * 4,
            "variant": ["original", "pruned"] * 3 + ["original", "pruned"] * 2,
            "examples_per_s": [10.0, 11.0, 12.0, 13.0, 50.0, 12.0, 100.0, 130.0, 110.0, 140.0],
        }
    )
    out = speed.summarize_speed(timings, "original").set_index(["batch_size", "variant"])
    # exact: medians of odd counts select a given value; 12 / 12 = 1
    assert out.loc[(1, "original"), "median"] == 12.0
    assert out.loc[(1, "pruned"), "median"] == 12.0
    assert out.loc[(1, "pruned"), "speedup"] == 1.0
    assert out.loc[(8, "pruned"), "speedup"] == pytest.approx(135.0 / 105.0)
    assert out.loc[(8, "original"), "sd"] == pytest.approx(np.std([100.0, 110.0], ddof=1))
    with pytest.raises(ValueError, match="reference"):
        speed.summarize_speed(timings, "missing")


class CountingEvaluator:
    """Score = 100 × kept heads of the pruned scope; records every mask it is asked about."""

    def __init__(self):
        self.seen = []

    def evaluate(self, masks, name):
        if masks is None:
            return Evaluation(100.0, np.zeros((1, 1)))
        self.seen.append({k: v.clone() for k, v in masks.items()})
        return Evaluation(float(sum(float(v.sum()) for v in masks.values())), np.zeros((1, 1)))

    def evaluate_many(self, masks_list, name):
        return [self.evaluate(masks, name) for masks in masks_list]


def test_importance_curves_prune_within_one_type_in_importance_order():
    kw = dict(vocab_size=20, n_layers=2, d_model=16, n_heads=4, d_ff=16, max_seq_len=16)
    model = EncoderDecoder(
        TransformerConfig(**kw, causal=False, output="none"), TransformerConfig(**kw, cross_attention=True)
    )
    gen = torch.Generator().manual_seed(0)
    normalised = {kind: torch.rand(2, 4, generator=gen) for kind in ("enc_self", "cross", "dec_self")}
    evaluator = CountingEvaluator()
    curves = importance_curves(model, evaluator, normalised, "s2s", per_type=True)
    assert sorted(set(curves["scope"])) == ["all", "cross", "dec_self", "enc_self"]
    cross = curves[curves["scope"] == "cross"]
    assert cross["n_heads"].iloc[0] == 8
    assert cross["n_pruned"].tolist() == [-(-8 * p // 100) for p in range(0, 91, 10)]
    # Masks of the cross-only curve remove cross heads only, lowest importance first, nested.
    cross_masks = [
        m
        for m in evaluator.seen
        if (m["cross"] == 0).any() and (m["enc_self"] == 1).all() and (m["dec_self"] == 1).all()
    ]
    removed = [set(map(tuple, (m["cross"] == 0).nonzero().tolist())) for m in cross_masks]
    assert all(a <= b for a, b in zip(removed, removed[1:]))
    ranking = sorted((float(normalised["cross"][l, h]), (l, h)) for l in range(2) for h in range(4))
    assert removed[0] == {ranking[0][1]}
    all_scope = curves[curves["scope"] == "all"]
    assert all_scope["n_heads"].iloc[0] == 24 and all_scope["score"].iloc[0] == 100.0  # exact: the given 100.0


def test_config_check_names_bad_during_training_and_speed():
    import yaml

    from repro.papers.sixteen_heads.checks import check_section as check_config_section

    config = yaml.safe_load(open("config/smoke.yaml"))
    section = config["sixteen_heads"]
    section["during_training"] = {"task": "nli", "seeds": [0], "epochs": [1]}
    section["speed"] = dict(section["speed"], seed=7)
    problems = check_config_section(config, "sixteen_heads")
    assert any("during_training.task" in p for p in problems)
    assert any("speed.seed" in p for p in problems)
    section["during_training"] = {"task": "iwslt", "seeds": [0], "epochs": [1, 1000]}
    assert any("during_training.epochs" in p for p in check_config_section(config, "sixteen_heads"))
