"""The string helpers that stand in for pathlib on hot paths agree with pathlib, and the shared
syntax-tree walk agrees with ``ast.walk``."""

from __future__ import annotations

import ast
from pathlib import Path
from pathlib import PurePosixPath

import pytest

from spikelint.util.pathnames import base_name
from spikelint.util.pathnames import name_suffix
from spikelint.util.pytree import ast_nodes
from spikelint.util.pytree import child_nodes

PATHS = ["", ".", "..", "train.py", "configs/", "configs/.", "a/..", "/", "//", "/usr/bin/python3", "a//b",
         "./launch.sh", "a/./", ".bashrc", "ckpt/model.tar.gz", "$HOME/run.sh", "weights.", "C:\\x\\y.py"]


@pytest.mark.parametrize("path", PATHS)
def test_base_name_and_suffix_agree_with_pathlib(path: str) -> None:
    name = PurePosixPath(path).name
    assert base_name(path) == name
    assert name_suffix(name) == PurePosixPath(name).suffix


def test_the_shared_walk_is_ast_walk_and_is_kept_on_the_tree() -> None:
    source = Path(ast.__file__).read_text(encoding="utf-8")
    tree = ast.parse(source)
    assert ast_nodes(tree) == list(ast.walk(tree))
    assert ast_nodes(tree) is ast_nodes(tree)


def test_child_nodes_are_iter_child_nodes() -> None:
    tree = ast.parse(Path(ast.__file__).read_text(encoding="utf-8"))
    assert all(child_nodes(node) == list(ast.iter_child_nodes(node)) for node in ast.walk(tree))
