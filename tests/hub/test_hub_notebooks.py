"""SPK105/SPK106 in notebooks: code cells read as Python (``!``/``%`` lines blanked), reported at the
line of the ``.ipynb`` file."""

from __future__ import annotations

import json

from tests.hub.conftest import SHA
from tests.hub.conftest import found
from tests.hub.conftest import lint


def notebook(*cells: tuple[str, list[str]]) -> str:
    """A notebook with one source line per JSON line (so a cell's line k sits at a known file line)."""
    return json.dumps({"cells": [{"cell_type": kind, "metadata": {}, "source": [line + "\n" for line in lines],
                                  **({"outputs": [], "execution_count": None} if kind == "code" else {})}
                                 for kind, lines in cells],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)


def line_of(text: str, needle: str) -> int:
    return next(number for number, line in enumerate(text.splitlines(), start=1) if needle in line)


def test_a_call_in_a_code_cell_fires_at_its_notebook_line() -> None:
    text = notebook(("code", ["!pip install -q transformers", "%matplotlib inline",
                              "from transformers import AutoModel",
                              'm = AutoModel.from_pretrained("acme-team/tiny-lm")']))
    (finding,) = lint("notebooks/finetune.ipynb", text)
    assert (finding.line, finding.rule) == (line_of(text, "acme-team/tiny-lm"), "SPK105")
    assert text.splitlines()[finding.line - 1][finding.column - 1:].startswith('\\"acme-team/tiny-lm')


def test_names_bound_in_an_earlier_cell_and_datasets() -> None:
    text = notebook(("code", ["from transformers import AutoModel", 'BASE = "acme-team/tiny-lm"']),
                    ("markdown", ['Not code: from_pretrained("acme-team/in-prose")']),
                    ("code", ["model = AutoModel.from_pretrained(BASE)", "from datasets import load_dataset",
                              'ds = load_dataset("acme-team/tickets")']))
    assert found("notebooks/finetune.ipynb", text) == {(line_of(text, "from_pretrained(BASE)"), "SPK105"),
                                                       (line_of(text, "load_dataset(\\\"acme"), "SPK105")}


def test_trust_remote_code_in_a_cell() -> None:
    text = notebook(("code", ["from transformers import AutoModel",
                              'm = AutoModel.from_pretrained("acme-team/m",',
                              "    trust_remote_code=True)"]))
    assert found("notebooks/finetune.ipynb", text) == {(line_of(text, "trust_remote_code"), "SPK106")}


def test_a_cell_that_does_not_parse_leaves_the_others() -> None:
    text = notebook(("code", ["def broken(:"]),
                    ("code", ["%%time", "from transformers import AutoModel",
                              'm = AutoModel.from_pretrained("acme-team/m")']))
    assert found("notebooks/finetune.ipynb", text) == {(line_of(text, "acme-team/m"), "SPK105")}


def test_notebook_near_misses() -> None:
    text = notebook(("code", ["from transformers import AutoModel",
                              f'm = AutoModel.from_pretrained("acme-team/m", revision="{SHA}")',
                              'n = AutoModel.from_pretrained("./checkpoints/final")']),
                    ("code", ["%%bash", 'python -c \'AutoModel.from_pretrained("acme-team/shell")\'']),
                    ("markdown", ['AutoModel.from_pretrained("acme-team/prose")']),
                    ("code", ['!huggingface-cli download acme-team/cli']))
    assert found("notebooks/finetune.ipynb", text) == set()
