"""The config check of the layer_diversity section: what the schema cannot see (repro.pipeline.configcheck
calls `check_section` before any job starts)."""

from __future__ import annotations

from repro.papers.layer_diversity.specs import PROMPT_VOCAB_SIZE, TASKS, family_run_spec


def check_section(config: dict, paper: str) -> list[str]:
    """Problems with the section that the schema cannot see (one line each, naming the key)."""
    from repro.models.config import ConfigError, config_from_dict
    from repro.training.config import TrainConfig

    section = config[paper]
    problems = []
    tasks = list(section["data"]["tasks"])
    if tasks != list(TASKS):
        problems.append(f"config key {paper}.data.tasks lists {tasks}; it must be {list(TASKS)} in this order")
    undefined = [f for f in section["families"] if f not in section["variants"]]
    if undefined:
        problems.append(
            f"config key {paper}.families names {undefined}, which are not defined under {paper}.variants "
            f"(defined: {', '.join(section['variants'])})"
        )
    for family in [f for f in section["families"] if f in section["variants"]]:
        spec = family_run_spec(config, paper, family, seed=0)
        for depth in section["depths"]:
            values = dict(spec["model"], n_layers=depth)
            values.setdefault("vocab_size", PROMPT_VOCAB_SIZE)
            try:
                cfg = config_from_dict(values, where="")
            except ConfigError as err:
                problems.append(f"{paper}.variants.{family}.model (depth {depth}): {str(err).removeprefix(': ')}")
                break
            if cfg.output != "lm" or cfg.block not in ("pre_ln", "parallel") or cfg.norm == "none":
                problems.append(
                    f"{paper}.variants.{family}.model: the residual-stream analysis needs an LM decoder with "
                    f"pre_ln or parallel blocks and a norm; got block={cfg.block!r}, norm={cfg.norm!r}, "
                    f"output={cfg.output!r}"
                )
                break
        if spec["model"].get("max_seq_len", 0) < 24 and section["data"]["source"] == "synthetic":
            problems.append(
                f"{paper}.variants.{family}.model.max_seq_len must be ≥ 24 (the longest prompt row of the default generators)"
            )
    if section["data"]["source"] == "hub":
        for family in [f for f in section["families"] if f in section["variants"]]:
            hub = section["variants"][family]["hub"]
            if len(hub) != len(section["depths"]):
                problems.append(
                    f"{paper}.variants.{family}.hub lists {len(hub)} checkpoint(s) for depths "
                    f"{section['depths']}: with data.source hub each depth is one pretrained model "
                    f"(give one checkpoint per depth, in order)"
                )
    try:
        TrainConfig(**dict(section["train"], seed=0))
    except (ValueError, TypeError) as err:
        problems.append(f"{paper}.train: {err}")
    analysis = section["analysis"]
    sub = analysis["submodularity"]
    if sub["judged_samples"] not in sub["samples"]:
        problems.append(
            f"{paper}.analysis.submodularity.judged_samples={sub['judged_samples']} must be one of "
            f"analysis.submodularity.samples {sub['samples']}"
        )
    missing = [d for d in analysis["duplicate_depths"] if d not in section["depths"]]
    if missing:
        problems.append(f"{paper}.analysis.duplicate_depths {missing} are not trained (not in {paper}.depths)")
    unmatched = [d for d in analysis["duplicate_depths"] if d in section["depths"] and d + 1 not in section["depths"]]
    if unmatched:
        problems.append(
            f"{paper}.analysis.duplicate_depths {unmatched}: a duplicated depth L is compared with the "
            f"trained depth L+1, which is not in {paper}.depths {section['depths']}"
        )
    rows = sum(entry["train_size"] for entry in section["data"]["tasks"].values())  # the train splits are stacked
    if section["data"]["source"] == "synthetic" and rows < section["train"]["batch_size"]:
        problems.append(f"{paper}.data.tasks.<task>.train_size sum to {rows} rows, less than train.batch_size")
    return problems
