"""The README's Python examples run unchanged (so they cannot go stale)."""

import pathlib
import re

README = pathlib.Path(__file__).resolve().parents[3] / "README.md"


def python_blocks():
    text = README.read_text()
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_readme_has_python_examples():
    assert len(python_blocks()) >= 2


def test_readme_python_examples_run():
    for block in python_blocks():
        exec(compile(block, str(README), "exec"), {})
