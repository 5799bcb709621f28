"""The analyses' device setting (config keys sixteen_heads.analysis_device and layer_diversity.analysis_device,
the commands' --device): cpu and auto (cpu here) give byte-identical outputs to no flag, and a bad value is
refused, naming the key, before any output is written. CPU only: GPU numerics are checked on a GPU machine."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import torch
import yaml

from repro.analysis.device import DEVICES, DeviceError, analysis_device, model_device
from repro.cli import main
from repro.data.synthetic import generate_task, write_task
from repro.papers.layer_diversity.specs import family_run_spec
from repro.pipeline.configcheck import PipelineConfigError, check_config

ROOT = Path(__file__).resolve().parents[1]
LD_TASKS = ["sent", "entail", "topic", "mc"]
NO_GPU = not torch.cuda.is_available()


def analysis_spec(task: str, selection: str) -> dict:
    return {
        "task": task,
        "seed": 0,
        "data_seed": 0,
        "selection": selection,
        "main": True,
        "analysis": {
            "selection_examples": 4,
            "importance_examples": 8,
            "eval_batch_size": 4,
            "sweep_batch_rows": 8,
            "random_orders": 1,
            "bootstrap_resamples": 20,
            "alpha": 0.01,
            "decode_extra_tokens": 3,
        },
        "label_smoothing": 0.1,
    }


def train_spec(family: str) -> dict:
    model = {"n_layers": 2, "d_model": 16, "n_heads": 2, "d_ff": 32, "max_seq_len": 48, "block": "pre_ln"}
    return {
        "family": family,
        "model": model,
        "label_smoothing": 0.1,
        "train": {
            "steps": 3,
            "batch_size": 4,
            "lr": 3e-3,
            "schedule": "constant",
            "warmup_fraction": 0.0,
            "eval_every": 0,
            "log_every": 1,
            "seed": 0,
        },
    }


@pytest.fixture(scope="module")
def sh_runs(tmp_path_factory):
    """A tiny nli classifier and a tiny mt translator, each trained three updates through the CLI."""
    root = tmp_path_factory.mktemp("sh_device")
    out = {}
    for task, family, sizes in (
        ("nli", "cls", {"train": 24, "selection": 6, "test": 10, "test_mismatched": 6}),
        ("mt", "s2s", {"train": 24, "selection": 4, "test": 6, "test_ood": 4}),
    ):
        task_file = root / f"{task}.npz"
        write_task(task_file, generate_task(task, 0, sizes=sizes))
        run = root / task / "seed0"
        assert (
            main(
                [
                    "sixteen_heads",
                    "train",
                    "--task-file",
                    str(task_file),
                    "--spec",
                    json.dumps(train_spec(family)),
                    "--run-dir",
                    str(run),
                ]
            )
            == 0
        )
        out[task] = (task_file, run)
    return root, out


def _prune(sh_runs, out_dir: Path, *device: str) -> list[Path]:
    _, runs = sh_runs
    task_file, run = runs["nli"]
    outs = [out_dir / "importance.csv", out_dir / "pruning.csv"]
    assert (
        main(
            [
                "sixteen_heads",
                "prune",
                "--model",
                str(run / "model.safetensors"),
                "--task-file",
                str(task_file),
                "--spec",
                json.dumps(analysis_spec("nli", "train")),
                *device,
                "--importance-out",
                str(outs[0]),
                "--out",
                str(outs[1]),
            ]
        )
        == 0
    )
    return outs


@pytest.mark.parametrize("flag", [["--device", "cpu"], ["--device", "auto"]], ids=["cpu", "auto"])
def test_sixteen_heads_prune_is_byte_identical_to_no_flag(sh_runs, tmp_path, flag):
    """Importance (one backward pass per batch) and every pruning curve (masked evaluations from the
    cached residuals) of the classifier: the files with --device cpu/auto equal those without the flag."""
    plain = _prune(sh_runs, tmp_path / "plain")
    flagged = _prune(sh_runs, tmp_path / "flagged", *flag)
    for a, b in zip(plain, flagged):
        assert a.read_bytes() == b.read_bytes(), a.name  # exact: the same computation twice on one machine
    assert len(a.read_text().splitlines()) > 10  # a real curve, not an empty file


def test_sixteen_heads_translation_ablation_and_speed_are_byte_identical(sh_runs, tmp_path):
    """The translation evaluator (cached encoder memory, greedy decoding under masks) and the speed step's
    masked-vs-pruned facts (timings differ run to run and are not compared) with and without --device cpu."""
    root, runs = sh_runs
    task_file, run = runs["mt"]
    files = {}
    for name, flag in (("plain", []), ("cpu", ["--device", "cpu"])):
        files[name] = tmp_path / f"{name}_ablation.csv"
        assert (
            main(
                [
                    "sixteen_heads",
                    "ablate",
                    "--model",
                    str(run / "model.safetensors"),
                    "--task-file",
                    str(task_file),
                    "--spec",
                    json.dumps(analysis_spec("mt", "selection")),
                    *flag,
                    "--out",
                    str(files[name]),
                ]
            )
            == 0
        )
    assert files["plain"].read_bytes() == files["cpu"].read_bytes()  # exact: the same computation twice, one machine

    importance, _ = _prune(sh_runs, tmp_path / "nli")
    task_file, run = runs["nli"]
    speed = json.dumps({"seed": 0, "prune_percent": 50, "batch_sizes": [4], "examples": 8, "rounds": 1, "warmup": 0})
    facts = {}
    for name, flag in (("plain", []), ("cpu", ["--device", "cpu"])):
        facts[name] = tmp_path / f"{name}_facts.csv"
        assert (
            main(
                [
                    "sixteen_heads",
                    "speed",
                    "--model",
                    str(run / "model.safetensors"),
                    "--task-file",
                    str(task_file),
                    "--importance",
                    str(importance),
                    "--spec",
                    speed,
                    *flag,
                    "--out",
                    str(tmp_path / f"{name}_speed.csv"),
                    "--facts-out",
                    str(facts[name]),
                ]
            )
            == 0
        )
    assert facts["plain"].read_bytes() == facts["cpu"].read_bytes()  # exact: the same computation twice, one machine


@pytest.fixture(scope="module")
def ld_runs(tmp_path_factory):
    """The four prompt tasks and one smoke family trained two updates at each smoke depth."""
    root = tmp_path_factory.mktemp("ld_device")
    data = root / "data"
    assert (
        main(
            [
                "layer_diversity",
                "data",
                "--tasks",
                *LD_TASKS,
                "--out-dir",
                str(data),
                "--seed",
                "0",
                "--train-size",
                "16",
                "--test-size",
                "12",
            ]
        )
        == 0
    )
    config = yaml.safe_load((ROOT / "config" / "smoke.yaml").read_text())
    family = config["layer_diversity"]["families"][0]
    spec = family_run_spec(config, "layer_diversity", family, seed=0)
    spec["train"].update(steps=2, log_every=1)
    assert (
        main(
            [
                "layer_diversity",
                "train",
                "--spec",
                json.dumps(spec),
                "--data-dir",
                str(data),
                "--runs-root",
                str(root / "runs"),
            ]
        )
        == 0
    )
    runs = [str(root / "runs" / family / f"L{d}" / "seed0") for d in spec["depths"]]
    return data, family, runs, max(spec["depths"])


def _readout(ld_runs, out: Path, *device: str) -> dict[str, bytes]:
    data, family, runs, deepest = ld_runs
    assert (
        main(
            [
                "layer_diversity",
                "readout",
                "--runs",
                *runs,
                "--family",
                family,
                "--seed",
                "0",
                "--data-dir",
                str(data),
                "--tasks",
                *LD_TASKS,
                "--out-dir",
                str(out),
                "--batch-size",
                "5",
                "--duplicate-depths",
                str(deepest),
                *device,
            ]
        )
        == 0
    )
    return {path.name: path.read_bytes() for path in sorted(out.glob("*.csv"))}


def test_layer_diversity_readout_is_byte_identical_to_no_flag(ld_runs, tmp_path):
    """Every float64 readout table (written with 17 significant digits) of the model and of its
    duplicated-block copy: no flag, --device cpu and --device auto (cpu here) write the same bytes."""
    plain = _readout(ld_runs, tmp_path / "plain")
    assert {"units.csv", "checks.csv", "duplicates.csv"} <= set(plain)
    for device in ("cpu", "auto"):
        # exact: the same computation twice on one machine
        assert _readout(ld_runs, tmp_path / device, "--device", device) == plain, device


def test_readout_keeps_float64_on_the_device_asked_for(ld_runs):
    """read_residual_stream(device=...) computes on a float64 copy there, leaves the caller's model as it
    was, and its decomposition identities hold to float64 rounding."""
    from repro.analysis.residual_stream import read_residual_stream
    from repro.data.synthetic import load_task
    from repro.runs import load_model

    data, _, runs, _ = ld_runs
    model = load_model(runs[-1])
    test = load_task(Path(data) / "sent.npz", task="sent").tensors("test")
    before = {k: v.clone() for k, v in model.state_dict().items()}
    labels = load_task(Path(data) / "sent.npz", task="sent").meta["label_token_ids"]
    default = read_residual_stream(model, test["input_ids"], test["answer_pos"], labels, batch_size=5)
    on_cpu = read_residual_stream(
        model, test["input_ids"], test["answer_pos"], labels, batch_size=5, device=torch.device("cpu")
    )
    for name in ("lens", "contributions", "logits"):
        assert getattr(on_cpu, name).dtype == "float64"
        # exact: the same float64 computation on the same (cpu) device twice, on one machine
        assert (getattr(on_cpu, name) == getattr(default, name)).all(), name
    assert on_cpu.stream_error < 1e-12 and on_cpu.logit_error < 1e-12
    assert model_device(model) == torch.device("cpu") and next(model.parameters()).dtype == torch.float32
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())


def test_auto_resolves_to_cpu_without_a_gpu():
    expected = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")
    assert analysis_device("auto", "sixteen_heads.analysis_device") == expected
    assert analysis_device("cpu", "sixteen_heads.analysis_device") == torch.device("cpu")
    assert DEVICES == ("auto", "cpu", "cuda")
    with pytest.raises(DeviceError, match=r"layer_diversity\.analysis_device .*'cuda:1'.*auto, cpu, cuda"):
        analysis_device("cuda:1", "layer_diversity.analysis_device")


@pytest.mark.skipif(not NO_GPU, reason="a GPU is visible: cuda is a valid choice here")
def test_cuda_without_a_gpu_is_refused_naming_the_key():
    with pytest.raises(DeviceError, match=r"sixteen_heads\.analysis_device.*'cuda' but no GPU is visible"):
        analysis_device("cuda", "sixteen_heads.analysis_device")


BAD_DEVICES = ["gpu", "CUDA", "cuda:0"] + (["cuda"] if NO_GPU else [])


@pytest.mark.parametrize("value", BAD_DEVICES)
def test_commands_refuse_a_bad_device_before_any_work(sh_runs, ld_runs, tmp_path, capsys, value):
    """argparse refuses the value (exit status 2) while parsing, naming the config key; nothing is written."""
    _, runs = sh_runs
    task_file, run = runs["nli"]
    out = tmp_path / "ablation.csv"
    with pytest.raises(SystemExit) as exit_info:
        main(
            [
                "sixteen_heads",
                "ablate",
                "--model",
                str(run / "model.safetensors"),
                "--task-file",
                str(task_file),
                "--spec",
                json.dumps(analysis_spec("nli", "train")),
                "--device",
                value,
                "--out",
                str(out),
            ]
        )
    assert exit_info.value.code == 2
    message = capsys.readouterr().err
    assert "sixteen_heads.analysis_device" in message and repr(value) in message and "--device" in message
    assert not out.exists()

    data, family, ld_run_dirs, _ = ld_runs
    with pytest.raises(SystemExit) as exit_info:
        main(
            [
                "layer_diversity",
                "readout",
                "--runs",
                *ld_run_dirs,
                "--family",
                family,
                "--seed",
                "0",
                "--data-dir",
                str(data),
                "--tasks",
                *LD_TASKS,
                "--out-dir",
                str(tmp_path / "readout"),
                "--device",
                value,
            ]
        )
    assert exit_info.value.code == 2
    assert "layer_diversity.analysis_device" in capsys.readouterr().err
    assert not (tmp_path / "readout").exists()


def test_config_check_names_a_bad_analysis_device():
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    for section, value in (("sixteen_heads", "gpu"), ("layer_diversity", "cuda:0")):
        broken = copy.deepcopy(config)
        broken[section]["analysis_device"] = value
        with pytest.raises(
            PipelineConfigError,
            match=rf"config key {section}\.analysis_device is '{value}'; "
            r"allowed values: auto, cpu, cuda",
        ):
            check_config(broken)


def test_scales_default_to_cpu_and_paper_to_auto():
    """cpu at smoke and laptop scale, auto at paper scale (the rules pass it as --device)."""
    for name, expected in (("smoke.yaml", "cpu"), ("config.yaml", "cpu"), ("paper.yaml", "auto")):
        config = yaml.safe_load((ROOT / "config" / name).read_text())
        assert config["sixteen_heads"]["analysis_device"] == expected, name
        assert config["layer_diversity"]["analysis_device"] == expected, name


def test_config_check_names_a_bad_masked_lm_device():
    """mlm.train.device also gives the GLUE fine-tuning its --device, which takes auto, cpu or cuda only."""
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    config["simplified_blocks"]["mlm"]["train"]["device"] = "cuda:0"
    with pytest.raises(
        PipelineConfigError, match=r"simplified_blocks\.mlm\.train\.device is 'cuda:0'; allowed values: auto, cpu, cuda"
    ):
        check_config(config)


def test_finetune_refuses_a_bad_device_naming_the_key(tmp_path, capsys):
    out = tmp_path / "part0.csv"
    with pytest.raises(SystemExit) as exit_info:
        main(
            [
                "simplified_blocks",
                "finetune",
                "--run-dirs",
                str(tmp_path),
                "--glue",
                str(tmp_path / "g.npz"),
                "--settings",
                "{}",
                "--seeds",
                "0",
                "--out",
                str(out),
                "--device",
                "gpu",
            ]
        )
    assert exit_info.value.code == 2
    assert "simplified_blocks.mlm.train.device" in capsys.readouterr().err
    assert not out.exists()


def test_paper_scale_trains_on_auto_and_cpu_scales_leave_the_device_out():
    """Every train section of paper.yaml says auto; the CPU scales omit the key (cpu), so their specs are unchanged."""

    def train_devices(node, path=""):
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "variants":  # a variant's train overrides inherit the section's device
                    continue
                if key == "train" and isinstance(value, dict) and "steps" in value:
                    yield f"{path}{key}", value.get("device")
                yield from train_devices(value, f"{path}{key}.")

    for name in ("smoke.yaml", "config.yaml"):
        config = yaml.safe_load((ROOT / "config" / name).read_text())
        assert {device for _, device in train_devices(config)} == {None}, name
    paper = dict(train_devices(yaml.safe_load((ROOT / "config" / "paper.yaml").read_text())))
    trained = {path: device for path, device in paper.items() if not path.startswith("layer_diversity.")}
    assert trained and set(trained.values()) == {"auto"}, trained
