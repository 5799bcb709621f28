"""`python -m repro layer-diversity STEP`: the "Diversity of Transformer Layers" analogue (Kamigaito et al. 2025).

Steps (each is one Snakemake rule of workflow/rules/layer_diversity.smk):
  data      generate the four prompt tasks (sent, entail, topic, mc) into one directory, with cards
  train     train one model family at every depth for one seed, multitask LM loss on the four tasks
  readout   read every trained model's residual stream on each task's test split (float64) and
            write the bias–diversity and information tables of repro.analysis.layer_ensemble
  collect   stack the readouts of all runs into the tidy CSVs behind each figure and table
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

#: Every readout table, and the per-figure CSV files `collect` writes from them.
READOUT_TABLES = ("units", "members", "groups", "info", "examples", "checks", "models")
ID_COLUMNS = ["family", "depth", "seed", "task"]


# --------------------------------------------------------------------------- data


def _data(args: argparse.Namespace) -> int:
    from repro.data.errors import DataError
    from repro.data.synthetic import generate_task, write_task
    from repro.data.synthetic.prompt_tasks import PROMPT_TASKS

    params = json.loads(args.params)
    unknown = sorted(set(params) - set(args.tasks))
    if unknown:
        print(f"error: --params names task(s) {unknown} that are not among --tasks {args.tasks}", file=sys.stderr)
        return 2
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in args.tasks:
        if name not in PROMPT_TASKS:
            print(f"error: {name!r} is not a prompt task; choose from {', '.join(PROMPT_TASKS)}", file=sys.stderr)
            return 2
        try:
            task = generate_task(name, args.seed, sizes={"train": args.train_size, "test": args.test_size},
                                 params=params.get(name) or None)
        except DataError as err:
            print(f"error: {err}", file=sys.stderr)
            return 1
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

    from repro.models import ConfigError, Transformer, config_from_dict, count_parameters
    from repro.runs import write_model_config
    from repro.training import ConfigMismatchError, TrainConfig, train
    from repro.training.seeding import derive_seed

    spec = json.loads(args.spec)
    if spec.get("source", "synthetic") != "synthetic":
        print("error: this build trains small models on synthetic tasks only; the paper scale (pretrained "
              "Llama, Mistral and Phi models prompted on SST-2, RTE, ARC and AG News) needs Hugging Face "
              "loaders that are not part of it", file=sys.stderr)
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
        print(f"{spec['family']} L={depth} seed {spec['seed']}: {count_parameters(model):,} parameters", file=sys.stderr)
        try:
            result = train(model, task, train_cfg, directory)
        except ConfigMismatchError:
            # Snakemake reruns a job whose settings changed: keep the old run in previous-<k>/, start afresh.
            print(f"{directory} holds a run of other settings; moving it aside and restarting", file=sys.stderr)
            torch.manual_seed(derive_seed(spec["seed"], "init", spec["family"], depth))
            model = Transformer(cfg)
            result = train(model, task, train_cfg, directory, restart=True)
        print(f"done: {result}", file=sys.stderr)
    return 0


# --------------------------------------------------------------------------- readout


def _readout(args: argparse.Namespace) -> int:
    import torch

    from repro.analysis.layer_ensemble import analyse_readout
    from repro.analysis.parameter_count import analytic_parameter_count
    from repro.analysis.residual_stream import read_residual_stream
    from repro.models import count_parameters
    from repro.runs import load_model
    from repro.training.seeding import derive_seed

    torch.set_num_threads(args.threads)
    tasks = load_tasks(args.data_dir, args.tasks)
    tables: dict[str, list[pd.DataFrame]] = {name: [] for name in READOUT_TABLES}
    for directory in args.runs:
        model = load_model(directory)
        cfg = model.cfg
        ids = {"family": args.family, "depth": cfg.n_layers, "seed": args.seed}
        tables["models"].append(pd.DataFrame([{
            **ids, "d_model": cfg.d_model, "n_heads": cfg.n_heads[0], "d_ff": cfg.d_ff, "norm": cfg.norm,
            "activation": cfg.activation, "block": cfg.block, "position": cfg.position,
            "tied_embeddings": cfg.tie_embeddings, "vocab_size": cfg.vocab_size,
            "parameters": count_parameters(model), "parameters_numel": sum(p.numel() for p in model.parameters()),
            "parameters_formula": analytic_parameter_count(cfg),
        }]))
        for name, task in tasks.items():
            test = task.tensors("test")
            readout = read_residual_stream(model, test["input_ids"], test["answer_pos"],
                                           task.meta["label_token_ids"], batch_size=args.batch_size)
            seed = derive_seed(args.seed, "independent-member", args.family, cfg.n_layers, name) % 2**32
            for table, frame in analyse_readout(readout, test["labels"].numpy(), seed=seed).items():
                frame.insert(0, "task", name)
                for column, value in reversed(list(ids.items())):
                    frame.insert(0, column, value)
                tables[table].append(frame)
        print(f"read {directory}: L={cfg.n_layers}", file=sys.stderr)
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, frames in tables.items():
        pd.concat(frames, ignore_index=True).to_csv(out_dir / f"{name}.csv", index=False, float_format="%.17g")
    return 0


# --------------------------------------------------------------------------- collect


def stack_readouts(directories: list[str]) -> dict[str, pd.DataFrame]:
    """{table: all runs' rows}, sorted by family, depth, seed (and task)."""
    out = {}
    for name in READOUT_TABLES:
        frame = pd.concat([pd.read_csv(Path(d) / f"{name}.csv") for d in directories], ignore_index=True)
        keys = [c for c in ID_COLUMNS if c in frame.columns]
        out[name] = frame.sort_values(keys, kind="stable").reset_index(drop=True)
    return out


def correlations(units: pd.DataFrame) -> pd.DataFrame:
    """Spearman ρ of accuracy with MSE, Bias and Diversity across units, per seed, task, form and target.

    Units are the ensembles of one seed: every (family, depth, prefix) in the logit-lens form, or
    every (family, depth) in the module form; ``scope`` "all" pools the families, otherwise one family.
    """
    from scipy.stats import spearmanr

    rows = []
    for (form, target, seed, task), group in units.groupby(["form", "target", "seed", "task"], sort=True):
        scopes = [("all", group)] + [(family, g) for family, g in group.groupby("family", sort=True)]
        for scope, frame in scopes:
            for quantity in ("mse", "bias", "diversity"):
                x, y = frame[quantity].to_numpy(), frame["accuracy"].to_numpy()
                defined = len(frame) > 2 and np.ptp(x) > 0 and np.ptp(y) > 0
                rho = float(spearmanr(x, y).statistic) if defined else np.nan
                rows.append({"form": form, "target": target, "seed": seed, "task": task, "scope": scope,
                             "quantity": quantity, "spearman": rho, "units": len(frame)})
    return pd.DataFrame(rows)


def task_table(tasks: dict, stands_for: dict[str, str]) -> pd.DataFrame:
    """One row per task: labels, label words, sizes, template, generator seed and parameters."""
    rows = []
    for name, task in tasks.items():
        meta = task.meta
        vocab = meta["vocab"]["tokens"]
        test = task.splits["test"]
        rows.append({
            "task": name, "stands_for": stands_for.get(name, ""), "labels": len(meta["label_names"]),
            "label_words": " ".join(vocab[i] for i in meta["label_token_ids"]),
            "label_names": " ".join(meta["label_names"]),
            "train_examples": meta["sizes"]["train"], "test_examples": meta["sizes"]["test"],
            "max_tokens": int(test["input_ids"].shape[1]),
            "template": "<bos> body <ans> label-word", "generator_seed": meta["seed"],
            "params": json.dumps(meta["params"], sort_keys=True),
        })
    return pd.DataFrame(rows)


def _collect(args: argparse.Namespace) -> int:
    from repro.data.cards import card_path_for, read_card

    tables = stack_readouts(args.inputs)
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)

    def write(frame: pd.DataFrame, name: str) -> None:
        frame.to_csv(out / name, index=False, float_format="%.10g", lineterminator="\n")

    tasks = load_tasks(args.data_dir, args.tasks)
    task_rows = task_table(tasks, json.loads(args.stands_for))
    task_rows["sha256"] = [
        read_card(card_path_for(Path(args.data_dir) / f"{name}.npz"))["files"][f"{name}.npz"]["sha256"] for name in task_rows["task"]
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
    write(tables["info"], "fig07_information.csv")
    return 0


# --------------------------------------------------------------------------- parser


def register(subparsers) -> None:
    parser = subparsers.add_parser("layer-diversity", help="the 'Diversity of Transformer Layers' analogue",
                                   description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    steps = parser.add_subparsers(dest="step", required=True, metavar="STEP")

    p = steps.add_parser("data", help="generate the four prompt tasks")
    p.add_argument("--tasks", nargs="+", required=True, help="prompt task names (sent entail topic mc)")
    p.add_argument("--out-dir", required=True)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--train-size", type=int, required=True)
    p.add_argument("--test-size", type=int, required=True)
    p.add_argument("--params", default="{}", help="JSON {task: {generator parameter: value}}")
    p.set_defaults(func=_data)

    p = steps.add_parser("train", help="train one family at every depth for one seed")
    p.add_argument("--spec", required=True,
                   help="JSON: family, seed, depths, tasks, model, train, label_weight, eval_examples, source")
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
    p.set_defaults(func=_readout)

    p = steps.add_parser("collect", help="stack readouts into the per-figure CSVs")
    p.add_argument("--inputs", nargs="+", required=True, help="readout directories")
    p.add_argument("--data-dir", required=True)
    p.add_argument("--tasks", nargs="+", required=True)
    p.add_argument("--stands-for", default="{}", help="JSON {task: the paper's dataset it stands for}")
    p.add_argument("--out-dir", required=True)
    p.set_defaults(func=_collect)
