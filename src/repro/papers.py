"""The four works this pipeline reproduces, by id."""

PAPERS = {
    "simplified_blocks": 'He & Hofmann, "Simplifying Transformer Blocks", ICLR 2024 (arXiv 2311.01906)',
    "sixteen_heads": 'Michel, Levy & Neubig, "Are Sixteen Heads Really Better than One?", NeurIPS 2019 (arXiv 1905.10650)',
    "param_allocation": 'Yu, Jiang, Cheng, Yu, Li & Li, "Allocation of Parameters in Transformers", arXiv 2510.03784, 2025',
    "layer_diversity": (
        'Kamigaito et al., "Diversity of Transformer Layers: One Aspect of Parameter Scaling Laws", '
        "arXiv 2505.24009, 2025"
    ),
}
