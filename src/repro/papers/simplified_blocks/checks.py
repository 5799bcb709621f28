"""The config check of the simplified_blocks section: what the schema cannot see (repro.pipeline.configcheck
calls `check_section` before any job starts), including relations between keys that a job enforces:

* blocks: the throughput benchmark feeds every measured block sequences of `model.max_seq_len`
  tokens, and repro.analysis.throughput refuses a shorter max_seq_len;
* mlm: every variant builds as a masked-LM encoder (causal: false, output: none, tie_embeddings:
  true and a train.time_budget_s, as `simplified_blocks pretrain` demands), and with a position
  table (learned, sinusoidal) holds a GLUE input: 2 + 2 × glue.max_line_tokens tokens offline (a
  sentence pair of repro.data.glue_standin), `mlm.model.max_seq_len` with hub data (what the hub
  GLUE rule cuts to);
* mlm.trained_variants: the trained blocks are defined blocks and include Pre-LN;
* mlm.step_times_file: a kept step-time table lies outside results/ and times every block as this
  config trains it (repro.papers.simplified_blocks.step_times), checked here rather than by the job
  that would copy it, hours into a run.
"""

from __future__ import annotations

from repro.analysis.device import DEVICES


def check_section(config: dict, paper: str) -> list[str]:
    """The language-model checks of every variant and figure, plus this section's own keys: the
    measured `blocks` must be defined variants and include pre_ln (the reference of the speed
    ratios), and every block must still be a valid model at `paper_size`."""
    from repro.models import ConfigError, config_from_dict
    from repro.pipeline.configcheck import check_lm_section, heldout_problems, merged_run_config

    problems = check_lm_section(config, paper)
    section = config[paper]
    blocks = section.get("blocks", [])
    for variant in blocks:
        if variant not in section["variants"]:
            problems.append(
                f"config key {paper}.blocks names {variant!r}, which is not defined under "
                f"{paper}.variants (defined: {', '.join(section['variants'])})"
            )
        elif not problems:
            model = dict(merged_run_config(config, paper, variant, 0)["model"], **section.get("paper_size", {}))
            try:
                config_from_dict(model, where="")
            except (ConfigError, TypeError) as err:
                problems.append(
                    f"config key {paper}.paper_size does not fit block {variant!r}: {str(err).removeprefix(': ')}"
                )
    if blocks and "pre_ln" not in blocks:
        problems.append(f"config key {paper}.blocks must include pre_ln, the reference of the speed ratios")
    mlm_device = section.get("mlm", {}).get("train", {}).get("device", "cpu")
    if mlm_device not in DEVICES:  # the GLUE fine-tuning's --device takes it too
        problems.append(
            f"config key {paper}.mlm.train.device is {mlm_device!r}; allowed values: {', '.join(DEVICES)} "
            "(the GLUE fine-tuning runs there as well)"
        )
    problems += throughput_problems(config, paper) + mlm_problems(config, paper)
    if "mlm" in section:
        problems += heldout_problems(section["mlm"], f"{paper}.mlm")
    return problems or kept_step_times_problems(config, paper)


def throughput_problems(config: dict, paper: str) -> list[str]:
    section = config[paper]
    length = section["model"].get("max_seq_len")
    problems = []
    for variant in section.get("blocks", []):
        own = ((section["variants"].get(variant) or {}).get("model") or {}).get("max_seq_len")
        if length is not None and own is not None and own < length:
            problems.append(
                f"config key {paper}.variants.{variant}.model.max_seq_len is {own}, shorter than the "
                f"{paper}.model.max_seq_len={length} tokens the throughput benchmark feeds every block of "
                f"{paper}.blocks; raise it or leave {variant} out of {paper}.blocks"
            )
    return problems


def mlm_problems(config: dict, paper: str) -> list[str]:
    from repro.models import config_from_dict
    from repro.papers.simplified_blocks.specs import mlm_run_spec as run_spec
    from repro.pipeline.configcheck import TABLE_POSITIONS, source_key, variant_build_problems

    mlm = config[paper].get("mlm")
    if not mlm:
        return []
    where, vocab = f"{paper}.mlm", config["tokenizer"]["vocab_size"]
    problems = trained_variants_problems(where, mlm) + variant_build_problems(where, mlm, vocab)
    if problems:  # the relations below read the built encoders
        return problems
    hub = (mlm.get("data") or {}).get("source") == "hub"
    if hub:  # the hub GLUE rule cuts the inputs to the shared length
        need = mlm["model"].get("max_seq_len")
        why = f"the hub GLUE inputs, cut to {where}.model.max_seq_len = {need} tokens: raise it"
    else:
        need = 2 + 2 * mlm["glue"]["max_line_tokens"]
        why = (
            f"the GLUE stand-in's sentence pairs of 2 + 2 × {where}.glue.max_line_tokens = {need} tokens: "
            f"raise it or lower {where}.glue.max_line_tokens"
        )
    found: dict[str, str] = {}  # key -> what is wrong (one line per key, not per variant)
    for variant in mlm["variants"]:
        spec = run_spec(mlm, variant, 0)
        cfg = config_from_dict(dict(spec["model"], vocab_size=vocab), where="")
        for field, value, wanted in (
            ("causal", cfg.causal, False),
            ("output", cfg.output, "none"),
            ("tie_embeddings", cfg.tie_embeddings, True),
        ):
            if value != wanted:
                found.setdefault(
                    source_key(where, mlm, variant, "model", field),
                    f"is {value!r}; a masked-LM encoder needs {field}: {str(wanted).lower()}",
                )
        seconds, reference = spec["train"].get("time_budget_s"), mlm.get("budget_updates_of")
        if (seconds is None) == (reference is None):
            found.setdefault(
                source_key(where, mlm, variant, "train", "time_budget_s"),
                f"is {'null' if seconds is None else seconds} and {where}.budget_updates_of is "
                f"{'null' if reference is None else 'set'}; the masked-LM runs are compared at equal training "
                "time: give exactly one budget (seconds, or the time of a block's updates)",
            )
        if need is not None and cfg.position in TABLE_POSITIONS and cfg.max_seq_len < need:
            found.setdefault(
                source_key(where, mlm, variant, "model", "max_seq_len"),
                f"is {cfg.max_seq_len} (positions: {cfg.position}); fine-tuning feeds the encoder {why}",
            )
    reference = mlm.get("budget_updates_of")
    if reference is not None and reference["block"] not in mlm["variants"]:
        found[f"{where}.budget_updates_of.block"] = (
            f"is {reference['block']!r}, not a block of {where}.variants ({', '.join(mlm['variants'])})"
        )
    return [f"config key {key} {text}" for key, text in found.items()]


def trained_variants_problems(where: str, mlm: dict) -> list[str]:
    """`trained_variants` names defined blocks and Pre-LN, against which every loss and GLUE claim compares."""
    chosen = mlm.get("trained_variants")
    if chosen is None:
        return []
    unknown = [variant for variant in chosen if variant not in mlm["variants"]]
    if unknown:
        return [
            f"config key {where}.trained_variants names {', '.join(unknown)}, not among {where}.variants "
            f"({', '.join(mlm['variants'])})"
        ]
    if "pre_ln" not in chosen:
        return [
            f"config key {where}.trained_variants lacks pre_ln: every masked-LM loss and GLUE claim compares a block "
            "with the Pre-LN encoder"
        ]
    return []


def kept_step_times_problems(config: dict, paper: str) -> list[str]:
    from pathlib import Path

    from repro.papers.simplified_blocks.specs import mlm_run_spec as run_spec
    from repro.papers.simplified_blocks.step_times import RETIME, table_problems

    mlm = config[paper].get("mlm") or {}
    kept = mlm.get("step_times_file")
    if not kept:
        return []
    key = f"config key {paper}.mlm.step_times_file"
    if Path(kept).resolve().is_relative_to(Path("results").resolve()):
        return [
            f"{key} is {kept!r}, inside results/, which the workflow rewrites: copy the table out of results/ "
            f"(for example to config/step_times/<machine>.csv) and name the copy"
        ]
    hub = (mlm.get("data") or {}).get("source") == "hub"
    vocab = None if hub else config["tokenizer"]["vocab_size"]  # a hub tokenizer's is known once its tokens are
    specs = [run_spec(mlm, variant, 0) for variant in mlm["variants"]]
    problems = table_problems(kept, specs, mlm["threads"], vocab)
    return [f"{key}: {problem}; {RETIME}" for problem in problems]
