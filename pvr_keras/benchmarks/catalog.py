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
bytes in ``manifest.json`` (``tools/generate/benchmark_manifest.py`` writes it; a test regenerates
every split on each backend and checks it); a rule that changes those bytes must bump the
config's version.

Counterfactual-pair configs (``token/w1-cf-p``, ``token/w3-cf-p``, ``-s0``, ``-s1``, ``-s2``,
``-v0``; ``Config.interchange`` names the variable) hold pairs of examples of the same streams
for interchange interventions (``pvr_keras.counterfactuals``): row k of a split is pair k of
``counterfactuals.pairs(task, n, interchange, seed, stream, changing=True)``, a base, a source
and the label when the variable takes the source's value, for tools outside Keras (pyvene,
TransformerLens) to patch with. Only *changing* pairs (that label differs from the base's):
with random pairs most interchanges leave the label as it is, and a model that ignores the
intervention would score a high IIA. Their rows and hashes are the kind's
``BenchmarkHooks.pairs``; they have no text form.

A config names its task kind (``Config.kind``; ``family`` is the same name). Everything that
differs between kinds (split sizes, rows, TFDS features, hashing, text, scoring) is the kind's
``BenchmarkHooks`` (``TaskKind.benchmark``): a kind with hooks is a family of configs, and a
module of yours adds its configs with ``register_config``; a kind may also declare them in its
hooks (``BenchmarkHooks.configs``: the chain kind's ``chain/...``), listed once it registers.
"""

import collections.abc
import dataclasses
import difflib
import re

from pvr_keras.references import resolve

VERSION = "1.0.0"
RELEASE_NOTES = {
    "1.0.0": "First release: token windows 1-4 (mod_sum), the other aggregations at window 3 "
    "(and the median at window 2), "
    "holdout (Figure 14, Appendix E), the pointer-less control, 2x2 MNIST / CIFAR-10 blocks "
    "(IID and Figure 6's holdout), MNIST image sequences, Boolean f3 and parity windows with "
    "every bit of f3 frozen (Abbe et al. 2022). Added later at their own 1.0.0 (no earlier "
    "config changed): the chain configs, multi-hop PVR at L = 40 (Abnar et al. 2023); the "
    "token counterfactual-pair configs (token/w1-cf-p, token/w3-cf-p, -s0, -s1, -s2, -v0: a "
    "base, a source and the label when one variable takes the source's value).",
}
SPLITS = ("train", "validation", "test")
# The paper, as every export and the TFDS builder cite it.
HOMEPAGE = "https://arxiv.org/abs/2107.12580"
CITATION = """@article{zhang2021pointer,
  title={Pointer Value Retrieval: A new benchmark for understanding the limits of neural
    network generalization},
  author={Zhang, Chiyuan and Raghu, Maithra and Kleinberg, Jon and Bengio, Samy},
  journal={arXiv preprint arXiv:2107.12580},
  year={2021}
}"""
NAME = re.compile(r"[a-z0-9_]+/[a-z0-9][a-z0-9_-]*")


def _kinds():
    """The registry of kinds (``kinds.spec``), once ``pvr_keras.kinds`` is imported (the
    built-in kinds register then, and a kind's module may register its configs), and the
    configs the registered kinds declare (``BenchmarkHooks.configs``) in the catalog."""
    import pvr_keras.kinds  # noqa: F401
    from pvr_keras.kinds import spec

    for kind in spec.kind_names():
        declared = spec.kind(kind).benchmark
        for fields in () if declared is None else declared.configs:
            if fields["name"] not in CONFIGS:
                _add(Config(kind=kind, **fields))
    return spec


def hooks(kind):
    """The ``BenchmarkHooks`` of a task kind (a name or a ``"module:attribute"`` reference).

    Raises:
        ValueError: an unknown kind, or one without benchmark hooks.
    """
    spec = _kinds().kind(kind)
    if spec.benchmark is None:
        raise ValueError(f"the {spec.name} kind has no benchmark configs (its TaskKind has no "
                         "benchmark hooks)")  # fmt: skip
    return spec.benchmark


def families():
    """The kinds with benchmark hooks (registration order), and any other kind a config
    names."""
    kinds = _kinds()
    named = [k for k in kinds.kind_names() if kinds.kind(k).benchmark is not None]
    return tuple(dict.fromkeys(named + [c.kind for c in CONFIGS.values()]))


class _Sizes(collections.abc.Mapping):
    """``{kind: {preset: {split: examples}}}``: each family's ``BenchmarkHooks.sizes``, read
    when asked (a kind registered later is in it too). A size of None: ``Config.sizes``."""

    def __getitem__(self, kind):
        if kind not in families():
            raise KeyError(kind)
        return hooks(kind).sizes

    def __iter__(self):
        return iter(families())

    def __len__(self):
        return len(families())

    def __repr__(self):
        return repr(dict(self))


SIZES = _Sizes()


def __getattr__(name):
    if name == "FAMILIES":  # the name before families()
        return families()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclasses.dataclass(frozen=True)
class Config:
    """One benchmark config.

    Attributes:
        name: ``kind/short-name`` (``token/w3``).
        kind: the task kind (``token``, ``boolean``, ``block``, ``sequence`` or one
            registered with benchmark hooks); ``family`` is the same name.
        task: the task's fields (``TaskKind.task`` keyword arguments: ``TokenTask``,
            ``BooleanTask`` or ``BlockTask``; a sequence config's task is the ``TokenTask``
            its digits follow).
        holdout: token holdout-k; the Boolean frozen-bit mask; ``1`` for Figure 6's block
            holdout; 0 for none.
        seed: the seed of the train and test streams (validation: ``seed + 1``).
        description: one line, with the paper's figure.
        version: the config's version (its streams' rules).
        interchange: the high-level variables a counterfactual-pair config interchanges
            (``("P",)``, ``("S1",)``: ``pvr_keras.counterfactuals.variables``); its rows are
            the kind's ``BenchmarkHooks.pairs``'. () : a config of examples.
    """

    name: str
    kind: str
    task: dict
    holdout: int = 0
    seed: int = 0
    description: str = ""
    version: str = VERSION
    interchange: tuple = ()

    @property
    def family(self):
        """The config's kind (``kind``): its family of configs."""
        return self.kind

    @property
    def hooks(self):
        """The ``BenchmarkHooks`` of the config's kind (of its counterfactual pairs, for a
        config with ``interchange``)."""
        kind_hooks = hooks(self.kind)
        if not self.interchange:
            return kind_hooks
        if kind_hooks.pairs is None:
            raise ValueError(f"{self.name}: the {self.kind} kind has no counterfactual-pair "
                             "configs (its BenchmarkHooks.pairs is None)")  # fmt: skip
        return kind_hooks.pairs

    def build_task(self):
        """The task object: ``TaskKind.task(**task)`` of the config's kind."""
        return _kinds().kind(self.kind).task(**self.task)

    @property
    def tfds_name(self):
        """The TFDS config name: ``token/w3-median`` -> ``token_w3_median``."""
        return self.name.replace("/", "_").replace("-", "_")

    def sizes(self, size="standard"):
        """``{split: number of examples}`` of a size preset (a size of None in the kind's
        presets is its ``whole(task)``: the cube's 2**d for Boolean test)."""
        hooks = self.hooks
        if size not in hooks.sizes:
            raise ValueError(f"size must be one of {', '.join(hooks.sizes)}; "
                             f"received {size!r}")  # fmt: skip
        sizes = dict(hooks.sizes[size])
        for split, n in sizes.items():
            if n is None:
                sizes[split] = int(resolve(hooks.whole)(self.build_task()))
        return sizes

    @property
    def num_bits(self):
        """The number of bits of the config's task (Boolean configs)."""
        task = self.build_task()
        if not hasattr(task, "num_bits"):
            raise AttributeError(f"num_bits: the task of {self.name} has no bits")
        return task.num_bits

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


def _pairs(window, variable):
    """``token/w{window}-cf-{variable}``: changing counterfactual pairs of ``token/w{window}``
    (mod_sum, 11 tokens, cyclic windows) for an interchange of ``variable``."""
    j = variable[1:]
    what = {"P": "the pointer", "S0": "S0, the pointed value (at value position P)",
            "V0": "V0, the value at position 0 (in the window for 3 of the 10 pointers)"}.get(
        variable, f"S{j}, the window's value {j} (at value position P + {j} mod 10)")  # fmt: skip
    return Config(f"token/w{window}-cf-{variable.lower()}", "token", dict(window=window),
                  interchange=(variable,),
                  description=f"counterfactual pairs of token/w{window}: {what} takes the "
                  "source's value; only the pairs whose label that changes")  # fmt: skip


def _boolean(name, description, task, holdout=0):
    return Config(f"boolean/{name}", "boolean", task, holdout=holdout, description=description)


# tasks.f3(): 3 pointer bits, window 3, majority, truncated windows (d = 11)
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
        _pairs(1, "P"),
        *(_pairs(3, v) for v in ("P", "S0", "S1", "S2", "V0")),
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
    """The config names (of one family: a kind's)."""
    _kinds()
    if family is not None and family not in families():
        raise ValueError(f"family must be one of {', '.join(families())}; received {family!r}")
    return [n for n, c in CONFIGS.items() if family is None or c.kind == family]


def register_config(config):
    """Adds ``config`` to the catalog (``names``, ``get``, ``source``, ...); returns it. A
    kind's module registers its configs with it when it is imported; the TFDS builder
    ``pvr`` holds the configs registered before ``pvr_keras.tfds`` is imported.

    Raises:
        ValueError: not a ``Config``, a name not of the form ``kind/short-name``, a name
            another config has, or a kind without benchmark hooks.
    """
    if not isinstance(config, Config):
        raise ValueError(f"register_config takes a Config; received {type(config).__name__}")
    config.hooks  # noqa: B018  (the kind has hooks; of pairs, for a counterfactual config)
    return _add(config)


def _add(config):
    """``register_config`` of a config whose kind has benchmark hooks."""
    if not isinstance(config.name, str) or not NAME.fullmatch(config.name):
        raise ValueError(f"a config name is kind/short-name (lower-case letters, digits, _ "
                         f"and -); received {config.name!r}")  # fmt: skip
    interchange = config.interchange
    if not (isinstance(interchange, tuple) and all(isinstance(v, str) for v in interchange)):
        raise ValueError(f"{config.name}: interchange must be a tuple of variable names; "
                         f"received {interchange!r:.200}")  # fmt: skip
    known = CONFIGS.get(config.name)
    if known is not None and known != config:
        raise ValueError(f"benchmark config {config.name!r} is registered already")
    CONFIGS[config.name] = config
    return config


def get(name):
    """A config by name, ``NAME`` or ``NAME:VERSION`` (the version must be the catalog's).

    Raises:
        ValueError: an unknown name (with the closest names) or version.
    """
    if not isinstance(name, str):
        raise ValueError(f"a config name must be a string; received {name!r}")
    _kinds()
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
