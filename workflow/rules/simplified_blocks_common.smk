# Helpers of the simplified_blocks rules (functions only; the rules are in simplified_blocks.smk).
import json
import os

from repro.papers.simplified_blocks import specs as sb_specs

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
    return json.dumps(sb_specs.decoder_spec(config, wildcards.variant, wildcards.seed), sort_keys=True)


def sb_eval_chunks(wildcards):
    return sb_specs.eval_chunks(config, wildcards.variant)


def sb_heldout_chunks(wildcards):
    return sb_specs.eval_chunks(config, wildcards.variant, "heldout_chunks")


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
    return json.dumps(sb_specs.models(config, variants), sort_keys=True)


def sb_blocks_json(wildcards):
    return sb_models_json(SB_CFG["blocks"])


def sb_specs_json(wildcards):
    return json.dumps(sb_specs.variant_specs(config), sort_keys=True)


def sb_paper_size_json(wildcards):
    return json.dumps(SB_CFG["paper_size"], sort_keys=True)


def sb_throughput_json(wildcards):
    return json.dumps(sb_specs.throughput_settings(config), sort_keys=True)


def sb_data(name):
    return f"{SB_DATA}/{name}"


def sb_token_file(split):
    """The token file of one split (train, valid) that the decoder LMs read."""
    return f"{SB_HUB_TOKENS}/{split}.npz" if SB_HUB else getattr(rules.code_tokens.output, split)


def sb_hub_vocab_size():
    """The vocabulary size the config gives the models (the hub tokenizer must match it)."""
    return SB_CFG["model"].get("vocab_size", config["tokenizer"]["vocab_size"])
