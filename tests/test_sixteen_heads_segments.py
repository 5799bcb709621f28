"""Token types (BERT's segment embeddings) derived from SEP tokens, and the runs of the synthetic-task families."""

import json

import pytest
import torch

from repro import task_runs
from repro.data.synthetic import generate_task
from repro.models import ConfigError, Transformer, TransformerConfig, heads_from_mask, prune_heads
from repro.models.transformer import segment_ids
from repro.papers.sixteen_heads import runs
from repro.pipeline.configcheck import PipelineConfigError, check_config


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_segments_equal_the_generators_segment_ids():
    task = generate_task("nli", 0, sizes={"train": 50, "selection": 1, "test": 1, "test_mismatched": 1})
    ids = torch.from_numpy(task.splits["train"]["input_ids"])
    expected = torch.from_numpy(task.splits["train"]["segment_ids"])
    real = ids != 0
    assert torch.equal(segment_ids(ids, sep_id=2)[real], expected[real])


def test_segment_ids_by_hand():
    ids = torch.tensor([[1, 5, 6, 2, 7, 8, 0], [1, 5, 2, 6, 2, 7, 8]])
    assert segment_ids(ids, 2).tolist() == [[0, 0, 0, 0, 1, 1, 1], [0, 0, 0, 1, 1, 1, 1]]
    assert segment_ids(ids, 2, n_segments=3).tolist()[1] == [0, 0, 0, 1, 1, 2, 2]


def cfg(**kw):
    base = dict(
        vocab_size=20,
        n_layers=2,
        d_model=16,
        n_heads=4,
        d_ff=24,
        max_seq_len=12,
        causal=False,
        output="classifier",
        n_classes=3,
        block="post_ln",
    )
    return TransformerConfig(**{**base, **kw})


def test_zero_segment_embeddings_give_the_plain_transformer():
    torch.manual_seed(0)
    seg = Transformer(cfg(n_token_types=2, type_sep_id=2)).double().eval()
    plain = Transformer(cfg()).double().eval()
    plain.load_state_dict({k: v for k, v in seg.state_dict().items() if not k.startswith("type_emb")})
    seg.type_emb.weight.data.zero_()
    x = torch.tensor([[1, 4, 5, 2, 6, 7, 0, 0]])
    pad = x != 0
    # exact: zero type embeddings add exact zeros, then both run the same arithmetic
    torch.testing.assert_close(seg(x, padding_mask=pad), plain(x, padding_mask=pad), rtol=0, atol=0)
    seg.type_emb.weight.data.normal_()
    assert not torch.allclose(seg(x, padding_mask=pad), plain(x, padding_mask=pad))
    # The types the separators give equal explicit token_type_ids; without type_sep_id every token is type 0.
    types = segment_ids(x, 2)
    # exact (here and below): the same token types, so the same computation twice on one machine
    torch.testing.assert_close(seg(x, padding_mask=pad), seg(x, padding_mask=pad, token_type_ids=types), rtol=0, atol=0)
    untyped = Transformer(cfg(n_token_types=2)).double().eval()
    untyped.load_state_dict(seg.state_dict())
    torch.testing.assert_close(
        untyped(x, padding_mask=pad), seg(x, padding_mask=pad, token_type_ids=torch.zeros_like(x)), rtol=0, atol=0
    )


def test_segment_model_masks_and_prunes_like_any_model():
    torch.manual_seed(1)
    model = Transformer(cfg(n_token_types=2, type_sep_id=2)).double().eval()
    x = torch.tensor([[1, 4, 5, 2, 6, 7, 0, 0], [1, 9, 2, 8, 8, 3, 4, 5]])
    mask = torch.tensor([[1.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 0.0]], dtype=torch.float64)
    masked = model(x, padding_mask=x != 0, head_mask=mask)
    prune_heads(model, heads_from_mask(mask))
    torch.testing.assert_close(model(x, padding_mask=x != 0), masked, rtol=0, atol=1e-12)
    with pytest.raises(ConfigError, match="type_sep_id"):
        cfg(n_token_types=2, type_sep_id=99)
    with pytest.raises(ConfigError, match="type_sep_id"):
        cfg(type_sep_id=2)


def test_run_model_round_trip(tmp_path):
    task = generate_task("nli", 0, sizes={"train": 8, "selection": 2, "test": 2, "test_mismatched": 2})
    configs = runs.model_configs(
        "cls", {"n_layers": 1, "d_model": 16, "n_heads": 2, "d_ff": 16, "max_seq_len": 40, "n_token_types": 2}, task
    )
    assert configs["model"].n_classes == 3 and configs["model"].vocab_size == task.meta["vocab_size"]
    sep = runs.separator_id(task)
    assert configs["model"].type_sep_id == sep  # the task's separator gives the token types
    torch.manual_seed(0)
    model = task_runs.build_model("cls", configs)
    task_runs.write_run_model(tmp_path, "cls", configs)
    from repro.training import save_weights

    save_weights(model, tmp_path / "model.safetensors")
    family, loaded = task_runs.load_run_model(tmp_path)
    assert family == "cls" and loaded.cfg.type_sep_id == sep
    x = torch.from_numpy(task.splits["test"]["input_ids"])
    # exact: the same weights (saved and loaded), the same computation twice on one machine
    torch.testing.assert_close(loaded(x, padding_mask=x != 0), model.eval()(x, padding_mask=x != 0), rtol=0, atol=0)
    assert json.loads((tmp_path / "model.json").read_text())["family"] == "cls"
    # A run written when segments were a module of their own names its separator apart: refused by name.
    old = json.loads((tmp_path / "model.json").read_text())
    (tmp_path / "model.json").write_text(json.dumps(dict(old, sep_id=sep)))
    with pytest.raises(ValueError, match="older version.*rerun the rule that trained it"):
        task_runs.load_run_model(tmp_path)


def test_translation_configs_and_length_check():
    task = generate_task("mt", 0, sizes={"train": 8, "selection": 2, "test": 2, "test_ood": 4})
    in_domain = max(task.splits[s][k].shape[1] for s in ("train", "selection", "test") for k in ("src", "tgt"))
    ood = task.splits["test_ood"]["src"].shape[1]
    assert ood > in_domain  # longer sentences out of domain
    model = {"n_layers": 1, "d_model": 16, "n_heads": 2, "d_ff": 16, "max_seq_len": in_domain}
    configs = runs.model_configs("s2s", model, task)
    assert not configs["encoder"].causal and configs["decoder"].cross_attention
    with pytest.raises(ValueError, match=f"split 'test_ood' has src of length {ood} > max_seq_len={in_domain}"):
        runs.check_lengths("s2s", configs, task)
    with pytest.raises(ValueError, match="classification task"):
        runs.model_configs("cls", {"n_layers": 1, "d_model": 16, "n_heads": 2}, task)
    batches = list(runs.ordered_batches("s2s", task.tensors("train"), batch_size=5))
    assert [len(b["src_ids"]) for b in batches] == [5, 3]
    assert torch.equal(torch.cat([b["labels"][:, :1] for b in batches]), task.tensors("train")["tgt"][:, 1:2])


def test_config_check_names_bad_task_settings():
    from pathlib import Path

    import yaml

    config = yaml.safe_load((Path(__file__).resolve().parents[1] / "config" / "config.yaml").read_text())
    config["sixteen_heads"]["tasks"]["nli"]["family"] = "s2s"
    config["sixteen_heads"]["tasks"]["mt"]["sizes"]["dev"] = 10
    config["sixteen_heads"]["tasks"]["mt"]["selection"] = "heldout"
    with pytest.raises(PipelineConfigError) as err:
        check_config(config)
    message = str(err.value)
    assert "sixteen_heads.tasks.nli.family is 's2s'; task nli needs family 'cls'" in message
    assert "sixteen_heads.tasks.mt.sizes names split(s) ['dev']" in message
    assert "sixteen_heads.tasks.mt.selection is 'heldout'" in message
