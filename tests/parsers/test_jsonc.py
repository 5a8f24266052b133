"""JSON with comments: VS Code and dev-container files are read in their own dialect, not reported as SPK001."""

from __future__ import annotations

import pytest

from spikelint.documents import is_jsonc
from spikelint.documents import parse_text
from spikelint.documents.jsondoc import JsonError
from spikelint.documents.jsondoc import parse_json
from spikelint.model import FileKind
from spikelint.model import SourceFile

DEVCONTAINER = """// Dev container for the training repo
{
  "name": "trainer-dev", /* the image below */
  "image": "mcr.microsoft.com/devcontainers/python:3.11",
  "runArgs": ["--gpus", "all",],
  // a URL is not a comment: "https://x//y"
  "postCreateCommand": "curl -sSf https://example.org//install.sh | sh",
}
"""


def test_comments_and_trailing_commas_are_read_with_positions() -> None:
    root = parse_json(DEVCONTAINER, comments=True)
    assert root.scalar("image") == "mcr.microsoft.com/devcontainers/python:3.11"
    assert root.scalar("postCreateCommand") == "curl -sSf https://example.org//install.sh | sh"
    assert [item.value for item in root.value["runArgs"].value] == ["--gpus", "all"]
    image = root.value["image"]
    assert (image.line, image.column) == (4, 12)


@pytest.mark.parametrize("text", ['{"a": 1,}', '{"a": 1} // done', '/* header */ [1, 2]'])
def test_strict_json_still_rejects_the_dialect(text: str) -> None:
    with pytest.raises(JsonError):
        parse_json(text)


@pytest.mark.parametrize("text", ['{"a": 1 /* open', '{"a": /x/}', '{,}', '[,]', '{"a": 1,,}'])
def test_malformed_jsonc_is_still_an_error(text: str) -> None:
    with pytest.raises(JsonError):
        parse_json(text, comments=True)


@pytest.mark.parametrize("path", [".devcontainer/devcontainer.json", ".devcontainer.json", "tsconfig.json",
                                  "tsconfig.build.json", "web/jsconfig.json", ".vscode/settings.json",
                                  ".vscode/launch.json", ".devcontainer/gpu/devcontainer.json",
                                  "contrib/vscode/settings.json"])
def test_jsonc_files_by_name(path: str) -> None:
    assert is_jsonc(path)


@pytest.mark.parametrize("path", ["config.json", "ds_config.json", "training_args.json", "devcontainer.json.bak",
                                  "runai/rest.json"])
def test_other_json_files_stay_strict(path: str) -> None:
    assert not is_jsonc(path)


def test_devcontainer_with_comments_is_not_unparseable() -> None:
    document = parse_text(SourceFile(".devcontainer/devcontainer.json", ".devcontainer/devcontainer.json",
                                     FileKind.JSON), DEVCONTAINER)
    assert document.problems == []
    assert document.trees[0].scalar("name") == "trainer-dev"


def test_comments_in_ordinary_json_are_still_spk001() -> None:
    document = parse_text(SourceFile("configs/ds.json", "configs/ds.json", FileKind.JSON), '{"a": 1 // no\n}')
    assert [(problem.rule, problem.line) for problem in document.problems] == [("SPK001", 1)]
