"""Paper scale: the papers' datasets and pretrained models from the Hugging Face hub.

- `repro.hub.converters`: HF checkpoints (BERT, GPT-2, Llama/Mistral, Phi, Phi-3) -> our
  `TransformerConfig` and weights, so every analysis runs unchanged on pretrained models.
- `repro.hub.datasets`: the papers' datasets -> the same tidy files the CPU-scale generators write.

Nothing here downloads at import time; `transformers` and `datasets` are imported when used.
"""
