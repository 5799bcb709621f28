"""Classification metrics in points (×100), computed from confusion counts: one implementation for
every paper (sixteen_heads' ablation sweeps, simplified_blocks' GLUE stand-in).

Confusion counts are indexed [true class, predicted class] and flattened to C·C entries, so a sum of
per-example one-hot rows (`confusion_stats`) is the confusion matrix and a bootstrap resample of
examples is a resample of rows. Conventions (scikit-learn's, checked against it in the tests):
F1 is of class 1 (binary tasks) and 0 when class 1 is never predicted nor present; the Matthews
correlation is the multi-class form (Gorodkin 2004) and 0 when a side of the matrix is constant.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

CLASSIFICATION_METRICS = ("accuracy", "f1", "mcc")


def confusion_stats(predictions: np.ndarray, labels: np.ndarray, n_classes: int) -> np.ndarray:
    """One-hot confusion entries per example, [N, C·C] (entry label·C + prediction)."""
    out = np.zeros((len(labels), n_classes * n_classes), dtype=np.int64)
    out[np.arange(len(labels)), np.asarray(labels) * n_classes + np.asarray(predictions)] = 1
    return out


def classification_score(confusion: np.ndarray, metric: str, n_classes: int) -> np.ndarray:
    """The metric in points from summed confusion entries [..., C·C] (any leading batch shape)."""
    c = np.asarray(confusion, dtype=np.float64).reshape(*np.shape(confusion)[:-1], n_classes, n_classes)
    total = c.sum(axis=(-2, -1))
    correct = np.trace(c, axis1=-2, axis2=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        if metric == "accuracy":
            return 100.0 * correct / total
        if metric == "f1":
            if n_classes != 2:
                raise ValueError("F1 is defined here for binary tasks (positive class 1)")
            tp, fp, fn = c[..., 1, 1], c[..., 0, 1], c[..., 1, 0]
            denom = 2 * tp + fp + fn
            return np.where(denom > 0, 100.0 * 2 * tp / np.where(denom > 0, denom, 1), 0.0)
        if metric == "mcc":
            true_k, pred_k = c.sum(axis=-1), c.sum(axis=-2)  # [..., C]
            cov_xy = correct * total - (true_k * pred_k).sum(axis=-1)
            cov_xx = total**2 - (pred_k**2).sum(axis=-1)
            cov_yy = total**2 - (true_k**2).sum(axis=-1)
            denom = np.sqrt(cov_xx * cov_yy)
            return np.where(denom > 0, 100.0 * cov_xy / np.where(denom > 0, denom, 1), 0.0)
    raise ValueError(f"unknown metric {metric!r}; choose one of: {', '.join(CLASSIFICATION_METRICS)}")


def score(metric: str, predictions: np.ndarray, labels: np.ndarray) -> float:
    """The metric in points of predicted classes against labels (classes 0..C-1), or, for
    "spearman", the rank correlation ×100 of predicted scores (NaN when either side is constant)."""
    predictions, labels = np.asarray(predictions), np.asarray(labels)
    if predictions.shape != labels.shape or predictions.ndim != 1 or len(labels) == 0:
        raise ValueError(f"predictions {predictions.shape} and labels {labels.shape} must be equal non-empty vectors")
    if metric == "spearman":
        if np.all(predictions == predictions[0]) or np.all(labels == labels[0]):
            return float("nan")
        return 100.0 * float(stats.spearmanr(predictions, labels).statistic)
    if metric not in CLASSIFICATION_METRICS:
        raise ValueError(f"unknown metric {metric!r}; choose one of {', '.join((*CLASSIFICATION_METRICS, 'spearman'))}")
    n_classes = max(2, int(max(predictions.max(), labels.max())) + 1)
    confusion = confusion_stats(predictions.astype(np.int64), labels.astype(np.int64), n_classes).sum(axis=0)
    return float(classification_score(confusion, metric, n_classes))
