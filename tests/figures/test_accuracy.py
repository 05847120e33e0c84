import numpy as np
import pytest

from pvr_keras.figures.accuracy import _value_label
from pvr_keras.runconfig import Run
from pvr_keras.sweeps import FIGURES, plot, summarise
from tests.plots import assert_plot


def record(test, train=1.0, failed=False, **fields):
    run = Run.make("token", **fields)
    return {
        "id": run.run_id,
        **run.to_dict(),
        "test_accuracy": test,
        "train_accuracy": train,
        "failed": failed,
    }


def test_means_over_seeds_and_failed_runs_kept_out():
    records = [
        record(0.2, window=1, num_examples=1000, seed=0),
        record(0.4, window=1, num_examples=1000, seed=1),
        record(0.05, train=0.1, failed=True, window=1, num_examples=1000, seed=2),
        record(0.9, window=1, num_examples=10000, seed=0),
        record(0.1, window=2, num_examples=1000, seed=0),
    ]
    rows, panels = summarise(records, FIGURES["size_window"], "test_accuracy")
    assert panels == ["model"]
    by = {(r["window"], r["num_examples"]): r for r in rows}
    first = by[1, 1000]
    assert first["mean"] == pytest.approx(0.3) and first["std"] == pytest.approx(0.1)
    assert (first["seeds"], first["failed"], first["failed_values"]) == (2, 1, [0.05])
    assert by[1, 10000]["mean"] == 0.9 and by[2, 1000]["seeds"] == 1


def test_discard_rule_of_figure_14():
    spec = FIGURES["holdout"]
    assert spec["discard_below"] == 0.6
    records = [
        record(1.0, train=0.99, window=2, holdout=1, seed=0),
        record(0.3, train=0.59, window=2, holdout=1, seed=1),  # discarded, not failed
        record(0.0, train=0.1, failed=True, window=2, holdout=1, seed=2),
    ]
    (row,) = summarise(records, spec, "test_accuracy")[0]
    assert (row["mean"], row["seeds"], row["discarded"], row["failed"]) == (1.0, 1, 1, 1)
    assert row["discarded_values"] == [0.3]


def test_settings_that_vary_are_never_averaged_together():
    records = [record(0.2, epochs=5), record(0.8, epochs=50)]
    rows, panels = summarise(records, FIGURES["size_window"], "test_accuracy")
    assert panels == ["model", "epochs"] and sorted(r["mean"] for r in rows) == [0.2, 0.8]


def test_holdout_figure_with_appendix_e_runs_draws(tmp_path):
    # Holdout runs of the main text (holdout_values None) beside Appendix E's ((1, 2, 3)) at
    # the same window: a varying field whose values are None and a tuple, in panel keys.
    records = [
        record(1.0, window=3, holdout=6, seed=0),
        record(0.9, window=3, holdout=6, holdout_values=(1, 2, 3), seed=0),
        record(0.5, window=2, holdout=1, seed=0),
    ]
    rows = plot(records, FIGURES["holdout"], tmp_path / "h.png")
    assert_plot(tmp_path / "h.png")
    by_values = {r["holdout_values"]: r["mean"] for r in rows if r["window"] == 3}
    assert by_values == {None: 1.0, "[1, 2, 3]": 0.9}  # two panels, not averaged
    assert _value_label("holdout_values", "[1, 2, 3]") == "held out: orders of [1, 2, 3]"
    assert _value_label("holdout_values", None) == "held out: orders of (0, ..., m)"


def test_every_paper_figure_draws(tmp_path):
    rng = np.random.default_rng(0)
    records = []
    for seed in range(2):
        for model in ("mlp", "mlp2x"):
            for window in (1, 2):
                for n in (100, 1000, 10000):
                    records.append(
                        record(
                            float(rng.uniform()),
                            model=model,
                            window=window,
                            num_examples=n,
                            seed=seed,
                            aggregation="median" if model == "mlp2x" else "mod_sum",
                        )
                    )
    records.append(record(0.0, train=0.05, failed=True, window=2, num_examples=100, seed=5))
    for name, spec in FIGURES.items():
        for metric in spec["metrics"]:
            path = tmp_path / f"{name}_{metric}.png"
            rows = plot(records, spec, path, metric=metric)
            assert rows
            assert_plot(path)


def test_bad_specs():
    with pytest.raises(ValueError, match="figure fields must be run fields"):
        summarise([record(0.1)], {"x": "size"}, "test_accuracy")
    with pytest.raises(ValueError, match="must be a dict"):
        summarise([record(0.1)], "size_window", "test_accuracy")
    with pytest.raises(ValueError, match="no records"):
        plot([], FIGURES["size_window"], "x.png")


def test_bars_are_the_range_and_the_epochs_a_run_ran(tmp_path):
    """Two seeds: the error bars are their range (min to max), written with the numbers; a
    run of a tiny training set ran more epochs than ``epochs`` (to reach min_steps), and its
    panel and CSV say how many."""
    from pvr_keras.figures import write_csv

    records = [
        {**record(0.2, num_examples=1000, epochs=30, seed=0), "epochs_completed": 80},
        {**record(0.6, num_examples=1000, epochs=30, seed=1), "epochs_completed": 80},
        {**record(0.9, num_examples=300000, epochs=30, seed=0), "epochs_completed": 30},
        {**record(0.5, num_examples=1000, epochs=80, seed=0), "epochs_completed": 80},
    ]
    rows, panels = summarise(records, FIGURES["size_window"], "test_accuracy")
    assert panels == ["model", "epochs"]
    first = next(r for r in rows if r["num_examples"] == 1000 and r["epochs"] == 30)
    assert (first["min"], first["max"], first["_epochs"]) == (0.2, 0.6, [80])
    write_csv(tmp_path / "f.csv", rows)
    header, *lines = (tmp_path / "f.csv").read_text().splitlines()
    assert header.endswith("mean,std,min,max,seeds,failed,discarded,epochs_ran")
    assert any(line.endswith(",80") and ",0.2,0.6," in line for line in lines)
    plot(records, FIGURES["size_window"], tmp_path / "f.png")
    assert_plot(tmp_path / "f.png")


def test_panel_titles_say_the_epochs_ran_and_a_width_every_run_shares(tmp_path, monkeypatch):
    """A panel of a reduced-width model says its width (one for the whole figure, so neither
    a panel nor a line); a width drawn as lines, or varying, is not put in the titles."""
    import pvr_keras.figures.accuracy as accuracy

    assert accuracy.panel_title(["model", "epochs"], ("mixer", 30), [80], 0.125) == (
        "mixer at 0.125x the paper's width\nepochs=30 (ran 80)"
    )
    assert accuracy.panel_title(["model", "epochs"], ("mlp", 30), [30]) == "mlp\nepochs=30"
    titles = []
    monkeypatch.setattr(accuracy, "panel_title", lambda *a: titles.append(a) or "t")
    narrow = [record(0.9, model="mixer", width=0.125, num_examples=n) for n in (500, 5000)]
    plot(narrow, FIGURES["size_window"], tmp_path / "a.png")
    assert [t[-1] for t in titles] == [0.125]
    titles.clear()
    both = [*narrow, record(0.9, model="mixer", width=0.25, num_examples=500)]
    plot(both, FIGURES["size_window"], tmp_path / "b.png")  # width varies: a panel of its own
    assert [t[-1] for t in titles] == [None, None]
    titles.clear()
    plot(narrow, {**FIGURES["size_window"], "line": "width"}, tmp_path / "c.png")
    assert [t[-1] for t in titles] == [None]
