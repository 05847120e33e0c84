"""The README is a front page of about two screens whose commands run as written, and every
page of the docs is reachable from it through links that resolve (files and anchors)."""

import collections
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]
README = REPO / "README.md"
MAX_LINES = 110  # two screens of about 55 lines
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _pages():
    """The Markdown pages of the docs (the study folders' own files are records)."""
    docs = REPO / "docs"
    found = []
    for path in sorted(docs.rglob("*.md")):
        parts = path.relative_to(docs).parts
        if not (len(parts) > 2 and parts[0] == "results"):
            found.append(path)
    return found


def _slug(heading):
    """GitHub's anchor of a heading: lower case, punctuation but ``-`` and ``_`` dropped,
    spaces to ``-``."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(path):
    return {_slug(line.lstrip("#")) for line in path.read_text().splitlines()
            if line.startswith("#")}  # fmt: skip


def _links(path):
    """(target path, anchor or None) of every relative link of a page, code blocks excluded."""
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)
    for target in LINK.findall(text):
        if re.match(r"^[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        yield (path.parent / file).resolve() if file else path.resolve(), anchor or None


def test_the_readme_fits_two_screens():
    lines = README.read_text().splitlines()
    assert len(lines) <= MAX_LINES, f"README.md has {len(lines)} lines (at most {MAX_LINES})"
    headings = [line for line in lines if line.startswith("## ")]
    for wanted in ("## What PVR is", "## Quick start", "## Three ways in",
                   "## Results against the paper"):  # fmt: skip
        assert wanted in headings


@pytest.mark.parametrize("page", [README, *_pages()], ids=lambda p: str(p.relative_to(REPO)))
def test_every_link_resolves(page):
    for target, anchor in _links(page):
        assert target.exists(), f"{page.relative_to(REPO)}: no {target}"
        if anchor is not None and target.suffix == ".md":
            assert anchor in _anchors(target), f"{page.relative_to(REPO)}: no #{anchor} in {target}"


def test_every_page_is_reachable_from_the_readme():
    seen, queue = {README.resolve()}, collections.deque([README.resolve()])
    while queue:
        page = queue.popleft()
        for target, _ in _links(page):
            if target.suffix == ".md" and target.is_file() and target not in seen:
                seen.add(target)
                queue.append(target)
    unreachable = [str(p.relative_to(REPO)) for p in _pages() if p.resolve() not in seen]
    assert not unreachable, f"not reachable from README.md: {unreachable}"


def _commands():
    """The README's shell lines that run a script of the repository."""
    for line in README.read_text().splitlines():
        line = line.strip().split("  #")[0].strip()
        found = re.search(r"python (\S+\.py)(.*)$", line)
        if found and not found.group(1).startswith("-"):
            yield found.group(1), found.group(2).split()


def test_the_readme_commands_name_scripts_that_exist():
    commands = list(_commands())
    assert len(commands) >= 5
    for script, _ in commands:
        assert (REPO / script).is_file(), script


def test_the_readme_sweep_command_runs_as_written():
    """The first recipe line of "Three ways in", sized without training (``--dry-run``)."""
    [(script, args)] = [c for c in _commands() if c[0] == "recipes/token_sweep.py"]
    done = subprocess.run([sys.executable, script, *args, "--dry-run"], cwd=REPO,
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "runs" in done.stdout


def test_the_readme_python_lines_do_what_they_say():
    from pvr_keras import benchmarks
    from pvr_keras.runconfig import Run

    text = README.read_text()
    assert 'Run.make("token", window=3, model="mixer")' in text
    run = Run.make("token", window=3, model="mixer")
    assert run.task.window == 3 and run.model == "mixer"
    assert 'benchmarks.source("token/w3", "train")' in text
    train = benchmarks.source("token/w3", "train")
    indices = np.array([5, 0, 7])
    batch = train[indices]  # one dict of arrays, row j = item indices[j]
    assert np.array_equal(batch["tokens"][1], train[0]["tokens"])
    assert batch["label"][2] == train[7]["label"] and len(train) > 7
