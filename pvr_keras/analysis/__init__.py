"""Analyses of the paper: noise sensitivity (Section 4.1, Appendix C), CKA between learned
representations, layer by layer (Section 6.1, Appendix E), activations by layer name, logit
analysis (Figure 8), fast/slow learners (Section 6.1), what holdout runs predict on their
held-out windows, and the label frequencies a mod_sum representation uses (what its CKA with
another seed depends on); and the exact Boolean measures of Boolean PVR (Abbe et al. 2022):
Fourier coefficients, influences and degree profiles of targets and trained models; and the
min-degree interpolator of a function on a seen domain with a learned function's leak
towards it (Abbe et al. 2023)."""

from pvr_keras.analysis.activations import activations
from pvr_keras.analysis.boolean import (
    boolean_cube,
    boolean_influence,
    degree_profile,
    fourier_coefficients,
    model_values,
)
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
from pvr_keras.analysis.interpolation import leak, min_degree_expansion, min_degree_interpolator
from pvr_keras.analysis.logits import logit_analysis, mean_logits_by_class
from pvr_keras.analysis.noise import bits_per_token, noise_sensitivity, noise_sensitivity_runs
from pvr_keras.analysis.representations import block_layers, cka_by_layer, mean_by_kind

__all__ = [
    "Learner",
    "MinibatchCKA",
    "activations",
    "bits_per_token",
    "block_layers",
    "boolean_cube",
    "boolean_influence",
    "center_gram",
    "cka",
    "cka_by_layer",
    "degree_profile",
    "fourier_coefficients",
    "classify",
    "describe_rule",
    "fit_epoch",
    "gram_linear",
    "gram_rbf",
    "held_out_summary",
    "hsic_unbiased",
    "label_frequencies",
    "leak",
    "logit_analysis",
    "linear_cka",
    "main_frequencies",
    "min_degree_expansion",
    "min_degree_interpolator",
    "model_values",
    "mean_by_kind",
    "mean_logits_by_class",
    "noise_sensitivity",
    "noise_sensitivity_runs",
    "pick_fast_slow",
    "rbf_cka",
    "windows_of",
]
