"""docs/python.md's tutorials run as written (issue 26 item 5): every ```python block, in
order, in one namespace, from a temporary directory."""

import os
import pathlib
import re

DOC = pathlib.Path(__file__).resolve().parents[3] / "docs" / "python.md"
DATA = os.environ.get("TESSERA_DATA") or str(pathlib.Path(__file__).resolve().parents[4] / "shared" / "data")


def test_python_md_tutorials_run(tmp_path, monkeypatch):
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    assert len(blocks) >= 6
    monkeypatch.chdir(tmp_path)
    ns = {"DATA": DATA}
    for i, block in enumerate(blocks):
        exec(compile(block, f"{DOC}:block{i + 1}", "exec"), ns)
