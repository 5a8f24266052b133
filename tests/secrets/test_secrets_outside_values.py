"""A token in a YAML or TOML comment (or key) is reported: no tree keeps it as a value, so the text is
read for token shapes outside every value — as a Python comment always was; what a value holds stays
the tree's to judge with its key."""

from __future__ import annotations

import pytest
from fakes import Fakes

from spikelint.engine import lint_snippet

FAKE = Fakes(4242)
GITHUB = FAKE.github()
HF = FAKE.hf()


def spk201(filename: str, text: str) -> list[tuple[int, int]]:
    return [(finding.line, finding.column) for finding in lint_snippet(filename, text) if finding.rule == "SPK201"]


@pytest.mark.parametrize(("filename", "text", "where"), [
    ("deploy.yaml", f"# deploy token: {GITHUB}\nreplicas: 1\n", [(1, 17)]),
    ("job.yaml", f"apiVersion: v1  # {GITHUB}\nkind: ConfigMap\n", [(1, 19)]),
    ("values.yaml", f"image:\n  tag: 1.2.0\n  # pulled with {HF}\n", [(3, 17)]),
    ("pyproject.toml", f"[tool.x]\na = 1 # {GITHUB}\n", [(2, 9)]),
    ("anchors.yaml", f"- &token {GITHUB}\n", [(1, 10)]),  # an anchored value is a value: the tree reports it
])
def test_a_token_outside_every_value_is_reported_at_its_place(filename: str, text: str,
                                                              where: list[tuple[int, int]]) -> None:
    assert spk201(filename, text) == where


def test_a_token_in_a_value_is_reported_once_by_the_tree_not_again_by_the_text() -> None:
    text = f"key: |\n  # {GITHUB}\n  echo hi\nother: \"{HF}\"\n"
    findings = [finding for finding in lint_snippet("conf.yaml", text) if finding.rule == "SPK201"]
    assert [(finding.line, "under 'key'" in finding.message or "under 'other'" in finding.message)
            for finding in findings] == [(2, True), (4, True)]


@pytest.mark.parametrize("comment", [
    "# HF_TOKEN: hf_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx (put yours here)",  # a placeholder
    "# image pinned to sha256:3f2a9c1e8b7d6054a1f2e3d4c5b6a7980123456789abcdef0123456789abcdef",  # a digest
    "# created with: kubectl create secret generic hf --from-literal=HF_TOKEN=$HF_TOKEN",  # a variable
    "# tokens look like ghp_ followed by 36 characters; never paste one here",  # prose about the shape
    "# commit 9fceb02d0ae598e95dc970b74767f19372d61af8 fixed the resume",  # a git sha
])
def test_comments_real_repositories_hold_are_not_secrets(comment: str) -> None:
    assert spk201("config.yaml", f"{comment}\nlr: 0.001\n") == []
    assert spk201("config.toml", f"{comment}\nlr = 0.001\n") == []
