"""Figure 5 (Appendix C): noise sensitivity per window and aggregation."""

from .formats import dec, decs


def fig5(r):
    summary = r["noise_sensitivity"].json("noise_sensitivity.json")
    ns = summary["mean_ns"]
    windows = sorted(ns["mod_sum"], key=int)
    first, last = windows[0], windows[-1]
    top = [w for w in windows if abs(ns["mod_sum"][w] - ns["mod_sum"][last]) < 0.005]
    top_windows = f"{top[0]}-{top[-1]}" if len(top) > 1 else last
    flat = [v for a in ("median", "maj_vote") for v in ns[a].values()]
    ours = (f"mod_sum {dec(ns['mod_sum'][first])} (window {first}) to "
            f"{dec(ns['mod_sum'][last])} ({top_windows}); "
            f"min {dec(ns['min'][first])} to {dec(ns['min'][last])}, max "
            f"{dec(ns['max'][first])} to {dec(ns['max'][last])}; median, maj_vote "
            f"{decs(flat)} (NS averaged over the 20 deltas, e^-7 to e^-1)")  # fmt: skip
    time = f"`python recipes/noise_sensitivity.py --preset paper`, {summary['wall_time_s']:.0f} s"
    return ours, time
