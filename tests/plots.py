"""What a test can check of a figure without looking at it."""

import numpy as np


def assert_plot(path, *, min_size=(200, 200), min_colours=3):
    """``path`` is a PNG that decodes to an image of at least ``min_size`` (width, height) with
    something drawn: at least ``min_colours`` distinct colours and no more than 99.5% of the
    pixels the background's. Returns the image (height, width, channels) in [0, 1].
    """
    import matplotlib.image

    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    image = matplotlib.image.imread(path)
    assert image.ndim == 3 and image.shape[2] in (3, 4), f"{path}: shape {image.shape}"
    height, width = image.shape[:2]
    assert width >= min_size[0] and height >= min_size[1], f"{path}: {width}x{height}"
    pixels = image.reshape(-1, image.shape[2])
    colours, counts = np.unique(pixels, axis=0, return_counts=True)
    assert len(colours) >= min_colours, f"{path}: {len(colours)} colours, nothing drawn"
    assert counts.max() <= 0.995 * len(pixels), f"{path}: almost all background"
    return image


def keep_figures(monkeypatch, module):
    """The figures ``module`` saves through its ``save_figure``, kept in a list to be read back
    (and still saved)."""
    figures = []
    save = module.save_figure

    def keep(fig, path, **kwargs):
        figures.append(fig)
        return save(fig, path, **kwargs)

    monkeypatch.setattr(module, "save_figure", keep)
    return figures
