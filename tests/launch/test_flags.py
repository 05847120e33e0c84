"""The launcher flags (pvr_keras.launch): read beside a recipe's own and kept out of its
config, every bad input one line before anything is written or submitted, --dry-run's cost,
a job's environment, and the jobs file read as untrusted."""

import json
import os
import socket
import subprocess
import sys

import pytest

from pvr_keras import calibration
from pvr_keras.launch import cost, driver, flags, jobs
from pvr_keras.training import records
from tests import scripts

GRID = ["--seed", "0", "1", "--num-examples", "300", "--test-examples", "200", "--epochs", "2",
        "--min-steps", "0", "--batch-size", "100", "--warmup-epochs", "0"]  # fmt: skip


def test_launcher_flags_are_read_apart_and_stay_out_of_the_config(tmp_path):
    recipe = scripts.load("recipes/token_pvr.py")
    argv = [*GRID, "--launcher", "submitit", "--submitit.cluster", "local",
            "--submitit.timeout-min", "30", "--submitit.detach",
            "--out", str(tmp_path / "g")]  # fmt: skip
    parsed = recipe.COMMAND.parse_all(argv)
    launch = parsed.launch
    assert (launch.launcher, launch.cluster, launch.timeout_min, launch.detach) == (
        "submitit", "local", 30, True)  # fmt: skip
    assert parsed.argv == (*GRID, "--out", str(tmp_path / "g"))  # the job's own command line
    assert parsed.script == str(scripts.REPO / "recipes" / "token_pvr.py")
    # The same grid without the launcher: the same runs (their ids do not name it) and the
    # same config.
    local = recipe.COMMAND.parse_all([*GRID, "--out", str(tmp_path / "g")])
    assert [r.run_id for r in local.runs()] == [r.run_id for r in parsed.runs()]
    assert runner_config(parsed) == runner_config(local)
    assert local.launch == flags.Launch()


def runner_config(parsed):
    from pvr_keras import cli

    return cli.config_of(parsed.run, parsed.own, parsed.axes)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# (flags, part of the one-line message); each refused with exit status 2, nothing written.
BAD = [
    (["--launcher", "slurm"], "invalid choice: 'slurm'"),
    (["--launcher", "submitit", "--submitit.cluster", "pbs"], "invalid choice: 'pbs'"),
    (["--launcher", "submitit", "--submitit.timeout-min", "0"], "invalid positive integer"),
    (["--launcher", "ray", "--ray.cpus-per-run", "-1"], "invalid non-negative number"),
    (["--launcher", "ray", "--submitit.partition", "gpu"],
     "--submitit.partition is a flag of --launcher submitit; this command's launcher is ray"),
    (["--submitit.detach"], "--submitit.detach is a flag of --launcher submitit; this "
                            "command's launcher is local"),
    (["--launcher", "submitit", "--ray.address", "auto"],
     "--ray.address is a flag of --launcher ray"),
    (["--launch", "submitit"], "--launcher was abbreviated: give the launcher's flags in full"),
    (["--launcher", "submitit", "--submitit.cluster", "debug", "--submitit.detach"],
     "the debug executor runs each job in this process"),
    (["--launcher", "submitit", "--submitit.cluster", "slurm", "--out", "OUT"],
     "is in this machine's temporary folder /tmp, which the workers of --submitit.cluster slurm "
     "do not see"),
    (["--launcher", "ray", "--ray.address", "/tmp/x"], "give auto, host:port or ray://host:port"),
    (["--launcher", "ray", "--ray.address", "127.0.0.1:PORT"], "does not answer"),
]  # fmt: skip


@pytest.mark.parametrize("bad,message", BAD, ids=[" ".join(b[:4]) for b, _ in BAD])
def test_bad_launcher_input_is_one_line_before_anything_is_written(bad, message, tmp_path,
                                                                    capsys):  # fmt: skip
    out = tmp_path / "grid"
    bad = [b.replace("PORT", str(_free_port())).replace("OUT", str(out)) for b in bad]
    argv = [*GRID, "--out", str(out), *bad] if "--out" not in bad else [*GRID, *bad]
    assert scripts.exit_status("recipes/token_pvr.py", *argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert message in err[-1], err
    assert not out.exists()


def test_a_launcher_without_its_package_says_which_extra(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(flags.PACKAGES, "submitit", "no_such_module_for_pvr_tests")
    out = tmp_path / "grid"
    argv = [*GRID, "--launcher", "submitit", "--out", str(out)]
    assert scripts.exit_status("recipes/token_pvr.py", *argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith('needs the no_such_module_for_pvr_tests package, which is not '
                        'installed: pip install -e ".[cluster]"')  # fmt: skip
    assert not out.exists()


def test_one_run_is_not_launched_and_a_sweep_recipe_refuses_the_same(tmp_path, capsys):
    out = tmp_path / "one"
    argv = ["--num-examples", "300", "--launcher", "submitit", "--submitit.cluster", "local",
            "--out", str(out)]  # fmt: skip
    assert scripts.exit_status("recipes/token_pvr.py", *argv) == 2
    assert "this command trains one run" in capsys.readouterr().err
    assert not out.exists()
    argv = ["--sizes", "1000", "--launcher", "ray", "--submitit.folder", "x", "--out", str(out)]
    assert scripts.exit_status("recipes/token_sweep.py", *argv) == 2
    assert "--submitit.folder is a flag of --launcher submitit" in capsys.readouterr().err


def test_dry_run_prints_steps_and_time_from_the_measured_engine(tmp_path, capsys, monkeypatch):
    """The cost is the grid's steps times the fastest engine's measured ms/step for each model
    on this machine (the engine cache), and on the GPU figure recorded for paper widths."""
    cache = tmp_path / "engines.json"
    key = calibration.machine_key(calibration.machine())
    out = tmp_path / "grid"
    argv = [*GRID, "--seed", "0", "1", "2", "--num-examples", "3000", "--dry-run", "--out",
            str(out)]  # fmt: skip
    (run, *_) = scripts.load("recipes/token_pvr.py").COMMAND.parse_all(argv).runs()
    family = calibration.run_family(run)
    calibration.save(cache, {key: {family: {"ms_per_step": {"tensorflow": 50.0, "jax": 20.0}}}})
    monkeypatch.setenv("PVR_ENGINE_CACHE", str(cache))
    assert scripts.exit_status("recipes/token_pvr.py", *argv) == 0
    printed = capsys.readouterr().out
    # 3 runs x 2 epochs x 30 steps = 180 steps at 20 ms (JAX, the faster) = 3.6 s
    assert "3 of 3 runs to train, 180 training steps" in printed
    assert f"{family}: 3 runs, 180 steps; this machine 4 s" in printed
    assert family.startswith("mlp width 1 batch 100 | ")
    assert not out.exists()
    # The paper's Mixer at batch 1024: the H200's recorded 40,800 examples/s.
    mixer = ["--model", "mixer", "--width", "1", "--num-examples", "1000000", "--epochs", "200",
             "--seed", "0", "1", "--out", str(out)]  # fmt: skip
    runs = scripts.load("recipes/token_pvr.py").COMMAND.parse_all(mixer).runs()
    found = cost.estimate(runs)
    steps = 2 * 200 * 977
    assert found["steps"] == steps
    assert found["gpu_s"] == pytest.approx(steps * 1024 / 40_800)
    assert found["cpu_s"] is None  # no figure of the Mixer on this machine in this cache


def test_a_job_sets_back_what_ray_changes_and_names_its_runs(monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    job = jobs.job_of("recipes/token_pvr.py", ["--seed", "0"], ["a-run"], "ray")
    ray_env = {"OMP_NUM_THREADS": "1", "PATH": "/bin"}  # what a Ray worker has
    env = job.environment(ray_env, job_id="j1")
    assert "OMP_NUM_THREADS" not in env and env["PATH"] == "/bin"
    found = records.this_job(env)
    assert found["runs"] == ["a-run"] and found["launcher"] == "ray" and found["job"] == "j1"
    monkeypatch.setenv("OMP_NUM_THREADS", "4")  # the submitting shell's value comes back
    job = jobs.job_of("recipes/token_pvr.py", [], ["a-run"], "ray")
    assert job.environment(ray_env)["OMP_NUM_THREADS"] == "4"
    assert job.command()[-2:] == ["--launcher", "local"] and os.path.isabs(job.script)
    assert records.start_fields(env) == {"host": socket.gethostname(), "launcher": "ray",
                                         "job": "j1"}  # fmt: skip
    assert records.start_fields({}) == {"host": socket.gethostname()}


@pytest.mark.parametrize("text", ["{", "[]", '{"runs": "a"}', '{"runs": [1]}'])
def test_a_malformed_job_variable_is_one_line(text):
    from pvr_keras.errors import ConfigError

    with pytest.raises(ConfigError, match="PVR_LAUNCH_JOB must be a launched job's JSON"):
        records.this_job({records.JOB_ENV: text})


def test_the_jobs_file_is_read_as_untrusted(tmp_path):
    said = []
    path = tmp_path / "grid.json"
    assert driver.read_jobs(path, said.append) == []  # none yet
    good = {"job": "7", "runs": ["r1"], "launcher": "submitit", "cluster": "local"}
    bad = [{"job": 7, "runs": ["r"], "launcher": "x"}, {"job": "8", "runs": "r", "launcher": "x"},
           "text", {"job": "9", "runs": [["r"]], "launcher": "x"}]  # fmt: skip
    path.write_text(json.dumps({"format": driver.FORMAT, "jobs": [good, *bad]}))
    assert driver.read_jobs(path, said.append) == [good] and not said
    for text in ("[1, 2]", "{not json", json.dumps({"format": "other", "jobs": [good]}),
                 "[" * 10_000 + "]" * 10_000):  # fmt: skip
        path.write_text(text)
        assert driver.read_jobs(path, said.append) == []
        assert said.pop().startswith(f"warning: {path} ignored")
    path.unlink()
    os.mkfifo(path)  # a FIFO is never waited on
    assert driver.read_jobs(path, said.append) == [] and "ignored" in said.pop()
    path.unlink()
    (tmp_path / "elsewhere.json").write_text(json.dumps({"format": driver.FORMAT, "jobs": [good]}))
    path.symlink_to(tmp_path / "elsewhere.json")  # nor a link followed
    assert driver.read_jobs(path, said.append) == [] and "ignored" in said.pop()


def test_the_launcher_flags_show_in_every_grid_recipes_help():
    for recipe in ("token_pvr", "token_sweep", "fast_slow", "gotu", "boolean_holdout", "chain",
                   "train"):  # fmt: skip
        shown = subprocess.run(
            [sys.executable, f"recipes/{recipe}.py", "--help"], cwd=scripts.REPO,
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        for name in ("--launcher", "--submitit.cluster", "--submitit.detach", "--ray.address",
                     "--dry-run"):  # fmt: skip
            assert name in shown, (recipe, name)


def test_a_job_requeued_by_submitit_is_the_same_job():
    """At a time limit submitit requeues a job only if it is checkpointable: its checkpoint
    is the same job (its runs resume from their folders)."""
    job = jobs.job_of("recipes/token_pvr.py", ["--seed", "0"], ["a-run"], "submitit")
    again = job.checkpoint()
    assert again.function is job and again.args == () and again.kwargs == {}


def test_a_search_has_no_launcher_flags(capsys):
    """recipes/tune.py runs its trials through keras-tuner's workers: --launcher is no flag
    of it (refused, not ignored)."""
    assert scripts.exit_status("recipes/tune.py", "--launcher", "ray") == 2
    assert "unrecognized arguments: --launcher ray" in capsys.readouterr().err
