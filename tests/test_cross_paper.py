"""The cross-paper studies: the layer-increment readout of any block, the head-pruning and decomposition
measures on tiny decoders, the block-eval command on a run directory, and each claim on hand-made tables,
its gate and its null."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import torch
from scipy.stats import spearmanr

from repro.analysis import heads as H
from repro.analysis.head_pruning import masked_loss
from repro.analysis.residual_stream import NotAdditiveError, check_telescoping, layer_increment_readouts
from repro.data.npz import write_npz
from repro.data.tokenizer import EOS_ID
from repro.models import Transformer, TransformerConfig
from repro.papers.cross_paper import block_diversity, block_heads
from repro.papers.cross_paper.gates_and_nulls import UNCORRELATED_RANKS
from repro.pipeline.claims import INCONCLUSIVE, NOT_MEASURABLE, NOT_REPRODUCED, REPRODUCED, judge_claim, load_claims
from repro.runs import write_model_config
from repro.training import LanguageModelTask
from repro.training.checkpoint import save_weights
from repro.training.heldout import evaluate_heldout

BLOCKS = ("pre_ln", "parallel", "sas", "sas_p")
VOCAB, LENGTH = 23, 10


def _decoder(block: str, seed: int = 0, layers: int = 3) -> Transformer:
    torch.manual_seed(seed)
    cfg = TransformerConfig(
        vocab_size=VOCAB, n_layers=layers, d_model=16, n_heads=4, d_ff=24, max_seq_len=LENGTH, block=block
    )
    return Transformer(cfg).eval()


def _chunks(n: int = 12, seed: int = 0) -> torch.Tensor:
    return torch.randint(1, VOCAB, (n, LENGTH), generator=torch.Generator().manual_seed(seed))


# -- the readout -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("block", BLOCKS)
def test_layer_increments_telescope_and_sum_to_the_logits(block):
    model = _decoder(block)
    ids = _chunks(3)
    (readout,) = layer_increment_readouts(model, [ids])
    assert readout.contributions.shape == (3, LENGTH, 4, VOCAB)  # h_0 and one increment per layer
    assert readout.stream_error < 1e-12 and readout.logit_error < 1e-12
    assert torch.allclose(readout.contributions.sum(dim=2), model(ids).double(), atol=1e-5)


def test_telescoping_needs_a_final_norm():
    cfg = TransformerConfig(vocab_size=VOCAB, n_layers=2, d_model=16, n_heads=4, d_ff=24, max_seq_len=8)
    model = Transformer(TransformerConfig(**{**cfg.__dict__, "final_norm": False}))
    with pytest.raises(NotAdditiveError, match="final_norm"):
        check_telescoping(model)


@pytest.mark.parametrize("block", ["pre_ln", "sas"])
def test_decomposition_identities_and_shapes(block):
    model = _decoder(block)
    batches = block_heads.lm_batches(_chunks(7), batch_size=3)  # a last batch shorter than the others
    summary, members = block_diversity.decomposition(model, batches)
    assert summary["positions"] == 7 * (LENGTH - 1)
    assert summary["mse"] == pytest.approx(summary["bias"] - summary["diversity"], rel=1e-10)
    assert summary["share"] == pytest.approx(summary["diversity"] / summary["bias"])
    assert list(members["member"]) == [0, 1, 2, 3]
    assert members["bias"].mean() == pytest.approx(summary["bias"], rel=1e-10)  # B is the members' mean error
    assert members["diversity"].sum() == pytest.approx(summary["diversity"], rel=1e-10)
    same, _ = block_diversity.decomposition(model, block_heads.lm_batches(_chunks(7), batch_size=7))
    assert same["share"] == pytest.approx(summary["share"], rel=1e-10)  # batching changes nothing


# -- pruning -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("block", BLOCKS)
def test_prune_curve_masks_the_least_important_heads_first(block):
    model = _decoder(block, layers=2)
    batches = block_heads.lm_batches(_chunks(8), batch_size=4)
    importance = block_heads.importance_table(model, batches)
    assert len(importance) == 8 and np.allclose(
        importance.groupby("layer")["importance"].apply(lambda s: (s**2).sum()), 1
    )
    curve = block_heads.prune_curve(model, batches, importance, (25, 50, 75))
    assert list(curve["n_pruned"]) == [0, 2, 4, 6]
    labels = torch.cat([b["labels"] for b in batches])
    with torch.no_grad():
        logits = model(torch.cat([b["input_ids"] for b in batches]))
    whole = torch.nn.functional.cross_entropy(logits.reshape(-1, VOCAB), labels.reshape(-1), ignore_index=-100)
    assert curve["loss"].iloc[0] == pytest.approx(float(whole), rel=1e-5)
    lowest = importance.sort_values("importance").head(2)
    masks = H.masks_without(model, [(H.SELF, int(r.layer), int(r.head)) for r in lowest.itertuples()])
    masked = block_heads.heldout_loss(model, batches, masks)
    assert curve["loss"].iloc[1] == pytest.approx(masked, rel=1e-6)


def test_masked_loss_refuses_batches_without_targets():
    model = _decoder("pre_ln")
    with pytest.raises(ValueError, match="no target"):
        masked_loss(model, [], lambda *a: torch.tensor(0.0), lambda b: 0)


def test_top_share():
    assert block_heads.top_share(pd.Series([1.0] * 16)) == pytest.approx(0.25)
    assert block_heads.top_share(pd.Series([4.0, 0, 0, 0, 0, 0, 0, 0])) == pytest.approx(1.0)


# -- the command on a run directory ---------------------------------------------------------------------
def _write_valid(path, n_files=6, file_length=4 * LENGTH + 3):
    rng = np.random.default_rng(0)
    files = [np.append(rng.integers(1, VOCAB, size=file_length - 1), EOS_ID) for _ in range(n_files)]
    offsets = np.arange(n_files + 1, dtype=np.int64) * file_length
    write_npz(
        path,
        {"tokens": np.concatenate(files).astype(np.uint16), "offsets": offsets},
        meta={"vocab_size": VOCAB, "eos_id": EOS_ID},
    )


def _run_dir(tmp_path, block, valid):
    from repro.data.lm_tokens import load_token_chunks

    run = tmp_path / "runs" / block
    run.mkdir(parents=True)
    model = _decoder(block)
    write_model_config(run, model.cfg)
    save_weights(model, run / "model.safetensors")
    chunks = load_token_chunks(valid, LENGTH)
    index = np.arange(0, len(chunks), 2)
    task = LanguageModelTask(chunks, chunks[torch.as_tensor(index)], eval_batch_size=5)
    evaluate_heldout(model, task, index, run)
    return run


def _repro(*args):
    return subprocess.run([sys.executable, "-m", "repro", *args], capture_output=True, text=True)


def test_block_eval_and_collect_on_run_directories(tmp_path):
    valid = tmp_path / "valid.npz"
    _write_valid(valid)
    outs = []
    for block in ("pre_ln", "sas"):
        run = _run_dir(tmp_path, block, valid)
        out = tmp_path / "eval" / block
        done = _repro(
            "cross_paper",
            "block-eval",
            "--run-dir",
            str(run),
            "--valid",
            str(valid),
            "--variant",
            block,
            "--seed",
            "0",
            "--batch-size",
            "4",
            "--out-dir",
            str(out),
        )
        assert done.returncode == 0, done.stderr
        outs.append(str(out))
    levels = tmp_path / "levels.json"
    levels.write_text(json.dumps({"unigram_nats": 3.1, "bigram_nats": 2.9}))
    done = _repro(
        "cross_paper", "collect-blocks", "--runs", *outs, "--levels", str(levels), "--out-dir", str(tmp_path / "data")
    )
    assert done.returncode == 0, done.stderr
    prune = pd.read_csv(tmp_path / "data" / "block_prune.csv")
    assert set(prune["variant"]) == {"pre_ln", "sas"} and set(prune["percent"]) == {0, 25, 50, 75}
    decomposition = pd.read_csv(tmp_path / "data" / "block_decomposition.csv")
    heldout = json.loads((tmp_path / "runs" / "sas" / "heldout.json").read_text())
    assert decomposition.set_index("variant").loc["sas", "heldout_loss"] == pytest.approx(heldout["loss"])
    assert (tmp_path / "data" / "block_reference_levels.json").exists()


def test_block_eval_refuses_chunks_the_run_was_not_evaluated_on(tmp_path):
    valid, other = tmp_path / "valid.npz", tmp_path / "other.npz"
    _write_valid(valid)
    run = _run_dir(tmp_path, "pre_ln", valid)
    _write_valid(other, n_files=6, file_length=4 * LENGTH + 5)  # other tokens: the chunks differ
    done = _repro(
        "cross_paper",
        "block-eval",
        "--run-dir",
        str(run),
        "--valid",
        str(other),
        "--variant",
        "pre_ln",
        "--seed",
        "0",
        "--out-dir",
        str(tmp_path / "out"),
    )
    assert done.returncode == 2 and "not those the run was evaluated on" in done.stderr
    assert not (tmp_path / "out").exists()


# -- the claims -----------------------------------------------------------------------------------------
def _claims():
    return {c.claim_id: c for c in load_claims("cross_paper")}


def test_every_claim_is_a_new_finding_with_a_gate_a_null_and_a_phase():
    claims = _claims()
    assert set(claims) == {
        "skipless_heads_harder_to_remove",
        "parallel_prunes_like_pre_ln",
        "skipless_importance_spread_out",
        "skipless_layers_more_diverse",
        "diversity_goes_with_lower_loss",
        "unimportant_heads_saturated",
        "more_heads_more_removable",
    }
    for c in claims.values():
        assert c.kind == "new finding" and c.gate is not None and c.null is not None
        # the decoders are read in early training, the classifiers at the end of their schedule
        assert c.phase == ("end of schedule" if c.item in ("fig03", "fig04") else "early training")


def _tables(root, *, sas_cost=0.3, parallel_cost=0.0, spread=-0.1, diverse=0.2, rho_sign=-1, seeds=3, worst_loss=4.9):
    """Hand-made tables of four blocks over `seeds` seeds with the given effects (and a little seed noise)."""
    rng = np.random.default_rng(1)
    prune, heads, decomposition = [], [], []
    for seed in range(seeds):
        base = 0.05 + 0.01 * rng.standard_normal()
        cost = {"pre_ln": 0.0, "parallel": parallel_cost, "sas": sas_cost, "sas_p": sas_cost}
        share = {"pre_ln": 0.5, "parallel": 0.52, "sas": 0.5 + diverse, "sas_p": 0.5 + diverse}
        order = ["pre_ln", "parallel", "sas", "sas_p"]
        for rank, block in enumerate(sorted(order, key=lambda b: share[b] + 0.001 * order.index(b))):
            for percent in (0, 25, 50, 75):
                delta = 0.0 if percent == 0 else base * percent / 25 + cost[block] + 0.005 * rng.standard_normal()
                prune.append(
                    dict(
                        variant=block,
                        seed=seed,
                        percent=percent,
                        n_pruned=percent * 16 // 100,
                        loss=4 + delta,
                        delta_loss=delta,
                    )
                )
            top = 4.0 + (spread * 16 if block == "sas" else 0.0) + 0.05 * rng.standard_normal()
            for head in range(16):
                heads.append(
                    dict(
                        variant=block,
                        seed=seed,
                        layer=head // 4,
                        head=head % 4,
                        importance_raw=1.0,
                        importance=top if head == 0 else 1.0,
                    )
                )
            loss = worst_loss - (0.1 * rank if rho_sign < 0 else 0.1 * (3 - rank))
            decomposition.append(
                dict(
                    variant=block,
                    seed=seed,
                    bias=100.0,
                    diversity=100 * share[block],
                    mse=1.0,
                    share=share[block] + 0.002 * rng.standard_normal(),
                    heldout_loss=loss,
                )
            )
    data = root / "cross_paper" / "data"
    data.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(prune).to_csv(data / "block_prune.csv", index=False)
    pd.DataFrame(heads).to_csv(data / "block_heads.csv", index=False)
    pd.DataFrame(decomposition).to_csv(data / "block_decomposition.csv", index=False)
    (data / "block_reference_levels.json").write_text(json.dumps({"unigram_nats": 6.2, "bigram_nats": 4.0}))
    return root


@pytest.mark.parametrize(
    "claim_id",
    [
        "skipless_heads_harder_to_remove",
        "parallel_prunes_like_pre_ln",
        "skipless_layers_more_diverse",
        "diversity_goes_with_lower_loss",
    ],
)
def test_claims_reproduce_on_tables_with_the_effect(tmp_path, claim_id):
    row = judge_claim(_claims()[claim_id], _tables(tmp_path), "laptop")
    assert row["verdict"] == REPRODUCED, row


def test_importance_spread_reads_the_top_quarter(tmp_path):
    # SAS's top head holds less than Pre-LN's (spread < 0): its top quarter's share is lower
    row = judge_claim(_claims()["skipless_importance_spread_out"], _tables(tmp_path, spread=-0.15), "laptop")
    assert row["verdict"] == REPRODUCED, row
    row = judge_claim(_claims()["skipless_importance_spread_out"], _tables(tmp_path / "b", spread=0.3), "laptop")
    assert row["verdict"] == NOT_REPRODUCED, row


@pytest.mark.parametrize(
    "claim_id, effects",
    [
        ("skipless_heads_harder_to_remove", dict(sas_cost=0.0)),
        ("parallel_prunes_like_pre_ln", dict(parallel_cost=0.4)),
        ("skipless_layers_more_diverse", dict(diverse=0.0)),
        ("diversity_goes_with_lower_loss", dict(rho_sign=1)),
    ],
)
def test_claims_fail_without_the_effect(tmp_path, claim_id, effects):
    row = judge_claim(_claims()[claim_id], _tables(tmp_path, **effects), "laptop")
    assert row["verdict"] in (NOT_REPRODUCED, INCONCLUSIVE) and row["null"].startswith(NOT_REPRODUCED), row


def test_gate_fails_when_a_decoder_did_not_learn(tmp_path):
    row = judge_claim(_claims()["skipless_layers_more_diverse"], _tables(tmp_path, worst_loss=5.9), "laptop")
    assert row["verdict"] == NOT_MEASURABLE and "unigram" in row["gate"], row


def test_every_null_of_studies_1_2_reads_not_reproduced(tmp_path):
    root = _tables(tmp_path)
    for c in (c for c in _claims().values() if c.item in ("fig01", "fig02")):
        row = judge_claim(c, root, "laptop")
        assert row["null"].startswith(NOT_REPRODUCED), (c.claim_id, row)


def test_the_permutation_null_has_rank_correlation_zero():
    n = len(UNCORRELATED_RANKS)
    assert sorted(UNCORRELATED_RANKS) == list(range(n))
    assert spearmanr(range(n), UNCORRELATED_RANKS).statistic == pytest.approx(0.0, abs=1e-12)


def test_the_run_summary_lists_new_findings_apart():
    from repro.pipeline.run_summary import empirical_by_paper, new_findings

    scorecard = pd.DataFrame(
        [
            dict(
                paper="cross_paper",
                item="fig01",
                claim="a: A.",
                **{"class": "new finding"},
                verdict=REPRODUCED,
                measured="1",
            ),
            dict(
                paper="simplified_blocks",
                item="fig26",
                claim="b: B.",
                **{"class": "empirical"},
                verdict=INCONCLUSIVE,
                measured="2",
            ),
        ]
    )
    assert list(new_findings(scorecard)["claim"]) == ["a: A."]
    assert "cross_paper" not in set(empirical_by_paper(scorecard)["paper"])  # not counted among the reproductions


# -- study 4 -----------------------------------------------------------------------------------------------
def test_saturation_of_uniform_attention_is_one_over_the_real_length():
    from repro.papers.cross_paper.head_saturation import saturation_and_accuracy

    torch.manual_seed(0)
    cfg = TransformerConfig(
        vocab_size=VOCAB,
        n_layers=2,
        d_model=16,
        n_heads=4,
        d_ff=24,
        max_seq_len=8,
        causal=False,
        output="classifier",
        n_classes=3,
    )
    model = Transformer(cfg).eval()
    with torch.no_grad():
        for block in model.blocks:  # zero queries: every score equal, the attention uniform over real keys
            block.attn.q_proj.weight.zero_()
            if block.attn.q_proj.bias is not None:
                block.attn.q_proj.bias.zero_()
    lengths = torch.tensor([8, 5, 3, 6])
    ids = torch.randint(1, VOCAB, (4, 8))
    ids[torch.arange(8)[None, :] >= lengths[:, None]] = 0  # padding after each example
    labels = torch.tensor([0, 1, 2, 0])
    heads, accuracy = saturation_and_accuracy(model, ids, labels, pad_id=0, batch_size=3)
    expected = float((lengths * (1.0 / lengths)).sum() / lengths.sum())  # every real query: 1 / its length
    assert len(heads) == 8 and np.allclose(heads["saturation"], expected)
    assert 0 <= accuracy <= 100


def _saturation_table(root, gap=0.2, seeds=3):
    rng = np.random.default_rng(0)
    rows = []
    for seed in range(seeds):
        for head in range(32):
            importance = rng.random()
            rows.append(
                dict(
                    seed=seed,
                    layer=head // 8,
                    head=head % 8,
                    importance=importance,
                    saturation=0.7 - gap * importance + 0.01 * rng.standard_normal(),
                    accuracy=88.0,
                    chance=100 / 3,
                )
            )
    data = root / "cross_paper" / "data"
    data.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(data / "head_saturation.csv", index=False)
    return root


def test_saturated_heads_claim_gate_and_null(tmp_path):
    claim = _claims()["unimportant_heads_saturated"]
    row = judge_claim(claim, _saturation_table(tmp_path), "laptop")
    assert row["verdict"] == REPRODUCED and row["null"].startswith(NOT_REPRODUCED), row
    row = judge_claim(claim, _saturation_table(tmp_path / "flat", gap=0.0), "laptop")
    assert row["verdict"] == NOT_REPRODUCED, row
    table = pd.read_csv(tmp_path / "cross_paper" / "data" / "head_saturation.csv").assign(accuracy=99.9)
    table.to_csv(tmp_path / "cross_paper" / "data" / "head_saturation.csv", index=False)
    assert judge_claim(claim, tmp_path, "laptop")["verdict"] == NOT_MEASURABLE  # at the ceiling: nothing to read


# -- study 3 -----------------------------------------------------------------------------------------------
def _shallow(position="learned", heads=4):
    from repro.models.shallow import ShallowAttentionModel, ShallowConfig

    torch.manual_seed(0)
    cfg = ShallowConfig(
        input_kind="tokens",
        input_size=7,
        output_size=7,
        d_model=16,
        n_heads=heads,
        head_dim=16 // heads,
        d_ff=0,
        max_seq_len=8,
        position=position,
    )
    return ShallowAttentionModel(cfg).eval()


@pytest.mark.parametrize("position", ["alibi", "learned"])
def test_a_masked_shallow_head_is_a_head_without_its_output_columns(position):
    model = _shallow(position)
    ids = torch.randint(0, 7, (3, 8))
    with torch.no_grad():
        assert torch.equal(model(ids, head_mask=torch.ones(4)), model(ids))  # exact: a context times 1.0
        masked = model(ids, head_mask=torch.tensor([1.0, 0.0, 1.0, 1.0]))
        model.attn.out.weight[:, 4:8] = 0.0  # head 1's slice of W_O
        assert torch.allclose(masked, model(ids), atol=1e-6)


def test_removable_share_is_the_longest_prefix_within_the_tolerance():
    from repro.papers.cross_paper.shallow_heads import removable_share

    # shares k/4 of whole numbers: exact
    curve = pd.DataFrame({"n_pruned": [0, 1, 2, 3, 4], "loss": [1.0, 1.02, 1.04, 1.3, 1.01]})
    assert removable_share(curve, constant=2.0) == 0.5  # limit 1.05; k = 4 is back under it, but k = 3 is not
    assert removable_share(curve.assign(loss=[1.0, 1.2, 1.0, 1.0, 1.0]), constant=2.0) == 0.0
    assert removable_share(curve.assign(loss=1.0), constant=2.0) == 1.0


def test_sweep_prune_reads_the_sweeps_own_runs(tmp_path):
    from repro.data.streams import make_stream
    from repro.papers.cross_paper.shallow_heads import constant_loss
    from repro.training.seeding import derive_seed
    from repro.training.stream_tasks import SequenceStreamTask

    spec = {
        "heads": [1, 2, 4],
        "budget": 8,
        "d_model": 8,
        "d_ff": 0,
        "seq_len": 8,
        "eval_sequences": 16,
        "positions": ["alibi", "learned"],
        "train": {"steps": 3, "batch_size": 4, "lr": 1e-3, "eval_every": 0, "log_every": 1, "checkpoint_every": 0},
        "tasks": {
            "ngram_discrete": {"stream": "discrete_ngram", "params": {"vocab": 4, "order": 2}},
            "nonlinear": {"stream": "nonlinear_lags", "params": {"dim": 3, "lags": 2}},
        },
    }
    runs, sweep = tmp_path / "runs", tmp_path / "sweep.csv"
    done = _repro(
        "param_allocation",
        "sweep",
        "--spec",
        json.dumps(spec),
        "--seed",
        "0",
        "--runs-dir",
        str(runs),
        "--out",
        str(sweep),
    )
    assert done.returncode == 0, done.stderr
    out, curves = tmp_path / "pruning.csv", tmp_path / "curves.csv"
    args = [
        "cross_paper",
        "sweep-prune",
        "--spec",
        json.dumps(spec),
        "--seed",
        "0",
        "--runs-dir",
        str(runs),
        "--sweep-csv",
    ]
    done = _repro(*args, str(sweep), "--out", str(out), "--out-curves", str(curves))
    assert done.returncode == 0, done.stderr
    table, curve = pd.read_csv(out), pd.read_csv(curves)
    assert len(table) == 2 * 2 * 3 and len(curve) == 2 * 2 * (2 + 3 + 5)
    assert table["removable_share"].between(0, 1).all()
    stream = make_stream("nonlinear_lags", 0, dim=3, lags=2)
    task = SequenceStreamTask(stream, 8, 16, eval_seed=derive_seed(0, "eval"))
    mse = constant_loss(task)  # the mean target's normalised error: below predicting 0
    assert 0 < mse <= 1.0 and np.allclose(table.loc[table["task"] == "nonlinear", "constant_loss"], mse)
    # a sweep table of other settings is refused: its held-out losses are not these models'
    pd.read_csv(sweep).assign(eval_loss=lambda t: t["eval_loss"] + 0.1).to_csv(sweep, index=False)
    done = _repro(*args, str(sweep), "--out", str(out), "--out-curves", str(curves))
    assert done.returncode == 2 and "not the sweep's own" in done.stderr


def _sweep_table(root, slope=0.05, seeds=3):
    rng = np.random.default_rng(0)
    rows = []
    for seed in range(seeds):
        for task, metric_name, trivial in (("a", "accuracy", 0.25), ("b", "normalised_mse", 1.0)):
            for heads in (1, 2, 4, 8, 16):
                share = max(0.0, slope * np.log2(heads) + 0.01 * rng.standard_normal())
                metric = 0.8 if metric_name == "accuracy" else 0.3
                rows.append(
                    dict(
                        task=task,
                        position="alibi",
                        heads=heads,
                        seed=seed,
                        loss=1.0,
                        constant_loss=2.0,
                        metric=metric,
                        metric_name=metric_name,
                        trivial=trivial,
                        removable_share=share,
                    )
                )
    data = root / "cross_paper" / "data"
    data.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(data / "sweep_pruning.csv", index=False)
    return root


def test_more_heads_more_removable_claim_gate_and_null(tmp_path):
    claim = _claims()["more_heads_more_removable"]
    row = judge_claim(claim, _sweep_table(tmp_path, slope=0.1), "laptop")
    assert row["verdict"] == REPRODUCED and row["null"].startswith(NOT_REPRODUCED), row
    row = judge_claim(claim, _sweep_table(tmp_path / "flat", slope=0.0), "laptop")
    assert row["verdict"] == NOT_REPRODUCED, row
    path = tmp_path / "cross_paper" / "data" / "sweep_pruning.csv"
    pd.read_csv(path).assign(metric=0.26).to_csv(path, index=False)  # accuracy near chance, MSE near 0.26: out of range
    row = judge_claim(claim, tmp_path, "laptop")
    assert "left out: a/alibi" in row["gate"] and row["verdict"] == REPRODUCED, row  # judged on b alone


def test_no_sweep_in_range_is_not_measurable(tmp_path):
    root = _sweep_table(tmp_path)
    path = root / "cross_paper" / "data" / "sweep_pruning.csv"
    pd.read_csv(path).assign(metric=lambda t: np.where(t["metric_name"] == "accuracy", 0.25, 1.0)).to_csv(
        path, index=False
    )
    row = judge_claim(_claims()["more_heads_more_removable"], root, "laptop")
    assert row["verdict"] == NOT_MEASURABLE and row["gate"].startswith("failed"), row
