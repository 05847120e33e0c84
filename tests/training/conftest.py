"""The uninterrupted token run that the order and resume tests compare against (one per
test session: ``resume_child.train`` in this process)."""

import pytest

from tests.training import resume_child
from tests.training.fingerprints import BatchLog, Progress


@pytest.fixture(scope="session")
def uninterrupted_run(tmp_path_factory):
    """(run folder, record, batches the train step consumed in order) of the whole run."""
    out = tmp_path_factory.mktemp("uninterrupted") / "run"
    log, progress = BatchLog(), Progress()
    record = resume_child.train(out, log, progress)
    assert record["status"] == "complete"
    assert progress.batches == len(log.batches) == resume_child.STEPS * resume_child.EPOCHS
    return out, record, log.batches
