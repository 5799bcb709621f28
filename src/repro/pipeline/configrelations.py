"""Relations between config keys that a job enforces, checked before any job starts instead
(`repro.pipeline.configcheck` runs them after the section checks, per paper):

* simplified_blocks.blocks: the throughput benchmark feeds every measured block sequences of
  `model.max_seq_len` tokens, and repro.analysis.throughput refuses a shorter max_seq_len;
* simplified_blocks.mlm: every variant builds as a masked-LM encoder (causal: false, output: none,
  tie_embeddings: true and a train.time_budget_s, as `simplified_blocks_mlm pretrain` demands),
  and with a position table (learned, sinusoidal) holds a GLUE input: 2 + 2 × glue.max_line_tokens
  tokens offline (a sentence pair of repro.data.glue_standin), `mlm.model.max_seq_len` with hub data
  (what the hub GLUE rule cuts to);
* sixteen_heads: every task's train split holds one batch of its family (the trainer's epoch
  sampler refuses fewer examples than batch_size), and with data_source hub a family trained from
  scratch has a max_seq_len of at least hub.max_len.<family> (what the hub task files are cut to;
  runs.check_lengths refuses longer splits whatever the positions).

Evaluation sets smaller than an evaluation batch are fine (they are sliced), and relations that
depend on the data drawn (synthetic task widths, chunks in a split) are left to the jobs.
"""

from __future__ import annotations

from collections.abc import Callable

# Positions whose table has max_seq_len rows; rope, alibi and none take any length.
TABLE_POSITIONS = ("learned", "sinusoidal")


def source_key(where: str, section: dict, variant: str, part: str, field: str) -> str:
    """The key a variant's `part.field` comes from: its own override, else the shared setting (so a
    shared value is named once, however many variants inherit it)."""
    own = (section["variants"].get(variant) or {}).get(part) or {}
    return f"{where}.variants.{variant}.{part}.{field}" if field in own else f"{where}.{part}.{field}"


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
    from repro.commands.simplified_blocks_mlm import run_spec
    from repro.models import config_from_dict
    from repro.pipeline.configcheck import variant_build_problems

    mlm = config[paper].get("mlm")
    if not mlm:
        return []
    where, vocab = f"{paper}.mlm", config["tokenizer"]["vocab_size"]
    problems = variant_build_problems(where, mlm, vocab)
    if problems:  # the relations below read the built encoders
        return problems
    hub = (mlm.get("data") or {}).get("source") == "hub"
    if hub:  # the hub GLUE rule cuts the inputs to the shared length
        need = mlm["model"].get("max_seq_len")
        why = f"the hub GLUE inputs, cut to {where}.model.max_seq_len = {need} tokens: raise it"
    else:
        need = 2 + 2 * mlm["glue"]["max_line_tokens"]
        why = (f"the GLUE stand-in's sentence pairs of 2 + 2 × {where}.glue.max_line_tokens = {need} tokens: "
               f"raise it or lower {where}.glue.max_line_tokens")
    found: dict[str, str] = {}  # key -> what is wrong (one line per key, not per variant)
    for variant in mlm["variants"]:
        spec = run_spec(mlm, variant, 0)
        cfg = config_from_dict(dict(spec["model"], vocab_size=vocab), where="")
        for field, value, wanted in (("causal", cfg.causal, False), ("output", cfg.output, "none"),
                                     ("tie_embeddings", cfg.tie_embeddings, True)):
            if value != wanted:
                found.setdefault(source_key(where, mlm, variant, "model", field),
                                 f"is {value!r}; a masked-LM encoder needs {field}: {str(wanted).lower()}")
        if spec["train"].get("time_budget_s") is None:
            found.setdefault(source_key(where, mlm, variant, "train", "time_budget_s"),
                             "is null; the masked-LM runs are compared at equal wall-clock time: set it in seconds")
        if need is not None and cfg.position in TABLE_POSITIONS and cfg.max_seq_len < need:
            found.setdefault(source_key(where, mlm, variant, "model", "max_seq_len"),
                             f"is {cfg.max_seq_len} (positions: {cfg.position}); fine-tuning feeds the encoder "
                             f"{why}")
    return [f"config key {key} {text}" for key, text in found.items()]


def sixteen_heads_problems(config: dict, paper: str) -> list[str]:
    section = config[paper]
    problems = []
    for name, task in section["tasks"].items():
        family = section["families"].get(task["family"])
        batch, train = (family or {}).get("train", {}).get("batch_size"), task["sizes"].get("train")
        if batch is not None and train is not None and train < batch:
            problems.append(
                f"config key {paper}.tasks.{name}.sizes.train is {train}, fewer than "
                f"{paper}.families.{task['family']}.train.batch_size={batch}: no training batch can be drawn; "
                "raise the train size or lower the batch size"
            )
    if section.get("data_source") == "hub":
        hub = section["hub"]
        for family, limit in hub["max_len"].items():
            if family not in section["families"] or hub["pretrained"].get(family):
                continue  # a pretrained model brings its own positions
            length = section["families"][family]["model"].get("max_seq_len")
            if length is not None and length < limit:
                problems.append(
                    f"config key {paper}.families.{family}.model.max_seq_len is {length}, shorter than "
                    f"{paper}.hub.max_len.{family}={limit}, the length the hub task files are cut to; "
                    f"raise it or lower hub.max_len.{family}"
                )
    return problems


#: paper id -> checks(config, paper) -> problems, run after that paper's section check.
RELATION_CHECKS: dict[str, list[Callable[[dict, str], list[str]]]] = {
    "simplified_blocks": [throughput_problems, mlm_problems],
    "sixteen_heads": [sixteen_heads_problems],
}

__all__ = ["RELATION_CHECKS", "TABLE_POSITIONS", "source_key"]
