"""Regular expressions compiled on first use.

spikelint defines about 190 patterns at module level, for file kinds and token shapes that a
given run mostly never meets: linting one Kubernetes file uses about 20 of them.  Compiling
all of them at import cost more than the linting itself (``sre_compile`` is pure Python), so
a module-level pattern is a :class:`LazyRegex`: it compiles on the first attribute access and
then holds the compiled pattern's bound methods, so a hot loop calls ``re``'s C methods
directly, with no wrapper in between.
"""

from __future__ import annotations

import re
from typing import Any
from typing import cast

# What a compiled pattern offers; copied onto the instance on first use.
_FORWARDED = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split", "scanner",
              "pattern", "flags", "groups", "groupindex")


class LazyRegex:
    """A ``re.Pattern`` stand-in that compiles itself the first time it is used."""

    def __init__(self, source: str, flags: int = 0) -> None:
        self._source = source
        self._flags = flags

    def compiled(self) -> re.Pattern[str]:
        """The compiled pattern (compiling it now if it was not yet)."""
        found = self.__dict__.get("_compiled")
        if found is None:
            found = re.compile(self._source, self._flags)
            self.__dict__["_compiled"] = found
            for name in _FORWARDED:
                self.__dict__[name] = getattr(found, name)
        return cast("re.Pattern[str]", found)

    def __getattr__(self, name: str) -> Any:
        # Only reached for attributes not yet on the instance: the first use of the pattern.
        if name.startswith("__") or name in ("_source", "_flags", "_compiled"):
            raise AttributeError(name)
        return getattr(self.compiled(), name)

    def __reduce__(self) -> tuple[Any, ...]:
        return (LazyRegex, (self._source, self._flags))

    def __repr__(self) -> str:
        return f"lazy_regex({self._source!r})"


def lazy_regex(source: str, flags: int | re.RegexFlag = 0) -> re.Pattern[str]:
    """``re.compile(source, flags)``, deferred until the pattern is first used.

    Typed as ``re.Pattern`` because it behaves as one for every method and attribute.  Call
    its methods (``PATTERN.sub(…)``): ``re``'s module functions accept only real patterns.
    """
    return cast("re.Pattern[str]", LazyRegex(source, int(flags)))
