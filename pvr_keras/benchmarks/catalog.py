"""The catalog of named, versioned benchmark configs: each a fixed task, split sizes and
split seeds, so that "PVR token/w3 1.0.0, test split" names the same examples everywhere.

Plain Python (no TensorFlow, no JAX, no NumPy import at load): listing the configs costs
nothing. Every split of a config is one stream of the library's generators (a pure function
of (seed, stream, holdout, index)):

- ``train``: the ``train`` stream of seed ``seed``; held-out windows (token holdout configs)
  or frozen bits (Boolean) excluded as the paper's training sets exclude them;
- ``validation``: the ``train`` stream of seed ``seed + 1``: the training distribution, drawn
  independently of the training split;
- ``test``: token and image configs, the ``test`` stream of seed ``seed`` (only held-out
  windows for a holdout config, as the paper tests it); Boolean configs, the whole cube in
  row order (row r: x_j = 1 - 2 * ((r >> j) & 1)), on which the generalisation error of Abbe
  et al. (2022) is measured exactly.

A config's sizes come in two presets: ``standard`` (the paper's sizes where they fit a
benchmark: 300,000 token training examples) and ``small`` (the quick benchmark suite's 20,000,
trained in minutes on a CPU). A smaller preset's split is a prefix of the larger's (example i
does not depend on the size). Each token and Boolean split has the SHA-256 of its canonical
bytes in ``manifest.json`` (``tools/benchmark_manifest.py`` writes it; a test regenerates
every split on each backend and checks it); a rule that changes those bytes must bump the
config's version.
"""

import dataclasses
import difflib

VERSION = "1.0.0"
RELEASE_NOTES = {
    "1.0.0": "First release: token windows 1-4 (mod_sum), the other aggregations at window 3 "
    "(and the median at window 2), "
    "holdout (Figure 14, Appendix E), the pointer-less control, 2x2 MNIST / CIFAR-10 blocks "
    "(IID and Figure 6's holdout), MNIST image sequences, Boolean f3 and parity windows with "
    "every bit of f3 frozen (Abbe et al. 2022).",
}
SPLITS = ("train", "validation", "test")
FAMILIES = ("token", "boolean", "block", "sequence")
SIZES = {
    "token": {"standard": dict(train=300_000, validation=10_000, test=10_000),
              "small": dict(train=20_000, validation=2_000, test=2_000)},
    "block": {"standard": dict(train=60_000, validation=5_000, test=10_000),
              "small": dict(train=10_000, validation=2_000, test=2_000)},
    "sequence": {"standard": dict(train=60_000, validation=5_000, test=10_000),
                 "small": dict(train=10_000, validation=2_000, test=2_000)},
    # Boolean: their code's 1,900 training examples at d = 11; the test split is the cube.
    "boolean": {"standard": dict(train=1_900, validation=1_000, test=None),
                "small": dict(train=1_900, validation=1_000, test=None)},
}  # fmt: skip


@dataclasses.dataclass(frozen=True)
class Config:
    """One benchmark config.

    Attributes:
        name: ``family/short-name`` (``token/w3``).
        family: ``token``, ``boolean``, ``block`` or ``sequence``.
        task: the task's fields (``TokenTask``, ``BooleanTask`` or ``BlockTask`` keyword
            arguments; a sequence config's task is the ``TokenTask`` its digits follow).
        holdout: token holdout-k; the Boolean frozen-bit mask; ``1`` for Figure 6's block
            holdout; 0 for none.
        seed: the seed of the train and test streams (validation: ``seed + 1``).
        description: one line, with the paper's figure.
        version: the config's version (its streams' rules).
    """

    name: str
    family: str
    task: dict
    holdout: int = 0
    seed: int = 0
    description: str = ""
    version: str = VERSION

    @property
    def tfds_name(self):
        """The TFDS config name: ``token/w3-median`` -> ``token_w3_median``."""
        return self.name.replace("/", "_").replace("-", "_")

    def sizes(self, size="standard"):
        """``{split: number of examples}`` of a size preset (the cube's 2**d for Boolean
        test)."""
        if size not in SIZES[self.family]:
            raise ValueError(f"size must be one of {', '.join(SIZES[self.family])}; "
                             f"received {size!r}")  # fmt: skip
        sizes = dict(SIZES[self.family][size])
        if self.family == "boolean":
            sizes["test"] = 2**self.num_bits
        return sizes

    @property
    def num_bits(self):
        if self.family != "boolean":
            raise AttributeError("num_bits: only Boolean configs have bits")
        pointer = self.task.get("pointer_bits", 3)
        return pointer + (self.task.get("value_bits") or 2**pointer)

    def stream(self, split):
        """``(seed, stream)`` of one split: the generators' seed and split names."""
        check_split(split)
        if split == "validation":
            return self.seed + 1, "train"
        return self.seed, split

    def to_dict(self):
        return dataclasses.asdict(self)


def _token(name, description, holdout=0, **task):
    return Config(f"token/{name}", "token", task, holdout=holdout, description=description)


def _boolean(name, description, task, holdout=0):
    return Config(f"boolean/{name}", "boolean", task, holdout=holdout, description=description)


# tasks.boolean.f3(): 3 pointer bits, window 3, majority, truncated windows (d = 11)
F3 = dict(pointer_bits=3, window=3, aggregation="majority", window_mode="truncated")
PARITY = dict(pointer_bits=3, window=3, aggregation="parity", window_mode="cyclic")

CONFIGS = {
    c.name: c
    for c in [
        *(_token(f"w{w}", f"window {w}, mod_sum (Figures 9-11)", window=w) for w in (1, 2, 3, 4)),
        *(_token(f"w3-{a}", f"window 3, {a} (Figure 16)", window=3, aggregation=a)
          for a in ("median", "maj_vote", "min", "max")),
        _token("w2-median", "window 2, median (the quick benchmark suite's aggregation "
               "entry)", window=2, aggregation="median"),
        _token("w2-holdout1", "window 2, holdout-1: (0, 1) never in a training window; test "
               "only on it (Figure 14)", holdout=1, window=2),
        _token("w2-holdout2", "window 2, both orders of (0, 1) held out (Figure 14)",
               holdout=2, window=2),
        _token("w3-holdout1", "window 3, holdout-1: (0, 1, 2) held out (Figure 14)",
               holdout=1, window=3),
        _token("w3-holdout6", "window 3, all 6 orders of (0, 1, 2) held out (Figure 14)",
               holdout=6, window=3),
        _token("w3-holdout6-of123", "window 3, all 6 orders of (1, 2, 3) held out "
               "(Appendix E)", holdout=6, window=3, holdout_values=(1, 2, 3)),
        _token("w2-nopointer", "window 2 without the pointer (Appendix D, Figure 17)",
               window=2, pointer=False),
        Config("block/mnist-2x2", "block", dict(grid=2, values="mnist"),
               description="2x2 blocks of MNIST digits, jitter (Figures 2, 7)"),
        Config("block/mnist-2x2-holdout", "block", dict(grid=2, values="mnist"), holdout=1,
               description="2x2 MNIST blocks under Figure 6's holdout (Figures 7-8)"),
        Config("block/cifar10-2x2", "block", dict(grid=2, values="cifar10"),
               description="2x2 blocks, an MNIST pointer and CIFAR-10 values"),
        Config("sequence/mnist", "sequence", {},
               description="a sequence of MNIST images (Section 3)"),
        _boolean("f3", "f3 over 11 bits, no bit frozen (Abbe et al. 2022)", F3),
        *(_boolean(f"f3-frozen{b}", f"f3 with bit {b} frozen to +1 in training", F3,
                   holdout=1 << b) for b in range(11)),
        _boolean("parity3", "parity of cyclic windows of 3 value bits, 3 pointer bits",
                 PARITY),
    ]
}  # fmt: skip


def check_split(split):
    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)}; received {split!r}")
    return split


def names(family=None):
    """The config names (of one family)."""
    if family is not None and family not in FAMILIES:
        raise ValueError(f"family must be one of {', '.join(FAMILIES)}; received {family!r}")
    return [n for n, c in CONFIGS.items() if family is None or c.family == family]


def get(name):
    """A config by name, ``NAME`` or ``NAME:VERSION`` (the version must be the catalog's).

    Raises:
        ValueError: an unknown name (with the closest names) or version.
    """
    if not isinstance(name, str):
        raise ValueError(f"a config name must be a string; received {name!r}")
    base, _, version = name.partition(":")
    if base not in CONFIGS:
        close = difflib.get_close_matches(base, list(CONFIGS), n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise ValueError(f"unknown benchmark config {base!r}{hint} (benchmarks.names() lists "
                         f"{len(CONFIGS)})")  # fmt: skip
    config = CONFIGS[base]
    if version and version != config.version:
        known = ", ".join(sorted(RELEASE_NOTES))
        raise ValueError(f"{base} has no version {version!r}; versions: {known}")
    return config
