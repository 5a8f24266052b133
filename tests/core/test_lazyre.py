"""Module-level patterns compile on first use and then behave exactly like ``re`` patterns."""

from __future__ import annotations

import pickle
import re

from spikelint.util.lazyre import LazyRegex
from spikelint.util.lazyre import lazy_regex


def test_not_compiled_until_used() -> None:
    pattern = lazy_regex(r"(?P<key>\w+)=(\d+)")
    assert isinstance(pattern, LazyRegex)
    assert "_compiled" not in vars(pattern)
    assert pattern.search("a b=12").group("key") == "b"
    assert isinstance(vars(pattern)["_compiled"], re.Pattern)


def test_every_method_and_attribute_matches_re() -> None:
    source, flags = r"(a)(b)?", re.IGNORECASE
    lazy, real = lazy_regex(source, flags), re.compile(source, flags)
    text = "xAbyaz"
    assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in real.finditer(text)]
    assert lazy.findall(text) == real.findall(text)
    assert lazy.sub("-", text) == real.sub("-", text)
    assert lazy.subn("-", text) == real.subn("-", text)
    assert lazy.split(text) == real.split(text)
    assert lazy.match("ab") is not None and lazy.fullmatch("ab") is not None
    assert (lazy.pattern, lazy.flags, lazy.groups) == (real.pattern, real.flags, real.groups)


def test_bad_pattern_fails_on_first_use() -> None:
    pattern = lazy_regex("(")
    try:
        pattern.search("x")
    except re.error:
        pass
    else:  # pragma: no cover - the assertion explains
        raise AssertionError("an invalid pattern must raise re.error when used")


def test_pickles_as_its_source() -> None:
    pattern = lazy_regex(r"\d+")
    pattern.search("1")
    copy = pickle.loads(pickle.dumps(pattern))
    assert copy.findall("a1b22") == ["1", "22"]


def test_lint_import_compiles_few_patterns() -> None:
    """The lint path's module-level patterns are lazy ones."""
    import spikelint.checks.secrets.checks  # noqa: F401 - imported for its module-level patterns
    from spikelint.secrets import context

    assert isinstance(context._SEQUENTIAL_FAKE, LazyRegex)
