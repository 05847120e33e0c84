"""The block-style visual PVR rule (Section 3.2, Figures 3 and 6, Appendix A of the paper).

An image is a ``grid`` x ``grid`` block of cells, numbered row-major from 0. Cell 0 (top left)
is the pointer and always holds an MNIST digit; the other ``grid * grid - 1`` cells are the
value cells and hold MNIST digits or CIFAR-10 images. The pointer digit names one value cell
and the label is the class of the image there (``window=1``).

Which cell a digit names: the digits 0-9 are split into ``grid * grid - 1`` contiguous ranges
in ``numpy.array_split`` order (the first ``10 % (grid*grid - 1)`` ranges get the extra
digit), the k-th range naming the k-th value cell in row-major order. For 2x2 this is Figure
3's rule: 0-3 -> top right, 4-6 -> bottom left, 7-9 -> bottom right. For 3x3: 0-1, 2-3, 4,
5, 6, 7, 8, 9. Grids above 3x3 have more value cells than digits, so some cells could never
be named; they are rejected.

``window`` w > 1 aggregates the classes of the named value cell and the w - 1 value cells
after it (row-major over the value cells, wrapping from the last to the first) with the
token-task aggregations (``mod_sum``, ``median``, ``maj_vote``, ``min``, ``max``).

Holdout (Figure 6, 2x2 only): the training set never has digits (classes) 1-3 top right, 4-6
bottom left, 7-9 or 0 bottom right; the test set has only those. The pointer is never held
out. For CIFAR-10 values the same class ids are held out.
"""

import dataclasses

import numpy as np

from pvr_keras.checks import check_int
from pvr_keras.fields import field
from pvr_keras.tasks.aggregations import AGGREGATIONS, Names, aggregate, check_aggregation
from pvr_keras.tasks.inputs import integer_tokens

SOURCES = ("mnist", "cifar10")
SOURCE_SHAPES = {"mnist": (28, 28, 1), "cifar10": (32, 32, 3)}
NUM_DIGITS = 10
NUM_CLASSES = 10
MAX_GRID = 3
# Figure 6: held-out classes of the top-right, bottom-left and bottom-right cells.
HOLDOUT_2X2 = ((1, 2, 3), (4, 5, 6), (7, 8, 9, 0))


@dataclasses.dataclass(frozen=True)
class BlockTask:
    """A block-style visual PVR task: the rule, its parameters and its NumPy reference labels.

    Args:
        grid: cells per side, 2 or 3 (the paper uses 2). The pointer digit (0-9) must be able
            to name every value cell, so ``grid * grid - 1 <= 10``.
        cell: side of a cell in pixels, at least the source image size (28 for MNIST, 32 for
            CIFAR-10); each image is jittered uniformly inside its cell. The paper uses 40.
        values: image source of the value cells, ``"mnist"`` or ``"cifar10"``. The pointer is
            always MNIST; with CIFAR-10 values it is replicated to 3 channels.
        window: number of value cells aggregated, ``1..grid*grid-1``.
        aggregation: one of ``mod_sum, median, maj_vote, min, max``, or a reference to an
            ``Aggregation`` of yours.

    Example:
        >>> task = BlockTask()                       # 2x2, 40-pixel cells, MNIST values
        >>> task.image_shape
        (80, 80, 1)
        >>> [int(c) for c in task.named_cell([0, 3, 4, 6, 7, 9])]
        [1, 1, 2, 2, 3, 3]
        >>> int(task.label(np.array([[5, 8, 2, 4]]))[0])   # pointer 5 -> bottom left
        2
    """

    grid: int = field("cells per side (2 or 3)", default=2)
    cell: int = field("side of a cell in pixels (the paper: 40)", default=40)
    values: str = field("images of the value cells", SOURCES, default="mnist")
    window: int = field("value cells aggregated (complexity + 1)", default=1)
    aggregation: str = field(
        "how the window's classes make the label (or 'my_aggs.py:NAME', an Aggregation of yours)",
        Names(AGGREGATIONS),
        default="mod_sum",
    )

    def __post_init__(self):
        check_int("grid", self.grid, 2)
        if self.grid > MAX_GRID:
            raise ValueError(
                f"grid must be 2 or 3: a pointer digit 0-9 can name at most 10 value cells, "
                f"and a {self.grid}x{self.grid} grid has {self.grid**2 - 1}; received "
                f"grid={self.grid}"
            )
        if self.values not in SOURCES:
            raise ValueError(
                f"values must be one of {', '.join(SOURCES)}; received {self.values!r}"
            )
        check_int("cell", self.cell, 1)
        if self.cell < self.source_size:
            raise ValueError(
                f"cell must be at least the {self.values} image size {self.source_size} (the "
                f"pointer is MNIST, 28); received cell={self.cell}"
            )
        check_int("window", self.window, 1)
        if self.window > self.num_value_cells:
            raise ValueError(
                f"window must be between 1 and the number of value cells "
                f"(grid*grid - 1 = {self.num_value_cells}); received {self.window}"
            )
        object.__setattr__(self, "aggregation", check_aggregation(self.aggregation))

    @property
    def num_cells(self):
        return self.grid * self.grid

    @property
    def num_value_cells(self):
        return self.num_cells - 1

    @property
    def num_classes(self):
        return NUM_CLASSES

    @property
    def pointer_source(self):
        """The pointer's image source: always ``"mnist"``."""
        return "mnist"

    @property
    def sources(self):
        """The image datasets this task draws from: pointer first, then the values'."""
        return tuple(dict.fromkeys((self.pointer_source, self.values)))

    @property
    def source_size(self):
        """Side of the largest source image used (28 MNIST, 32 CIFAR-10)."""
        return SOURCE_SHAPES[self.values][0]

    @property
    def channels(self):
        return SOURCE_SHAPES[self.values][2]

    @property
    def image_shape(self):
        """Shape of one composed image: (grid*cell, grid*cell, channels)."""
        side = self.grid * self.cell
        return (side, side, self.channels)

    @property
    def complexity(self):
        """The paper's complexity m (number of neighbours): ``window - 1``."""
        return self.window - 1

    @property
    def pointer_ranges(self):
        """The digits naming each value cell, in row-major order of the value cells.

        Returns a tuple of ``grid*grid - 1`` tuples, e.g. ``((0, 1, 2, 3), (4, 5, 6),
        (7, 8, 9))`` for 2x2.
        """
        parts = np.array_split(np.arange(NUM_DIGITS), self.num_value_cells)
        return tuple(tuple(int(d) for d in part) for part in parts)

    @property
    def digit_to_value_cell(self):
        """(10,) int64: the value-cell number (0-based among value cells) each digit names."""
        table = np.zeros(NUM_DIGITS, np.int64)
        for k, digits in enumerate(self.pointer_ranges):
            table[list(digits)] = k
        return table

    def named_cell(self, digits):
        """The cell (row-major over all cells, 1..grid*grid-1) each pointer digit names."""
        return self.digit_to_value_cell[self._check_digits(digits)] + 1

    def window_cells(self, digits):
        """Cells (row-major over all cells) aggregated for each pointer: (N,) -> (N, window).

        The named value cell and the ``window - 1`` value cells after it, wrapping cyclically
        over the value cells.
        """
        first = self.digit_to_value_cell[self._check_digits(digits)]
        return (first[:, None] + np.arange(self.window)) % self.num_value_cells + 1

    def label(self, cell_labels):
        """NumPy reference labels: (N, grid*grid) cell classes -> (N,) int64 labels.

        Column 0 is the pointer digit; column c the class of cell c (row-major). Classes
        that are not whole numbers (1.7, NaN) are refused.
        """
        cell_labels = integer_tokens(cell_labels, "cell classes")
        if cell_labels.ndim != 2 or cell_labels.shape[1] != self.num_cells:
            raise ValueError(
                f"cell_labels must have shape (N, grid*grid={self.num_cells}); received shape "
                f"{cell_labels.shape}"
            )
        if cell_labels.size and (cell_labels.min() < 0 or cell_labels.max() >= NUM_CLASSES):
            raise ValueError(
                f"cell classes must be in 0..{NUM_CLASSES - 1}; received values in "
                f"{cell_labels.min()}..{cell_labels.max()}"
            )
        cell_labels = cell_labels.astype(np.int64)
        window = np.take_along_axis(cell_labels, self.window_cells(cell_labels[:, 0]), axis=1)
        return aggregate(self.aggregation, window, NUM_CLASSES)

    def check_holdout(self, holdout):
        """Validates the holdout flag: ``True`` (Figure 6) is defined for 2x2 grids only."""
        if not isinstance(holdout, bool | np.bool_):
            raise ValueError(f"holdout must be True or False; received {holdout!r}")
        if holdout and self.grid != 2:
            raise ValueError(
                f"holdout (Figure 6) is defined for 2x2 grids only; received grid={self.grid}"
            )
        return bool(holdout)

    def holdout_classes(self):
        """Held-out classes of each value cell (row-major) for the Figure 6 holdout.

        Returns ``((1, 2, 3), (4, 5, 6), (7, 8, 9, 0))``: top right, bottom left, bottom right.
        """
        self.check_holdout(True)
        return HOLDOUT_2X2

    def _check_digits(self, digits):
        digits = np.asarray(digits)
        if digits.ndim != 1:
            raise ValueError(f"pointer digits must have shape (N,); received shape {digits.shape}")
        if digits.size and (digits.min() < 0 or digits.max() >= NUM_DIGITS):
            raise ValueError(
                f"pointer digits must be in 0..{NUM_DIGITS - 1}; received values in "
                f"{digits.min()}..{digits.max()}"
            )
        return digits.astype(np.int64)


__all__ = ["AGGREGATIONS", "SOURCES", "SOURCE_SHAPES", "BlockTask"]
