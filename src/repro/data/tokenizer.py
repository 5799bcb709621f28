"""Byte-level BPE tokenizer for the code corpus, trained with HF ``tokenizers``.

Special tokens, at fixed ids (they are added first, so the ids hold for every vocab_size):
  0  ``<|endoftext|>``  end of file (EOS); also the padding id
  1  ``<mask>``         reserved for a masked-LM objective
The other ids are the 256 byte symbols of the ByteLevel alphabet (all present whatever the
training text, so any input encodes without an unknown token) and then the learnt merges.

Training reads the corpus' train split in its order and, if ``train_bytes`` is given, only whole
files until their UTF-8 size reaches ``train_bytes``.

Determinism: the saved tokenizer.json depends only on the training text and the parameters.
The BPE trainer counts pairs in parallel (rayon), but counts are sums, and ties between equally
frequent pairs are broken by a fixed order on the pairs, not by hash-map iteration order. Checked
with tokenizers 0.23.3: separate processes with RAYON_NUM_THREADS=1, 2 and 4, with
TOKENIZERS_PARALLELISM=false, and on a tie-heavy toy text all gave byte-identical files, so no
thread setting is forced (the CLI's --threads only caps the pool). tests/test_data_tokenizer.py
trains in two fresh processes with different thread counts and compares the bytes.

Encoding: HF matches special-token strings inside plain text by default; repro.data.lm_tokens
turns that off (``encode_special_tokens = True``) so a literal "<|endoftext|>" in a source file
is encoded as text and EOS only ever marks the end of a file.
"""

from __future__ import annotations

from pathlib import Path

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from tqdm import tqdm

from repro.data.cards import card_path_for, check_against_card, drop_stale_card, make_card, read_card, write_card
from repro.data.corpus import iter_corpus, prefix_reaching
from repro.data.errors import DataError

EOS_TOKEN = "<|endoftext|>"
MASK_TOKEN = "<mask>"
SPECIAL_TOKENS = (EOS_TOKEN, MASK_TOKEN)
EOS_ID = 0
PAD_ID = EOS_ID
MASK_ID = 1
MIN_VOCAB_SIZE = len(SPECIAL_TOKENS) + 256  # specials + the byte alphabet


def training_texts(corpus_dir: str | Path, train_bytes: int | None = None) -> list[str]:
    """The train-split texts a tokenizer is trained on: whole files in corpus order until their
    UTF-8 size reaches ``train_bytes`` (the same rule as the corpus' byte budget; None: all)."""
    texts = [text for _, text in iter_corpus(corpus_dir, "train")]
    if not texts:
        raise DataError(f"the train split of {corpus_dir} is empty")
    return texts[: prefix_reaching([len(t.encode("utf-8")) for t in texts], train_bytes)]


def new_tokenizer() -> Tokenizer:
    """An untrained byte-level BPE tokenizer with the pipeline's pre-tokenizer and decoder."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    return tokenizer


def train_tokenizer(
    corpus_dir: str | Path,
    out_path: str | Path,
    *,
    vocab_size: int,
    train_bytes: int | None = None,
    min_frequency: int = 2,
) -> dict:
    """Train a byte-level BPE on the corpus' train split, save ``out_path`` and its card; return the card."""
    if vocab_size < MIN_VOCAB_SIZE:
        raise DataError(
            f"vocab_size must be at least {MIN_VOCAB_SIZE} (2 special tokens + 256 bytes), got {vocab_size}"
        )
    texts = training_texts(corpus_dir, train_bytes)
    tokenizer = new_tokenizer()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=min_frequency,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,  # tqdm below instead, on stderr like every other stage
    )
    progress = tqdm(texts, desc="train tokenizer (reading files)", unit="file", leave=False)
    tokenizer.train_from_iterator(progress, trainer=trainer, length=len(texts))
    _check_specials(tokenizer, "freshly trained tokenizer")

    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    drop_stale_card(out_path)
    out_path.write_text(tokenizer.to_str(pretty=True) + "\n", encoding="utf-8")
    corpus_card = read_card(card_path_for(corpus_dir))
    card = make_card(
        name="bpe-tokenizer",
        generator=__name__,
        seed=None,  # BPE training has no randomness
        params={
            "vocab_size": vocab_size,
            "train_bytes": train_bytes,
            "min_frequency": min_frequency,
            "special_tokens": {EOS_TOKEN: EOS_ID, MASK_TOKEN: MASK_ID},
            "corpus_train_sha256": corpus_card["files"]["train.jsonl.gz"]["sha256"],
        },
        sizes={
            "vocab_size": tokenizer.get_vocab_size(),
            "train_files": len(texts),
            "train_bytes": sum(len(t.encode("utf-8")) for t in texts),
        },
        files=[out_path],
        packages=["tokenizers"],
    )
    write_card(card_path_for(out_path), card)
    return card


def _check_specials(tokenizer: Tokenizer, what: str) -> None:
    for token, expected in ((EOS_TOKEN, EOS_ID), (MASK_TOKEN, MASK_ID)):
        if tokenizer.token_to_id(token) != expected:
            raise DataError(f"{what}: {token!r} has id {tokenizer.token_to_id(token)}, expected {expected}")


def load_tokenizer(path: str | Path) -> Tokenizer:
    """Load a tokenizer.json written by ``train_tokenizer`` and check its special-token ids."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"tokenizer not found: {path}; run `python -m repro data tokenizer` first")
    check_against_card(path)
    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as err:  # the Rust side raises a bare Exception on malformed JSON
        raise DataError(f"tokenizer {path} could not be read ({err}); retrain it") from None
    _check_specials(tokenizer, str(path))
    return tokenizer
