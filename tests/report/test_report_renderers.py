from __future__ import annotations

import copy
import subprocess
import sys

import pytest
from report_samples import REPO

from spikelint.model import Report
from spikelint.report import RENDERERS
from spikelint.report import RenderOptions
from spikelint.report import repo_path


def test_one_renderer_per_product_format():
    assert set(RENDERERS) == {"text", "json", "sarif", "junit", "gitlab", "github", "html"}


@pytest.mark.parametrize("name", sorted(RENDERERS))
def test_renderers_are_pure(name, sample_report):
    before = copy.deepcopy(sample_report)
    first = RENDERERS[name](sample_report, RenderOptions())
    assert isinstance(first, str)
    assert RENDERERS[name](sample_report, RenderOptions()) == first
    assert sample_report == before


@pytest.mark.parametrize("name", sorted(RENDERERS))
def test_renderers_handle_an_empty_report(name):
    assert isinstance(RENDERERS[name](Report([], 0), RenderOptions()), str)


def test_import_stays_light():
    code = (
        "import sys, spikelint.report;"
        "heavy = [m for m in ('xml.etree.ElementTree', 'jsonschema', 'yaml', 'ruamel', 'unicodedata') if m in sys.modules];"
        "print(','.join(heavy))"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert result.stdout.strip() == ""


@pytest.mark.parametrize("path, prefix, expected", [
    ("a/b.yaml", "", "a/b.yaml"),
    ("a/b.yaml", "sub/", "sub/a/b.yaml"),
    ("./a/../b.yaml", "", "b.yaml"),
    ("/abs/c.yaml", "sub", "abs/c.yaml"),
    ("C:\\x\\y.yaml", "", "x/y.yaml"),
    ("../up.yaml", "sub/dir/", "sub/up.yaml"),
])
def test_repo_path(path, prefix, expected):
    assert repo_path(path, prefix) == expected
