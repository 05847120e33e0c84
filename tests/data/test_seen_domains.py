"""Seen domains and Boolean functions on them: the domain rule against a point-by-point
reference, targets as text, and the three generators (NumPy, tf.data, JAX) drawing only seen
points, uniformly, identically."""

import itertools
import math

import numpy as np
import pytest

from pvr_keras import data
from pvr_keras.analysis import boolean_cube, fourier_coefficients
from pvr_keras.analysis.boolean import bits_of
from pvr_keras.data.numpy_examples import boolean_examples
from pvr_keras.errors import ConfigError
from pvr_keras.kinds.boolean import jax_data as device_boolean
from pvr_keras.kinds.gotu.targets import MAX_TARGET_VALUE
from pvr_keras.runconfig import Run
from pvr_keras.tasks import BooleanTask, Domain, FunctionTask, parse_target
from tests.stats import assert_uniform

DOMAINS = ["all", "frozen:2,5", "any_of:0,1", "any_of:1,3,6", "parity:0,1,2", "ball:3", "ball:0"]


def _seen_slow(text, point):
    """One point (a tuple of +1/-1) against the domain's definition, written out."""
    kind, _, rest = text.partition(":")
    bits = [int(b) for b in rest.split(",")] if rest and kind != "ball" else []
    if kind == "all":
        return True
    if kind == "frozen":
        return all(point[b] == 1 for b in bits)
    if kind == "any_of":
        return any(point[b] == 1 for b in bits)
    if kind == "parity":
        return math.prod(point[b] for b in bits) == 1
    return sum(v == -1 for v in point) <= int(rest)


@pytest.mark.parametrize("text", DOMAINS)
def test_domain_mask_and_seen_follow_the_definition(text):
    d = 7
    cube = boolean_cube(d)
    expected = np.array([_seen_slow(text, tuple(int(v) for v in row)) for row in cube])
    domain = Domain.parse(text)
    np.testing.assert_array_equal(domain.mask(d), expected)
    np.testing.assert_array_equal(domain.seen(cube), expected)
    assert domain.unseen_fraction(d) == pytest.approx(1 - expected.mean())


def test_domain_text_is_canonical():
    assert str(Domain.parse(" any_of:3, 1 ")) == "any_of:1,3"
    assert Domain.parse("parity:2,0") == Domain.parse("parity:0,2")
    a = Run.make("gotu", domain="any_of:1,0")
    assert a.run_id == Run.make("gotu", domain="any_of:0,1").run_id
    assert a.run_id != Run.make("gotu", domain="any_of:0,2").run_id


@pytest.mark.parametrize(
    "text, match",
    [
        ("nope:1", "a domain is all, frozen"),
        ("ball", "one radius"),
        ("ball:-1", "ball radius"),
        ("frozen:", "at least one bit"),
        ("any_of:0,0", "distinct"),
        ("any_of:a", "integers"),
        ("all:3", "takes nothing"),
        ("any_of:0,9", r"in 0\.\.7"),
        (3, "text"),
    ],
)
def test_bad_domains(text, match):
    with pytest.raises(ValueError, match=match):
        FunctionTask(num_bits=8, domain=text)


def test_a_domain_with_no_unseen_point_is_refused_where_one_is_needed():
    Domain.parse("ball:8").check(8)  # fine for training
    with pytest.raises(ValueError, match="no unseen point"):
        Domain.parse("ball:8").check(8, unseen=True)
    with pytest.raises(ValueError, match="at most 20 bits"):
        FunctionTask(num_bits=24, domain="ball:3")


def _evaluate_slow(text, point):
    """A polynomial target on one point, term by term."""
    total = 0.0
    for sign, coefficient, monomial in TERMS[text]:
        total += sign * coefficient * math.prod(point[b] for b in monomial)
    return total


TERMS = {
    "x0x1-1.25x1x2+1.5x2x0": [(1, 1.0, (0, 1)), (-1, 1.25, (1, 2)), (1, 1.5, (2, 0))],
    "0.5 + x3 - 2*x1x0": [(1, 0.5, ()), (1, 1.0, (3,)), (-1, 2.0, (1, 0))],
    "x0x1x2+x0x3x4x5": [(1, 1.0, (0, 1, 2)), (1, 1.0, (0, 3, 4, 5))],
    "1e-1x4 - x4": [(1, 0.1, (4,)), (-1, 1.0, (4,))],
}


@pytest.mark.parametrize("text", sorted(TERMS))
def test_polynomial_targets_evaluate_as_written(text):
    cube = boolean_cube(6)
    f = parse_target(text, 6)
    expected = [_evaluate_slow(text, tuple(int(v) for v in row)) for row in cube]
    np.testing.assert_allclose(f.label(cube), expected, rtol=1e-6)


def test_named_targets():
    cube = boolean_cube(5).astype(np.int64)
    cyclic = sum(cube[:, i] * cube[:, (i + 1) % 5] * cube[:, (i + 2) % 5] for i in range(5))
    np.testing.assert_array_equal(parse_target("cyclic:3", 5).label(cube), cyclic)
    np.testing.assert_array_equal(parse_target("parity:all", 5).label(cube), cube.prod(axis=1))
    majority = np.sign(cube[:, :3].sum(axis=1))
    np.testing.assert_array_equal(parse_target("majority:0,1,2", 5).label(cube), majority)
    staircase = cube[:, 0] + cube[:, 0] * cube[:, 1]
    np.testing.assert_array_equal(parse_target("staircase:2", 5).label(cube), staircase)


@pytest.mark.parametrize(
    "text, match",
    [
        ("x0x0", "each bit once"),
        ("x0*", "could not read"),
        ("x0++x1", "could not read"),
        ("3x", "could not read"),
        ("x9", r"in 0\.\.5"),
        ("", "text"),
        ("foo:1", "named target is one of"),
        ("cyclic:0", "K in 1..6"),
        ("cyclic:a", "one integer"),
        ("parity:0,0", "distinct"),
    ],
)
def test_bad_targets(text, match):
    with pytest.raises(ValueError, match=match):
        FunctionTask(num_bits=6, target=text)


def test_target_text_is_one_identity_whatever_its_spaces():
    assert FunctionTask(target="x0x1 - x2").target == "x0x1-x2"
    assert Run.make("gotu", target="x0x1 - x2").run_id == Run.make("gotu", target="x0x1-x2").run_id


SPELLINGS = {  # equal targets written differently: one canonical text, one run id
    "x0": [
        "+x0",
        "x00",
        "1x0",
        "1.0*x0",
        "x0+0x1",
        "2x0-x0",
        "x0 + 1e308x0 - 1e308x0",
        "staircase:1",
        "parity:0",
        "majority:0",
        "min:0",
        "max:0",
    ],
    "x0x1-1.25x1x2+1.5x0x2": [
        "x1x0 - 1.25x2x1 + 1.5x2x0",
        "+x0x1-1.250x1x2+0.75x0x2+0.75x2x0",
        "1.5x0x2 + x0x1 - 1.25x1x2",
        "-1.25x1x2+1.5x0x2+x0x1",
    ],
    "x0+x1": ["x1+x0", "x1 + x0 + 0x2"],
    "x0x1": ["x1x0", "parity:0,1", "parity:1,0", "parity:00,1"],
    "-0.5+2x0": ["2x0-0.5", "x0+x0-.5", "2e0x00 - 5e-1"],
    "0": ["x0-x0", "0.0"],
    "x0+x0x1": ["staircase:2", "x1x0+x0"],
    "staircase:3": ["x0x1x2+x0x1+x0", "x0+x0x1+x0x1x2"],
    "parity:all": ["parity:5,4,3,2,1,0", "x5x4x3x2x1x0", "x0x1x2x3x4x5"],
    "majority:all": ["majority:5,4,3,2,1,0"],
    "majority:0,1,2": [
        "majority:2,1,0",
        "0.5x0+0.5x1+0.5x2-0.5x0x1x2",
        "-0.5x2x1x0 + 0.5x2 + 0.5x1 + 0.5x0",
    ],
    "min:0,1": ["min:1,0", "-0.5+0.5x0+0.5x1+0.5x0x1", "0.5x1x0 + 0.5x1 + 0.5x0 - 0.5"],
    "cyclic:3": ["cyclic:03", "cyclic:+3", "x0x1x2+x1x2x3+x2x3x4+x3x4x5+x4x5x0+x5x0x1"],
}


@pytest.mark.parametrize("canonical", sorted(SPELLINGS))
def test_equal_targets_in_other_spellings_are_one_identity(canonical):
    cube = boolean_cube(6)
    assert FunctionTask(num_bits=6, target=canonical).target == canonical  # a fixed point
    run = Run.make("gotu", num_bits=6, target=canonical)
    for text in SPELLINGS[canonical]:
        assert FunctionTask(num_bits=6, target=text).target == canonical, text
        assert Run.make("gotu", num_bits=6, target=text).run_id == run.run_id
        np.testing.assert_array_equal(parse_target(text, 6).label(cube), run.task.label(cube))


def _named_targets(d):
    """Every named target on d bits, and each again as its Fourier expansion written out
    (from the cube, ``fourier_coefficients``) in a shuffled order of terms."""
    rng = np.random.default_rng(0)
    texts = [f"{name}:{k}" for name in ("staircase", "cyclic") for k in range(1, d + 1)]
    for size in range(1, d + 1):
        for bits in itertools.combinations(range(d), size):
            listed = ",".join(map(str, bits))
            texts += [f"{name}:{listed}" for name in ("parity", "majority", "min", "max")]
    out = list(texts)
    for text in texts:
        coefficients = fourier_coefficients(parse_target(text, d).label(boolean_cube(d)))
        terms = [(c, "".join(f"x{b}" for b in bits_of(s))) for s, c in enumerate(coefficients)
                 if c != 0]  # fmt: skip
        rng.shuffle(terms)
        out.append("+".join(f"{float(c)!r}{m}" for c, m in terms).replace("+-", "-"))
    return out


def test_targets_are_one_spelling_exactly_when_they_are_one_function():
    """Against the cube: two targets on d = 4 bits (every named one, and each written out as a
    polynomial in a shuffled order) have one canonical spelling exactly when their labels
    agree on every point, and that spelling is the shortest of the ones seen for it."""
    d, cube = 4, boolean_cube(4)
    by_labels = {}
    for text in _named_targets(d):
        labels = tuple(parse_target(text, d).label(cube).tolist())
        by_labels.setdefault(labels, set()).add(text)
    for labels, texts in by_labels.items():
        canonical = {FunctionTask(num_bits=d, target=t).target for t in texts}
        assert len(canonical) == 1, texts
        (spelling,) = canonical
        assert len(spelling) <= min(len(t) for t in texts), (spelling, texts)
        assert tuple(parse_target(spelling, d).label(cube).tolist()) == labels
    spellings = [FunctionTask(num_bits=d, target=min(ts)).target for ts in by_labels.values()]
    assert len(set(spellings)) == len(by_labels)  # other functions: other spellings


def test_other_spellings_of_the_committed_targets_keep_their_run_ids():
    """The committed gotu studies' targets are canonical as recorded; the same target written
    otherwise is the same run."""
    recorded = Run.make("gotu", target="x0x1-1.25x1x2+1.5x0x2", domain="parity:0,1,2")
    other = Run.make("gotu", target="1.5x2x0 + x1x0 - 1.25x2x1", domain="parity:0,1,2")
    assert other.run_id == recorded.run_id
    assert Run.make("gotu", target="parity:0,1").run_id == Run.make("gotu").run_id  # x0x1
    assert Run.make("gotu", target="x0x3x5x4 + x2x1x0", num_bits=18).task.target == (
        "x0x1x2+x0x3x4x5"
    )


@pytest.mark.parametrize(
    "text, match",
    [
        ("1e999x0", "finite numbers"),
        ("x0 - 1e999x1 + 1e999x1", "finite numbers"),
        ("1e308x0+1e308x0", "reaches inf"),  # the sum overflows
        ("1e19x0 + 1e19x1", "reaches 2e\\+19"),  # float32 labels: the squared error overflows
        ("1e19x0", "reaches 1e\\+19"),  # one square is finite, a batch's sum of them is not
        ("x0 + 2e9x1", "within \\+-1e\\+09"),
        ("x\u0663", "ASCII"),  # x3 in Arabic-Indic digits
        ("x\uff10", "ASCII"),  # x0 in full-width digits
        ("parity:\u0663", "ASCII"),
    ],
)
def test_a_target_with_unbounded_values_or_other_digits_is_refused(text, match):
    with pytest.raises(ValueError, match=match):
        FunctionTask(num_bits=6, target=text)
    with pytest.raises(ValueError, match=match):
        Run.make("gotu", num_bits=6, target=text)


def test_the_largest_target_value_keeps_a_float32_loss_finite():
    """The bound on a target's values (``MAX_TARGET_VALUE``): a prediction wrong by twice
    the largest label, squared and summed in float32 over 2**40 examples (a batch's mean, an
    epoch's running mean), stays finite; at 1e19 (a finite square) it does not. A target at
    the bound is accepted, one past it refused."""

    def worst_sum(value):
        error = np.float32(2) * np.float32(value)
        with np.errstate(over="ignore"):
            return error * error * np.float32(2**40)

    assert np.isfinite(worst_sum(MAX_TARGET_VALUE))
    assert not np.isfinite(worst_sum(1e19))
    FunctionTask(num_bits=6, target=f"{MAX_TARGET_VALUE / 2!r}x0 - {MAX_TARGET_VALUE / 2!r}x1")
    with pytest.raises(ValueError, match="float32"):
        FunctionTask(num_bits=6, target=f"{MAX_TARGET_VALUE!r}x0 + 1")


GENERATED = [
    FunctionTask(num_bits=9, target="x0x1-1.25x1x2+1.5x2x0", domain=domain)
    for domain in ("any_of:0,1", "parity:0,1,2", "ball:3", "frozen:2,5", "all")
] + [
    FunctionTask(num_bits=40, target="x0x1", domain="any_of:0,1,39"),  # past the low word
    BooleanTask(pointer_bits=2, window=2, domain="any_of:0,1"),
]


@pytest.mark.parametrize("task", GENERATED, ids=lambda t: f"{type(t).__name__}-{t.domain}")
def test_the_three_generators_make_the_same_seen_points(task):
    for split in ("train", "test"):
        x, y = data.boolean_arrays(task, 4000, seed=2, split=split)
        nx, ny = boolean_examples(task, np.arange(4000), seed=2, split=split)
        dx, dy = device_boolean.boolean_arrays(task, 4000, seed=2, split=split)
        np.testing.assert_array_equal(x, nx)
        np.testing.assert_array_equal(x, dx)
        np.testing.assert_array_equal(y, ny)
        np.testing.assert_array_equal(y, dy)
        np.testing.assert_array_equal(y, task.label(x))
        seen = Domain.parse(task.domain).seen(x)
        if split == "train":
            assert seen.all()
        elif task.domain != "all":  # the test split is the whole cube
            assert not seen.all()


@pytest.mark.parametrize("domain", ["any_of:0,1", "parity:0,1,2", "ball:2"])
def test_training_points_are_uniform_over_the_seen_points(domain):
    d = 6
    task = FunctionTask(num_bits=d, domain=domain)
    x, _ = data.boolean_arrays(task, 60_000, seed=7)
    rows = ((x < 0).astype(np.int64) << np.arange(d)).sum(axis=1)
    seen_rows = np.flatnonzero(Domain.parse(domain).mask(d))
    rank = np.searchsorted(seen_rows, rows)
    assert (seen_rows[rank] == rows).all()
    assert_uniform(rank, len(seen_rows), f"seen points of {domain}")


def test_the_free_bits_are_those_of_a_whole_cube_draw():
    """Only the domain's bits differ from the same index drawn on the whole cube."""
    shaped = FunctionTask(num_bits=12, domain="any_of:3,7")
    plain = FunctionTask(num_bits=12)
    x, _ = data.boolean_arrays(shaped, 2000, seed=1)
    z, _ = data.boolean_arrays(plain, 2000, seed=1)
    free = [j for j in range(12) if j not in (3, 7)]
    np.testing.assert_array_equal(x[:, free], z[:, free])
    assert not (x[:, [3, 7]] == z[:, [3, 7]]).all()


def test_draw_all_is_every_seen_point_once_then_the_whole_cube_in_the_test_split():
    task = FunctionTask(num_bits=8, target="x0x1", domain="any_of:0,1", draw="all")
    n = task.num_seen
    assert n == 192
    x, _ = data.boolean_arrays(task, n, seed=4)
    rows = ((x < 0).astype(np.int64) << np.arange(8)).sum(axis=1)
    np.testing.assert_array_equal(np.sort(rows), np.flatnonzero(Domain.parse("any_of:0,1").mask(8)))
    assert not (np.diff(rows) > 0).all()  # a random order, not the row order
    t, _ = data.boolean_arrays(task, 256, seed=4, split="test")
    rows = ((t < 0).astype(np.int64) << np.arange(8)).sum(axis=1)
    np.testing.assert_array_equal(np.sort(rows), np.arange(256))
    again, _ = device_boolean.boolean_arrays(task, 256, seed=4, split="test")
    np.testing.assert_array_equal(again, t)


@pytest.mark.parametrize(
    "sizes",
    [
        {"num_examples": 10, "test_examples": 100},  # the issue's
        {"num_examples": 10, "test_examples": 64},  # some seen points never trained on
        {"num_examples": 128, "test_examples": 64},  # every seen point twice an epoch
        {"num_examples": 64, "test_examples": 65},  # a cube point tested twice
    ],
)
def test_draw_all_needs_the_seen_points_and_at_most_the_cube(sizes):
    with pytest.raises(ConfigError, match="num_examples must be the 64 seen points"):
        Run.make("gotu", num_bits=6, draw="all", **sizes)
    with pytest.raises(ConfigError, match="the 48 seen points of 'any_of:0,1'"):
        Run.make("gotu", num_bits=6, draw="all", domain="any_of:0,1", num_examples=64)
    # every seen point once, and the cube (or a sample of it without repeats: the recipes' 8192)
    Run.make("gotu", num_bits=6, draw="all", num_examples=64, test_examples=64)
    Run.make("gotu", num_bits=6, draw="all", domain="any_of:0,1", num_examples=48,
             test_examples=32)  # fmt: skip
    Run.make("gotu", num_bits=6, **sizes)  # drawn uniformly: any sizes


def test_a_boolean_run_takes_a_holdout_or_a_domain_not_both():
    with pytest.raises(ValueError, match="not both"):
        Run.make("boolean", domain="any_of:0,1", holdout=1)
    with pytest.raises(ValueError, match="not a holdout"):
        Run.make("gotu", holdout=1)
    # an existing Boolean run keeps its id: the default domain is not in the identity
    assert "domain" not in Run.make("boolean").to_dict().get("identity", {})


def test_a_domain_flag_with_a_colon_is_not_taken_for_code(monkeypatch):
    from pvr_keras import references
    from pvr_keras.cli.flags import trust_given
    from pvr_keras.references import is_trusted

    monkeypatch.setattr(references, "_TRUSTED", set())
    trust_given({"domain": "any_of:0,1", "target": "parity:all"})  # no error: not code
    assert not is_trusted("parity:all")
    trust_given({"model": "parity:all"})  # a model field does name code
    assert is_trusted("parity:all")


def test_every_seen_pattern_is_reachable_on_wide_cubes():
    task = FunctionTask(num_bits=40, domain="parity:0,20,39")
    x, _ = data.boolean_arrays(task, 5000, seed=0)
    patterns = {tuple(r) for r in x[:, [0, 20, 39]].tolist()}
    expected = {p for p in itertools.product((1, -1), repeat=3) if math.prod(p) == 1}
    assert patterns == expected


def test_domains_are_flags_and_sweep_axes():
    from tests import scripts

    train = scripts.load("recipes/train.py")
    argv = ["--kind", "gotu", "--domain", "any_of:0,1", "ball:3", "--target", "parity:all"]
    runs = train.command("gotu").parse_all(argv).runs()
    assert [r.domain for r in runs] == ["any_of:0,1", "ball:3"]
    assert len({r.run_id for r in runs}) == 2
