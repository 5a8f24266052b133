"""Notebooks as repositories keep them: nbformat 3 worksheets, structured JSON outputs, odd shapes."""

from __future__ import annotations

import json

from spikelint.documents.jsondoc import parse_json
from spikelint.documents.notebook import read_notebook
from spikelint.engine import lint_snippet

HF_TOKEN = "hf_" + "eyjcnUuFzFt44ekXQzQPepyVSaid8m1iQR"

V3 = {
    "metadata": {"name": "old"},
    "nbformat": 3,
    "nbformat_minor": 0,
    "worksheets": [{"cells": [
        {"cell_type": "markdown", "source": ["# Old notebook"]},
        {"cell_type": "code", "language": "python", "prompt_number": 1,
         "input": ["import os\n", "os.environ['HF_TOKEN']"],
         "outputs": [{"output_type": "pyout", "prompt_number": 1, "metadata": {}, "text": [f"'{HF_TOKEN}'"]}]},
        {"cell_type": "code", "input": ["1/0"], "outputs": [
            {"output_type": "pyerr", "ename": "ZeroDivisionError", "evalue": "division by zero", "traceback": []}]},
    ]}],
}


def test_nbformat_3_cells_outputs_and_types() -> None:
    notebook = read_notebook(parse_json(json.dumps(V3, indent=1)))
    assert [cell.cell_type for cell in notebook.cells] == ["markdown", "code", "code"]
    assert [line.value for line in notebook.cells[1].source] == ["import os", "os.environ['HF_TOKEN']"]
    assert [output.output_type for output in notebook.cells[1].outputs + notebook.cells[2].outputs] == [
        "execute_result", "error"]
    assert notebook.cells[1].outputs[0].texts[0].value == f"'{HF_TOKEN}'"


def test_nbformat_3_is_linted_not_unparseable() -> None:
    text = json.dumps(V3, indent=1)
    rules = sorted((finding.line, finding.rule) for finding in lint_snippet("old.ipynb", text))
    output_line = next(number for number, line in enumerate(text.splitlines(), 1) if HF_TOKEN in line)
    first_output = next(number for number, line in enumerate(text.splitlines(), 1) if '"outputs"' in line) + 1
    assert rules == [(first_output, "SPK207"), (output_line, "SPK204")]


def test_json_output_data_is_scanned_string_by_string() -> None:
    notebook = {"cells": [{"cell_type": "code", "id": "a", "metadata": {}, "execution_count": 1, "source": ["cfg"],
                           "outputs": [{"output_type": "execute_result", "execution_count": 1, "metadata": {},
                                        "data": {"application/json": {"hub": {"token": HF_TOKEN}, "lr": 0.1}}}]}],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    text = json.dumps(notebook, indent=1)
    token_line = next(number for number, line in enumerate(text.splitlines(), 1) if HF_TOKEN in line)
    assert (token_line, "SPK204") in {(finding.line, finding.rule) for finding in lint_snippet("cfg.ipynb", text)}


def test_neither_cells_nor_worksheets_is_unparseable() -> None:
    findings = lint_snippet("odd.ipynb", '{"nbformat": 4, "metadata": {}}\n')
    assert [(finding.line, finding.rule) for finding in findings] == [(1, "SPK001")]


def _notebook(*sources: object) -> str:
    cells = [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source}
             for source in sources]
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)


def test_a_cell_source_that_is_not_text_is_spk001_and_the_other_cells_are_still_read() -> None:
    """``"source": 5`` (nbformat refuses it; Jupyter will not open the notebook) was skipped without a word."""
    text = _notebook(5, ["import os\n", 7], [f"token = '{HF_TOKEN}'\n"])
    found = sorted((finding.line, finding.rule, finding.message) for finding in lint_snippet("nb.ipynb", text))
    lines = text.splitlines()
    number = next(index for index, line in enumerate(lines, 1) if line.strip().startswith('"source": 5'))
    seven = next(index for index, line in enumerate(lines, 1) if line.strip() == "7")
    spk001 = [(line, message) for line, rule, message in found if rule == "SPK001"]
    assert [line for line, _ in spk001] == [number, seven]
    assert spk001[0][1].startswith("cell 1's source holds a number, not text: Jupyter will not open this notebook")
    assert any(rule == "SPK201" for _, rule, _ in found)  # the third cell is still read


def test_text_sources_are_no_spk001() -> None:
    """Near-misses as real notebooks hold them: one string, a list of strings, an empty list, an empty string."""
    text = _notebook("print(1)", ["import os\n", "print(os.name)"], [], "")
    assert [finding for finding in lint_snippet("nb.ipynb", text) if finding.rule == "SPK001"] == []
