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

from repro.commands import add_command, fail
from repro.papers.sixteen_heads.paper_scale import (
    CONVERT_RECORD,
    HUB_SPLITS,
    NEW_HEAD,
    POOLER,
    build_hub_task,
    pretrained_configs,
)
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
        return fail(str(err))
    eval_split = next((s for s in ("selection", "valid", "test") if s in task.splits), None)
    if eval_split is None:
        return fail(f"task {task.name} has no selection, valid or test split to evaluate on")
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
            return fail(str(err))
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
        return fail(str(err))
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
        return fail(f"--size takes SPLIT=N with an integer N, got {args.size}")
    if not sizes:
        return fail("name the splits to build with --size SPLIT=N")
    try:
        encoder = Encoder.from_pretrained(args.tokenizer)
    except (OSError, ValueError, ImportError) as err:
        return fail(f"cannot load the tokenizer {args.tokenizer!r}: {err}")
    try:
        task = build_hub_task(args.task, encoder, sizes, args.max_len, args.seed, args.mirror, args.final_sep)
    except DataError as err:
        return fail(str(err))
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
        return fail(f"{args.checkpoint}: {err}")
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


# -- the analyses: each loads a run and writes the tables of repro.papers.sixteen_heads.tables ----------


def _setup(args: argparse.Namespace):
    """(spec, task, family, model, evaluator, set sources) of an analysis step."""
    import torch

    from repro import task_runs
    from repro.data.synthetic import load_task
    from repro.papers.sixteen_heads import tables
    from repro.papers.sixteen_heads.head_eval import make_evaluator

    torch.set_num_threads(args.threads)
    spec = json.loads(args.spec)
    task = load_task(args.task_file, spec["task"])
    family, model = task_runs.load_run_model(Path(args.model).parent, weights=args.model)
    model = model.to(args.device)  # the evaluators and importance move each batch to the model's device
    analysis = spec["analysis"]
    sets, sources = tables.evaluation_sets(
        task, family, spec["selection"], analysis["selection_examples"], spec["data_seed"]
    )
    kwargs = tables.evaluator_kwargs(task, family, analysis, spec)
    return spec, task, family, model, make_evaluator(model, sets, **kwargs), sources


def _ablate(args: argparse.Namespace) -> int:
    from repro.papers.sixteen_heads import tables

    spec, task, family, model, evaluator, sources = _setup(args)
    df, base = tables.ablation_table(model, evaluator, sources)
    keys = tables.run_keys(spec, task, family)
    write_csv(tables.keyed(df, keys, list(df.columns)), args.out, float_format=CSV_FLOATS)
    print(
        f"wrote {args.out}: {len(df)} rows; baselines " + ", ".join(f"{n}={b.score:.2f}" for n, b in base.items()),
        file=sys.stderr,
    )
    return 0


def _prune(args: argparse.Namespace) -> int:
    import pandas as pd

    from repro.analysis import heads as H
    from repro.papers.sixteen_heads import tables

    spec, task, family, model, evaluator, _ = _setup(args)
    oracle = None
    if args.ablation:
        try:
            oracle = tables.oracle_order(pd.read_csv(args.ablation), H.all_heads(model))
        except ValueError as err:
            return fail(f"{args.ablation}: {err}")
    keys = tables.run_keys(spec, task, family)
    raw, normalised, tokens = tables.head_importance(model, family, task, spec)
    write_csv(
        tables.importance_table(model, raw, normalised, tokens, keys), args.importance_out, float_format=CSV_FLOATS
    )
    df = tables.pruning_table(
        model,
        evaluator,
        normalised,
        family,
        int(spec["seed"]),
        main=bool(spec.get("main", True)),  # the Fig. 6 tasks get the importance curve only
        random_orders=spec["analysis"]["random_orders"],
        oracle=oracle,
    )
    write_csv(tables.keyed(df, keys, list(df.columns)), args.out, float_format=CSV_FLOATS)
    print(f"wrote {args.importance_out} and {args.out}: {len(df)} curve points", file=sys.stderr)
    return 0


def _epochs(args: argparse.Namespace) -> int:
    """Fig. 5: for each kept snapshot, importance on that checkpoint and its pruning curve."""
    import pandas as pd

    from repro.papers.sixteen_heads import tables
    from repro.papers.sixteen_heads.head_eval import make_evaluator
    from repro.training import load_weights
    from repro.training.checkpoint import snapshot_path

    spec, task, family, model, _, _ = _setup(args)
    analysis = spec["analysis"]
    epochs = {int(epoch): int(step) for epoch, step in spec["epochs"].items()}
    snapshots = {epoch: snapshot_path(Path(args.model).parent, step) for epoch, step in epochs.items()}
    for epoch, path in sorted(snapshots.items()):
        if not path.exists():
            return fail(
                f"{path} is missing: train the run with keep_checkpoints_at including step {epochs[epoch]} "
                f"(epoch {epoch})"
            )
    # The same test set and settings for every snapshot (the sets are drawn from fixed seeds).
    sets, _ = tables.evaluation_sets(task, family, spec["selection"], analysis["selection_examples"], spec["data_seed"])
    kwargs = tables.evaluator_kwargs(task, family, analysis, spec)
    frames = []
    for epoch, step in sorted(epochs.items()):
        load_weights(model, snapshots[epoch])
        model.eval()
        evaluator = make_evaluator(model, {"test": sets["test"]}, **kwargs)
        _, normalised, _ = tables.head_importance(model, family, task, spec)
        curve = tables.importance_curves(model, evaluator, normalised, family, per_type=False)
        frames.append(curve.assign(epoch=epoch, step=step))
        print(f"epoch {epoch} (step {step}): unpruned {curve['baseline'].iloc[0]:.2f}", file=sys.stderr)
    df = pd.concat(frames, ignore_index=True)
    df["relative"] = df["score"] / df["baseline"]
    columns = ["epoch", "step", *tables.CURVE_COLUMNS, "relative"]
    write_csv(tables.keyed(df, tables.run_keys(spec, task, family), columns), args.out, float_format=CSV_FLOATS)
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
        return fail(f"{args.model} is a {family} run's model; the speed measurement needs a classifier (family cls)")
    model = model.to(args.device)  # the pruned copy below is made on the same device
    importance = pd.read_csv(args.importance)
    importance = importance[importance["seed"] == int(spec["seed"])]
    scores = {(r.type, int(r.layer), int(r.head)): float(r.importance) for r in importance.itertuples()}
    heads = H.all_heads(model)
    missing = [h for h in heads if h not in scores]
    if missing:
        return fail(
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
