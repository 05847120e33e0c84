"""The analyses' figures, read back from the matplotlib figure: every series of a GOTU figure
in a colour of its own, its legend clear of the bars."""

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from pvr_keras.figures import analyses
from tests.plots import assert_plot, keep_figures


@pytest.fixture
def drawn(monkeypatch):
    """The figures the module saves, kept to be read back (and still saved)."""
    return keep_figures(monkeypatch, analyses)


@pytest.mark.parametrize("n", [1, 9, 10, 11, 20, 21, 40])
def test_distinct_colors_are_all_different(n):
    colors = analyses.distinct_colors(n)
    assert len(colors) == n
    assert len({tuple(round(x, 4) for x in c) for c in colors}) == n


def test_a_gotu_figure_of_ten_variants_gives_each_its_own_colour_and_keeps_the_legend_clear(
    drawn, tmp_path
):
    variants = [f"N{n}-{mode}" for n in range(3, 8) for mode in ("normal", "curriculum")]
    coefficients = {
        "monomials": ["x0x1x2"],
        "target": [1.0],
        "mdi": [1.0],
        "learned": {v: [0.1 * (k + 1) % 1.0 or 1.0] for k, v in enumerate(variants)},
    }
    metric = {"name": "steps", "variants": variants, "values": [[100.0]] * len(variants)}
    path = tmp_path / "gotu.png"
    analyses.gotu(coefficients, metric, path, "ten variants")
    assert_plot(path)
    left = drawn[0].axes[0]
    bars = list(left.containers)
    assert len(bars) == 12  # truth, MDI, ten variants
    learned = [tuple(b.patches[0].get_facecolor()) for b in bars[2:]]
    assert len(set(learned)) == len(variants), "two variants share a colour"
    canvas = FigureCanvasAgg(drawn[0])
    canvas.draw()
    renderer = canvas.get_renderer()
    legend = left.get_legend().get_window_extent(renderer)
    for b in bars:
        for patch in b.patches:
            assert not legend.overlaps(patch.get_window_extent(renderer)), b.get_label()
