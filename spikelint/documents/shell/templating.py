"""Text with a shell shebang that is a template to be rendered (Jinja/Ansible, ``%(name)s``), not shell yet."""

from __future__ import annotations

import re

from spikelint.util.lazyre import lazy_regex

_JINJA_STATEMENT = lazy_regex(r"\{%-?\s*(?:if|for|set|else|elif|end\w*|macro|include|import|block|raw|extends|call|filter|with)\b")
_PYTHON_FORMAT = lazy_regex(r"%\([A-Za-z_][A-Za-z0-9_]*\)[sdrfi]")
_BARE_EXPRESSION = lazy_regex(r"(?:^|[\s=])\{\{-?\s*[A-Za-z_][\w.]*\s*(?:\|[^}]*)?-?\}\}", re.M)


def is_template(text: str) -> bool:
    """A Jinja/Ansible or ``%(name)s`` template with a shell shebang: text to be rendered, not shell.

    ``{{ … }}`` inside quotes is common in real shell (``docker inspect -f '{{.Id}}'``,
    ``"{{ model }}"``); only Jinja statements, ``%(name)s`` fields and a ``{{ name }}`` written as
    a bare word make a template.
    """
    if not isinstance(text, str):
        return False
    return bool(_JINJA_STATEMENT.search(text) or _PYTHON_FORMAT.search(text) or _BARE_EXPRESSION.search(text))
