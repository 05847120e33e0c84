"""Which tests depend on the Keras backend, so that CI runs the others once, not per backend.

A test is *backend-free* when nothing it runs goes through Keras's backend: the NumPy rules
and analyses, the tf.data pipelines (TensorFlow whatever ``KERAS_BACKEND`` says), sweeps with
a stand-in trainer, configs, tools, parameter counts (a property of the layer graph). Those
are listed below (folders, files or single tests); every other test is backend-dependent.
Each backend-free test gets the ``backend_free`` marker.

A test is *backend-agnostic* (``ANY_BACKEND``) when it runs Keras but what it checks does not
depend on which backend runs it: a sweep's records across a killed process, a shell tool's
summary table, a model or task kind found by reference, a tuner's oracle. CI runs those
under one backend (JAX, where the device input adds to what they cover).

The README's command (``python -m pytest``) runs everything. CI runs it once per backend (the
two at the same time): ``PVR_TESTS_SKIP_BACKEND_FREE=1`` for the JAX run deselects the
backend-free tests there (``-m "not backend_free"`` does the same by hand), and
``PVR_TESTS_SKIP_ANY_BACKEND=1`` for the TensorFlow run the backend-agnostic ones
(``-m "not any_backend"``).
"""

import os

SKIP_ENV = "PVR_TESTS_SKIP_BACKEND_FREE"
SKIP_ANY_ENV = "PVR_TESTS_SKIP_ANY_BACKEND"

BACKEND_FREE = (
    "tests/tasks/",
    "tests/data/",
    "tests/benchmarks/",
    "tests/sweeps/",
    "tests/tools/",
    "tests/analysis/test_boolean.py",
    "tests/analysis/test_cka.py",
    "tests/analysis/test_dynamics.py",
    "tests/analysis/test_holdout.py",
    "tests/analysis/test_hops.py",
    "tests/analysis/test_interpolation.py",
    "tests/analysis/test_unseen.py",
    "tests/analysis/test_logits.py",
    "tests/analysis/test_noise.py",
    "tests/recipes/test_noise_sensitivity.py",  # NumPy analysis only
    "tests/test_calibration.py",  # the cache and the workers, with injected measurements
    "tests/figures/",
    "tests/test_cli.py",
    "tests/test_engines.py",
    "tests/test_runconfig.py",
    "tests/test_identity.py",
    "tests/test_stats.py",
    "tests/test_checks.py",
    "tests/test_backend_split.py",
    "tests/test_layout.py",
    "tests/test_trust_gates.py",  # the source walked with ast
    "tests/counterfactuals/test_causal.py",  # the high-level models and pairs, NumPy only
    "tests/counterfactuals/test_block_pairs.py",  # block pairs: tf.data images, no Keras model
    # The launcher's flags, checks, cost and job files (refused before any Keras import).
    "tests/launch/test_flags.py",
    "tests/launch/test_driver.py",  # with a stand-in executor
    "tests/test_package.py",
    "tests/models/test_resnet.py::test_trainable_parameter_count_matches_torchvision",
    "tests/models/test_vgg.py::test_trainable_parameter_count_matches_torchvision",
    "tests/models/test_mlp.py::test_parameter_counts_match_paper",
    "tests/models/test_get.py::test_registered_parameter_counts_are_the_models",
    "tests/models/test_mixer.py::test_parameter_count_matches_paper",
    "tests/models/test_transformer.py::test_parameter_count_matches_paper",
    "tests/models/test_gotu_models.py::test_parameter_counts_by_hand",
    # The Degree-Curriculum's rule, orders, settings and refusals (NumPy, configs, tf.data);
    # the rest of the file trains on both backends.
    "tests/training/test_curriculum.py::test_the_stage_rule_is_their_rule_epoch_by_epoch",
    "tests/training/test_curriculum.py::test_each_epoch_is_a_shuffle_of_its_ball_fixed_by_seed_and_epoch",
    "tests/training/test_curriculum.py::test_finish_drops_a_last_stage_that_never_trained",
    "tests/training/test_curriculum.py::test_bad_settings_are_refused",
    "tests/training/test_curriculum.py::test_off_by_default_and_in_the_identity_only_when_set",
    "tests/training/test_curriculum.py::test_kinds_of_other_inputs_are_refused_by_name",
    "tests/training/test_curriculum.py::test_several_devices_are_refused",
    # Each recipe refuses a bad flag in a process of its own before Keras or TensorFlow is
    # imported (the test checks that), so no backend runs: once, under TensorFlow, where an
    # early `import keras` would also import TensorFlow and fail it.
    "tests/recipes/test_recipe_checks.py::test_bad_flags_fail_before_tensorflow_and_write_nothing",
)
# Inside the folders and files above, but running a Keras model (files or single tests).
BACKEND_DEPENDENT = (
    "tests/test_engines.py::test_on_a_tensorflow_cpu_dense_models_get_xla_and_convolutions_do_not",
    "tests/test_engines.py::test_on_jax_keras_keeps_its_own_choice",
    "tests/data/test_fit_order.py",  # plain model.fit over the streams
    # The device twins bit for bit against tf.data: on both backends' runs (issue 14), since
    # a JAX process reads them under either Keras backend setting.
    "tests/data/test_device.py",
    "tests/data/test_device_images.py",
    "tests/data/test_block.py::test_feeds_a_keras_model",
    "tests/sweeps/test_run_data.py::test_the_model_fields_reach_the_model",
    "tests/test_identity.py::test_a_legacy_run_folder_resumes_after_migrating",
    # Worker processes of both backends, whichever runs the test (also in ANY_BACKEND).
    "tests/test_calibration.py::test_a_real_calibration_of_a_tiny_model_measures_both_backends",
    "tests/tools/test_bench_engines.py::test_bench_engines_times_each_engine_on_the_same_model",
)

# Running Keras, checking something no backend changes: CI runs them under JAX only.
ANY_BACKEND = (
    # tools/probes/gpu_check.sh's mechanics and table; under JAX it covers both inputs.
    "tests/test_gpu_check.py::test_gpu_check_runs_in_smoke_mode_and_prints_one_summary_table",
    # A sweep process killed after its first record: what the files hold after the rerun.
    "tests/recipes/test_token_sweep.py::test_sigkill_then_rerun_completes_without_duplicates",
    # Model references through every recipe (the registry, run folders, safe_mode reloads).
    "tests/test_extending.py::test_a_model_of_your_own_through_every_recipe",
    # A task kind by reference through a sweep and train.py (the kind registry, its records).
    "tests/test_extending.py::test_a_task_kind_of_your_own",
    # recipes/chain.py's tiny study: the counts by hop count against its saved models, the
    # summary, resume and the docs table from the exported records.
    "tests/recipes/test_chain.py",
    # recipes/interventions.py's files and grids from tiny runs (the interventions themselves
    # are tested on both backends in tests/counterfactuals/test_interventions.py).
    "tests/recipes/test_interventions.py",
    "tests/recipes/test_block_interventions.py",
    # Which keras-tuner oracle picks the trials (the trials' training is covered on both
    # backends by test_random_search_end_to_end_then_resume).
    "tests/recipes/test_tune.py::test_other_tuners",
    # Records that name code are read without importing it (nothing reaches a backend op).
    "tests/test_untrusted_code.py",
    # Paths a user gives that the file system refuses: one line (evaluate loads a model).
    "tests/test_bad_paths.py",
    # The JAX twins against the split manifest: JAX whatever Keras's backend, so once.
    "tests/test_benchmark_manifest_jax.py",
    # train() refuses streams that are not bits before it makes a folder.
    "tests/training/test_curriculum.py::test_non_bit_streams_are_refused_before_training",
    # recipes/gotu.py's grid, exact measures against its saved models, plot and resume (the
    # training itself is covered on both backends by test_curriculum and the models' tests).
    "tests/recipes/test_gotu.py",
    # A real calibration and tools/probes/bench_engines.py start a worker per backend themselves,
    # whichever backend runs the test: once, in the shorter JAX run.
    "tests/test_calibration.py::test_a_real_calibration_of_a_tiny_model_measures_both_backends",
    "tests/tools/test_bench_engines.py::test_bench_engines_times_each_engine_on_the_same_model",
    # Killed on TensorFlow, resumed on JAX: its two processes name their backends.
    "tests/training/test_resume.py::test_a_run_killed_on_one_backend_resumes_on_the_other",
    # A sweep's mechanics on a tiny grid: its records, figures and config, a second start that
    # trains nothing and a grown grid (a sweep trains on both backends in test_boolean_holdout
    # and test_holdout_run_records_iid_and_held_out_accuracy).
    "tests/recipes/test_token_sweep.py::test_tiny_sweep_end_to_end",
    # Several values of a flag train as one sweep; --model.ARG reaches a builder of yours.
    "tests/test_cli_grid.py::test_a_grid_recipe_trains_every_run_as_one_sweep",
    "tests/test_cli_grid.py::test_model_flags_train_the_builder_with_their_value",
    # recipes/fast_slow.py's fit epochs, CKA from its saved models, shared folders and imported
    # records (the same measures as the chain and GOTU recipes, once).
    "tests/recipes/test_fast_slow.py",
    # A recipe's one-line errors from the command line (an --out that cannot be made, an empty
    # model.keras for evaluate.py): the library's checks, before any model runs.
    "tests/recipes/test_recipe_checks.py::test_an_out_folder_that_cannot_be_made_is_one_line",
    "tests/recipes/test_recipe_checks.py::test_evaluate_on_a_damaged_model_says_so_in_one_line",
    # Grids launched as submitit and Ray jobs: the jobs are the local grid's runs, whichever
    # backend trains them (the Ray test in the JAX run only, as all of these).
    "tests/launch/test_launchers.py",
)


# Backend-free, but CI runs them in its JAX process, as if backend-agnostic, to even out the two
# processes' time: the TensorFlow run also holds every backend-free test. Chosen from a CI
# run's per-test durations (--durations=0, 2-core CPU, under load: TensorFlow 33.0 min, JAX
# 30.4) with the savings of issue 51 measured per test: about 26.4 and 28.7 min without the
# files moved back (data/test_boolean.py, benchmarks/test_export.py and test_lm_eval_export.py,
# 1.2 min), 27.6 and 27.5 with them in the TensorFlow run.
BALANCED = (
    "tests/benchmarks/test_manifest.py",
    "tests/benchmarks/test_cards.py",
    "tests/benchmarks/test_inspect.py",
    "tests/benchmarks/test_reasoning_gym.py",
)


def _matches(nodeid, entries):
    """Whether ``nodeid`` lies in one of ``entries`` (folders ``x/``, files ``x.py``, tests
    ``x.py::name``, all their parametrisations included)."""
    for entry in entries:
        if entry.endswith("/"):
            found = nodeid.startswith(entry)
        elif entry.endswith(".py"):
            found = nodeid.startswith(entry + "::")
        else:
            found = nodeid == entry or nodeid.startswith(entry + "[")
        if found:
            return True
    return False


def is_backend_free(nodeid):
    """Whether the test with pytest node id ``nodeid`` (from the repository root) is
    backend-free."""
    return (_matches(nodeid, BACKEND_FREE) and not _matches(nodeid, BACKEND_DEPENDENT)
            and not _matches(nodeid, BALANCED))  # fmt: skip


def is_any_backend(nodeid):
    """Whether the test with pytest node id ``nodeid`` is backend-agnostic (runs Keras, but
    checks nothing a backend changes), or one of the backend-free tests CI runs with them
    (``BALANCED``)."""
    return _matches(nodeid, ANY_BACKEND) or _matches(nodeid, BALANCED)


# (marker, which tests carry it, the variable that deselects them, the marker's description)
CATEGORIES = (
    ("backend_free", is_backend_free, SKIP_ENV, "runs no Keras backend code; CI runs it once"),
    ("any_backend", is_any_backend, SKIP_ANY_ENV,
     "runs Keras, checks nothing a backend changes; CI runs it under JAX only"),
)  # fmt: skip


def pytest_configure(config):
    for marker, _, _, description in CATEGORIES:
        config.addinivalue_line("markers", f"{marker}: {description} (tests/backend_split.py)")


def pytest_collection_modifyitems(config, items):
    import pytest

    kept, skipped = [], []
    for item in items:
        skip = False
        for marker, belongs, variable, _ in CATEGORIES:
            if belongs(item.nodeid):
                item.add_marker(getattr(pytest.mark, marker))
                skip = skip or os.environ.get(variable) == "1"
        (skipped if skip else kept).append(item)
    if skipped:
        config.hook.pytest_deselected(items=skipped)
        items[:] = kept
