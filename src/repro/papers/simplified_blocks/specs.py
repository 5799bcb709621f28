"""The specs of the simplified_blocks jobs, built from the config alone: one function per kind of
job, used by the Snakemake rules (which pass the JSON to the commands) and by the tests.

A decoder run is a variant of the section: the shared `model`/`train` settings updated by the
variant's own (repro.pipeline.configcheck.merged_run_config); a masked-LM run is a variant of the
`mlm` subsection, plus the masking probability and the held-out size. Kept free of heavy imports:
the Snakefile imports it.
"""

from __future__ import annotations

from typing import Any

from repro.pipeline.configcheck import figure_seeds, merged_run_config, variant_settings

PAPER = "simplified_blocks"
#: Keys naming one of the section's model seeds (shifted with them by `seed_offset`, repro.pipeline.seeds).
SEED_REFERENCES = (("mlm", "finetune_pretrain_seed"),)


def decoder_spec(config: dict, variant: str, seed: int) -> dict[str, Any]:
    """One decoder LM run (`python -m repro train lm`)."""
    return merged_run_config(config, PAPER, variant, int(seed))


def eval_chunks(config: dict, variant: str, key: str = "eval_chunks") -> int:
    """Held-out chunks of a run: the section's `key` (`eval_chunks`, the periodic set, or `heldout_chunks`,
    the final one) at the base sequence length, scaled by base length / run length so that every run is
    evaluated on the same number of tokens."""
    section = config[PAPER]
    seq_len = decoder_spec(config, variant, 0)["model"]["max_seq_len"]
    return max(1, section[key] * section["model"]["max_seq_len"] // seq_len)


def models(config: dict, variants) -> dict[str, dict[str, Any]]:
    """{variant: TransformerConfig fields}, exactly as those variants' runs build them."""
    return {variant: decoder_spec(config, variant, 0)["model"] for variant in variants}


def variant_specs(config: dict) -> dict[str, dict[str, Any]]:
    """{variant: {model, train}} of every defined variant (for the variants table)."""
    specs = {}
    for variant in config[PAPER]["variants"]:
        spec = decoder_spec(config, variant, 0)
        specs[variant] = {"model": spec["model"], "train": spec["train"]}
    return specs


def throughput_settings(config: dict) -> dict[str, Any]:
    """ThroughputSettings: the config's benchmark settings at the training sequence length."""
    section = config[PAPER]
    return dict(section["throughput"], seq_len=section["model"]["max_seq_len"])


def mlm_trained_variants(section: dict) -> list[str]:
    """The blocks of the `mlm` subsection that are pre-trained and fine-tuned, in the order of `variants`:
    `trained_variants`, or every variant where it is null or absent. The others are only timed (their
    step times feed the speed claims, which train nothing)."""
    chosen = section.get("trained_variants")
    return [variant for variant in section["variants"] if chosen is None or variant in chosen]


def mlm_run_spec(section: dict, variant: str, seed: int) -> dict[str, Any]:
    """One masked-LM pre-training run of the `mlm` subsection `section`: the variant's model and
    train settings, the seed, the masking probability, the held-out size and the budget's reference
    block ({block, updates}, or None where train.time_budget_s gives the budget in seconds)."""
    if variant not in section["variants"]:
        raise KeyError(f"simplified_blocks.mlm.variants has no {variant!r} (defined: {', '.join(section['variants'])})")
    model, train = variant_settings(section, variant, seed)
    return {
        "variant": variant,
        "seed": int(seed),
        "model": model,
        "train": train,
        "mask_prob": section["mask_prob"],
        "eval_chunks": section["eval_chunks"],
        "heldout_chunks": section["heldout_chunks"],
        "budget_updates_of": section.get("budget_updates_of"),
    }


def trained_models(config: dict) -> list[dict[str, Any]]:
    """Every model shape this paper trains, for the benchmark (repro.bench): the decoder variants its
    figures use and the masked-LM variants, each {what, model, batch_size, runs}."""
    section, out = config[PAPER], []
    seeds: dict[str, set[int]] = {}  # a run is (variant, seed), shared by every figure that uses it
    for item, figure in section["figures"].items():
        for variant in figure["variants"]:
            seeds.setdefault(variant, set()).update(figure_seeds(section, item, variant))
    for variant in sorted(seeds):
        spec = decoder_spec(config, variant, 0)
        out.append(
            {
                "what": f"decoder {variant}",
                "model": spec["model"],
                "batch_size": spec["train"]["batch_size"],
                "runs": len(seeds[variant]),
            }
        )
    mlm = section["mlm"]
    for variant in mlm_trained_variants(mlm):
        spec = mlm_run_spec(mlm, variant, 0)
        model = dict(spec["model"], vocab_size=spec["model"].get("vocab_size", config["tokenizer"]["vocab_size"]))
        out.append(
            {
                "what": f"masked LM {variant}",
                "model": model,
                "batch_size": spec["train"]["batch_size"],
                "runs": len(mlm["seeds"]),
            }
        )
    return out
