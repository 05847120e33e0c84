"""One function per task kind that turns a config into a finished run, and ``TokenRun``.

    from pvr_keras.training import runs
    record = runs.token_run(runs.TokenRun(model="mlp", window=2, num_examples=30_000), out)

``token_run`` trains a ``TokenRun`` (the task, model, sizes, seed and recipe of one token run;
sweeps grid them), ``block_run`` a block-style visual config (``configs.BlockConfig``),
``sequence_run`` an image-sequence config. Each builds the task, the recipe and the streams
from one batch size, trains with ``training.train`` (records, checkpoints, resume) and saves
the model. The recipes, the sweep engine and fast_slow all train through these, so a run of a
given config is the same run whichever of them starts it.
"""

import dataclasses
import hashlib
import json
import math

from pvr_keras.tasks import TokenTask
from pvr_keras.training.recipe import TOKEN, VISUAL

ID_HASH_CHARS = 10
# The token architectures (``pvr_keras.models.TOKEN_MODELS``, spelled out here so that runs
# are checked without importing Keras; a test keeps the two equal).
TOKEN_MODELS = ("mlp", "mlp2x", "transformer", "mixer")


def _check_int(name, value, minimum):
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; received {value!r}")


@dataclasses.dataclass(frozen=True)
class TokenRun:
    """One training run of a token task (a sweep's, or ``token_pvr.py``'s).

    The data seed and the weight-initialisation seed are both ``seed``: two seeds differ in
    their training set, its order and the initial weights. ``epochs``, ``warmup_epochs``,
    ``min_steps``, ``batch_size`` and ``learning_rate`` replace those of the paper's token
    recipe (``training.TOKEN``), and so does ``optimizer`` (any of Appendix A's sweep);
    ``model_kwargs`` go to the model builder (e.g. narrower widths for tests), or ``width``
    scales all the paper's widths.

    Example:
        >>> run = TokenRun(model="mlp", window=2, num_examples=3000, seed=1)
        >>> run.run_id.startswith("mlp-w2-mod_sum-n3000-s1-")
        True
    """

    model: str = "mlp"
    window: int = 1
    aggregation: str = "mod_sum"
    pointer: bool = True
    holdout: int = 0
    num_examples: int = 10_000
    seed: int = 0
    window_mode: str = "cyclic"
    test_examples: int = 10_000
    epochs: int = TOKEN.epochs  # the paper's token recipe (training.TOKEN) by default
    warmup_epochs: int = TOKEN.warmup_epochs
    min_steps: int = TOKEN.min_steps
    batch_size: int = TOKEN.batch_size
    learning_rate: float = TOKEN.learning_rate
    model_kwargs: dict = dataclasses.field(default_factory=dict)
    holdout_values: tuple[int, ...] | None = None
    width: float = 1.0
    optimizer: str = TOKEN.optimizer

    def __post_init__(self):
        if self.model not in TOKEN_MODELS:
            raise ValueError(
                f"model must be one of {', '.join(TOKEN_MODELS)}; received {self.model!r}"
            )
        if self.holdout_values is not None and not isinstance(self.holdout_values, str):
            object.__setattr__(self, "holdout_values", tuple(self.holdout_values))
        # The task normalises the default tuple, spelled out, to None: one config, one id.
        object.__setattr__(self, "holdout_values", self.task().holdout_values)
        self.task().check_holdout(self.holdout)
        _check_int("num_examples", self.num_examples, 1)
        _check_int("test_examples", self.test_examples, 1)
        _check_int("seed", self.seed, 0)
        _check_int("warmup_epochs", self.warmup_epochs, 0)
        _check_int("min_steps", self.min_steps, 0)
        if not isinstance(self.model_kwargs, dict):
            raise ValueError(f"model_kwargs must be a dict; received {self.model_kwargs!r}")
        if isinstance(self.width, bool) or not isinstance(self.width, int | float):
            raise ValueError(f"width must be a number > 0; received {self.width!r}")
        if not (math.isfinite(self.width) and self.width > 0):
            raise ValueError(f"width must be a number > 0; received {self.width!r}")
        object.__setattr__(self, "width", float(self.width))
        if self.width != 1 and self.model_kwargs:
            raise ValueError(
                f"give width (a scale of the paper's widths) or model_kwargs, not both; "
                f"received width={self.width}, model_kwargs={self.model_kwargs}"
            )
        if isinstance(self.learning_rate, int) and not isinstance(self.learning_rate, bool):
            # 1 and 1.0 are one configuration: one id.
            object.__setattr__(self, "learning_rate", float(self.learning_rate))
        self.recipe()  # checks epochs, batch_size, learning_rate

    def task(self):
        """The ``TokenTask`` of this run (default seq_len 11 and 10 values)."""
        return TokenTask(
            window=self.window,
            aggregation=self.aggregation,
            window_mode=self.window_mode,
            pointer=self.pointer,
            holdout_values=self.holdout_values,
        )

    def recipe(self):
        """The paper's token recipe with this run's overrides."""
        return dataclasses.replace(
            TOKEN,
            epochs=self.epochs,
            warmup_epochs=self.warmup_epochs,
            min_steps=self.min_steps,
            batch_size=self.batch_size,
            learning_rate=self.learning_rate,
            optimizer=self.optimizer,
        )

    def to_dict(self):
        """The config as a JSON-ready dict (what run records and result lines store).

        Fields added later are left out while they hold their default (``holdout_values``
        None, ``width`` 1, ``optimizer`` sgd), so the ids of runs recorded before they
        existed do not change.
        """
        fields = dataclasses.asdict(self)
        for name, default in LATER_FIELDS.items():
            if fields[name] == default:
                del fields[name]
        return json.loads(json.dumps(fields))

    def model_arguments(self):
        """Keyword arguments of this run's model builder: ``model_kwargs``, or the paper's
        widths scaled by ``width``."""
        if self.width != 1:
            from pvr_keras.models.scaling import width_kwargs

            return width_kwargs(self.model, self.width)
        return dict(self.model_kwargs)

    @property
    def run_id(self):
        """Readable prefix + hash of the whole config: stable across machines and versions."""
        canonical = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))
        digest = hashlib.sha256(canonical.encode()).hexdigest()[:ID_HASH_CHARS]
        parts = [self.model, f"w{self.window}", self.aggregation]
        if not self.pointer:
            parts.append("nopointer")
        if self.holdout:
            parts.append(f"h{self.holdout}")
            if self.holdout_values is not None:
                parts.append("of" + "".join(map(str, self.holdout_values)))
        if self.width != 1:
            parts.append(f"x{self.width:g}")
        if self.optimizer != TOKEN.optimizer:
            parts.append(self.optimizer)
        parts += [f"n{self.num_examples}", f"s{self.seed}", digest]
        return "-".join(parts)

    def train_examples(self):
        """Examples the training passes over: epochs x steps per epoch x batch size."""
        recipe = self.recipe()
        steps = recipe.steps_per_epoch(self.num_examples)
        return recipe.num_epochs(self.num_examples) * steps * self.batch_size

    def cost(self):
        """Rough relative cost, for progress estimates: examples trained and evaluated, plus
        a fixed charge per epoch (checkpoint, records) and per run (build, compile)."""
        epochs = self.recipe().num_epochs(self.num_examples)
        evaluated = min(self.num_examples, 10_000) + self.test_examples + 5_000
        return self.train_examples() + epochs * evaluated + 50_000


FIELDS = tuple(f.name for f in dataclasses.fields(TokenRun))
# Fields added after results were recorded, with the default that leaves them out of the id.
LATER_FIELDS = {"holdout_values": None, "width": 1.0, "optimizer": TOKEN.optimizer}


def token_run(run, out, *, config=None, input=None, title=None, save_model=True, verbose=0,
              distribution=None, callbacks=None):  # fmt: skip
    """Trains one ``TokenRun`` into ``out``; returns its run record.

    Args:
        run: the ``TokenRun``.
        out: run folder.
        config: what the record stores as the run's identity (default ``run.to_dict()``; a
            recipe passes its own config).
        input: ``"device"`` or ``"tfdata"`` (``training.inputs``); default device input on
            the JAX backend, tf.data on TensorFlow. The examples, hence the results, are the
            same.
        title, save_model, verbose, distribution, callbacks: as ``training.train``.
    """
    from pvr_keras import models, training
    from pvr_keras.training.inputs import default_input, token_train_data

    task = run.task()
    recipe = run.recipe()
    data = token_train_data(
        task,
        run.num_examples,
        test_examples=run.test_examples,
        batch_size=recipe.batch_size,
        seed=run.seed,
        holdout=run.holdout,
        input=input or default_input(),
    )
    return training.train(
        lambda: models.get(
            run.model,
            seq_len=task.seq_len,
            vocab=task.num_values,
            num_classes=task.num_classes,
            **run.model_arguments(),
        ),
        data,
        recipe,
        out,
        config=run.to_dict() if config is None else config,
        seed=run.seed,
        verbose=verbose,
        title=title or run.run_id,
        save_model=save_model,
        distribution=distribution,
        callbacks=callbacks,
    )


def visual_recipe(cfg):
    """The paper's visual recipe (``VISUAL``) with a visual config's training fields."""
    return dataclasses.replace(
        VISUAL,
        epochs=cfg.epochs,
        batch_size=cfg.batch_size,
        learning_rate=cfg.learning_rate,
        schedule=cfg.schedule,
    )


def block_run(cfg, out, *, holdout=False, config=None, input=None, verbose="auto",
              distribution=None, callbacks=None):  # fmt: skip
    """Trains one 2x2 block run (IID, or Figure 6's holdout) of a ``configs.BlockConfig``
    into ``out`` and saves its model; returns the run record.

    The record's config is ``config``, by default the config's identity
    (``configs.identity(cfg, "out")``) with ``holdout`` added: what ``block_holdout.py``
    compares to reuse a finished IID run.
    """
    from pvr_keras import config as configs
    from pvr_keras import models, training
    from pvr_keras.data import images
    from pvr_keras.training.inputs import block_train_data

    task = cfg.task()
    images.prepare_sources(task.sources, cfg.data_dir, download=cfg.download)  # no-op if done
    recipe = visual_recipe(cfg)
    data = block_train_data(
        task,
        cfg.num_examples,
        test_examples=cfg.test_examples,
        batch_size=recipe.batch_size,
        seed=cfg.seed,
        holdout=holdout,
        data_dir=cfg.data_dir,
        train_eval_examples=cfg.train_eval_examples,
        **({"input": input} if input else {}),
    )
    if config is None:
        # Neither the folder nor the device count is part of the run's identity: a finished
        # run can be moved or reused, a killed one resumed on other devices.
        config = {**configs.identity(cfg, "out"), "holdout": holdout}
    setting = "holdout" if holdout else "IID"
    return training.train(
        lambda: models.get(
            cfg.model, input_shape=task.image_shape, num_classes=task.num_classes, width=cfg.width
        ),
        data,
        recipe,
        out,
        config=config,
        seed=cfg.seed,
        verbose=verbose,
        title=f"{cfg.model} (width {cfg.width}), 2x2 {cfg.values} blocks, {setting}",
        save_model=True,
        distribution=distribution,
        callbacks=callbacks,
    )


def sequence_run(cfg, out, *, config=None, input=None, verbose="auto", distribution=None,
                 callbacks=None):  # fmt: skip
    """Trains one image-sequence run (Figure 2) into ``out`` and saves its model.

    ``cfg`` has ``image_sequence.py``'s fields: the token task (``task()``, ``holdout``), the
    visual training fields, and the model's (``head``, ``encoder``, ``conv_widths``, ``dim``,
    ``widths``, ``depth``). The record's config is ``config`` (default
    ``configs.identity(cfg)``).
    """
    from pvr_keras import config as configs
    from pvr_keras import models, training
    from pvr_keras.data import images
    from pvr_keras.training.inputs import sequence_train_data

    task = cfg.task()
    images.prepare_sources(["mnist"], cfg.data_dir, download=cfg.download)  # no-op if done
    recipe = visual_recipe(cfg)
    data = sequence_train_data(
        task,
        cfg.num_examples,
        test_examples=cfg.test_examples,
        batch_size=recipe.batch_size,
        seed=cfg.seed,
        holdout=cfg.holdout,
        data_dir=cfg.data_dir,
        train_eval_examples=cfg.train_eval_examples,
        **({"input": input} if input else {}),
    )
    return training.train(
        lambda: models.image_sequence(
            seq_len=task.seq_len,
            num_classes=task.num_classes,
            conv_widths=cfg.conv_widths if cfg.encoder == "conv" else (),
            head=cfg.head,
            dim=cfg.dim,
            widths=cfg.widths,
            depth=cfg.depth,
        ),
        data,
        recipe,
        out,
        config=configs.identity(cfg) if config is None else config,
        seed=cfg.seed,
        verbose=verbose,
        title=f"image sequences, {cfg.head} head, window {cfg.window} {cfg.aggregation}",
        save_model=True,
        distribution=distribution,
        callbacks=callbacks,
    )


def summary_line(record, what):
    """One line saying how a finished run did (recipes print it at the end)."""
    final = record["final"]
    iid = final.get("iid_test_accuracy")
    return (
        f"{what} [{record['backend']}, {record.get('input', 'tfdata')} input]: train accuracy "
        f"{final['train_eval_accuracy']:.4f}, test accuracy {final['test_accuracy']:.4f}"
        f"{f' (held-out windows; IID test {iid:.4f})' if iid is not None else ''}, "
        f"{record['wall_time_s'] / 60:.1f} min{' (FAILED run)' if record['failed'] else ''}"
    )
