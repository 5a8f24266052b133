"""SPK201 for typed tokens inside base64, hex or percent-encoded values, at the encoded value."""

from __future__ import annotations

from spikelint.checks.secrets.found import Found
from spikelint.secrets.encoded import encoded_secrets
from spikelint.secrets.text import LineIndex


def with_encoded(text: str, found: list[Found], first_line: int = 1) -> list[Found]:
    """``found`` with the typed tokens of the encoded values of ``text`` (a document's, or the lines a commit added
    from ``first_line`` on): a general finding of the encoded value itself (a high-entropy string) gives way to the
    token it holds; a token already reported on the line (a Kubernetes Secret's ``data``, decoded by its own reader)
    is not reported twice."""
    index: LineIndex | None = None  # built once, for the first encoded token
    kept = list(found)
    seen: set[tuple[int, str]] = set()
    for hit in encoded_secrets(text):
        index = index or LineIndex(text, first_line)
        line, column = index.position(hit.start)
        if (line, hit.secret.value) in seen:
            continue
        seen.add((line, hit.secret.value))
        encoded_value = text[hit.start:hit.end]
        on_line = [item for item in kept if item.line == line]
        if any(item.value == hit.secret.value or (item.rule != "SPK201" and _same(item.value, encoded_value))
               for item in on_line):
            continue  # the token, or the encoded value, is reported by a rule that reads this carrier
        kept = [item for item in kept if not (item.line == line and item.rule == "SPK201" and
                                              _same(item.value, encoded_value))]
        end_line, end_column = index.position(hit.end)
        kept.append(Found("SPK201", hit.secret.value, f"{hit.secret.type}, {hit.how}", line, column, end_line,
                          end_column))
    return kept


def _same(value: str, encoded: str) -> bool:
    """A finding's value is the encoded value (or its start: a reader may cut a long one)."""
    return len(value) >= 16 and encoded.startswith(value[:16])
