"""The data layer: the offline code corpus, its tokenizer, token files, and synthetic tasks.

Modules (each dataset is written with a data card, see cards.py):
  corpus      the CodeParrot stand-in: torch's own .py sources, checked against a frozen manifest
  tokenizer   byte-level BPE (HF tokenizers) trained on the corpus; EOS id 0, <mask> id 1
  lm_tokens   the encoded splits and ``load_token_chunks(path, seq_len)`` for LM training
  synthetic   seeded task generators for the sixteen-heads and layer-diversity analogues
  cards, npz  deterministic data cards and .npz files; errors: DataError

Heavy dependencies (torch, tokenizers) are imported by the modules that need them, not here.
"""

from repro.data.errors import DataError

__all__ = ["DataError"]
