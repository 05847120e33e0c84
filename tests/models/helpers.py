"""Parameter counts of the width-scaled CNNs, for the library's model tests (the shared model
test every builder passes is ``pvr_keras.testing.run_model_test``)."""

from pvr_keras.testing import count_trainable


def count_at_width(builder, kwargs, width):
    """Trainable parameters of ``builder(**kwargs, width=width)``, from narrow builds only.

    Every weight of a width-scaled CNN has (a constant, or one or two widths) elements, so the
    count is a quadratic in ``width``: the builds at widths 1, 2 and 3 fix it (Lagrange
    interpolation, in integers), and a fourth build (width 4) checks that it is one. The
    full-width VGG11-BN alone holds 128.8M weights, 10-20 s to build on two shared cores.
    """
    counts = {w: count_trainable(builder(**kwargs, width=w)) for w in (1, 2, 3, 4)}

    def quadratic(x):
        total = 0
        for a in (1, 2, 3):
            b, c = (w for w in (1, 2, 3) if w != a)
            numerator, denominator = (x - b) * (x - c), (a - b) * (a - c)
            assert (counts[a] * numerator) % denominator == 0
            total += counts[a] * numerator // denominator
        return total

    assert quadratic(4) == counts[4], "the parameter count is not a quadratic in width"
    return quadratic(width)
