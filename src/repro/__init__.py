"""Replication pipeline for four papers on what a Transformer's parameters are worth.

Sub-packages:
  models    one Transformer family (all block kinds, head masks, hook points, pruning)
  training  the one trainer (AdamW groups, schedules, safetensors checkpoints, resume)
  data      the offline code corpus, its tokenizer, and seeded synthetic task generators
  pipeline  config checks, the notebook runner, plotting style, claims and the scorecard
  claims    the registered claims of each paper
"""

__version__ = "0.1.0"
