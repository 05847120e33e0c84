"""Counterfactual pairs and interchange interventions: where a network resolves the pointer.

The high-level causal model of a task (``variables``, ``label``), counterfactual pairs drawn
from its own generators (``pairs``), and interchange intervention accuracy of a Keras model at
a layer and positions (``iia``), with distributed alignment search where no position aligns
(``das``). Geiger et al. (ICML 2022) evaluate IIA on MNIST-PVR; pyvene's
``CausalModel.run_interchange`` computes the same counterfactual labels as ``label``.

    >>> from pvr_keras import counterfactuals as cf
    >>> from pvr_keras.tasks import TokenTask
    >>> task = TokenTask(window=3, aggregation="mod_sum")
    >>> cf.variables(task)[:3], cf.variables(task)[-1]
    (('P', 'V0', 'V1'), 'S2')
    >>> base, source, y, y_cf = cf.pairs(task, 5, variables="S1", seed=0)
    >>> y_cf.shape
    (5,)

``iia(model, task, layer="block0", positions=[1], variables="P")`` needs a Keras backend;
``variables``, ``label`` and ``pairs`` of token tasks need only NumPy.
"""

from pvr_keras.counterfactuals.causal import label, variables
from pvr_keras.counterfactuals.interventions import DASResult, das, iia, iia_grid, score
from pvr_keras.counterfactuals.pairs import Pairs, pairs

__all__ = ["DASResult", "Pairs", "das", "iia", "iia_grid", "label", "pairs", "score", "variables"]
