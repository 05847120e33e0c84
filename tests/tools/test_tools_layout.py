"""tools/ holds four kinds of thing, one folder each, and tools/README.md names every tool
in its kind's section; tools import each other by module name, never by file path."""

import pathlib
import re

REPO = pathlib.Path(__file__).resolve().parents[2]
TOOLS = REPO / "tools"
KINDS = {  # folder -> the heading of its section in tools/README.md
    "": "## Tools for users: `tools/`",
    "generate": "## Generators of committed files: `tools/generate/`",
    "probes": "## Probes: `tools/probes/`",
    "studies": "## Study drivers: `tools/studies/`",
}


def _sections(text):
    """{heading: the section's text} of a Markdown page's ``## `` sections."""
    parts = re.split(r"^(## .*)$", text, flags=re.M)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts), 2)}


def test_every_tool_lies_in_a_kind_and_is_named_in_its_section():
    sections = _sections((TOOLS / "README.md").read_text())
    assert set(KINDS.values()) <= set(sections), sorted(sections)
    folders = {p.name for p in TOOLS.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert folders == {k for k in KINDS if k}, "tools/ has a folder of no kind"
    for folder, heading in KINDS.items():
        here = TOOLS / folder
        scripts = sorted(p.name for p in here.iterdir() if p.suffix in (".py", ".sh"))
        assert scripts, folder
        for name in scripts:
            assert f"`{name}`" in sections[heading], f"tools/{folder}/{name} not in {heading}"
        for other, other_heading in KINDS.items():
            if other != folder:
                named = set(re.findall(r"`([\w.]+\.(?:py|sh))`", sections[other_heading]))
                assert not named & set(scripts), (folder, other, named & set(scripts))


def test_no_tool_imports_another_by_file_path():
    for path in sorted(TOOLS.rglob("*.py")):
        text = path.read_text()
        assert "spec_from_file_location" not in text, path
        assert not re.search(r"sys\.path\.(insert|append)", text), path
