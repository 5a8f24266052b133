"""JSON Schema violations as messages that name the parameter to fix and what it accepts.

``jsonschema``'s own messages repeat the whole offending value (which may be a secret) and
speak of instances; someone fixing a config needs "batch_size must be an integer ≥ 1, got
'4' (a string)" at the line of ``batch_size``.  SPK601, ``precheck`` and ``verify-run`` share
this module so the three say the same thing about the same mistake.

Integers are strict: ``1.0`` and ``true`` are not integers (JSON Schema would accept
``1.0``, but the program reading the config gets a float).
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any
from typing import Iterator
from typing import NamedTuple

from spikelint.model import Located
from spikelint.model import Node
from spikelint.secrets.shown_values import shown

VALUE = "value"  # the value at ``path`` is wrong: point at its key (or the item)
KEY = "key"  # ``key`` of the object at ``path`` is not allowed: point at that key
OBJECT = "object"  # ``key`` is missing from the object at ``path``: point at the object

JsonPath = tuple[str | int, ...]


class SchemaUnusable(Exception):
    """The schema itself is not valid JSON Schema, or cannot be applied (unresolvable ``$ref``)."""


class Violation(NamedTuple):
    path: JsonPath
    key: str | None
    where: str
    parameter: str
    message: str


def _is_integer(checker: Any, instance: Any) -> bool:
    return isinstance(instance, int) and not isinstance(instance, bool)


@lru_cache(maxsize=None)
def _strict(base: Any) -> Any:
    import jsonschema

    return jsonschema.validators.extend(base, type_checker=base.TYPE_CHECKER.redefine("integer", _is_integer))


@lru_cache(maxsize=128)
def _validator_from_text(text: str) -> Any:
    import jsonschema

    schema = json.loads(text)
    base = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        base.check_schema(schema)
    except jsonschema.exceptions.SchemaError as error:
        where = "/".join(str(part) for part in error.absolute_path) or "top level"
        raise SchemaUnusable(f"not a valid JSON Schema ({where}: {error.message})") from None
    return _strict(base)(schema, format_checker=base.FORMAT_CHECKER)


def validator(schema: Any) -> Any:
    """A (cached) strict validator for ``schema``; raises :class:`SchemaUnusable`."""
    if not isinstance(schema, (dict, bool)):
        raise SchemaUnusable("a JSON Schema must be an object")
    try:
        text = json.dumps(schema)
    except (TypeError, ValueError) as error:
        raise SchemaUnusable(f"the schema cannot be serialised: {error}") from None
    return _validator_from_text(text)


def violations(schema: Any, data: Any, *, root: str = "the config", subject: str = "the schema") -> list[Violation]:
    """Every violation of ``schema`` by ``data``, one per offending place, in no particular order.

    ``root`` names the whole document in messages; ``subject`` names the schema
    ("the contract allows only …").
    """
    check = validator(schema)
    try:
        errors = list(check.iter_errors(data))
    except RecursionError:
        raise SchemaUnusable("the schema or the data nests too deeply to validate") from None
    except Exception as error:  # noqa: BLE001 - referencing errors have no public common base
        raise SchemaUnusable(f"the schema cannot be applied: {error}") from None
    found: dict[tuple[JsonPath, str | None, str], Violation] = {}
    for schema_error in errors:
        for violation in _from_error(schema_error, root, subject, data):
            found.setdefault((violation.path, violation.key, violation.where), violation)
    return list(found.values())


def parameter_name(path: JsonPath, root: str = "the config") -> str:
    """``("optimizer", "lr")`` -> ``optimizer.lr``; ``("layers", 2)`` -> ``layers[2]``."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or root


def _forbidden_key(error: Any, data: Any) -> str | None:
    """The key a ``false`` property schema rejected (``jsonschema`` reports the object's path only)."""
    if not error.relative_schema_path or error.relative_schema_path[-1] != "properties":
        return None
    owner = data
    for step in error.absolute_path:
        try:
            owner = owner[step]
        except (KeyError, IndexError, TypeError):
            return None
    if not isinstance(owner, dict):
        return None
    keys = [key for key, value in owner.items() if value is error.instance]
    return keys[0] if keys else None


def _from_error(error: Any, root: str, subject: str, data: Any = None) -> Iterator[Violation]:
    path: JsonPath = tuple(error.absolute_path)
    instance = error.instance
    schema = error.schema if isinstance(error.schema, dict) else {}
    keyword = error.validator
    where_text = f" in '{parameter_name(path)}'" if path else ""
    if "propertyNames" in error.relative_schema_path and isinstance(instance, str):
        names = schema if "propertyNames" not in schema else schema["propertyNames"]
        yield Violation(path, instance, KEY, parameter_name(path + (instance,)),
                        f"key {instance!r}{where_text} is not allowed: keys must be {expected(names)}")
        return
    if keyword in ("additionalProperties", "unevaluatedProperties") and isinstance(instance, dict):
        allowed = _allowed_keys(schema)
        for key in _unexpected_keys(schema, instance):
            yield Violation(path, key, KEY, parameter_name(path + (key,)),
                            f"unknown key {key!r}: {_allowed_text(allowed, path, subject)}")
        return
    if keyword == "required" and isinstance(instance, dict):
        properties = schema.get("properties", {}) if isinstance(schema.get("properties"), dict) else {}
        for key in error.validator_value:
            if isinstance(key, str) and key not in instance:
                hint = f" ({expected(properties[key])})" if key in properties else ""
                yield Violation(path, key, OBJECT, parameter_name(path + (key,)),
                                f"missing required key {key!r}{where_text}{hint}")
        return
    if keyword == "dependentRequired" and isinstance(instance, dict):
        for present, needed in error.validator_value.items():
            if present in instance:
                for key in needed:
                    if key not in instance:
                        yield Violation(path, key, OBJECT, parameter_name(path + (key,)),
                                        f"missing key {key!r}{where_text}: it is required when {present!r} is set")
        return
    if keyword is None:  # a `false` schema: the key may not be there at all
        forbidden = _forbidden_key(error, data)
        if forbidden is not None:
            yield Violation(path, forbidden, KEY, parameter_name(path + (forbidden,)),
                            f"key {forbidden!r}{where_text} is not allowed")
            return
    name = parameter_name(path, root)
    last_key = path[-1] if path and isinstance(path[-1], str) else None
    yield Violation(path, None, VALUE, name, _value_message(keyword, error, schema, name, instance, last_key, subject))


def _value_message(keyword: str | None, error: Any, schema: dict[str, Any], name: str, instance: Any,
                   key: str | None, subject: str) -> str:
    value = error.validator_value
    if keyword in ("minProperties", "maxProperties") and isinstance(instance, dict):
        bound = "at least" if keyword == "minProperties" else "at most"
        return f"{name} must have {bound} {value} key{'s' if value != 1 else ''}, it has {len(instance)}"
    if keyword in ("minItems", "maxItems") and isinstance(instance, list):
        bound = "at least" if keyword == "minItems" else "at most"
        return f"{name} must have {bound} {value} item{'s' if value != 1 else ''}, it has {len(instance)}"
    if keyword == "uniqueItems":
        return f"{name} must not repeat items"
    if keyword == "contains":
        return f"{name} must contain an item that is {expected(value)}"
    if keyword == "not":
        return f"{name} has a value that {subject} forbids, got {shown(instance, key)}"
    return f"{name} must be {expected(schema)}, got {shown(instance, key)}"


def _allowed_keys(schema: dict[str, Any]) -> list[str]:
    properties = schema.get("properties")
    return list(properties) if isinstance(properties, dict) else []


def _unexpected_keys(schema: dict[str, Any], instance: dict[str, Any]) -> list[str]:
    import re

    allowed = set(_allowed_keys(schema))
    patterns = []
    for pattern in (schema.get("patternProperties") or {}):
        try:
            patterns.append(re.compile(pattern))
        except re.error:
            continue
    return [key for key in instance if key not in allowed and not any(p.search(key) for p in patterns)]


def _allowed_text(allowed: list[str], path: JsonPath, subject: str) -> str:
    owner = subject if not path else f"'{parameter_name(path)}'"
    if not allowed:
        return f"{owner} allows no keys here"
    return f"{owner} allows only {', '.join(allowed)}"


# --------------------------------------------------------------------------- describing a schema


def _plain(value: Any) -> str:
    if isinstance(value, str):
        return value if value and value.strip() == value else repr(value)
    return json.dumps(value)


def _either(options: list[str]) -> str:
    unique = list(dict.fromkeys(options))
    if len(unique) == 1:
        return unique[0]
    if len(unique) == 2:
        return f"{unique[0]} or {unique[1]}"
    return f"one of {', '.join(unique)}"


TYPE_WORDS = {"integer": "an integer", "number": "a number", "string": "a string", "boolean": "true or false",
              "null": "null", "array": "a list", "object": "a mapping"}


def expected(schema: Any) -> str:
    """What a schema accepts, in words: ``an integer ≥ 1``, ``cpu or cuda``, ``the integer 1``."""
    if schema is True or schema == {}:
        return "any value"
    if schema is False:
        return "absent"
    if not isinstance(schema, dict):
        return "a value the schema accepts"
    if "const" in schema:
        const = schema["const"]
        kind = "integer" if isinstance(const, int) and not isinstance(const, bool) else None
        return f"the integer {const}" if kind else _plain(const)
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return _either([_plain(value) for value in schema["enum"]])
    alternatives = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(alternatives, list) and alternatives:
        return " or ".join(dict.fromkeys(expected(option) for option in alternatives))
    types = schema.get("type")
    if isinstance(types, str):
        types = [types]
    if not isinstance(types, list) or not types:
        types = _implied_types(schema)
    if not types:
        description = schema.get("description")
        return str(description) if isinstance(description, str) and description else "a value the schema accepts"
    return " or ".join(_typed(str(kind), schema) for kind in types)


def _implied_types(schema: dict[str, Any]) -> list[str]:
    if any(word in schema for word in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")):
        return ["number"]
    if any(word in schema for word in ("minLength", "maxLength", "pattern", "format")):
        return ["string"]
    if any(word in schema for word in ("properties", "required", "additionalProperties")):
        return ["object"]
    if any(word in schema for word in ("items", "minItems", "maxItems")):
        return ["array"]
    return []


def _typed(kind: str, schema: dict[str, Any]) -> str:
    base = TYPE_WORDS.get(kind, f"a {kind}")
    if kind in ("integer", "number"):
        return base + _bounds(schema)
    if kind == "string":
        return _string(schema)
    if kind == "array" and isinstance(schema.get("items"), dict) and schema["items"]:
        return f"a list of {_plural(expected(schema['items']))}"
    return base


def _plural(text: str) -> str:
    for article in ("an ", "a "):
        if text.startswith(article):
            return text[len(article):].replace("string", "strings", 1).replace("integer", "integers", 1) \
                .replace("number", "numbers", 1).replace("mapping", "mappings", 1)
    return text


def _bounds(schema: dict[str, Any]) -> str:
    low = schema.get("minimum")
    high = schema.get("maximum")
    words = []
    if low is not None and high is not None:
        words.append(f" between {low} and {high}")
    elif low is not None:
        words.append(f" ≥ {low}")
    elif high is not None:
        words.append(f" ≤ {high}")
    if schema.get("exclusiveMinimum") is not None:
        words.append(f" > {schema['exclusiveMinimum']}")
    if schema.get("exclusiveMaximum") is not None:
        words.append(f" < {schema['exclusiveMaximum']}")
    if schema.get("multipleOf") is not None:
        words.append(f", a multiple of {schema['multipleOf']}")
    return "".join(words)


def _string(schema: dict[str, Any]) -> str:
    low = schema.get("minLength") or 0
    pattern = schema.get("pattern")
    text = "a non-empty string" if low == 1 or pattern == "\\S" else "a string"
    if isinstance(low, int) and low > 1:
        text = f"a string of at least {low} characters"
    if schema.get("maxLength") is not None:
        text += f" of at most {schema['maxLength']} characters"
    if isinstance(pattern, str) and pattern != "\\S":
        text += f" matching {pattern}"
    if isinstance(schema.get("format"), str):
        text += f" ({schema['format']})"
    return text


# --------------------------------------------------------------------------- positions


def locate(root: Node, violation: Violation) -> Located:
    """Where a violation is written in the positioned tree ``root``."""
    if violation.where == KEY and violation.key is not None:
        owner = _deepest(root, violation.path)
        place = owner.key_at(violation.key) if owner.kind == "map" else None
        if place is not None:
            return place
        return _anchor(root, violation.path)
    return _anchor(root, violation.path)


def _deepest(root: Node, path: JsonPath) -> Node:
    node = root
    for step in path:
        child = node.get(step)
        if child is None:
            break
        node = child
    return node


def _anchor(root: Node, path: JsonPath) -> Located:
    """A value's key when it sits in a mapping (``batch_size: "4"`` -> the key), else the node itself."""
    for depth in range(len(path), 0, -1):
        parent = root.get(*path[: depth - 1])
        node = root.get(*path[:depth])
        if parent is None or node is None:
            continue
        step = path[depth - 1]
        if parent.kind == "map":
            key = parent.key_at(str(step))
            if key is not None:
                return Located(key.value, key.line, key.column, node.end_line, node.end_column)
        return Located(None, node.line, node.column, node.end_line, node.end_column)
    return Located(None, root.line, root.column, root.end_line, root.end_column)
