"""A configuration or rule file found valid once is not validated again (jsonschema's import is a third of a
hook run); an invalid one is validated every time, and a changed one is validated anew."""

from __future__ import annotations

from pathlib import Path

import pytest

from spikelint import schemas


def test_a_valid_document_is_remembered_and_an_invalid_one_never(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    name = "spikelint-config.schema.json"
    assert schemas.validation_errors(name, {"fail_on": "error"}) == []
    assert len(list((tmp_path / "spikelint" / "valid-documents").iterdir())) == 1
    assert schemas.validation_errors(name, {"fail_on": "eror"})  # invalid: reported, not remembered

    def no_validation(schema_name: str, data: object) -> list[object]:
        raise AssertionError("validated again")

    monkeypatch.setattr(schemas, "iter_errors", no_validation)
    assert schemas.validation_errors(name, {"fail_on": "error"}) == []  # remembered
    with pytest.raises(AssertionError, match="validated again"):
        schemas.validation_errors(name, {"fail_on": "warning"})  # another document: validated


def test_a_read_only_cache_folder_only_means_validating_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    assert schemas.validation_errors("spikelint-config.schema.json", {"fail_on": "error"}) == []
    assert schemas.validation_errors("spikelint-config.schema.json", {"fail_on": "eror"})
