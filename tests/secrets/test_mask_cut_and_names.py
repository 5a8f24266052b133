"""Two ways a token reached the output past the final mask, found by a new user: a code frame cut to the
width of the terminal (or the HTML page) cut a token in two, and a token glued to a name (``job-ghp_….yaml``)
did not look like a token to the detectors. Neither may show more than four characters, in any format."""

from __future__ import annotations

from pathlib import Path

import pytest
from fakes import Fakes

from spikelint.cli import main
from spikelint.secrets.output_mask import mask_in_place
from spikelint.secrets.output_mask import mask_output

FAKE = Fakes(1203)
GITHUB = FAKE.github()
HF = FAKE.hf()
FORMATS = ("text", "json", "sarif", "junit", "gitlab", "github", "html")


def _pod(image_line: str) -> str:
    return f"apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: c\n    image: {image_line}\n"


def _repository(root: Path) -> Path:
    for padding in range(76, 128, 2):  # the token starts on either side of every cut the reporters make
        (root / f"cut-{padding}.yaml").write_text(_pod(f"reg.example.org/x:latest  # {'x' * padding} {GITHUB}"))
    (root / f"job-{GITHUB}.yaml").write_text(_pod("busybox:latest"))
    (root / f"clean_{HF}.yaml").write_text(_pod("busybox@sha256:" + "0" * 64))  # no finding: JUnit still names it
    return root


@pytest.fixture(scope="module")
def repository(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _repository(tmp_path_factory.mktemp("cut"))


@pytest.mark.parametrize("fmt", FORMATS)
def test_no_more_than_four_characters_of_a_cut_or_glued_token(fmt: str, repository: Path,
                                                              monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(repository)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    capsys.readouterr()
    assert main(["check", "--format", fmt, "--jobs", "1", "--ignore", "SPK201", "."]) == 1
    printed = capsys.readouterr().out
    assert "cut-100.yaml" in printed or fmt == "github"  # the report is about these files
    for token in (GITHUB, HF):
        assert token[:5] not in printed, f"{fmt} shows {token[:5]}…"


def test_a_masked_source_line_keeps_its_width_and_hides_the_token() -> None:
    line = f"    image: reg.example.org/x:latest  # note {GITHUB} and more"
    shown = mask_in_place(line)
    assert len(shown) == len(line) and GITHUB[:5] not in shown and shown.startswith("    image: reg.example.org/x:latest")
    assert mask_in_place("    image: busybox:1.36.1  # plain comment") == "    image: busybox:1.36.1  # plain comment"


@pytest.mark.parametrize("text", [
    "sklearn sk-learn hf_hub_download use_hf_transfer run-sk-proj- --model_name_or_path gpt2",
    "k8s/jobs/finetune-0.yaml:23:18: SPK101 [error] image 'harbor.example.org/ml/eval:latest'",
])
def test_names_and_words_that_share_a_prefix_are_left_as_written(text: str) -> None:
    assert mask_output(text) == text
