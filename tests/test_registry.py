"""pvr_keras.registry and pvr_keras.kinds: models and task kinds by name or by reference,
listed without importing a framework."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from pvr_keras import kinds, registry

TINY_NET = """
import keras

from pvr_keras.registry import register_model


@register_model("tiny_net", kind="token", widths={"hidden": 16})
def tiny_net(*, seq_len=11, vocab=10, num_classes=10, hidden=16):
    tokens = keras.Input((seq_len,), dtype="int32")
    x = keras.layers.Embedding(vocab, 4)(tokens)
    x = keras.layers.Flatten()(x)
    x = keras.layers.Dense(hidden, activation="relu", name="pre_logits")(x)
    return keras.Model(tokens, keras.layers.Dense(num_classes)(x))


def undeclared(**kwargs):
    return tiny_net(**kwargs)


NOT_A_BUILDER = 3
"""


def test_the_builtin_table_is_what_the_model_files_register():
    """Read from the decorators without importing a model file, the table equals what the
    files register when they are imported."""
    from pvr_keras import models  # noqa: F401  (imports every model file)

    builtin = registry.builtin_models()
    assert builtin == {name: registry._registered[name] for name in builtin}
    assert registry.model_names() == (
        "mlp", "mlp2x", "transformer", "mixer", "resnet18", "vgg11_bn", "image_sequence",
        "bits_mlp", "bits_transformer", "bits_mixer",
        "gotu_mlp", "random_features", "mean_field", "gotu_transformer",
    )  # fmt: skip
    assert registry.model_names("image") == ("resnet18", "vgg11_bn")
    assert registry.model_spec("transformer").width_multiple == 4


def test_listing_and_checking_runs_import_no_framework():
    script = textwrap.dedent(
        """
        import sys
        from pvr_keras import kinds, registry
        from pvr_keras.runconfig import Run
        names = registry.model_names("token")
        run = Run.make("token", model="mixer", width=0.25, window=2).replace(seed=3)
        block = Run.make("block", width=16)
        print(names, run.run_id, block.run_id, kinds.kind_names())
        print("loaded:", sorted(m for m in ("keras", "tensorflow", "jax") if m in sys.modules))
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, check=True)  # fmt: skip
    assert "loaded: []" in done.stdout, done.stdout
    assert "('token', 'block', 'sequence', 'boolean', 'gotu', 'chain')" in done.stdout


@pytest.fixture
def user_files(tmp_path, monkeypatch):
    """nets.py (a file) and my_pkg/nets.py (a module) holding the same builders."""
    (tmp_path / "nets.py").write_text(TINY_NET)
    (tmp_path / "my_pkg").mkdir()
    (tmp_path / "my_pkg" / "__init__.py").write_text("")
    (tmp_path / "my_pkg" / "nets.py").write_text(TINY_NET)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_builder_reference_by_file_or_module(user_files):
    for ref in ("nets.py:tiny_net", "./sub/../nets.py:tiny_net", "my_pkg.nets:tiny_net"):
        spec = registry.model_spec(ref)
        assert (spec.kind, spec.widths) == ("token", {"hidden": 16})  # read, not imported
        assert spec.name == registry.normalise_reference(ref)
        assert registry.builder(ref)(seq_len=5).input.shape == (None, 5)
    assert registry.model_spec("./nets.py:tiny_net").name == "nets.py:tiny_net"  # one identity
    undeclared = registry.model_spec("nets.py:undeclared")
    assert undeclared.kind is None and undeclared.widths is None  # accepted for any task
    assert registry.check_model("nets.py:undeclared", "image") == undeclared
    assert registry.width_kwargs("nets.py:tiny_net", 2) == {"hidden": 32}
    assert str(user_files) not in json.dumps(registry.model_spec("nets.py:tiny_net").name)


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("missing.py:tiny_net", "no such file 'missing.py'"),
        ("nets.py:nothing", "defines no 'nothing'"),
        ("no_such_pkg.nets:tiny_net", "cannot find module 'no_such_pkg.nets'"),
        ("nets.py:", "a reference is 'module:name'"),
        ("nets.py:1x", "a reference is 'module:name'"),
        ("resnet50", "model must be one of mlp, mlp2x"),
        ("", "model must be a name or a 'module:function' reference"),
    ],
)
def test_bad_references_say_what_is_wrong(user_files, ref, message):
    with pytest.raises(ValueError, match=message):
        registry.model_spec(ref)


def test_a_reference_of_another_kind_or_not_a_builder(user_files):
    with pytest.raises(ValueError, match="registered as a token model; this task needs image"):
        registry.check_model("nets.py:tiny_net", "image")
    with pytest.raises(ValueError, match="is not a model builder"):
        registry.builder("nets.py:NOT_A_BUILDER")
    (user_files / "shadow.py").write_text(
        "from pvr_keras.registry import register_model\n\n"
        "@register_model('mlp', kind='token')\ndef f(**kwargs):\n    pass\n"
    )
    with pytest.raises(ValueError, match="'mlp' is the library's, by pvr_keras.models.mlp:mlp"):
        registry.builder("shadow.py:f")
    (user_files / "broken.py").write_text("def f(:\n")
    with pytest.raises(ValueError, match="is not valid Python"):
        registry.model_spec("broken.py:f")


def test_a_file_loads_once_per_path(user_files):
    first = registry.load_module("nets.py")
    assert registry.load_module(os.path.join(".", "nets.py")) is first
    assert first.__name__.startswith("pvr_keras_user.nets_")


def test_kinds_by_name_or_reference(user_files):
    assert kinds.kind("token").task.__name__ == "TokenTask"
    assert kinds.kind("block").models == "image"
    with pytest.raises(ValueError, match="kind must be one of token, block, sequence"):
        kinds.kind("parity")
    (user_files / "kinds_file.py").write_text("from pvr_keras.kinds import kind\nALIAS = 3\n")
    with pytest.raises(ValueError, match="is not a TaskKind"):
        kinds.kind("kinds_file.py:ALIAS")
    with pytest.raises(ValueError, match="register_kind takes a TaskKind"):
        kinds.register_kind("token")


@pytest.mark.parametrize(
    "declaration",
    [
        '"x"',
        "",
        'kind="token", widths=5',
        'kind="token", params="a"',
        "kind=5",
        '"x", kind="token", name="y"',
        '"x", kind="token", width_multiple=0',
        '"x", kind="token", widths={"a": [1, -2]}',
        '"x", kind="token", colour=1',
        '"x", kind=KIND',
        '"x", *ARGS',
    ],  # fmt: skip
)
def test_a_declaration_register_model_would_refuse_is_one_valueerror(tmp_path, declaration):
    """A builder file's ``@register_model(...)`` is read from its source (for ``--help``,
    ``migrate_runs.py --check``, a run's check): what ``register_model`` would refuse, or
    anything not a literal, is one ``ValueError`` naming the file, not a KeyError or
    TypeError from deep inside."""
    nets = tmp_path / "nets.py"
    nets.write_text(
        "from pvr_keras.registry import register_model\n"
        f"@register_model({declaration})\n"
        "def net(seq_len=11, vocab=10, num_classes=10):\n    return None\n"
    )
    with pytest.raises(ValueError, match="register_model") as raised:
        registry.model_spec(f"{nets}:net")
    assert type(raised.value) is ValueError and "\n" not in str(raised.value)


def test_a_declaration_it_would_take_is_read():
    spec = registry.model_spec("mlp")
    assert spec.kind == "token" and spec.params and spec.widths
