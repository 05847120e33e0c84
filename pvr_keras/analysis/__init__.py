"""Analyses of the paper: noise sensitivity (Section 4.1, Appendix C), CKA between learned
representations (Section 6.1, Appendix E), activations by layer name, logit analysis
(Figure 8), fast/slow learners (Section 6.1), and the label frequencies a mod_sum representation
uses (what its CKA with another seed depends on)."""

from pvr_keras.analysis.activations import activations
from pvr_keras.analysis.cka import (
    MinibatchCKA,
    center_gram,
    cka,
    gram_linear,
    gram_rbf,
    hsic_unbiased,
    linear_cka,
    rbf_cka,
)
from pvr_keras.analysis.dynamics import (
    Learner,
    classify,
    describe_rule,
    fit_epoch,
    pick_fast_slow,
)
from pvr_keras.analysis.frequencies import label_frequencies, main_frequencies
from pvr_keras.analysis.holdout import held_out_summary, windows_of
from pvr_keras.analysis.logits import mean_logits_by_class
from pvr_keras.analysis.noise import bits_per_token, noise_sensitivity, noise_sensitivity_runs

__all__ = [
    "Learner",
    "MinibatchCKA",
    "activations",
    "bits_per_token",
    "center_gram",
    "cka",
    "classify",
    "describe_rule",
    "fit_epoch",
    "gram_linear",
    "gram_rbf",
    "held_out_summary",
    "hsic_unbiased",
    "label_frequencies",
    "linear_cka",
    "main_frequencies",
    "mean_logits_by_class",
    "noise_sensitivity",
    "noise_sensitivity_runs",
    "pick_fast_slow",
    "rbf_cka",
    "windows_of",
]
