"""The config check of the sixteen_heads section: what the schema cannot see (repro.pipeline.configcheck
calls `check_section` before any job starts)."""

from __future__ import annotations

from repro.models import config_from_dict
from repro.papers.sixteen_heads.specs import task_seeds, train_spec


def _task_specs() -> dict[str, tuple[str, set[str], set[str]]]:
    """{task: (family, split names, parameter names of its generator)}."""
    from repro.data.synthetic import dyck, nli, paraphrase, sentiment, translation

    return {
        "nli": ("cls", set(nli.DEFAULT_SIZES), set(nli.DEFAULT_PARAMS)),
        "sst2": ("cls", set(sentiment.DEFAULT_SIZES), set(sentiment.DEFAULT_PARAMS)),
        "cola": ("cls", set(dyck.DEFAULT_SIZES), set(dyck.DEFAULT_PARAMS)),
        "mrpc": ("cls", set(paraphrase.DEFAULT_SIZES), set(paraphrase.DEFAULT_PARAMS)),
        "mt": ("s2s", set(translation.MT_SIZES), set(translation.DEFAULT_PARAMS)),
        "iwslt": ("s2s", set(translation.IWSLT_SIZES), set(translation.DEFAULT_PARAMS)),
    }


def check_section(config: dict, paper: str) -> list[str]:
    """Problems of a synthetic-task paper section (tasks, families, analysis) the schema cannot see:
    each task's family and split names, its selection set, and that every family's model and
    training settings build."""
    from repro.data.synthetic import CLS_VOCAB, S2S_VOCAB
    from repro.models import ConfigError
    from repro.training.config import TrainConfig

    section = config[paper]
    problems = []
    known = _task_specs()
    vocab = {"cls": CLS_VOCAB.size, "s2s": S2S_VOCAB.size}
    for name, task in section["tasks"].items():
        where = f"{paper}.tasks.{name}"
        family, splits, params = known[name]
        if task["family"] != family:
            problems.append(f"config key {where}.family is {task['family']!r}; task {name} needs family {family!r}")
        unknown = sorted(set(task["sizes"]) - splits)
        if unknown:
            problems.append(
                f"config key {where}.sizes names split(s) {unknown}; task {name} has splits {sorted(splits)}"
            )
        unknown = sorted(set(task["params"]) - params)
        if unknown:
            problems.append(f"config key {where}.params names {unknown}; the {name} generator has {sorted(params)}")
        if "train" not in task["sizes"] or "test" not in task["sizes"]:
            problems.append(f"config key {where}.sizes needs the train and test splits")
        if task["selection"] != "train" and task["selection"] not in task["sizes"]:
            problems.append(
                f"config key {where}.selection is {task['selection']!r}; use 'train' or a split listed "
                f"in {where}.sizes ({', '.join(task['sizes'])})"
            )
        settings = section["families"][task["family"]]
        try:
            if task["family"] == "cls":
                config_from_dict(
                    dict(settings["model"], vocab_size=vocab["cls"], causal=False, output="classifier", n_classes=2),
                    where="",
                )
            else:
                config_from_dict(dict(settings["model"], vocab_size=vocab["s2s"], cross_attention=True), where="")
            TrainConfig(**train_spec(section, name, 0)["train"])
        except (ConfigError, ValueError, TypeError) as err:
            problems.append(
                f"{paper}.families.{task['family']} with {where} (steps, early stopping): {str(err).removeprefix(': ')}"
            )
    problems += _check_during_training(section, paper) + _check_speed(section, paper) + _check_hub(section, paper)
    problems += _check_pretrain(section, paper)
    return problems + relation_problems(config, paper)


def _check_hub(section: dict, paper: str) -> list[str]:
    """With data_source hub, the classifiers' tokenizer must be the fine-tuned checkpoint's own. (The hub
    task files have the generators' split names, which the checks above already hold the sizes to.)"""
    if section.get("data_source") != "hub":
        return []
    problems = []
    hub = section["hub"]
    if hub["pretrained"]["cls"] and hub["tokenizers"]["cls"] != hub["pretrained"]["cls"]:
        problems.append(
            f"config key {paper}.hub.tokenizers.cls is {hub['tokenizers']['cls']!r} but the classifiers are "
            f"fine-tuned from {hub['pretrained']['cls']!r}: tokenise with the checkpoint's own tokenizer"
        )
    return problems


def _check_during_training(section: dict, paper: str) -> list[str]:
    during = section.get("during_training")
    if during is None:
        return []
    name = during["task"]
    task = section["tasks"].get(name)
    if task is None or task["family"] != "s2s":
        return [
            f"config key {paper}.during_training.task is {name!r}; it must name a task of {paper}.tasks "
            "with family 's2s'"
        ]
    batch = section["families"]["s2s"]["train"]["batch_size"]
    last = max(1, round(max(during["epochs"]) * task["sizes"]["train"] / batch))
    if last > task["steps"]:
        return [
            f"config key {paper}.during_training.epochs reaches epoch {max(during['epochs'])} = update {last}, "
            f"beyond {paper}.tasks.{name}.steps={task['steps']}"
        ]
    return []


def _check_speed(section: dict, paper: str) -> list[str]:
    speed = section.get("speed")
    if speed is None:
        return []
    task = section["tasks"].get(speed["task"])
    if task is None or task["family"] != "cls":
        return [
            f"config key {paper}.speed.task is {speed['task']!r}; it must name a task of {paper}.tasks "
            "with family 'cls'"
        ]
    seeds = task_seeds(section, speed["task"])
    if speed["seed"] not in seeds:
        return [f"config key {paper}.speed.seed is {speed['seed']}; the {speed['task']} runs have seeds {seeds}"]
    return []


def _check_pretrain(section: dict, paper: str) -> list[str]:
    """Pre-training reads a classification task's inputs: every `pretrain.tasks` entry is a cls task."""
    pretrain = section.get("pretrain")
    if pretrain is None:
        return []
    return [
        f"config key {paper}.pretrain.tasks names {name!r}; it must name a task of {paper}.tasks with family 'cls'"
        for name in pretrain["tasks"]
        if section["tasks"].get(name, {}).get("family") != "cls"
    ]


def relation_problems(config: dict, paper: str) -> list[str]:
    """Every task's train split holds one batch of its family (the trainer's epoch sampler refuses
    fewer examples than batch_size), and with data_source hub a family trained from scratch has a
    max_seq_len of at least hub.max_len.<family> (what the hub task files are cut to;
    runs.check_lengths refuses longer splits whatever the positions)."""
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
