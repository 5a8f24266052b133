"""How a workload's ``--config`` path finds the scanned file it names."""

from __future__ import annotations

from spikelint.model import Document
from spikelint.model import SourceFile
from spikelint.discovery.project import Project


def chosen(reference: str, *paths: str) -> str | None:
    sources = [SourceFile(path, path, "yaml") for path in paths]
    found = Project(sources, {source.path: Document(source, "") for source in sources})
    document = found.find_config(reference)
    return None if document is None else document.path


def test_longest_path_tail_wins() -> None:
    assert chosen("/workspace/configs/ft.yaml", "configs/ft.yaml", "other/ft.yaml") == "configs/ft.yaml"


def test_a_distinctive_file_name_is_enough() -> None:
    assert chosen("/cfg/llama3_8b.toml", "train_configs/llama3_8b.toml") == "train_configs/llama3_8b.toml"


def test_a_common_file_name_alone_does_not_match() -> None:
    assert chosen("/etc/trainer/config.yaml", "conf/config.yaml") is None
    assert chosen("/cfg/sft.yaml", "a/sft.yaml", "b/sft.yaml") is None


def test_a_relative_reference_matches_by_its_whole_path() -> None:
    assert chosen("config.yaml", "conf/config.yaml") == "conf/config.yaml"
    assert chosen("conf/config.yaml", "conf/config.yaml", "config.yaml") == "conf/config.yaml"
