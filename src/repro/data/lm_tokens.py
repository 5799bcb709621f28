"""Tokenised language-model data: each corpus split encoded once and stored as a token stream.

File format, one per split (``train.npz``, ``valid.npz``, written by repro.data.npz, no pickle):
  tokens   [n_tokens]   uint16 (uint32 if the vocabulary has more than 65,536 ids): every file's
                        tokens followed by one EOS (``<|endoftext|>``, id 0), files in corpus order
  offsets  [n_files+1]  int64: file i is tokens[offsets[i]:offsets[i+1]], its EOS included
  paths    [n_files]    str: the file's path in the corpus
  meta.json             vocab_size, eos_id, and the sha256 of the tokenizer that encoded it
plus ``card.json`` in the output directory.

Training examples are chunks cut from each file separately (``load_token_chunks``): a file of n
tokens gives n // seq_len chunks and its remainder is dropped. This follows the code the
simplified-blocks paper built on (HF's CodeParrot tutorial tokenises each file with
``return_overflowing_tokens`` and keeps only chunks of full length); HF's other CodeParrot script
concatenates files before chunking instead, which keeps more tokens. A chunk never spans two files.

A language model is evaluated on valid chunks drawn across the whole split (`heldout_draw`): a final
held-out set, evaluated once on the final weights, and the periodic set of its loss curve, nested in
it. Both are the same for every run of the same chunk length, whatever its seed.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch
from tqdm import tqdm

from repro.data.cards import card_path_for, file_sha256, make_card, read_card, write_card
from repro.data.corpus import SPLITS, iter_corpus
from repro.data.errors import DataError
from repro.data.npz import read_npz, write_npz
from repro.data.tokenizer import EOS_ID, load_tokenizer
from repro.training.seeding import derive_seed

_BATCH_FILES = 64  # files per encode_batch call: large enough for rayon, small enough for a live bar


def token_dtype(vocab_size: int) -> np.dtype:
    """The smallest unsigned dtype that holds every id of the vocabulary."""
    return np.dtype(np.uint16 if vocab_size <= 1 << 16 else np.uint32)


def encode_split(corpus_dir: str | Path, split: str, tokenizer) -> dict[str, np.ndarray]:
    """Encode one corpus split: {"tokens": [n_tokens], "offsets": [n_files+1], "paths": [n_files]}."""
    records = list(iter_corpus(corpus_dir, split))
    tokenizer.encode_special_tokens = True  # a literal "<|endoftext|>" in a source file is text, not EOS
    dtype = token_dtype(tokenizer.get_vocab_size())
    pieces, lengths = [], []
    eos = np.array([EOS_ID], dtype=dtype)
    for start in tqdm(range(0, len(records), _BATCH_FILES), desc=f"tokenize {split}", unit="batch", leave=False):
        batch = [text for _, text in records[start : start + _BATCH_FILES]]
        for encoding in tokenizer.encode_batch_fast(batch, add_special_tokens=False):
            ids = np.asarray(encoding.ids, dtype=dtype)
            pieces += [ids, eos]
            lengths.append(len(ids) + 1)
    offsets = np.zeros(len(records) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    tokens = np.concatenate(pieces) if pieces else np.zeros(0, dtype=dtype)
    paths = np.array([path for path, _ in records], dtype=str)
    return {"tokens": tokens, "offsets": offsets, "paths": paths}


def tokenize_corpus(corpus_dir: str | Path, tokenizer_path: str | Path, out_dir: str | Path) -> dict:
    """Encode both corpus splits with a trained tokenizer; writes ``{split}.npz`` + card.json, returns the card."""
    tokenizer = load_tokenizer(tokenizer_path)
    vocab_size = tokenizer.get_vocab_size()
    tokenizer_sha = file_sha256(tokenizer_path)
    corpus_card = read_card(card_path_for(corpus_dir))
    out_dir = Path(out_dir)
    sizes, written = {}, []
    for split in SPLITS:
        arrays = encode_split(corpus_dir, split, tokenizer)
        path = write_npz(
            out_dir / f"{split}.npz",
            arrays,
            meta={"vocab_size": vocab_size, "eos_id": EOS_ID, "tokenizer_sha256": tokenizer_sha},
        )
        written.append(path)
        sizes[split] = {"files": int(len(arrays["paths"])), "tokens": int(len(arrays["tokens"]))}
    card = make_card(
        name="lm-tokens",
        generator=__name__,
        seed=None,
        params={
            "vocab_size": vocab_size,
            "eos_id": EOS_ID,
            "tokenizer_sha256": tokenizer_sha,
            "corpus_sha256": {f"{s}.jsonl.gz": corpus_card["files"][f"{s}.jsonl.gz"]["sha256"] for s in SPLITS},
        },
        sizes=sizes,
        files=written,
        packages=["tokenizers", "numpy"],
    )
    write_card(out_dir / "card.json", card)
    return card


def load_token_stream(path: str | Path) -> tuple[np.ndarray, np.ndarray, dict]:
    """Read and validate one split file; returns (tokens [n_tokens], offsets [n_files+1], meta)."""
    path = Path(path)
    arrays, meta = read_npz(path)
    missing = {"tokens", "offsets"} - set(arrays)
    if missing or meta is None:
        raise DataError(f"{path} is not a token file: missing {sorted(missing) or ['meta.json']}; rebuild it")
    tokens, offsets = arrays["tokens"], arrays["offsets"]
    problems = []
    if tokens.ndim != 1 or tokens.dtype.kind != "u":
        problems.append(f"tokens must be a 1-D unsigned array, got {tokens.dtype} with shape {tokens.shape}")
    if offsets.ndim != 1 or len(offsets) < 1 or offsets[0] != 0 or offsets[-1] != len(tokens):
        problems.append("offsets must start at 0 and end at len(tokens)")
    elif np.any(np.diff(offsets) < 1):
        problems.append("offsets must be strictly increasing (each file holds at least its EOS)")
    elif len(tokens) and np.any(tokens[offsets[1:] - 1] != meta.get("eos_id", EOS_ID)):
        problems.append("a file does not end with EOS")
    if not problems and len(tokens) and int(tokens.max()) >= int(meta.get("vocab_size", 0)):
        problems.append(f"a token id is >= vocab_size {meta.get('vocab_size')}")
    if problems:
        raise DataError(f"token file {path} is inconsistent: {'; '.join(problems)}; rebuild it")
    return tokens, offsets, meta


def load_token_chunks(path: str | Path, seq_len: int) -> torch.Tensor:
    """All full chunks of ``seq_len`` tokens, cut from each file separately: LongTensor [N, seq_len].

    File i contributes (offsets[i+1] - offsets[i]) // seq_len consecutive chunks from its start; the
    rest of the file is dropped. Chunks come in file order. Raises DataError if the file is missing
    or corrupt, or if no file has ``seq_len`` tokens. A trainer that wants inputs and next-token
    targets from one chunk asks for seq_len + 1.
    """
    if int(seq_len) != seq_len or seq_len < 1:
        raise DataError(f"seq_len must be a positive integer, got {seq_len}")
    tokens, offsets, _ = load_token_stream(path)
    lengths = np.diff(offsets)  # [n_files]
    per_file = lengths // seq_len  # [n_files] chunks of each file
    if per_file.sum() == 0:
        raise DataError(
            f"{path} has no full chunk of {seq_len} tokens: its longest file has {int(lengths.max(initial=0))} "
            f"tokens; use a shorter seq_len or a larger corpus"
        )
    # Index by chunk, not by token: the repeats run over the N chunks instead of every token (1.2 s -> 0.2 s
    # for the laptop's 15M-token train split, paid by every training job).
    first_chunk = np.cumsum(per_file) - per_file  # [n_files] index of each file's first chunk
    chunk_in_file = np.arange(int(per_file.sum())) - np.repeat(first_chunk, per_file)  # [N]
    starts = np.repeat(offsets[:-1], per_file) + seq_len * chunk_in_file  # [N] token index of each chunk
    chunks = tokens[starts[:, None] + np.arange(seq_len)].astype(np.int64)  # [N, seq_len]
    return torch.from_numpy(chunks)


#: Seed of the held-out draw: fixed, not a run's seed, so that every run compared (and every seed
#: offset of the pipeline) is evaluated on the same chunks.
HELDOUT_SEED = 0


def stratified_indices(n_total: int, n: int, seed: int = HELDOUT_SEED, purpose: str = "heldout") -> np.ndarray:
    """`n` of the indices 0..n_total-1, ascending: the range cut into `n` strata of equal size (as equal as
    whole numbers allow: stratum i is [floor(i N / n), floor((i+1) N / n))) and one index drawn uniformly
    in each, the draws seeded by (`seed`, `purpose`). Every index when n >= n_total.

    Applied to chunks in file order, this spreads the draw over the whole split in proportion to each
    file's chunks, which the first n chunks do not; a draw per stratum, rather than one offset shared by
    all (systematic sampling), cannot fall into step with files of equal length."""
    if int(n_total) != n_total or n_total < 0:
        raise DataError(f"n_total must be a non-negative integer, got {n_total!r}")
    if int(n) != n or n < 1:
        raise DataError(f"the number of chunks to draw must be a positive integer, got {n!r}")
    n_total, n = int(n_total), int(n)
    if n >= n_total:
        return np.arange(n_total, dtype=np.int64)
    edges = np.arange(n + 1, dtype=np.int64) * n_total // n  # [n+1] stratum bounds, each stratum >= 1 wide
    offsets = np.random.default_rng(derive_seed(seed, purpose, n_total, n)).random(n)  # [n] in [0, 1)
    return edges[:-1] + (offsets * np.diff(edges)).astype(np.int64)


class HeldOutDraw(NamedTuple):
    """The evaluation chunks of a language model, as indices into the valid split's chunks (file order)."""

    heldout: np.ndarray  # [n] the final held-out set (`stratified_indices` of the whole split)
    periodic: np.ndarray  # [m] the periodic curve's set: a stratified subset of `heldout`


def heldout_draw(n_valid: int, eval_chunks: int, heldout_chunks: int, seed: int = HELDOUT_SEED) -> HeldOutDraw:
    """The final held-out set (`heldout_chunks` chunks drawn across all `n_valid`, or all of them if fewer)
    and the periodic set nested in it (`eval_chunks` of those, drawn across it the same way), so that a
    curve's last point and the final evaluation read the same part of the split. DataError if the split
    has fewer than `eval_chunks` chunks or `eval_chunks` exceeds `heldout_chunks`."""
    for name, value in (("eval_chunks", eval_chunks), ("heldout_chunks", heldout_chunks)):
        if int(value) != value or value < 1:
            raise DataError(f"{name} must be a positive integer, got {value!r}")
    if eval_chunks > heldout_chunks:
        raise DataError(
            f"eval_chunks={eval_chunks} exceeds heldout_chunks={heldout_chunks}: the periodic set is drawn from the "
            "final held-out set"
        )
    if n_valid < eval_chunks:
        raise DataError(f"the valid split has {n_valid} chunks, fewer than eval_chunks={eval_chunks}")
    heldout = stratified_indices(n_valid, heldout_chunks, seed, "heldout")
    periodic = heldout[stratified_indices(len(heldout), eval_chunks, seed, "periodic")]
    return HeldOutDraw(heldout, periodic)


class LMSplits(NamedTuple):
    """A language model's data: train chunks and the two evaluation sets of `heldout_draw`."""

    train: torch.Tensor  # [N, T]
    periodic: torch.Tensor  # [m, T] evaluated every `eval_every` updates (the loss curve)
    heldout: torch.Tensor  # [n, T] evaluated once, on the final weights
    draw: HeldOutDraw  # where the two sets sit among the valid split's chunks


def load_lm_splits(
    train_path: str | Path,
    valid_path: str | Path,
    seq_len: int,
    eval_chunks: int,
    heldout_chunks: int,
    hint: str,
    *,
    train: bool = True,
) -> LMSplits:
    """The chunks of ``seq_len`` tokens (`load_token_chunks`) a language model trains and is evaluated on:
    every train chunk (an empty tensor with ``train=False``, for an evaluation of a trained model), and
    the periodic and final held-out sets of `heldout_draw` over the valid split. DataError, ending with
    `hint` (what to change), if the valid split cannot give them."""
    valid = load_token_chunks(valid_path, seq_len)
    try:
        draw = heldout_draw(len(valid), eval_chunks, heldout_chunks)
    except DataError as err:
        raise DataError(f"{err} (chunks of {seq_len} tokens of {valid_path}); {hint}") from None
    chunks = load_token_chunks(train_path, seq_len) if train else torch.zeros((0, seq_len), dtype=torch.int64)
    return LMSplits(chunks, valid[torch.from_numpy(draw.periodic)], valid[torch.from_numpy(draw.heldout)], draw)
