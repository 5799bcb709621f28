# Helpers of the simplified_blocks rules (functions only; the rules are in simplified_blocks.smk).
import json
import os

from repro.pipeline.configcheck import merged_run_config

SB = "simplified_blocks"
SB_CFG = config[SB]
SB_RUNS = f"{RESULTS}/{SB}/runs"
SB_DATA = f"{RESULTS}/{SB}/data"
# data.source hub (paper scale): the decoder LMs read the hub CodeParrot token files written by
# simplified_blocks_hub_tokens instead of the shared offline corpus's (rule code_tokens, which other
# papers read too and so stays as it is).
SB_DATA_CFG = SB_CFG.get("data", {"source": "offline"})
SB_HUB = SB_DATA_CFG["source"] == "hub"
SB_HUB_TOKENS = f"{SB_DATA}/hub_tokens"
# Memory (MB) of a training job: at paper scale ~700M tokens are cut into int64 chunks in memory.
SB_TRAIN_MEM_MB = 32000 if SB_HUB else 3000


def sb_run_spec(wildcards):
    """The JSON spec of one training run (shared settings merged with the variant's)."""
    return run_spec(SB, wildcards.variant, wildcards.seed)


def sb_eval_chunks(wildcards):
    """Held-out chunks of one run: `eval_chunks` at the base sequence length, scaled by
    base length / run length so that every run is evaluated on the same number of tokens."""
    seq_len = merged_run_config(config, SB, wildcards.variant, 0)["model"]["max_seq_len"]
    return max(1, SB_CFG["eval_chunks"] * SB_CFG["model"]["max_seq_len"] // seq_len)


def sb_figure_runs(wildcards):
    """Final weights of every (variant, seed) run that figure `item` trains."""
    return figure_runs(SB, wildcards.item)


def sb_all_figure_runs(wildcards):
    """Final weights of every run of every figure (each once)."""
    return sorted({path for item in SB_CFG["figures"] for path in figure_runs(SB, item)})


def sb_curves_json(wildcards):
    """JSON {figure: [run directories]} of every figure, for the curves job."""
    return json.dumps(
        {item: [os.path.dirname(path) for path in figure_runs(SB, item)] for item in sorted(SB_CFG["figures"])}
    )


def sb_models_json(variants):
    """JSON {variant: TransformerConfig fields}, exactly as those variants' runs build them."""
    return json.dumps({v: merged_run_config(config, SB, v, 0)["model"] for v in variants}, sort_keys=True)


def sb_blocks_json(wildcards):
    return sb_models_json(SB_CFG["blocks"])


def sb_specs_json(wildcards):
    """JSON {variant: {model, train}} of every defined variant (for the variants table)."""
    specs = {}
    for variant in SB_CFG["variants"]:
        spec = merged_run_config(config, SB, variant, 0)
        specs[variant] = {"model": spec["model"], "train": spec["train"]}
    return json.dumps(specs, sort_keys=True)


def sb_paper_size_json(wildcards):
    return json.dumps(SB_CFG["paper_size"], sort_keys=True)


def sb_throughput_json(wildcards):
    """ThroughputSettings: the config's benchmark settings at the training sequence length."""
    return json.dumps(dict(SB_CFG["throughput"], seq_len=SB_CFG["model"]["max_seq_len"]), sort_keys=True)


def sb_data(name):
    return f"{SB_DATA}/{name}"


def sb_token_file(split):
    """The token file of one split (train, valid) that the decoder LMs read."""
    return f"{SB_HUB_TOKENS}/{split}.npz" if SB_HUB else getattr(rules.code_tokens.output, split)


def sb_hub_vocab_size():
    """The vocabulary size the config gives the models (the hub tokenizer must match it)."""
    return SB_CFG["model"].get("vocab_size", config["tokenizer"]["vocab_size"])
