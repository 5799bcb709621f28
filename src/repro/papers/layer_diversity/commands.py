"""`python -m repro layer_diversity STEP`: the "Diversity of Transformer Layers" analogue (Kamigaito et al. 2025).

Steps (each is one Snakemake rule of workflow/rules/layer_diversity.smk):
  data      generate the four prompt tasks (sent, entail, topic, mc) into one directory, with cards
  hub-data  paper scale: the four tasks from the hub datasets (SST-2, RTE, AG News, ARC), tokenised
            with one family's own tokenizer, into that family's directory, with cards
  train     train one model family at every depth for one seed, multitask LM loss on the four tasks;
            with source hub, convert the family's frozen pretrained checkpoints instead (no training)
  readout   read every trained model's residual stream on each task's test split (float64) and
            write the bias–diversity and information tables of repro.papers.layer_diversity.layer_ensemble; for
            the depths asked, also the same tables of the model with its last block duplicated;
            --device (config key layer_diversity.analysis_device: auto, cpu, cuda; default cpu)
            is where the float64 copy of each model computes
  collect   stack the readouts of all runs into the tidy CSVs behind each figure and table
  toy       Fig. 1's toy ensembles: MSE against the number of independent or identical members
  submodularity
            Fig. 6's test of Theorem 7 on members that are independent given the label: plug-in
            gains at several sample sizes, the exact gains and the first-order plug-in bias
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd

from repro.commands import add_command
from repro.papers.layer_diversity.tables import (
    ID_COLUMNS,
    READOUT_TABLES,
    correlations,
    depth_fits,
    duplication_table,
    model_accuracy,
    stack_readouts,
    submodularity_table,
    summary_table,
    task_table,
)
from repro.pipeline.tidy import write_csv

#: The config key behind the readout's --device (named in its errors).
DEVICE_KEY = "layer_diversity.analysis_device"


# --------------------------------------------------------------------------- data


def _data(args: argparse.Namespace) -> int:
    from repro.data.errors import DataError
    from repro.data.synthetic import generate_task, write_task
    from repro.data.synthetic.prompt_tasks import PROMPT_TASKS

    params = json.loads(args.params)
    train_sizes = json.loads(args.train_sizes)
    for flag, given in (("--params", params), ("--train-sizes", train_sizes)):
        unknown = sorted(set(given) - set(args.tasks))
        if unknown:
            print(f"error: {flag} names task(s) {unknown} that are not among --tasks {args.tasks}", file=sys.stderr)
            return 2
    unsized = [name for name in args.tasks if name not in train_sizes and args.train_size is None]
    if unsized:
        print(f"error: no train size for task(s) {unsized}: give --train-size or --train-sizes", file=sys.stderr)
        return 2
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in args.tasks:
        if name not in PROMPT_TASKS:
            print(f"error: {name!r} is not a prompt task; choose from {', '.join(PROMPT_TASKS)}", file=sys.stderr)
            return 2
        try:
            train_size = train_sizes.get(name, args.train_size)
            task = generate_task(
                name, args.seed, sizes={"train": train_size, "test": args.test_size}, params=params.get(name) or None
            )
        except DataError as err:
            print(f"error: {err}", file=sys.stderr)
            return 1
        write_task(out_dir / f"{name}.npz", task)
        print(f"wrote {out_dir / name}.npz: {task.meta['sizes']}")
    return 0


#: How a hub prompt row reads (repro.hub.datasets: the label word follows the answer marker).
HUB_TEMPLATE = "<bos> text [choices] Answer: label-word"


def _hub_data(args: argparse.Namespace) -> int:
    """The four tasks from the hub (or a local mirror of its files), tokenised by one family's tokenizer."""
    from dataclasses import replace

    from repro.data.errors import DataError
    from repro.data.synthetic import write_task
    from repro.hub.datasets import DATASETS, Encoder, build_task

    hub_ids = json.loads(args.hub)
    train_sizes = json.loads(args.train_sizes)
    unknown = sorted((set(hub_ids) | set(train_sizes)) - set(args.tasks))
    if unknown:
        print(
            f"error: --hub/--train-sizes name task(s) {unknown} that are not among --tasks {args.tasks}",
            file=sys.stderr,
        )
        return 2
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    try:
        encoder = Encoder.from_pretrained(args.tokenizer)
    except (OSError, ValueError) as err:
        print(f"error: cannot load the tokenizer {args.tokenizer!r}: {err}", file=sys.stderr)
        return 1
    for name in args.tasks:
        if name not in DATASETS or DATASETS[name].kind != "prompt":
            print(f"error: {name!r} is not a hub prompt task", file=sys.stderr)
            return 2
        spec = DATASETS[name]
        if name in hub_ids:  # "id" or "id:config", as the config names it
            hub_id, _, hub_config = hub_ids[name].partition(":")
            spec = replace(spec, hub_id=hub_id, config=hub_config or None)
        train_size = int(train_sizes.get(name, 0))
        splits = ["test"] + (["train"] if train_size else [])
        source = Path(args.mirror) / name if args.mirror else None
        try:
            parts = {
                split: build_task(
                    spec,
                    encoder,
                    source=source,
                    splits=[split],
                    max_len=args.max_tokens,
                    limit=args.test_size if split == "test" else train_size,
                )
                for split in splits
            }
        except DataError as err:
            print(f"error: {err}", file=sys.stderr)
            return 1
        task = parts["test"]
        for split, part in parts.items():  # one limit per split: built apart, joined here
            task.splits[split] = part.splits[split]
            task.meta["sizes"][split] = part.meta["sizes"][split]
            task.meta["arrays"][split] = part.meta["arrays"][split]
        task.meta["params"].update(
            limit={s: args.test_size if s == "test" else train_size for s in splits}, tokenizer=args.tokenizer
        )
        task.meta.update(label_words=list(spec.label_names), template=HUB_TEMPLATE, tokenizer=args.tokenizer)
        write_task(out_dir / f"{name}.npz", task)
        print(f"wrote {out_dir / name}.npz: {task.meta['sizes']}")
    return 0


def load_tasks(data_dir: str | Path, names: list[str]):
    """{task name: TaskData} of the prompt tasks written by the data step."""
    from repro.data.synthetic import load_task

    return {name: load_task(Path(data_dir) / f"{name}.npz", task=name) for name in names}


# --------------------------------------------------------------------------- train


def run_dir(runs_root: str | Path, family: str, depth: int, seed: int) -> Path:
    """Where the run of one (family, depth, seed) lives."""
    return Path(runs_root) / family / f"L{depth}" / f"seed{seed}"


def multitask(tasks: dict, eval_examples: int, pad_id: int, label_weight: float):
    """One PromptLMTask over the train splits of every task; held out: the first rows of each test split."""
    from repro.training.prompt_lm import PromptLMTask, stack_prompt_rows

    train = [t.tensors("train") for t in tasks.values()]
    test = [t.tensors("test") for t in tasks.values()]
    train_ids, train_pos = stack_prompt_rows([x["input_ids"] for x in train], [x["answer_pos"] for x in train], pad_id)
    eval_ids, eval_pos = stack_prompt_rows(
        [x["input_ids"][:eval_examples] for x in test], [x["answer_pos"][:eval_examples] for x in test], pad_id
    )
    return PromptLMTask(train_ids, train_pos, eval_ids, eval_pos, pad_id=pad_id, label_weight=label_weight)


def _train(args: argparse.Namespace) -> int:
    import torch

    from repro.models import ConfigError, Transformer, config_from_dict
    from repro.runs import train_run, write_model_config
    from repro.training import TrainConfig
    from repro.training.seeding import derive_seed

    spec = json.loads(args.spec)
    if spec.get("source", "synthetic") == "hub":
        return _convert_family(spec, args)
    if spec.get("source", "synthetic") != "synthetic":
        print(f"error: unknown data source {spec['source']!r} (synthetic or hub)", file=sys.stderr)
        return 2
    tasks = load_tasks(args.data_dir, spec["tasks"])
    vocab_sizes = {t.meta["vocab_size"] for t in tasks.values()}
    pad_ids = {t.meta["pad_id"] for t in tasks.values()}
    if len(vocab_sizes) != 1 or len(pad_ids) != 1:
        print(f"error: the tasks do not share one vocabulary ({vocab_sizes}, pad {pad_ids})", file=sys.stderr)
        return 2
    task = multitask(tasks, spec["eval_examples"], pad_ids.pop(), spec["label_weight"])
    vocab_size = vocab_sizes.pop()
    torch.set_num_threads(args.threads)
    for depth in spec["depths"]:
        where = f"{spec['family']}.model (depth {depth})"
        try:
            cfg = config_from_dict(dict(spec["model"], n_layers=depth, vocab_size=vocab_size), where=where)
            train_cfg = TrainConfig(**dict(spec["train"], seed=spec["seed"], threads=args.threads))
        except (ConfigError, ValueError, TypeError) as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
        directory = run_dir(args.runs_root, spec["family"], depth, spec["seed"])
        torch.manual_seed(derive_seed(spec["seed"], "init", spec["family"], depth))
        model = Transformer(cfg)
        write_model_config(directory, cfg)
        train_run(
            model,
            task,
            train_cfg,
            directory,
            f"{spec['family']} L={depth} seed {spec['seed']}",
            f"tasks {', '.join(spec['tasks'])}",
        )
    return 0


def _convert_family(spec: dict, args: argparse.Namespace) -> int:
    """Paper scale: the family's pretrained checkpoints (spec["hub"], one per depth, in order) as frozen
    runs in the trained runs' layout (model.json, model.safetensors, run.json); nothing is trained."""
    import torch

    from repro.hub.converters import ConversionError, from_pretrained, save_converted

    hub = list(spec.get("hub") or [])
    if len(hub) != len(spec["depths"]):
        print(
            f"error: family {spec['family']!r} lists {len(hub)} hub checkpoint(s) {hub} for depths {spec['depths']}; "
            "with data.source hub each depth is one pretrained model: give one checkpoint per depth, in order",
            file=sys.stderr,
        )
        return 2
    torch.set_num_threads(args.threads)
    tasks = load_tasks(args.data_dir, spec["tasks"])
    for checkpoint, depth in zip(hub, spec["depths"]):
        try:
            result = from_pretrained(checkpoint, task="lm", dtype="auto")
        except (ConversionError, OSError) as err:
            print(f"error: {checkpoint}: {err}", file=sys.stderr)
            return 1
        cfg = result.config
        if cfg.n_layers != depth:
            print(
                f"error: {checkpoint} has {cfg.n_layers} layers but layer_diversity.depths gives {depth} for it "
                f"(family {spec['family']!r}); at paper scale the depth is the model's own layer count",
                file=sys.stderr,
            )
            return 2
        for name, task in tasks.items():
            largest = max(int(task.tensors(split)["input_ids"].max()) for split in task.splits)
            largest = max(largest, *task.meta["label_token_ids"])
            if largest >= cfg.vocab_size:
                print(
                    f"error: {args.data_dir}/{name}.npz has token id {largest}, outside {checkpoint}'s vocabulary of "
                    f"{cfg.vocab_size}: the task was tokenised with another tokenizer",
                    file=sys.stderr,
                )
                return 2
        notes = list(result.notes)
        directory = run_dir(args.runs_root, spec["family"], depth, spec["seed"])
        save_converted(result, directory)
        record = {
            "checkpoint": checkpoint,
            "converted_from": result.source,
            "notes": notes,
            "trained": False,
            "weights_numel": sum(int(w.numel()) for w in result.state_dict.values()),
            "n_layers": cfg.n_layers,
            "family": spec["family"],
            "seed": spec["seed"],
        }
        (directory / "run.json").write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
        print(f"{spec['family']} L={depth}: {checkpoint} ({result.source}) -> {directory}", file=sys.stderr)
        for note in notes:
            print(f"note: {note}", file=sys.stderr)
    return 0


# --------------------------------------------------------------------------- readout


def _readout(args: argparse.Namespace) -> int:
    import torch

    from repro.analysis.bias_diversity import logit_margin
    from repro.analysis.parameter_count import analytic_parameter_count
    from repro.analysis.residual_stream import read_residual_stream
    from repro.models import count_parameters
    from repro.papers.layer_diversity.block_duplication import duplicate_block
    from repro.papers.layer_diversity.layer_ensemble import analyse_readout, unit_table
    from repro.runs import load_model
    from repro.training.seeding import derive_seed

    torch.set_num_threads(args.threads)
    tasks = load_tasks(args.data_dir, args.tasks)
    tables: dict[str, list[pd.DataFrame]] = {name: [] for name in READOUT_TABLES}
    for directory in args.runs:
        model = load_model(directory)
        cfg = model.cfg
        ids = {"family": args.family, "depth": cfg.n_layers, "seed": args.seed}
        tables["models"].append(
            pd.DataFrame(
                [
                    {
                        **ids,
                        "d_model": cfg.d_model,
                        "n_heads": cfg.n_heads[0],
                        "d_ff": cfg.d_ff,
                        "norm": cfg.norm,
                        "activation": cfg.activation,
                        "block": cfg.block,
                        "position": cfg.position,
                        "tied_embeddings": cfg.tie_embeddings,
                        "vocab_size": cfg.vocab_size,
                        "parameters": count_parameters(model),
                        "parameters_numel": sum(p.numel() for p in model.parameters()),
                        "parameters_formula": analytic_parameter_count(cfg),
                    }
                ]
            )
        )
        duplicated = duplicate_block(model, cfg.n_layers - 1) if cfg.n_layers in args.duplicate_depths else None
        for name, task in tasks.items():
            test = task.tensors("test")
            labels = test["labels"].numpy()
            inputs = (test["input_ids"], test["answer_pos"], task.meta["label_token_ids"])
            readout = read_residual_stream(model, *inputs, batch_size=args.batch_size, device=args.device)
            seed = derive_seed(args.seed, "independent-member", args.family, cfg.n_layers, name) % 2**32
            for table, frame in analyse_readout(readout, labels, seed=seed).items():
                tables[table].append(_with_ids(frame, ids, name))
            if duplicated is not None:
                copy_readout = read_residual_stream(duplicated, *inputs, batch_size=args.batch_size, device=args.device)
                units = unit_table(copy_readout, labels, logit_margin(copy_readout.logits, labels))
                units = units[units["target"] == "onehot"].assign(duplicated_layer=cfg.n_layers - 1)
                tables["duplicates"].append(_with_ids(units.reset_index(drop=True), ids, name))
        print(f"read {directory}: L={cfg.n_layers}", file=sys.stderr)
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, frames in tables.items():
        frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=ID_COLUMNS)
        write_csv(frame, out_dir / f"{name}.csv", float_format="%.17g")
    return 0


def _with_ids(frame: pd.DataFrame, ids: dict, task: str) -> pd.DataFrame:
    """``frame`` with the run's identity (family, depth, seed) and the task as its first columns."""
    frame.insert(0, "task", task)
    for column, value in reversed(list(ids.items())):
        frame.insert(0, column, value)
    return frame


# --------------------------------------------------------------------------- collect


def _collect(args: argparse.Namespace) -> int:
    from repro.data.cards import card_path_for, read_card

    tables = stack_readouts(args.inputs)
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)

    def write(frame: pd.DataFrame, name: str) -> None:
        write_csv(frame, out / name, float_format="%.10g")

    tasks = load_tasks(args.data_dir, args.tasks)
    task_rows = task_table(tasks, json.loads(args.stands_for))
    task_rows["sha256"] = [
        read_card(card_path_for(Path(args.data_dir) / f"{name}.npz"))["files"][f"{name}.npz"]["sha256"]
        for name in task_rows["task"]
    ]
    write(task_rows, "table01_tasks.csv")
    write(tables["models"], "table02_models.csv")
    write(tables["checks"], "fig02_reconstruction.csv")
    units = tables["units"]
    write(units, "fig03_units.csv")
    write(correlations(units), "fig03_correlations.csv")
    write(tables["members"], "fig04_members.csv")
    write(tables["groups"], "fig04_groups.csv")
    write(units[units["form"] == "lens"], "fig05_prefixes.csv")
    write(tables["examples"], "fig05_examples.csv")
    depth = model_accuracy(units)
    write(depth, "fig06_depth.csv")
    write(depth_fits(depth), "fig06_fits.csv")
    checks = tables["checks"]
    write(
        checks[ID_COLUMNS + ["submodularity_tests", "submodularity_violations_1e3", "submodularity_max_violation"]],
        "fig06_real_layers.csv",
    )
    write(tables["info"], "fig07_information.csv")
    gains = ["duplicate_gain", "duplicate_identity_residual", "independent_gain", "label_entropy_given_layers"]
    write(checks[ID_COLUMNS + gains], "fig07_gains.csv")
    write(duplication_table(units, tables["duplicates"]), "fig07_duplication.csv")
    write(summary_table(depth, units, tables["info"], checks), "table03_summary.csv")
    return 0


# --------------------------------------------------------------------------- toy (Fig. 1)


def _toy(args: argparse.Namespace) -> int:
    from repro.papers.layer_diversity.toy_ensemble import toy_curves

    try:
        frame = toy_curves(args.examples, args.classes, args.max_members, args.noise_sd, args.offset, args.seed)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    write_csv(frame, args.out, float_format="%.17g")
    return 0


# --------------------------------------------------------------------------- submodularity (Fig. 6)


def _submodularity(args: argparse.Namespace) -> int:
    try:
        frame = submodularity_table(args.samples, args.classes, args.flip_probs, args.seed)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    frame.insert(0, "judged", frame["samples"] == args.judged_samples)
    if not frame["judged"].any():
        print(f"error: --judged-samples {args.judged_samples} is not among --samples {args.samples}", file=sys.stderr)
        return 2
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    write_csv(frame, args.out, float_format="%.17g")
    return 0


# --------------------------------------------------------------------------- parser


def register(subparsers) -> None:
    from repro.analysis.device import DEVICES, device_argument

    steps = add_command(
        subparsers, "layer_diversity", "the 'Diversity of Transformer Layers' analogue", __doc__, metavar="STEP"
    )

    p = steps.add_parser("data", help="generate the four prompt tasks")
    p.add_argument("--tasks", nargs="+", required=True, help="prompt task names (sent entail topic mc)")
    p.add_argument("--out-dir", required=True)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--train-size", type=int, default=None, help="train examples of every task not in --train-sizes")
    p.add_argument("--train-sizes", default="{}", help="JSON {task: train examples}")
    p.add_argument("--test-size", type=int, required=True)
    p.add_argument("--params", default="{}", help="JSON {task: {generator parameter: value}}")
    p.set_defaults(func=_data)

    p = steps.add_parser("hub-data", help="paper scale: the four tasks from the hub, one family's tokenizer")
    p.add_argument("--tasks", nargs="+", required=True, help="prompt task names (sent entail topic mc)")
    p.add_argument("--tokenizer", required=True, help="hub id or local directory of the family's tokenizer")
    p.add_argument("--out-dir", required=True)
    p.add_argument("--test-size", type=int, required=True, help="first rows of each test split kept")
    p.add_argument("--train-sizes", default="{}", help="JSON {task: train rows kept} (default 0: no train split)")
    p.add_argument("--hub", default="{}", help='JSON {task: "hub id" or "hub id:config"} overriding the defaults')
    p.add_argument("--max-tokens", type=int, required=True, help="longer prompts are cut (the answer marker kept)")
    p.add_argument(
        "--mirror",
        default=None,
        help="local directory with MIRROR/<task>/<hub split>.parquet|jsonl|csv instead of the hub",
    )
    p.set_defaults(func=_hub_data)

    p = steps.add_parser("train", help="train one family at every depth for one seed")
    p.add_argument(
        "--spec",
        required=True,
        help="JSON: family, seed, depths, tasks, model, train, label_weight, eval_examples, source "
        "(+ hub: one checkpoint per depth when source is hub)",
    )
    p.add_argument("--data-dir", required=True)
    p.add_argument("--runs-root", required=True, help="runs go to RUNS_ROOT/<family>/L<depth>/seed<seed>")
    p.add_argument("--threads", type=int, default=1)
    p.set_defaults(func=_train)

    p = steps.add_parser("readout", help="bias–diversity and information tables of trained runs")
    p.add_argument("--runs", nargs="+", required=True, help="run directories of one family and seed")
    p.add_argument("--family", required=True)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--data-dir", required=True)
    p.add_argument("--tasks", nargs="+", required=True)
    p.add_argument("--out-dir", required=True)
    p.add_argument("--batch-size", type=int, default=512)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument(
        "--device",
        type=device_argument(DEVICE_KEY),
        default="cpu",
        help=f"where the float64 copy of each model computes: {', '.join(DEVICES)} (auto: cuda when a "
        "GPU is visible; the model itself stays on the CPU); refused before any work if unknown, "
        "or cuda without a GPU",
    )
    p.add_argument(
        "--duplicate-depths",
        type=int,
        nargs="*",
        default=[],
        help="for runs of these depths, also read the model with its last block duplicated",
    )
    p.set_defaults(func=_readout)

    p = steps.add_parser("collect", help="stack readouts into the per-figure CSVs")
    p.add_argument("--inputs", nargs="+", required=True, help="readout directories")
    p.add_argument("--data-dir", required=True)
    p.add_argument("--tasks", nargs="+", required=True)
    p.add_argument("--stands-for", default="{}", help="JSON {task: the paper's dataset it stands for}")
    p.add_argument("--out-dir", required=True)
    p.set_defaults(func=_collect)

    p = steps.add_parser("toy", help="Fig. 1's toy ensembles: MSE against the number of members")
    p.add_argument("--examples", type=int, required=True)
    p.add_argument("--classes", type=int, required=True)
    p.add_argument("--max-members", type=int, required=True)
    p.add_argument("--noise-sd", type=float, required=True)
    p.add_argument("--offset", type=float, required=True, help="the shared error δ on every coordinate")
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--out", required=True)
    p.set_defaults(func=_toy)

    p = steps.add_parser("submodularity", help="Theorem 7 on members independent given the label")
    p.add_argument("--samples", type=int, nargs="+", required=True, help="sample sizes N (nested draws)")
    p.add_argument("--judged-samples", type=int, required=True, help="the N whose tests the claim judges")
    p.add_argument("--classes", type=int, required=True)
    p.add_argument("--flip-probs", type=float, nargs="+", required=True)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--out", required=True)
    p.set_defaults(func=_submodularity)
