"""`python -m repro sixteen_heads STEP ...`: the runs and analyses of "Are Sixteen Heads Really Better than One?".

Steps (each writes one run directory or one tidy CSV; see workflow/rules/sixteen_heads.smk):
  pretrain masked-LM pre-training of a classifier body on a task's training inputs (labels unused),
           for `train --init-from`: the synthetic stand-in for BERT's pre-training
  train    train a classifier (family cls) or a translator (family s2s) on a synthetic task file
  ablate   baseline, single-head ablation on every test set, keep-one-head on the test and selection sets
  prune    head importance on training data, then global pruning curves by importance, by the
           oracle order (single-ablation Δ on the test set) and by random orders
  epochs   pruning during training (Fig. 5): importance and the importance-order pruning curve of
           each kept snapshot of a run
  speed    inference speed (Table 4): the unpruned classifier and a copy with the least important
           heads removed physically, timed interleaved at several batch sizes
(the per-run CSVs are stacked into one table per kind by the shared `python -m repro gather`)
Paper scale (sixteen_heads.data_source: hub):
  hub-data build a task file from the paper's own dataset (GLUE, WMT14 En-Fr + MTNT, IWSLT) with a
           pretrained tokenizer, with the synthetic task's split and array names (HUB_SPLITS)
  convert  a pretrained HF BERT checkpoint as our model (repro.hub.converters), for `train --init-from`
Specs are JSON objects written by the rules from config[sixteen_heads]. ablate, prune, epochs and
speed take --device (config key sixteen_heads.analysis_device: auto, cpu or cuda; default cpu).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from repro.commands import add_command
from repro.pipeline.tidy import write_csv

# Significant digits of the CSVs this paper's commands write.
CSV_FLOATS = "%.8g"

#: The config key behind the analysis steps' --device (named in their errors).
DEVICE_KEY = "sixteen_heads.analysis_device"


def register(subparsers) -> None:
    steps = add_command(
        subparsers, "sixteen_heads", "runs and analyses of Michel et al. (2019)", __doc__, metavar="STEP"
    )

    p = steps.add_parser("train", help="train one model on a synthetic task")
    p.add_argument("--task-file", required=True, help=".npz from `repro data synthetic`")
    p.add_argument("--spec", required=True, help="JSON: {family, model, train, label_smoothing?, init_from?}")
    p.add_argument("--run-dir", required=True)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument(
        "--init-from",
        default=None,
        help="a `convert` directory (family cls): fine-tune the pretrained model, with a new "
        "classifier layer initialised from the seed, instead of training from scratch",
    )
    p.set_defaults(func=_train)

    p = steps.add_parser("pretrain", help="masked-LM pre-training of a classifier body on a task's inputs")
    p.add_argument("--task-file", required=True, help="a classification task .npz from `repro data synthetic`")
    p.add_argument("--spec", required=True, help="JSON: {model, train, mask_prob}")
    p.add_argument(
        "--run-dir", required=True, help="writes model.json and the trainer's files; `train --init-from` reads it"
    )
    p.add_argument("--threads", type=int, default=1)
    p.set_defaults(func=_pretrain)

    p = steps.add_parser("hub-data", help="one task file from the paper's own dataset (paper scale)")
    p.add_argument("--task", required=True, choices=sorted(HUB_SPLITS))
    p.add_argument("--tokenizer", required=True, help="hub id or local directory of a pretrained tokenizer")
    p.add_argument(
        "--size",
        action="append",
        default=[],
        metavar="SPLIT=N",
        help="a split to build and its largest row count (repeat; the splits built are those named)",
    )
    p.add_argument("--max-len", type=int, required=True, help="longest sequence in tokens (longer texts are cut)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random sample of the train split")
    p.add_argument(
        "--final-sep", action="store_true", help="end classification inputs with the separator, as BERT reads them"
    )
    p.add_argument(
        "--mirror", default=None, help="a local copy of the hub's files: MIRROR/<dataset>/<hub split>.parquet|jsonl|csv"
    )
    p.add_argument("--out", required=True, help="task .npz (its card is written beside it)")
    p.set_defaults(func=_hub_data)

    p = steps.add_parser("convert", help="a pretrained HF BERT as a classifier of our family (paper scale)")
    p.add_argument("--checkpoint", required=True, help="hub id or local directory, e.g. bert-base-uncased")
    p.add_argument("--revision", default=None, help="a hub revision (commit) to pin")
    p.add_argument("--out-dir", required=True, help="writes model.json, model.safetensors and convert.json")
    p.set_defaults(func=_convert)

    for name, func, text in (
        ("ablate", _ablate, "single-head and keep-one-head sweeps"),
        ("prune", _prune, "head importance and pruning curves"),
    ):
        p = steps.add_parser(name, help=text)
        p.add_argument(
            "--model", required=True, help="the model.safetensors of a `train` run (its model.json beside it)"
        )
        p.add_argument("--task-file", required=True)
        p.add_argument(
            "--spec", required=True, help="JSON: {task, seed, data_seed, selection, analysis, label_smoothing}"
        )
        p.add_argument("--threads", type=int, default=1)
        _add_device(p)
        if name == "ablate":
            p.add_argument("--out", required=True, help="ablation CSV")
        else:
            p.add_argument("--ablation", help="ablation CSV of the same run (for the oracle order); none: no oracle")
            p.add_argument("--importance-out", required=True, help="importance CSV")
            p.add_argument("--out", required=True, help="pruning-curve CSV")
        p.set_defaults(func=func)

    p = steps.add_parser("epochs", help="importance and pruning curves of a run's snapshots (Fig. 5)")
    p.add_argument(
        "--model", required=True, help="the model.safetensors of a `train` run; its snapshots are read beside it"
    )
    p.add_argument("--task-file", required=True)
    p.add_argument("--spec", required=True, help="JSON: the analysis spec plus {epochs: {epoch: step}}")
    p.add_argument("--threads", type=int, default=1)
    _add_device(p)
    p.add_argument("--out", required=True, help="CSV: one row per (epoch, pruning level)")
    p.set_defaults(func=_epochs)

    p = steps.add_parser("speed", help="inference speed, unpruned vs physically pruned (Table 4)")
    p.add_argument("--model", required=True, help="the model.safetensors of a classifier run (family cls)")
    p.add_argument("--task-file", required=True)
    p.add_argument("--importance", required=True, help="importance CSV of the same run (its seed's rows are used)")
    p.add_argument("--spec", required=True, help="JSON: {seed, prune_percent, batch_sizes, examples, rounds, warmup}")
    p.add_argument("--threads", type=int, default=1)
    _add_device(p)
    p.add_argument("--out", required=True, help="timings CSV (one row per batch size, model and round)")
    p.add_argument("--facts-out", required=True, help="CSV: parameters, attention weights and accuracies per model")
    p.set_defaults(func=_speed)


def _add_device(parser: argparse.ArgumentParser) -> None:
    from repro.analysis.device import DEVICES, device_argument

    parser.add_argument(
        "--device",
        type=device_argument(DEVICE_KEY),
        default="cpu",
        help=f"where the model runs: {', '.join(DEVICES)} (auto: cuda when a GPU is visible); "
        "an unknown value or cuda without a GPU is refused before any work",
    )


def _fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2


def _train(args: argparse.Namespace) -> int:
    import torch

    from repro import task_runs
    from repro.data.errors import DataError
    from repro.data.synthetic import load_task
    from repro.models import ConfigError
    from repro.papers.sixteen_heads import runs
    from repro.runs import train_run
    from repro.training import TrainConfig
    from repro.training.seeding import derive_seed

    spec = json.loads(args.spec)
    try:
        task = load_task(args.task_file)
        family = spec["family"]
        if args.init_from:
            configs, init_label = pretrained_configs(args.init_from, family, spec, task)
        else:
            configs, init_label = runs.model_configs(family, spec["model"], task), None
        runs.check_lengths(family, configs, task)
        train_cfg = TrainConfig(**dict(spec["train"], threads=args.threads, init_from=init_label))
    except (DataError, ConfigError, ValueError, TypeError, KeyError, FileNotFoundError) as err:
        return _fail(str(err))
    eval_split = next((s for s in ("selection", "valid", "test") if s in task.splits), None)
    if eval_split is None:
        return _fail(f"task {task.name} has no selection, valid or test split to evaluate on")
    train_task = runs.make_task(
        family,
        task,
        eval_split,
        label_smoothing=float(spec.get("label_smoothing", 0.0)),
        pad_id=int(task.meta["pad_id"]),
    )
    torch.set_num_threads(args.threads)
    torch.manual_seed(derive_seed(train_cfg.seed, "init"))
    model = task_runs.build_model(family, configs)
    if args.init_from:  # the pretrained body; the classifier keeps the seeded initialisation above
        from safetensors import safe_open

        from repro.training.checkpoint import CheckpointError, load_initial_weights

        weights = Path(args.init_from) / task_runs.WEIGHTS_FILE
        keep = NEW_HEAD
        with safe_open(weights, framework="pt") as handle:
            if not any(name.startswith(POOLER) for name in handle.keys()):
                keep += (POOLER,)  # a masked-LM body (no next-sentence task): the pooler is new too
        try:
            fresh = load_initial_weights(model, weights, keep_init=keep)
        except CheckpointError as err:
            return _fail(str(err))
        print(f"initialised from {init_label}; new: {', '.join(fresh)}", file=sys.stderr)
    task_runs.write_run_model(args.run_dir, family, configs)
    train_run(
        model,
        train_task,
        train_cfg,
        args.run_dir,
        f"{task.name} ({family}) seed {train_cfg.seed}",
        f"{task.meta['sizes']['train']:,} training examples, eval on {eval_split}",
    )
    return 0


def _pretrain(args: argparse.Namespace) -> int:
    """Masked-LM pre-training on the inputs of a task's training split, evaluated on its selection split."""
    import torch

    from repro import task_runs
    from repro.data.errors import DataError
    from repro.data.synthetic import load_task
    from repro.models import ConfigError, config_from_dict
    from repro.papers.sixteen_heads import runs
    from repro.runs import train_run, write_model_config
    from repro.training import TrainConfig
    from repro.training.seeding import derive_seed
    from repro.training.tasks import MaskedLMTask

    spec = json.loads(args.spec)
    try:
        task = load_task(args.task_file)
        if "input_ids" not in task.tensors("train") or not task.meta.get("label_names"):
            raise ValueError(f"task {task.name} is not a classification task; pre-training reads its input_ids")
        mask_id, sep_id = runs.special_id(task, "mask"), runs.separator_id(task)
        if mask_id is None:
            raise ValueError(f"task {task.name}'s vocabulary has no <mask> token to pre-train with")
        values = dict(spec["model"], vocab_size=int(task.meta["vocab_size"]), causal=False, output="lm")
        cfg = config_from_dict(runs.typed_by_separator(values, task), where="--spec")
        runs.check_lengths("cls", {"model": cfg}, task)
        train_cfg = TrainConfig(**dict(spec["train"], threads=args.threads))
    except (DataError, ConfigError, ValueError, TypeError, KeyError) as err:
        return _fail(str(err))
    pad_id = int(task.meta["pad_id"])
    specials = [i for i in (runs.special_id(task, "cls"), sep_id) if i is not None]
    eval_split = "selection" if "selection" in task.splits else "test"
    mlm = MaskedLMTask(
        task.tensors("train")["input_ids"],
        task.tensors(eval_split)["input_ids"],
        mask_token_id=mask_id,
        vocab_size=cfg.vocab_size,
        mask_prob=float(spec["mask_prob"]),
        special_ids=specials,
        eval_batch_size=256,
        pad_id=pad_id,
    )
    torch.set_num_threads(args.threads)
    torch.manual_seed(derive_seed(train_cfg.seed, "init"))
    model = task_runs.build_model("cls", {"model": cfg})
    write_model_config(args.run_dir, cfg)
    train_run(
        model,
        mlm,
        train_cfg,
        args.run_dir,
        f"{task.name} masked LM seed {train_cfg.seed}",
        f"{task.meta['sizes']['train']:,} training inputs (labels unused), eval on {eval_split}",
    )
    return 0


# -- paper scale: the paper's datasets and pretrained BERT ---------------------------------

# The tensors a fine-tuned classifier does not take from the pretrained checkpoint: BERT's
# classifier layer is new for every task (initialised N(0, init_std²), zero bias, from the run's
# seed); the pooler is pretrained and kept, as in the paper's run_classifier.py.
NEW_HEAD = ("classifier.",)
POOLER = "pooler."
# Model settings the pretrained checkpoint fixes; the family's config must agree with it.
PRETRAINED_SHAPE = ("n_layers", "d_model", "n_heads", "d_ff")


def pretrained_configs(init_dir: str, family: str, spec: dict, task) -> tuple[dict, str]:
    """({"model": cfg}, identity label) of a classifier fine-tuned from a `convert` directory.

    The configuration is the checkpoint's own (positions, norms, token types, dropout) with the
    task's number of classes; the spec's model must name the same shape, and the task must have
    been tokenised with the checkpoint's vocabulary. The label (checkpoint and the hash of its
    converted weights) enters the run's identity through TrainConfig.init_from.
    """
    from repro.models import config_from_dict
    from repro.papers.sixteen_heads import runs
    from repro.runs import read_model_config
    from repro.training.checkpoint import sha256_file

    if family != "cls":
        raise ValueError(
            f"--init-from starts a classifier (family cls) from a pretrained BERT; family {family!r} "
            "has no converted checkpoint here (train it from scratch)"
        )
    pretrained = read_model_config(init_dir)

    def single(value):  # per-layer head counts (n_heads is stored per layer) -> one number where uniform
        return value[0] if isinstance(value, (tuple, list)) and len(set(value)) == 1 else value

    different = {
        k: (single(spec["model"][k]), single(getattr(pretrained, k)))
        for k in PRETRAINED_SHAPE
        if k in spec["model"] and single(spec["model"][k]) != single(getattr(pretrained, k))
    }
    if different:
        raise ValueError(
            f"the family's model and the checkpoint in {init_dir} differ in "
            + ", ".join(f"{k} ({ours} vs {theirs})" for k, (ours, theirs) in different.items())
        )
    if int(task.meta["vocab_size"]) != pretrained.vocab_size:
        raise ValueError(
            f"task {task.name} has a vocabulary of {task.meta['vocab_size']} ids but the checkpoint in "
            f"{init_dir} has {pretrained.vocab_size}: tokenise the task with the checkpoint's tokenizer"
        )
    n_classes = len(task.meta.get("label_names") or [])
    if n_classes < 2:
        raise ValueError(f"task {task.name} has no class labels; family 'cls' needs a classification task")
    values = dict(pretrained.to_dict(), output="classifier", n_classes=n_classes)
    cfg = config_from_dict(runs.typed_by_separator(values, task), where=init_dir)
    record = Path(init_dir) / CONVERT_RECORD
    name = json.loads(record.read_text())["checkpoint"] if record.exists() else Path(init_dir).name
    digest = sha256_file(Path(init_dir) / "model.safetensors")
    return {"model": cfg}, f"{spec.get('init_from') or name}@sha256:{digest[:16]}"


CONVERT_RECORD = "convert.json"

# Our split -> (dataset of repro.hub.datasets.DATASETS, the hub's split): the synthetic analogues'
# split names on the paper's own data. GLUE's test labels are hidden, so the paper reports on the
# dev sets: the classification "test" (and the held-out split evaluated during training) is the dev
# set. WMT: the paper's BLEU is on newstest2013 (the hub's validation split) and Table 5 pairs it
# with newstest2014 (the hub's test split), here the selection split; MTNT (test_ood) is read from
# a local copy only (it has no canonical copy on the hub).
HUB_SPLITS = {
    "nli": {
        "train": ("mnli", "train"),
        "selection": ("mnli", "validation_matched"),
        "test": ("mnli", "validation_matched"),
        "test_mismatched": ("mnli", "validation_mismatched"),
    },
    "sst2": {"train": ("sst2", "train"), "selection": ("sst2", "validation"), "test": ("sst2", "validation")},
    "cola": {"train": ("cola", "train"), "selection": ("cola", "validation"), "test": ("cola", "validation")},
    "mrpc": {"train": ("mrpc", "train"), "selection": ("mrpc", "validation"), "test": ("mrpc", "validation")},
    "mt": {
        "train": ("mt", "train"),
        "selection": ("mt", "test"),
        "test": ("mt", "validation"),
        "test_ood": ("mtnt", "test"),
    },
    "iwslt": {"train": ("iwslt", "train"), "valid": ("iwslt", "validation"), "test": ("iwslt", "test")},
}
# The metric of each task's analogue (the paper's metric), and the distribution-shifted test splits.
HUB_METRICS = {"nli": "accuracy", "sst2": "accuracy", "cola": "mcc", "mrpc": "f1", "mt": "bleu", "iwslt": "bleu"}
SHIFTED_SPLITS = ("test_mismatched", "test_ood")
SHIFTED_KEY_TASKS = ("nli", "mt", "iwslt")  # the generators that write meta["shifted_splits"]


def build_hub_task(
    task_name: str,
    encoder,
    sizes: dict,
    max_len: int,
    seed: int = 0,
    mirror: str | Path | None = None,
    final_sep: bool = False,
):
    """The TaskData of one of our tasks from the paper's dataset, in the synthetic task's layout.

    ``sizes`` {split: largest row count or None} names the splits to build; the train split is a
    seeded random sample (the hub's row order is not random), the others are the first rows.
    The metadata carries what the analyses read: metric, label names, shifted splits and the
    tokenizer's special ids (meta["special_ids"]: sep, bos, eos, cls).
    """
    from dataclasses import replace

    from repro.data.errors import DataError
    from repro.data.synthetic import TaskData
    from repro.hub.datasets import DATASETS, build_task

    table = HUB_SPLITS[task_name]
    unknown = sorted(set(sizes) - set(table))
    if unknown:
        raise DataError(f"task {task_name} has no hub split(s) {unknown}; it has {sorted(table)}")
    if encoder.pad_id != 0:
        raise DataError(
            f"tokenizer {encoder.name} pads with id {encoder.pad_id}; task files pad with 0: choose a "
            "tokenizer whose padding id is 0 (BERT's WordPiece tokenizers)"
        )
    splits, meta_splits, sources, label_names = {}, {}, {}, None
    for split, limit in sizes.items():
        dataset, hub_split = table[split]
        spec = replace(DATASETS[dataset], splits={split: hub_split})
        source = Path(mirror) / dataset if mirror else None
        if source is None and spec.options.get("local_only"):
            raise DataError(
                f"task {task_name} split {split!r} comes from {dataset}, which has no copy on the hub: "
                f"set a mirror with {dataset}/{hub_split}.jsonl, or leave {split!r} out of the sizes"
            )
        part = build_task(
            spec,
            encoder,
            source=source,
            splits=[split],
            max_len=max_len,
            limit=None if limit is None else int(limit),
            final_sep=final_sep,
            shuffle_seed=seed if split == "train" else None,
        )
        splits[split] = part.splits[split]
        meta_splits[split] = [spec.hub_id or f"{dataset} (local)", spec.config, hub_split]
        sources[split] = part.meta["params"]["source"]
        label_names = label_names or part.meta["label_names"]
    special = {name: getattr(encoder, f"{name}_id") for name in ("sep", "bos", "eos", "cls")}
    meta = {
        "task": task_name,
        "generator": __name__ + ".build_hub_task",
        "family": f"hub:{encoder.name}",
        "vocab_size": encoder.vocab_size,
        "vocab": {"name": encoder.name, "size": encoder.vocab_size},
        "special_ids": special,
        "pad_id": 0,
        "seed": int(seed),
        "params": {
            "tokenizer": encoder.name,
            "max_len": max_len,
            "limits": dict(sizes),
            "final_sep": final_sep,
            "hub_splits": meta_splits,
            "source": sources,
            "train_sample_seed": int(seed),
        },
        "sizes": {s: int(len(next(iter(a.values())))) for s, a in splits.items()},
        "arrays": {s: sorted(a) for s, a in splits.items()},
        "metric": HUB_METRICS[task_name],
        "label_names": label_names,
    }
    if task_name in SHIFTED_KEY_TASKS:  # as their generators write it (possibly empty)
        meta["shifted_splits"] = sorted(set(SHIFTED_SPLITS) & set(splits))
    return TaskData(task_name, meta, splits)


def _hub_data(args: argparse.Namespace) -> int:
    from repro.data.errors import DataError
    from repro.data.synthetic import write_task
    from repro.hub.datasets import Encoder

    try:
        sizes = {}
        for item in args.size:
            split, _, n = item.partition("=")
            sizes[split] = int(n)
    except ValueError:
        return _fail(f"--size takes SPLIT=N with an integer N, got {args.size}")
    if not sizes:
        return _fail("name the splits to build with --size SPLIT=N")
    try:
        encoder = Encoder.from_pretrained(args.tokenizer)
    except (OSError, ValueError, ImportError) as err:
        return _fail(f"cannot load the tokenizer {args.tokenizer!r}: {err}")
    try:
        task = build_hub_task(args.task, encoder, sizes, args.max_len, args.seed, args.mirror, args.final_sep)
    except DataError as err:
        return _fail(str(err))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    write_task(args.out, task)
    print(f"wrote {args.out}: {task.meta['sizes']} ({encoder.name}, vocabulary {encoder.vocab_size})", file=sys.stderr)
    return 0


def _convert(args: argparse.Namespace) -> int:
    from repro.hub.converters import ConversionError, from_pretrained, save_converted
    from repro.training.checkpoint import sha256_file

    try:
        result = from_pretrained(args.checkpoint, task="classifier", revision=args.revision)
    except (ConversionError, OSError, ValueError, ImportError) as err:
        return _fail(f"{args.checkpoint}: {err}")
    out_dir = save_converted(result, args.out_dir)
    record = {
        "checkpoint": args.checkpoint,
        "revision": args.revision,
        "converted_from": result.source,
        "notes": result.notes,
        "sha256": sha256_file(out_dir / "model.safetensors"),
        "new_head": list(NEW_HEAD),
    }
    (out_dir / CONVERT_RECORD).write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    print(f"{args.checkpoint} ({result.source}) -> {out_dir}", file=sys.stderr)
    for note in result.notes:
        print(f"note: {note}", file=sys.stderr)
    return 0


# -- shared by ablate and prune -------------------------------------------------------------

# Pruning levels and rounding per family (catalog §1 and §4.6): BERT 0-100% with ⌊N·p/100⌋,
# fairseq 0-90% with ⌈N·p/100⌉.
PRUNE_PERCENTS = {"cls": list(range(0, 101, 10)), "s2s": list(range(0, 91, 10))}
PRUNE_ROUNDING = {"cls": "floor", "s2s": "ceil"}


def _setup(args: argparse.Namespace):
    """(spec, task, family, model, evaluator, set sources) of an analysis step."""
    import torch

    from repro import task_runs
    from repro.data.synthetic import load_task
    from repro.papers.sixteen_heads.head_eval import make_evaluator

    torch.set_num_threads(args.threads)
    spec = json.loads(args.spec)
    task = load_task(args.task_file, spec["task"])
    family, model = task_runs.load_run_model(Path(args.model).parent, weights=args.model)
    model = model.to(args.device)  # the evaluators and importance move each batch to the model's device
    analysis = spec["analysis"]
    sets, sources = evaluation_sets(task, family, spec["selection"], analysis["selection_examples"], spec["data_seed"])
    kwargs = _evaluator_kwargs(task, family, analysis, spec)
    return spec, task, family, model, make_evaluator(model, sets, **kwargs), sources


def _evaluator_kwargs(task, family: str, analysis: dict, spec: dict) -> dict:
    kwargs = dict(
        batch_size=analysis["eval_batch_size"],
        bootstrap_resamples=analysis["bootstrap_resamples"],
        bootstrap_seed=spec["data_seed"],
        pad_id=int(task.meta["pad_id"]),
    )
    if family == "s2s":
        from repro.papers.sixteen_heads import runs

        kwargs.update(
            bos_id=runs.special_id(task, "bos"),
            eos_id=runs.special_id(task, "eos"),
            extra_tokens=analysis["decode_extra_tokens"],
        )
    else:
        kwargs.update(metric=task.meta["metric"])
    return kwargs


def evaluation_sets(task, family: str, selection: str, selection_examples: int, data_seed: int):
    """Named evaluation sets {role: tensors} and their sources {role: text}.

    Roles: "test" (the in-domain test split), "shifted" (the task's distribution-shifted test split,
    if it has one: MNLI-mismatched / MTNT analogue) and "selection" (where Tables 5-6 choose the kept
    head: a fixed random subset of the training split when ``selection`` is "train", else the first
    ``selection_examples`` rows of that split).
    """
    import torch

    from repro.training.seeding import generator

    keys = ("input_ids", "labels") if family == "cls" else ("src", "tgt")

    def tensors(split, rows=None):
        t = task.tensors(split)
        return tuple(t[k] if rows is None else t[k][rows] for k in keys)

    sets, sources = {"test": tensors("test")}, {"test": "test"}
    shifted = task.meta.get("shifted_splits") or []
    if shifted:
        sets["shifted"], sources["shifted"] = tensors(shifted[0]), shifted[0]
    if selection == "train":
        n_train = task.meta["sizes"]["train"]
        rows = torch.randperm(n_train, generator=generator(data_seed, "head-selection-subset"))[:selection_examples]
        sets["selection"], sources["selection"] = tensors("train", rows.sort().values), f"train[{len(rows)} random]"
    else:
        if selection not in task.splits:
            raise ValueError(
                f"selection split {selection!r} is not in task {task.name} (splits: {sorted(task.splits)})"
            )
        sets["selection"] = tuple(t[:selection_examples] for t in tensors(selection))
        sources["selection"] = f"{selection}[:{min(selection_examples, task.meta['sizes'][selection])}]"
    return sets, sources


def _columns(spec: dict, task, family: str) -> dict:
    return {"task": task.name, "family": family, "metric": task.meta["metric"], "seed": int(spec["seed"])}


# The measured columns of a pruning curve, after the table's own keys.
CURVE_COLUMNS = ["percent", "n_pruned", "n_heads", "set", "score", "baseline", "delta"]


def _keyed(df, keys: dict, columns: list[str]):
    """`df` with the run's key columns (task, family, metric, seed) first, then `columns` in that order."""
    return df.assign(**keys)[[*keys, *columns]]


def _ablate(args: argparse.Namespace) -> int:
    import pandas as pd

    from repro.papers.sixteen_heads import head_sweeps as sweeps

    spec, task, family, model, evaluator, sources = _setup(args)
    names = evaluator.set_names()
    base = sweeps.baselines(evaluator, names)
    test_sets = [n for n in ("test", "shifted") if n in names]
    frames = [
        pd.DataFrame(
            [
                dict(
                    experiment="baseline",
                    set=n,
                    score=base[n].score,
                    baseline=base[n].score,
                    delta=0.0,
                    p_value=1.0,
                    n_examples=len(base[n].stats),
                    loss=base[n].loss,
                    delta_loss=0.0,
                )
                for n in names
            ]
        ),
        sweeps.single_head_ablation(model, evaluator, test_sets, base).assign(experiment="single"),
        sweeps.keep_one_head(model, evaluator, ["test", "selection"], base)
        .rename(columns={"kept_head": "head"})
        .assign(experiment="keep_one"),
    ]
    df = pd.concat(frames, ignore_index=True)
    df["source"] = df["set"].map(sources)
    columns = [
        "experiment",
        "type",
        "layer",
        "head",
        "set",
        "source",
        "score",
        "baseline",
        "delta",
        "p_value",
        "n_examples",
        "loss",
        "delta_loss",
    ]
    write_csv(_keyed(df, _columns(spec, task, family), columns), args.out, float_format=CSV_FLOATS)
    print(
        f"wrote {args.out}: {len(df)} rows; baselines " + ", ".join(f"{n}={base[n].score:.2f}" for n in names),
        file=sys.stderr,
    )
    return 0


def _importance(model, family: str, task, spec: dict):
    """(raw, normalised, real tokens) head importance of ``model`` on a fixed subset of the training
    data (the paper uses all of it), in eval mode, with the family's training loss."""
    import torch

    from repro.analysis import head_importance as imp
    from repro.papers.sixteen_heads import runs
    from repro.training.seeding import generator

    analysis = spec["analysis"]
    pad_id = int(task.meta["pad_id"])
    n_train = task.meta["sizes"]["train"]
    rows = torch.randperm(n_train, generator=generator(spec["data_seed"], "head-importance-subset"))
    rows = rows[: analysis["importance_examples"]].sort().values
    train = task.tensors("train")
    batches = runs.ordered_batches(family, {k: v[rows] for k, v in train.items()}, analysis["eval_batch_size"], pad_id)
    loss_fn = (
        imp.classification_loss_sum
        if family == "cls"
        else imp.translation_loss_sum(float(spec.get("label_smoothing", 0.0)), pad_id)
    )
    raw, tokens = imp.head_importance(model, batches, loss_fn)
    return raw, imp.normalize_by_layer(raw), tokens


def importance_curves(model, evaluator, normalised, family: str, per_type: bool, base=None):
    """Pruning curves on the test set by layer-normalised importance: globally over every head
    (scope "all") and, with ``per_type``, within each attention type alone with the others whole
    (Fig. 4; the scope is the type). Columns of `head_sweeps.pruning_curve` plus scope, percent, n_heads."""
    import pandas as pd

    from repro.analysis import head_importance as imp
    from repro.analysis import head_pruning as pruning
    from repro.papers.sixteen_heads import head_sweeps as sweeps

    order = pruning.order_by_score(imp.importance_by_head(model, normalised), ascending=True)
    base = base if base is not None else evaluator.evaluate(None, "test")
    percents = PRUNE_PERCENTS[family]
    scopes = {"all": order}
    if per_type:
        for kind in dict.fromkeys(head[0] for head in order):
            scopes[kind] = [head for head in order if head[0] == kind]
    frames = []
    for scope, heads in scopes.items():
        counts = pruning.pruning_counts(len(heads), percents, PRUNE_ROUNDING[family])
        curve = sweeps.pruning_curve(model, evaluator, heads, counts, "test", base)
        frames.append(curve.assign(scope=scope, percent=percents, n_heads=len(heads)))
    return pd.concat(frames, ignore_index=True)


def _prune(args: argparse.Namespace) -> int:
    import pandas as pd

    from repro.analysis import head_pruning as pruning
    from repro.analysis import heads as H
    from repro.papers.sixteen_heads import head_sweeps as sweeps
    from repro.training.seeding import derive_seed

    spec, task, family, model, evaluator, _ = _setup(args)
    analysis = spec["analysis"]
    main = bool(spec.get("main", True))  # the Fig. 6 tasks get the importance curve only
    raw, normalised, tokens = _importance(model, family, task, spec)
    columns = _columns(spec, task, family)
    importance_rows = [
        dict(
            columns,
            type=kind,
            layer=layer,
            head=head,
            importance_raw=float(raw[kind][layer, head]),
            importance=float(normalised[kind][layer, head]),
            tokens=tokens[kind],
        )
        for kind, layer, head in H.all_heads(model)
    ]
    write_csv(pd.DataFrame(importance_rows), args.importance_out, float_format=CSV_FLOATS)

    heads = H.all_heads(model)
    base = evaluator.evaluate(None, "test")
    frames = [
        importance_curves(model, evaluator, normalised, family, per_type=main and family == "s2s", base=base).assign(
            order="importance", order_seed=-1
        )
    ]
    orders = {}
    if args.ablation:
        ablation = pd.read_csv(args.ablation)
        single = ablation[(ablation["experiment"] == "single") & (ablation["set"] == "test")]
        if "delta_loss" not in single:
            return _fail(
                f"{args.ablation} has no delta_loss column (written by an older version); rerun its ablate step"
            )
        delta = {(r.type, int(r.layer), int(r.head)): float(r.delta) for r in single.itertuples()}
        delta_loss = {(r.type, int(r.layer), int(r.head)): float(r.delta_loss) for r in single.itertuples()}
        missing = [h for h in heads if h not in delta]
        if missing:
            return _fail(f"{args.ablation} lacks the single-head test Δ of {len(missing)} heads, e.g. {missing[0]}")
        # Least harmful first; heads that leave the score unchanged by the smaller loss increase.
        orders[("oracle", -1)] = pruning.order_by_score(delta, ascending=False, tiebreak=delta_loss)
    for k in range(analysis["random_orders"] if main else 0):
        orders[("random", k)] = pruning.random_order(heads, derive_seed(int(spec["seed"]), "random-prune-order", k))
    percents = PRUNE_PERCENTS[family]
    counts = pruning.pruning_counts(len(heads), percents, PRUNE_ROUNDING[family])
    for (name, order_seed), order in orders.items():
        curve = sweeps.pruning_curve(model, evaluator, order, counts, "test", base)
        frames.append(
            curve.assign(order=name, order_seed=order_seed, scope="all", percent=percents, n_heads=len(heads))
        )
    df = pd.concat(frames, ignore_index=True)
    write_csv(_keyed(df, columns, ["scope", "order", "order_seed", *CURVE_COLUMNS]), args.out, float_format=CSV_FLOATS)
    print(f"wrote {args.importance_out} and {args.out}: {len(df)} curve points", file=sys.stderr)
    return 0


def _epochs(args: argparse.Namespace) -> int:
    """Fig. 5: for each kept snapshot, importance on that checkpoint and its pruning curve."""
    import pandas as pd

    from repro.papers.sixteen_heads.head_eval import make_evaluator
    from repro.training import load_weights
    from repro.training.checkpoint import snapshot_path

    spec, task, family, model, _, _ = _setup(args)
    analysis = spec["analysis"]
    epochs = {int(epoch): int(step) for epoch, step in spec["epochs"].items()}
    frames = []
    for epoch, step in sorted(epochs.items()):
        path = snapshot_path(Path(args.model).parent, step)
        if not path.exists():
            return _fail(
                f"{path} is missing: train the run with keep_checkpoints_at including step {step} (epoch {epoch})"
            )
        load_weights(model, path)
        model.eval()
        sets, _ = evaluation_sets(task, family, spec["selection"], analysis["selection_examples"], spec["data_seed"])
        kwargs = _evaluator_kwargs(task, family, analysis, spec)
        evaluator = make_evaluator(model, {"test": sets["test"]}, **kwargs)
        _, normalised, _ = _importance(model, family, task, spec)
        curve = importance_curves(model, evaluator, normalised, family, per_type=False)
        frames.append(curve.assign(epoch=epoch, step=step))
        print(f"epoch {epoch} (step {step}): unpruned {curve['baseline'].iloc[0]:.2f}", file=sys.stderr)
    df = pd.concat(frames, ignore_index=True)
    df["relative"] = df["score"] / df["baseline"]
    columns = ["epoch", "step", *CURVE_COLUMNS, "relative"]
    write_csv(_keyed(df, _columns(spec, task, family), columns), args.out, float_format=CSV_FLOATS)
    print(f"wrote {args.out}: {len(epochs)} epochs", file=sys.stderr)
    return 0


def _speed(args: argparse.Namespace) -> int:
    """Table 4: prune the least important heads physically and time both models."""
    import pandas as pd
    import torch

    from repro import task_runs
    from repro.analysis import head_pruning as pruning
    from repro.analysis import heads as H
    from repro.data.synthetic import load_task
    from repro.papers.sixteen_heads import pruned_speed as speed

    torch.set_num_threads(args.threads)
    spec = json.loads(args.spec)
    task = load_task(args.task_file)
    family, model = task_runs.load_run_model(Path(args.model).parent, weights=args.model)
    if family != "cls":
        return _fail(f"{args.model} is a {family} run's model; the speed measurement needs a classifier (family cls)")
    model = model.to(args.device)  # the pruned copy below is made on the same device
    importance = pd.read_csv(args.importance)
    importance = importance[importance["seed"] == int(spec["seed"])]
    scores = {(r.type, int(r.layer), int(r.head)): float(r.importance) for r in importance.itertuples()}
    heads = H.all_heads(model)
    missing = [h for h in heads if h not in scores]
    if missing:
        return _fail(
            f"{args.importance} has no importance for {len(missing)} heads of seed {spec['seed']}, e.g. {missing[0]}"
        )
    order = pruning.order_by_score({h: scores[h] for h in heads}, ascending=True)
    k = pruning.pruning_counts(len(heads), [int(spec["prune_percent"])], "floor")[0]  # BERT's rounding
    masks = H.masks_without(model, order[:k])
    pruned = speed.pruned_copy(model, masks)
    pad_id = int(task.meta["pad_id"])
    test = task.tensors("test")
    agreement = speed.compare_masked_and_pruned(model, pruned, masks, test["input_ids"], test["labels"], pad_id)
    facts = speed.model_facts({"original": model, "pruned": pruned})
    for key, value in agreement.items():
        facts[key] = value
    facts["accuracy"] = [_accuracy(model, test, pad_id), agreement["accuracy_pruned"]]  # unpruned, pruned
    facts["prune_percent"] = [0, int(spec["prune_percent"])]
    facts["pruned_heads"] = [0, k]
    facts.insert(0, "seed", int(spec["seed"]))
    facts.insert(0, "task", task.name)
    write_csv(facts, args.facts_out, float_format=CSV_FLOATS)

    ids = test["input_ids"][: int(spec["examples"])]
    timings = speed.time_inference(
        {"original": model, "pruned": pruned},
        ids,
        spec["batch_sizes"],
        rounds=int(spec["rounds"]),
        warmup=int(spec["warmup"]),
        pad_id=pad_id,
    )
    timings.insert(0, "threads", args.threads)
    timings.insert(0, "seq_len", ids.shape[1])
    timings.insert(0, "seed", int(spec["seed"]))
    timings.insert(0, "task", task.name)
    write_csv(timings, args.out, float_format=CSV_FLOATS)
    summary = speed.summarize_speed(timings, "original")
    print(summary.to_string(index=False), file=sys.stderr)
    return 0


def _accuracy(model, test: dict, pad_id: int) -> float:
    import torch

    with torch.no_grad():
        ids = test["input_ids"]
        device = next(model.parameters()).device
        logits = torch.cat(
            [
                model(chunk, padding_mask=chunk != pad_id).cpu()
                for chunk in (c.to(device) for c in torch.split(ids, 500))
            ]
        )
    return float((logits.argmax(-1) == test["labels"]).float().mean())
