"""Access to the shipped JSON Schemas (``schemas/``) and validation with ``jsonschema``."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any
from typing import Iterator

from spikelint.util.resources import data_folder


class SchemaError(Exception):
    """A schema file is missing or is not valid JSON Schema."""


NOT_READ = "schemas are read only from inside the project"  # every refusal says it


def schema_path(name: str) -> Path:
    """A shipped schema by its bare name (a name with a folder part never leaves ``schemas/``)."""
    return data_folder("schemas") / Path(name.replace("\\", "/")).name


def outside_reason(reference: str, candidate: str, root: str) -> str | None:
    """Why the schema file ``candidate`` (written ``reference``) is not read, or ``None`` when it may be.

    Schemas come from the project tree (``root``, links resolved) or the shipped ``schemas/``.
    """
    import os

    real, top = os.path.realpath(candidate), os.path.realpath(root)
    if real == top or real.startswith(top.rstrip(os.sep) + os.sep):
        return None
    what = "it is an absolute path outside the project" if os.path.isabs(reference) else \
        f"it resolves outside the project ({top})"
    return (f"{what}; {NOT_READ} (a path relative to the file) or by a "
            f"shipped schema name ({', '.join(shipped_schema_names()[:2])}, …)")


def shipped_schema_names() -> list[str]:
    return sorted(path.name for path in data_folder("schemas").glob("*.json"))


@lru_cache(maxsize=None)
def load_schema(path: str) -> dict[str, Any]:
    """A schema by shipped name or by file path."""
    candidate = Path(path)
    if not candidate.is_file():
        candidate = schema_path(path)  # a shipped name; never a path out of the shipped folder
    try:
        schema = json.loads(candidate.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise SchemaError(f"cannot load schema {path}: {error}") from None
    if not isinstance(schema, dict):
        raise SchemaError(f"schema {path} is not a JSON object")
    return schema


def validator_for(schema: dict[str, Any]) -> Any:
    import jsonschema

    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def iter_errors(schema_name: str, data: Any) -> Iterator[Any]:
    """``jsonschema`` errors, in document order."""
    validator = validator_for(load_schema(schema_name))
    yield from sorted(validator.iter_errors(data), key=lambda error: [str(p) for p in error.absolute_path])


def describe(error: Any) -> str:
    """A message that names the parameter to fix."""
    where = ".".join(str(part) for part in error.absolute_path)
    if error.validator == "additionalProperties":
        extra = sorted(set(error.instance) - set(error.schema.get("properties", {})))
        names = ", ".join(repr(name) for name in extra)
        prefix = f"{where}: " if where else ""
        return f"{prefix}unknown key {names}"
    if error.validator == "required":
        return f"{where + ': ' if where else ''}{error.message}"
    label = where or "configuration"
    return f"{label}: {error.message}"


def validation_errors(schema_name: str, data: Any) -> list[str]:
    return [describe(error) for error in remembered_errors(schema_name, data)]


def remembered_errors(schema_name: str, data: Any) -> list[Any]:
    """:func:`iter_errors`, except that a document found valid once is not validated again: importing ``jsonschema``
    costs ~80 ms, a third of a hook run on one file, for a configuration or rule file that rarely changes. The
    digest of the schema and the document is kept in the user's cache folder (``$XDG_CACHE_HOME/spikelint``)."""
    digest = _digest(schema_name, data)
    if digest is not None and _known_valid(digest):
        return []
    errors = list(iter_errors(schema_name, data))
    if not errors and digest is not None:
        _remember_valid(digest)
    return errors


def _digest(schema_name: str, data: Any) -> str | None:
    import hashlib

    try:
        schema = json.dumps(load_schema(schema_name), sort_keys=True)
        document = json.dumps(data, sort_keys=True, default=repr)
    except (TypeError, ValueError, SchemaError):
        return None
    return hashlib.sha256(f"{schema}\0{document}".encode()).hexdigest()


def _valid_folder() -> Path:
    import os

    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "spikelint" / "valid-documents"


def _known_valid(digest: str) -> bool:
    return (_valid_folder() / digest).is_file()


def _remember_valid(digest: str) -> None:
    """Best effort: a read-only or missing home only means the next run validates again."""
    try:
        folder = _valid_folder()
        folder.mkdir(parents=True, exist_ok=True)
        (folder / digest).touch()
    except OSError:
        pass
