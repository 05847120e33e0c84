"""Boolean PVR (Abbe et al. 2022): generalisation error against Boolean influence
(the ``boolean`` study)."""

import statistics

from .formats import dec, decs, field, run_minutes, span, total
from .records import as_cell, markdown_table, study_json


def boolean(r):
    b = r["boolean"]
    f3, parity = b.json("f3_mlp.json"), b.json("parity_mlp.json")
    tr = b.json("f3_transformer_3bits.json")
    pointer_bits = f3["config"]["run"].get("pointer_bits", 3)
    value = [x for x in f3["bits"] if x["bit"] >= pointer_bits]
    pointer = [x for x in f3["bits"] if x["bit"] < pointer_bits]
    pbits = ", ".join(f"{dec(x['half_mse_mean'], 3)} vs {x['influence']:.4g}" for x in pointer[:2])
    tbits = ", ".join(f"{dec(x['half_mse_mean'], 3)} vs {x['influence']:.4g}" for x in tr["bits"])
    seeds_t = {x["seeds"] for x in tr["bits"]}
    frozen = [x["half_mse_to_frozen_target_mean"] for x in f3["bits"]]
    tfrozen = [x["half_mse_to_frozen_target_mean"] for x in tr["bits"]]
    pin = [x["in_distribution_half_mse_mean"] for x in parity["bits"]]
    fin = [x["in_distribution_half_mse_mean"] for x in f3["bits"]]
    ours = (
        f"their MLP, d = 11, {span(sorted({x['seeds'] for x in f3['bits']}), str)} seeds per "
        f"bit. f3: ½MSE tracks Inf_i over the 11 bits (correlation {dec(f3['correlation'], 3)}, "
        f"mean difference {dec(f3['mean_abs_difference'], 3)}); value bits match (mean "
        f"{dec(statistics.mean(field(value, 'half_mse_mean')), 3)} vs "
        f"{dec(statistics.mean(field(value, 'influence')), 3)}), pointer bits fall below "
        f"({pbits}); the learned function is {decs(frozen, 3)} (½MSE) from f with the bit "
        f"frozen. Parity windows: ½MSE flat over bits "
        f"({decs(field(parity['bits'], 'half_mse_mean'))}), but the MLP fits its training half "
        f"less well (in-distribution ½MSE {decs(pin, 3)}, f3's {decs(fin, 4)}): inconclusive. "
        f"1/4-width "
        f"Transformer, f3, bits {', '.join(str(x['bit']) for x in tr['bits'])}, "
        f"{span(sorted(seeds_t), str)} seed: {tbits}; its function is {decs(tfrozen)} from f "
        "with the bit frozen"
    )  # fmt: skip
    f3_runs, parity_runs = b.sweep("f3_mlp"), b.sweep("parity_mlp")
    tr_runs = b.sweep("f3_transformer_3bits")
    time = (f"[`boolean`](boolean.md) study; `python recipes/boolean_holdout.py "
            f"--preset medium` ({len(f3_runs)} runs, {total(f3_runs)}; parity "
            f"{len(parity_runs)} runs, {total(parity_runs)}); `--model bits_transformer --width "
            f"0.25 --bits 0 3 7` ({len(tr_runs)} runs, {run_minutes(tr_runs)} each)")  # fmt: skip
    return ours, time


def table(study):
    """Per boolean_holdout setting (``NAME.json``) and frozen bit: the bit's influence, half
    the MSE on the cube (mean and range over seeds), the in-distribution half MSE and the
    distance to f with the bit frozen; a line per setting with the correlation."""
    text = ""
    for path in sorted(study.glob("*.json")):
        if path.name.startswith("config_") or path.name == "sweep.json":
            continue
        found = study_json(study, path.name)
        if "bits" not in found:
            continue
        run = found["config"]["run"]
        task = (
            f"{run.get('pointer_bits', 3)} pointer bits, window {run.get('window', 1)}, "
            f"{run.get('aggregation', 'parity')}, {run.get('window_mode', 'cyclic')}"
        )
        width = f" (width x{run['width']})" if run.get("width") else ""
        rows = [[r["bit"], as_cell(r["influence"], 4),
                 f"{as_cell(r['half_mse_mean'], 4)} ({as_cell(r['half_mse_min'], 4)}-"
                 f"{as_cell(r['half_mse_max'], 4)})",
                 as_cell(r["in_distribution_half_mse_mean"], 4),
                 as_cell(r["half_mse_to_frozen_target_mean"], 4), r["seeds"]]
                for r in found["bits"]]  # fmt: skip
        correlation = found["correlation"]
        text += (
            f"{'' if not text else chr(10)}{path.stem}: {run['model']}{width}, {task}; "
            f"correlation {as_cell(correlation)}, mean |½MSE - Inf| "
            f"{as_cell(found['mean_abs_difference'], 4)}\n\n"
        )
        text += markdown_table(["bit", "Inf_i", "½MSE on the cube (range)", "in-distribution ½MSE",
                        "½MSE to f with x_i = +1", "seeds"], rows)  # fmt: skip
    return text or None
