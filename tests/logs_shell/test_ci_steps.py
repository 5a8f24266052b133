"""CI steps read as shell: GitHub Actions `run:` with its runner's options, GitLab `script:` lines."""

from __future__ import annotations

from spikelint.documents.ci import ci_scripts
from spikelint.documents.ci import mask_expressions
from spikelint.engine import lint_snippet
from spikelint.model import Document
from spikelint.model import SourceFile
from spikelint.documents.yamldoc import parse_yaml

SELECT = {"select": ["SPK501", "SPK502"]}


def _findings(path: str, text: str) -> list[tuple[int, int, str]]:
    return [(f.line, f.column, f.rule) for f in lint_snippet(path, text, SELECT)]


WORKFLOW = """\
on: push
jobs:
  a:
    runs-on: ubuntu-latest
    steps:
      - run: curl -fsSL https://example.org/i.sh | bash
      - shell: bash
        run: curl -fsSL https://example.org/i.sh | bash
      - shell: bash -e {0}
        run: curl -fsSL https://example.org/i.sh | bash
      - shell: pwsh
        run: curl -fsSL https://example.org/i.sh | bash
      - run: |
          echo "${{ github.sha }}"
          python -u t.py 2>&1 | tee t.log
"""


def test_github_shell_options_decide_pipefail() -> None:
    assert _findings(".github/workflows/ci.yml", WORKFLOW) == [(6, 14, "SPK501"), (10, 14, "SPK501"),
                                                                (15, 11, "SPK501")]


def test_same_file_elsewhere_is_not_a_workflow() -> None:
    assert _findings("configs/ci.yml", WORKFLOW) == []


def test_gitlab_runner_sets_pipefail() -> None:
    text = "job:\n  script:\n    - curl -fsSL https://example.org/i.sh | bash\n    - python t.py | tee log\n"
    assert _findings(".gitlab-ci.yml", text) == [(4, 7, "SPK502")]


def test_scripts_are_exposed_with_positions() -> None:
    document = Document(SourceFile(".github/workflows/ci.yml", ".github/workflows/ci.yml", "yaml"), WORKFLOW)
    document.trees = parse_yaml(WORKFLOW)
    steps = list(ci_scripts(document))
    assert [step.system for step in steps] == ["github"] * 4
    assert steps[-1].script.pipelines[0].line == 14 and steps[-1].script.pipelines[0].column == 11


def test_expressions_are_masked_to_the_same_length() -> None:
    text = 'echo "${{ secrets.X }}" | tee\n${{ a\n}}'
    masked = mask_expressions(text)
    assert len(masked) == len(text) and "${{" not in masked and masked.count("\n") == 2
