"""Models of one shape stacked along a member axis, trained together by one compiled program.

``Stack(models)`` holds the stacked trainable, non-trainable and optimizer variables of
compiled Keras models (JAX backend) and ``steps(xs, ys, lrs, active)`` trains them a scan of
steps at once: one ``jax.vmap`` over Keras's ``stateless_call`` and the optimizer's
``stateless_apply``. (The members one after another inside one program, plain kernels
instead of batched ones, measured slower on a 2-core CPU: 6.6 against 5.4 ms per member's
step for GOTU's MLP at batch 64, AMD EPYC Zen 4, 2 cores, load ~2.) Each member's learning
rate and weight decay enter as its own numbers; a member not ``active`` keeps its values;
the members share no operation, so a NaN in one reaches no other.
``training.population`` trains runs with it; ``training.timing`` times it.
"""

import contextlib

from pvr_keras.errors import ConfigError


def _shapes(model):
    return [
        [tuple(v.shape) for v in model.trainable_variables],
        [tuple(v.shape) for v in model.non_trainable_variables],
        [tuple(v.shape) for v in model.optimizer.variables],
    ]


class Stack:
    """The stacked state of compiled Keras ``models`` (one shape, optimizers of one kind) and
    the compiled steps that train it.

    Args:
        models: compiled Keras models (their optimizers are built here if they are not).
        metric: ``"accuracy"`` (cross-entropy on logits) or ``"mse"``, as ``compile_model``.
    """

    def __init__(self, models, metric="accuracy"):
        import jax.numpy as jnp

        self.models, self.metric = list(models), metric
        for model in self.models:
            if not model.optimizer.built:
                model.optimizer.build(model.trainable_variables)
        shapes = [_shapes(m) for m in self.models]
        if any(s != shapes[0] for s in shapes):
            raise ConfigError("the members of a population must have models of one shape")
        self.template = self.models[0]
        self.optimizer = self.template.optimizer
        self.state = tuple(
            [jnp.stack([getattr(m, group)[i].value for m in self.models])
             for i in range(len(getattr(self.template, group)))]
            for group in ("trainable_variables", "non_trainable_variables")
        ) + ([jnp.stack([m.optimizer.variables[i].value for m in self.models])
              for i in range(len(self.optimizer.variables))],)  # fmt: skip
        decays = [m.optimizer.weight_decay for m in self.models]
        self.decay = None if all(d is None for d in decays) else jnp.asarray(
            [float(d or 0.0) for d in decays], "float32")  # fmt: skip
        self._function = None

    def steps(self, xs, ys, lrs, active):
        """Trains ``len(xs)`` steps: ``xs``, ``ys`` of shape (steps, members, batch, ...),
        ``lrs`` (steps, members), ``active`` (members,) bools. Returns ``(loss, hits)``,
        each (steps, members): the batch's mean loss and its number of correct examples."""
        import jax.numpy as jnp

        if self._function is None:
            self._function = self._step_function()
        self.state, (loss, hits) = self._function(self.state, xs, ys, jnp.asarray(lrs),
                                                  self.decay, jnp.asarray(active))  # fmt: skip
        return loss, hits

    def write_back(self, k, model=None):
        """Member ``k``'s values into its Keras model (default: the one it was made from)."""
        model = self.models[k] if model is None else model
        trainable, non_trainable, optimizer_state = self.state
        for variables, values in ((model.trainable_variables, trainable),
                                  (model.non_trainable_variables, non_trainable),
                                  (model.optimizer.variables, optimizer_state)):  # fmt: skip
            for variable, value in zip(variables, values, strict=True):
                variable.assign(value[k])

    def _step_function(self):
        import jax
        import jax.numpy as jnp

        from pvr_keras.training.compiling import loss_and_metric, within_half

        model, optimizer = self.template, self.optimizer
        loss_fn, _ = loss_and_metric(self.metric)
        if self.metric == "mse":
            hit_fn = within_half
        else:
            import keras

            hit_fn = keras.metrics.sparse_categorical_accuracy

        def member_step(state, x, y, lr, decay, active):
            trainable, non_trainable, optimizer_state = state

            def loss_of(trainable):
                y_pred, new_non_trainable, losses = model.stateless_call(
                    trainable, non_trainable, x, training=True, return_losses=True
                )
                loss = loss_fn(y, y_pred)
                for extra in losses:
                    loss = loss + extra
                return loss, (y_pred, new_non_trainable)

            (loss, (y_pred, new_non_trainable)), grads = jax.value_and_grad(loss_of, has_aux=True)(
                trainable
            )
            with _hyperparameters(optimizer, lr, decay):
                new_trainable, new_optimizer = optimizer.stateless_apply(
                    optimizer_state, grads, trainable
                )
            new = (new_trainable, new_non_trainable, new_optimizer)
            kept = jax.tree.map(lambda n, o: jnp.where(active, n, o), new, state)
            hits = jnp.sum(jnp.asarray(hit_fn(y, y_pred), "float32"))
            return kept, loss, hits

        def steps(state, xs, ys, lrs, decay, active):
            def body(state, inputs):
                x, y, lr = inputs
                state, loss, hits = jax.vmap(member_step)(state, x, y, lr, decay, active)
                return state, (loss, hits)

            return jax.lax.scan(body, state, (xs, ys, lrs))

        return jax.jit(steps, donate_argnums=0)


@contextlib.contextmanager
def _hyperparameters(optimizer, learning_rate, weight_decay):
    """The member's learning rate (and weight decay) in the shared optimizer while its update
    is traced: Keras reads ``_learning_rate`` (a schedule, a variable or a number) and
    ``weight_decay`` when it applies the gradients."""
    saved = optimizer._learning_rate, optimizer.weight_decay
    optimizer._learning_rate = learning_rate
    if weight_decay is not None:
        optimizer.weight_decay = weight_decay
    try:
        yield
    finally:
        optimizer._learning_rate, optimizer.weight_decay = saved
