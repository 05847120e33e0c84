"""Fixtures shared by the benchmark tests."""

import pytest


@pytest.fixture
def no_work(monkeypatch):
    """Export writers that fail the test if an export starts writing."""
    from pvr_keras.benchmarks import export

    def work(source, path):
        raise AssertionError(f"the export started writing {path}")

    for fmt in export.WRITERS:
        monkeypatch.setitem(export.WRITERS, fmt, work)
