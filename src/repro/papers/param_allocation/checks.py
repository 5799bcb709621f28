"""The config check of the param_allocation section: what the schema cannot see (repro.pipeline.configcheck
calls `check_section` before any job starts)."""

from __future__ import annotations

PAPER = "param_allocation"


def check_section(config: dict, paper: str = PAPER) -> list[str]:
    """Problems the schema cannot see: head counts that do not divide the budget, sequences too short
    for a task's lags, ranks above the teacher's dimension, unknown stream parameters, and training
    settings TrainConfig refuses. Builds the very objects the runs build (cheaply: no training)."""
    from repro.data.errors import DataError
    from repro.data.streams.params import check_length, max_lag
    from repro.pipeline.configcheck import heldout_problems
    from repro.training.config import TrainConfig

    problems: list[str] = []
    section = config[paper]
    sweep_cfg = section["sweep"]
    for heads in sweep_cfg["heads"]:
        if sweep_cfg["budget"] % heads:
            problems.append(
                f"{paper}.sweep.heads has {heads}, which does not divide sweep.budget={sweep_cfg['budget']}"
            )
    for task, entry in sweep_cfg["tasks"].items():
        try:
            check_length(task, max_lag(entry["stream"], **entry["params"]), sweep_cfg["seq_len"])
        except (DataError, ValueError) as err:
            problems.append(f"{paper}.sweep.tasks.{task}: {err}")
    saturation_cfg = section["saturation"]
    for rank in saturation_cfg["ranks"]:
        if rank > saturation_cfg["dim"]:
            problems.append(f"{paper}.saturation.ranks has {rank} > saturation.dim={saturation_cfg['dim']}")
    for rank in section["low_rank"]["ranks"]:
        if rank > section["low_rank"]["dim"]:
            problems.append(f"{paper}.low_rank.ranks has {rank} > low_rank.dim={section['low_rank']['dim']}")
    for part in ("sweep", "saturation"):
        try:
            TrainConfig(**dict(section[part]["train"], seed=0))
        except (ValueError, TypeError) as err:
            problems.append(f"{paper}.{part}.train: {err}")
    problems += heldout_problems(section["lm"], f"{paper}.lm")
    problems += heldout_problems(section["decoders"], f"{paper}.decoders", "eval_tokens", "heldout_tokens")
    problems += _check_decoder_parts(config, paper)
    problems += _check_claim_inputs(config, paper)
    return problems


def _check_claim_inputs(config: dict, paper: str) -> list[str]:
    """At the scales where claims are judged, the config holds every rank, length, task and position kind
    the claims read (a missing one would leave a claim without its comparison: an error here, before any job,
    rather than a verdict)."""
    from repro.papers.param_allocation.claims import common, sweeps
    from repro.pipeline.claims import DEFAULT_JUDGED_AT

    if config.get("scale") not in DEFAULT_JUDGED_AT:
        return []
    section = config[paper]
    sweep, saturation, repl = section["sweep"], section["saturation"], section["replacement"]
    problems = []

    def need(ok: bool, key: str, what: str, fix: str) -> None:
        if not ok:
            problems.append(f"{paper}.{key} {what}, which the claims read at {config['scale']} scale; {fix}")

    tasks = sorted(set(sweeps.SWEEP_TASKS) - set(sweep["tasks"]))
    need(not tasks, "sweep.tasks", f"lacks {', '.join(tasks)}", "add each task of Figs 2, 7 and 8")
    positions = sorted(set(sweeps.SWEEP_POSITIONS) - set(sweep["positions"]))
    need(not positions, "sweep.positions", f"lacks {', '.join(positions)}", "list both alibi and learned")
    need(len(set(sweep["heads"])) >= 3, "sweep.heads", "has fewer than 3 head counts", "a U-shape needs an interior H")
    for key, ranks, rank in (
        ("saturation.ranks", saturation["ranks"], common.TRAINED_RANK),
        ("replacement.ranks", repl["ranks"], common.RECOVERY_RANK),
    ):
        need(rank in ranks, key, f"lacks rank {rank}", f"add {rank}")
    need(len(set(saturation["ranks"])) >= 2, "saturation.ranks", "has one rank", "list at least two (the rank gap)")
    need(len(set(saturation["lengths"])) >= 2, "saturation.lengths", "has one length", "list at least two")
    need(len(set(repl["ranks"])) >= 2, "replacement.ranks", "has one rank", "list at least two (R against r)")
    need(
        repl["heatmap_rank"] == common.RECOVERY_RANK,
        "replacement.heatmap_rank",
        f"is {repl['heatmap_rank']}, not {common.RECOVERY_RANK}",
        f"set it to {common.RECOVERY_RANK} (every head is judged at that rank)",
    )
    need(len(repl["position_buckets"]) >= 3, "replacement.position_buckets", "has one bucket", "give at least two")
    need(len(set(section["logit_norms"]["lengths"])) >= 2, "logit_norms.lengths", "has one length", "list two or more")
    for key in ("lengths", "head_dims"):
        need(len(set(section["decoders"][key])) >= 2, f"decoders.{key}", "has one value", "list at least two")
    return problems


def _check_decoder_parts(config: dict, paper: str) -> list[str]:
    """lm, replacement, logit_norms and decoders: buildable models whose heads can be replaced exactly,
    replaced layers and heads that exist, ranks within the head dim, buckets and lengths within the context,
    lengths that divide tokens_per_step."""
    from repro.models import ConfigError, config_from_dict
    from repro.papers.param_allocation.specs import LARGEST_GAP, UNSUPPORTED_POSITIONS, grid_spec
    from repro.training.config import TrainConfig

    problems: list[str] = []
    section = config[paper]
    vocab = config.get("tokenizer", {}).get("vocab_size", 256)
    lm = section["lm"]
    try:
        cfg = config_from_dict(dict(lm["model"], vocab_size=vocab), where=f"{paper}.lm.model")
    except (ConfigError, ValueError, TypeError) as err:
        return problems + [str(err)]
    for part, train_cfg in (("lm", lm["train"]), ("replacement", section["replacement"]["train"])):
        try:
            TrainConfig(**dict(train_cfg, seed=0))
        except (ValueError, TypeError) as err:
            problems.append(f"{paper}.{part}.train: {err}")
    if cfg.qk_bias or cfg.vo_bias:
        problems.append(f"{paper}.lm.model: qk_bias and vo_bias must be false (a head is then an exact bilinear form)")
    if cfg.position in UNSUPPORTED_POSITIONS:
        problems.append(
            f"{paper}.lm.model.position is {cfg.position!r}; head replacement needs learned, sinusoidal "
            "or none (RoPE and ALiBi make a head's logits non-bilinear)"
        )
    if cfg.block_spec.attention != "softmax" or cfg.cross_attention:
        problems.append(f"{paper}.lm.model: head replacement needs plain softmax self-attention blocks")
    repl = section["replacement"]
    for layer in repl["layers"]:
        if layer >= cfg.n_layers:
            problems.append(f"{paper}.replacement.layers has {layer}; lm.model has {cfg.n_layers} layers (0-based)")
        elif (cfg.n_heads[layer], cfg.head_dim[layer]) != (cfg.n_heads[0], cfg.head_dim[0]):
            problems.append(f"{paper}.replacement.layers: every replaced layer needs the heads and head dim of layer 0")
    if repl["head"] != LARGEST_GAP and repl["head"] >= cfg.n_heads[0]:
        problems.append(f"{paper}.replacement.head is {repl['head']}; lm.model has {cfg.n_heads[0]} heads per layer")
    for rank in repl["ranks"]:
        if rank > cfg.head_dim[0]:
            problems.append(f"{paper}.replacement.ranks has {rank} > the head dim {cfg.head_dim[0]} of lm.model")
    if repl["heatmap_rank"] not in repl["ranks"]:
        problems.append(f"{paper}.replacement.heatmap_rank={repl['heatmap_rank']} must be one of replacement.ranks")
    if repl["finetune_chunks"] < repl["train"].get("batch_size", 1):
        problems.append(f"{paper}.replacement.finetune_chunks must be ≥ replacement.train.batch_size")
    edges = repl["position_buckets"]
    if edges[0] != 0 or any(b <= a for a, b in zip(edges, edges[1:])) or edges[-1] > cfg.max_seq_len:
        problems.append(
            f"{paper}.replacement.position_buckets={edges} must increase strictly from 0 to at most "
            f"lm.model.max_seq_len={cfg.max_seq_len}"
        )
    for length in section["logit_norms"]["lengths"]:
        if length > cfg.max_seq_len:
            problems.append(f"{paper}.logit_norms.lengths has {length} > lm.model.max_seq_len={cfg.max_seq_len}")
    dec = section["decoders"]
    for length in dec["lengths"]:
        for head_dim in dec["head_dims"]:
            try:
                fields, _ = grid_spec(dec["model"], dec["train"], length, head_dim, dec["tokens_per_step"], vocab, 0)
                config_from_dict(fields, where=f"{paper}.decoders (L={length}, d_h={head_dim})")
            except (ConfigError, ValueError, TypeError) as err:
                problems.append(f"{paper}.decoders: {err}")
    return sorted(set(problems), key=problems.index)
