"""`python -m repro data ...`: each step through its parser, and errors as a message with status 1."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from repro.cli import main
from repro.data.corpus import read_manifest, write_manifest
from repro.data.synthetic import load_task


def run(argv):
    """`python -m repro ARGV` in this process (its errors handled as the command line handles them)."""
    return main(argv)


def test_corpus_tokenizer_tokenize_chain(tmp_path, capsys):
    corpus, tokens = tmp_path / "corpus", tmp_path / "tokens"
    assert (
        run(
            [
                "data",
                "corpus",
                "--out-dir",
                str(corpus),
                "--max-bytes",
                "120000",
                "--valid-fraction",
                "0.2",
                "--seed",
                "2",
            ]
        )
        == 0
    )
    assert (
        run(
            [
                "data",
                "tokenizer",
                "--corpus-dir",
                str(corpus),
                "--vocab-size",
                "300",
                "--train-bytes",
                "none",
                "--out",
                str(corpus / "tokenizer.json"),
                "--threads",
                "1",
            ]
        )
        == 0
    )
    assert (
        run(
            [
                "data",
                "tokenize",
                "--corpus-dir",
                str(corpus),
                "--tokenizer",
                str(corpus / "tokenizer.json"),
                "--out-dir",
                str(tokens),
            ]
        )
        == 0
    )
    assert (tokens / "train.npz").is_file() and (corpus / "tokenizer.card.json").is_file()
    card = json.loads((corpus / "card.json").read_text())
    assert card["params"]["max_bytes"] == 120000 and card["seed"] == 2
    assert "wrote tokens to" in capsys.readouterr().out


def test_manifest_step(tmp_path):
    site = tmp_path / "site" / "torch"
    site.mkdir(parents=True)
    (site / "a.py").write_text("a = 1\n")
    assert run(["data", "manifest", "--out", str(tmp_path / "m.tsv"), "--site-packages", str(site.parent)]) == 0
    assert [e.path for e in read_manifest(tmp_path / "m.tsv").entries] == ["torch/a.py"]


def test_synthetic_step_with_sizes_and_params(tmp_path):
    out = tmp_path / "tasks" / "cola.npz"
    assert (
        run(
            [
                "data",
                "synthetic",
                "--task",
                "cola",
                "--out",
                str(out),
                "--seed",
                "4",
                "--size",
                "train=50",
                "--size",
                "selection=0",
                "--size",
                "test=20",
                "--param",
                "pairs=[1,2]",
                "--param",
                "ill_formed_fraction=0.5",
            ]
        )
        == 0
    )
    task = load_task(out, task="cola")
    assert task.meta["sizes"] == {"train": 50, "test": 20} and task.meta["params"]["pairs"] == [1, 2]
    assert task.splits["train"]["labels"].mean() == 0.5  # exact: an integer count over 50, 25 / 50 = 0.5


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--task", "nope", "--out", "x.npz"], "unknown synthetic task 'nope'"),
        (["--task", "nli", "--out", "x.npz", "--size", "train"], "--size expects KEY=VALUE"),
        (["--task", "nli", "--out", "x.npz", "--size", "train=many"], "invalid literal"),
        (["--task", "mc", "--out", "x.npz", "--param", "colour=1"], "no parameter"),
    ],
)
def test_errors_print_one_message_and_return_1(tmp_path, capsys, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    assert run(["data", "synthetic", *argv]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and "Traceback" not in err


def test_mismatched_sources_fail_the_corpus_step(tmp_path, capsys):
    site = tmp_path / "site" / "torch"
    site.mkdir(parents=True)
    for name in ("a.py", "b.py", "c.py"):
        (site / name).write_text(f"# {name}\n")
    manifest = write_manifest(tmp_path / "m.tsv", site_packages=site.parent, torch_version="1.0")
    (site / "b.py").unlink()
    code = run(
        [
            "data",
            "corpus",
            "--out-dir",
            str(tmp_path / "c"),
            "--manifest",
            str(manifest),
            "--site-packages",
            str(site.parent),
        ]
    )
    err = capsys.readouterr().err
    assert code == 1 and "torch/b.py (missing)" in err and "pip install torch==1.0" in err


def test_a_damaged_input_is_one_paragraph_naming_the_command_that_makes_it_again(tmp_path):
    """In a job's log: one `error:` paragraph whose advice is a command (Snakemake with --forcerun on the
    damaged file: deleting it would not rebuild it while what was computed from it is there), and no
    traceback; the traceback goes beside the log."""
    corpus = tmp_path / "corpus"
    assert run(["data", "corpus", "--out-dir", str(corpus), "--max-bytes", "60000", "--valid-fraction", "0.2"]) == 0
    split = corpus / "train.jsonl.gz"
    damaged = bytearray(split.read_bytes())
    damaged[len(damaged) // 2] ^= 0xFF
    split.write_bytes(bytes(damaged))
    log = tmp_path / "tokenizer.log"
    argv = ["data", "tokenizer", "--corpus-dir", str(corpus), "--vocab-size", "300", "--train-bytes", "none"]
    argv += ["--out", "tokenizer.json", "--threads", "1"]
    env = {
        key: value for key, value in os.environ.items() if key not in ("REPRO_JOB_SERVER", "REPRO_SNAKEMAKE_COMMAND")
    }
    with log.open("w") as handle:
        code = subprocess.run([sys.executable, "-m", "repro", *argv], cwd=tmp_path, stderr=handle, env=env).returncode
    printed = log.read_text()
    assert (
        code == 1 and printed.startswith(f"error: {split} is not the file its data card") and printed.count("\n") == 1
    )
    assert f"--forcerun {split}" in printed and "Traceback" not in printed
    assert "Traceback" in (tmp_path / "tokenizer.log.traceback").read_text()
