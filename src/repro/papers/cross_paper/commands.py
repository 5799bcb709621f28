"""`python -m repro cross_paper STEP`: studies across the four works, on runs the other papers train.

Steps (each is one Snakemake rule of workflow/rules/cross_paper.smk):
  block-eval      one simplified_blocks decoder, on the held-out chunks it was evaluated on (its
                  heldout.json): the importance of every head and the prune-by-importance curve
                  (study 1), the bias-diversity decomposition of its layer increments (study 2)
  collect-blocks  stack every decoder's evaluation into the tidy CSVs of figures 1 and 2, with the
                  decoders' final losses and the reference levels of the chunks they were evaluated on
  sweep-prune     param_allocation's head-count sweep models of one seed: every head's importance, the
                  loss with the k least important heads masked for every k, and the share of heads
                  that can go (study 3)
  saturation      sixteen_heads' NLI classifiers on their test inputs: every head's softmax saturation
                  beside its Sixteen Heads importance, and each classifier's accuracy (study 4)
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from repro.commands import add_command
from repro.pipeline.tidy import write_csv

#: A decoder's full-model loss here and in its own heldout.json must agree: the same chunks, the same weights.
LOSS_AGREEMENT = 1e-4


def _block_eval(args: argparse.Namespace) -> int:
    import pandas as pd
    import torch

    from repro.data.errors import DataError
    from repro.data.lm_tokens import load_token_chunks
    from repro.papers.cross_paper import block_diversity, block_heads
    from repro.papers.cross_paper.specs import PRUNE_PERCENTS
    from repro.runs import load_model
    from repro.training.heldout import read_heldout

    torch.set_num_threads(args.threads)
    run = Path(args.run_dir)
    heldout = read_heldout(run)
    if heldout is None or "chunk_index" not in heldout:
        print(
            f"error: {run}/heldout.json is missing or has no chunk_index; rerun the decoder's training rule",
            file=sys.stderr,
        )
        return 2
    try:
        chunks = load_token_chunks(args.valid, int(heldout["seq_len"]))[torch.as_tensor(heldout["chunk_index"])]
    except (DataError, IndexError) as err:
        print(f"error: the held-out chunks of {run} cannot be cut from {args.valid}: {err}", file=sys.stderr)
        return 2
    model = load_model(run)
    batches = block_heads.lm_batches(chunks, args.batch_size)
    ids = dict(variant=args.variant, seed=args.seed)

    heads = block_heads.importance_table(model, batches)
    prune = block_heads.prune_curve(model, batches, heads, PRUNE_PERCENTS)
    base = float(prune.loc[prune["percent"] == 0, "loss"].iloc[0])
    if abs(base - float(heldout["loss"])) > LOSS_AGREEMENT:
        print(
            f"error: the whole model's loss here, {base:.6f}, differs from {run}/heldout.json's {heldout['loss']:.6f}: "
            f"the chunks of {args.valid} are not those the run was evaluated on (rebuild the run, or pass its valid split)",
            file=sys.stderr,
        )
        return 2
    summary, members = block_diversity.decomposition(model, batches)
    summary["heldout_loss"] = float(heldout["loss"])
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tables = {
        "heads.csv": heads,
        "prune.csv": prune,
        "members.csv": members,
        "decomposition.csv": pd.DataFrame([summary]),
    }
    for name, table in tables.items():
        write_csv(table.assign(**ids)[[*ids, *table.columns]], out / name)
    print(
        f"{args.variant} seed {args.seed}: loss {base:.4f}, ΔL(50%) "
        f"{float(prune.loc[prune['percent'] == 50, 'delta_loss'].iloc[0]):+.4f}, D/B {summary['share']:.4f}"
    )
    return 0


def _collect_blocks(args: argparse.Namespace) -> int:
    from repro.papers.cross_paper.specs import BLOCK_FILES
    from repro.papers.cross_paper.tables import stack_runs

    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    try:
        for source, target in BLOCK_FILES.items():
            write_csv(stack_runs(args.runs, source), out / target)
    except FileNotFoundError as err:
        print(f"error: {err}; rerun block-eval for that decoder", file=sys.stderr)
        return 2
    levels = json.loads(Path(args.levels).read_text())
    if "unigram_nats" not in levels or "bigram_nats" not in levels:
        print(f"error: {args.levels} has no unigram_nats or bigram_nats; rebuild the reference levels", file=sys.stderr)
        return 2
    shutil.copyfile(args.levels, out / "block_reference_levels.json")
    return 0


def _sweep_prune(args: argparse.Namespace) -> int:
    import pandas as pd
    import torch

    from repro.data.streams import make_stream
    from repro.models.shallow import ShallowAttentionModel, ShallowConfig
    from repro.papers.cross_paper import shallow_heads
    from repro.training import load_weights
    from repro.training.seeding import derive_seed
    from repro.training.stream_tasks import SequenceStreamTask

    torch.set_num_threads(args.threads)
    spec = json.loads(args.spec)
    trained = pd.read_csv(args.sweep_csv)
    summary, curves = [], []
    for task_name, entry in sorted(spec["tasks"].items()):
        stream = make_stream(entry["stream"], args.seed, **entry["params"])
        # the held-out set of the sweep's own evaluation (param_allocation's head_allocation.sweep_heads)
        task = SequenceStreamTask(
            stream, spec["seq_len"], spec["eval_sequences"], eval_seed=derive_seed(args.seed, "eval")
        )
        constant = shallow_heads.constant_loss(task)
        for position in spec["positions"]:
            for heads in spec["heads"]:
                run = Path(args.runs_dir) / task_name / position / f"h{int(heads):03d}"
                cfg = ShallowConfig.for_stream(
                    stream,
                    n_heads=int(heads),
                    budget=spec["budget"],
                    d_model=spec["d_model"],
                    d_ff=spec["d_ff"],
                    seq_len=spec["seq_len"],
                    position=position,
                )
                model = ShallowAttentionModel(cfg)
                try:
                    load_weights(model, run / "model.safetensors")
                except FileNotFoundError:
                    print(f"error: {run}/model.safetensors is missing; rerun param_allocation's sweep", file=sys.stderr)
                    return 2
                model.eval()
                scores = shallow_heads.importance(model, task)
                curve = shallow_heads.prune_curve(model, task, scores)
                base = float(curve["loss"].iloc[0])
                row = trained[
                    (trained["task"] == task_name) & (trained["position"] == position) & (trained["heads"] == heads)
                ]
                if len(row) != 1 or abs(base - float(row["eval_loss"].iloc[0])) > 1e-5 * max(1.0, abs(base)):
                    print(
                        f"error: {run}: the held-out loss here ({base:.6f}) is not the sweep's own "
                        f"({', '.join(f'{x:.6f}' for x in row['eval_loss']) or 'no row'} in {args.sweep_csv}); "
                        "the sweep settings or its held-out draw differ from those the models were trained with",
                        file=sys.stderr,
                    )
                    return 2
                ids = dict(task=task_name, position=position, heads=int(heads), seed=args.seed)
                curves.append(curve.assign(**ids, share=curve["n_pruned"] / int(heads)))
                summary.append(
                    dict(
                        ids,
                        loss=base,
                        constant_loss=constant,
                        metric=float(row["metric"].iloc[0]),
                        metric_name=row["metric_name"].iloc[0],
                        trivial=1.0 / stream.classes if stream.target_kind == "classification" else 1.0,
                        removable_share=shallow_heads.removable_share(curve, constant),
                    )
                )
        print(f"{task_name} seed {args.seed}: constant loss {constant:.4f}")
    id_columns = ["task", "position", "heads", "seed"]
    curves = pd.concat(curves, ignore_index=True)
    write_csv(curves[[*id_columns, "n_pruned", "share", "loss"]], args.out_curves)
    write_csv(pd.DataFrame(summary), args.out)
    return 0


def _saturation(args: argparse.Namespace) -> int:
    import pandas as pd
    import torch

    from repro.data.synthetic import load_task
    from repro.papers.cross_paper.head_saturation import saturation_and_accuracy
    from repro.task_runs import load_run_model

    torch.set_num_threads(args.threads)
    if len(args.runs) != len(args.seeds):
        print(f"error: {len(args.runs)} --runs for {len(args.seeds)} --seeds; give one run per seed", file=sys.stderr)
        return 2
    task = load_task(args.task_file)
    test = task.tensors("test")
    n_classes = len(task.meta.get("label_names") or [])
    importance = pd.read_csv(args.importance)
    importance = importance[(importance["task"] == args.task) & (importance["type"] == "self")]
    tables = []
    for run, seed in zip(args.runs, args.seeds):
        family, model = load_run_model(run)
        if family != "cls":
            print(f"error: {run} is a {family!r} run; study 4 reads classifiers", file=sys.stderr)
            return 2
        heads, accuracy = saturation_and_accuracy(
            model, test["input_ids"], test["labels"], int(task.meta.get("pad_id", 0)), args.batch_size
        )
        scores = importance[importance["seed"] == seed][["layer", "head", "importance"]]
        table = heads.merge(scores, on=["layer", "head"], how="left")
        if table["importance"].isna().any():
            print(
                f"error: {args.importance} has no importance for some heads of {args.task} seed {seed}", file=sys.stderr
            )
            return 2
        tables.append(table.assign(seed=seed, accuracy=accuracy, chance=100.0 / n_classes))
        print(f"{args.task} seed {seed}: accuracy {accuracy:.1f}, saturation {table['saturation'].mean():.3f}")
    out = pd.concat(tables, ignore_index=True)
    write_csv(out[["seed", "layer", "head", "saturation", "importance", "accuracy", "chance"]], args.out)
    return 0


def register(subparsers) -> None:
    steps = add_command(subparsers, "cross_paper", "studies across the four works", __doc__, metavar="STEP")

    p = steps.add_parser("block-eval", help="studies 1-2 on one simplified_blocks decoder")
    p.add_argument("--run-dir", required=True, help="the decoder's run directory (model.json, weights, heldout.json)")
    p.add_argument("--valid", required=True, help="the valid split's token file the run was evaluated on")
    p.add_argument("--variant", required=True)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--out-dir", required=True)
    p.set_defaults(func=_block_eval)

    p = steps.add_parser("collect-blocks", help="stack every decoder's evaluation into the figures' tables")
    p.add_argument("--runs", nargs="+", required=True, help="block-eval output directories")
    p.add_argument("--levels", required=True, help="the decoders' reference levels (JSON of data reference-levels)")
    p.add_argument("--out-dir", required=True)
    p.set_defaults(func=_collect_blocks)

    p = steps.add_parser("sweep-prune", help="study 3: prune-by-importance of the head-count sweep models of one seed")
    p.add_argument("--spec", required=True, help="JSON: param_allocation's sweep section (tasks, heads, widths, ...)")
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--runs-dir", required=True, help="the sweep's runs of that seed: RUNS_DIR/<task>/<position>/h<H>")
    p.add_argument("--sweep-csv", required=True, help="the sweep's own table of that seed (its held-out losses)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--out", required=True, help="per model: losses, the constant predictor's, the removable share")
    p.add_argument("--out-curves", required=True, help="per model and k: the loss with k heads masked")
    p.set_defaults(func=_sweep_prune)

    p = steps.add_parser("saturation", help="study 4: saturation and importance of classifier heads")
    p.add_argument("--runs", nargs="+", required=True, help="the classifiers' run directories, one per seed")
    p.add_argument("--seeds", nargs="+", type=int, required=True, help="the seed of each run, in order")
    p.add_argument("--task", required=True, help="the task the classifiers were trained on (rows of --importance)")
    p.add_argument("--task-file", required=True, help="the task's .npz file (its test split is read)")
    p.add_argument("--importance", required=True, help="sixteen_heads' importance.csv")
    p.add_argument("--batch-size", type=int, default=250)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--out", required=True)
    p.set_defaults(func=_saturation)
