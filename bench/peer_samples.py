"""Recall and false positives of spikelint's secret rules (SPK201-SPK206) on gitleaks' own test samples.

Why: next to each of its detection rules gitleaks keeps the strings the rule must find (true
positives) and must not find (false positives).  They are a peer's idea of what a leak looks like,
written by other people than ours, so they test spikelint where our own fixtures cannot.

How: nothing of gitleaks is stored here.  The samples are Go expressions in
cmd/generate/config/rules/*.go of a gitleaks source tree given with --gitleaks; a small interpreter
of the Go those files use (literals, +, slices, maps, append, loops, fmt.Sprintf, base64, and
gitleaks' own helpers, read from cmd/generate/config/utils/*.go) runs every rule function.
secrets.NewSecret is a seeded generator of strings matching a regex (sre_parse).  Each sample is
written alone into a file of each carrier (.env, shell, YAML block, Python, prose .txt; the true
positives' raw value base64/hex/percent-encoded in a ConfigMap, an .env line and a notebook output;
.env files inside .zip and .tar.gz), spikelint checks each carrier folder once, and a sample counts
as found when its file gets any SPK201-SPK206 finding.

    python bench/peer_samples.py --gitleaks /tmp/gitleaks --spikelint /work/venv/bin/spikelint \\
        --out /tmp/peer.json [--seed 1] [--carriers env,sh,yaml,py,txt,encoded,archived]

True-positive secrets are never printed or written beyond their first four characters.
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import random
import re
import string
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections import Counter
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any
from typing import Callable
from typing import Iterator

try:
    import re._parser as sre_parse  # Python 3.11+
except ImportError:  # pragma: no cover
    import sre_parse  # type: ignore[no-redef]

SECRET_RULES = {f"SPK20{n}" for n in range(1, 7)}  # --select SPK2 also enables SPK207 (notebook outputs)
NAMED = {"aws-": "AWS", "gcp-": "GCP", "azure-": "Azure", "github-": "GitHub", "gitlab-": "GitLab", "slack-": "Slack",
         "stripe-": "Stripe", "jwt": "JWT", "huggingface-": "Hugging Face", "openai-": "OpenAI", "anthropic-": "Anthropic",
         "private-key": "private keys", "npm-": "npm", "pypi-": "PyPI", "databricks-": "Databricks", "cohere-": "Cohere",
         "mailgun-": "Mailgun", "sendinblue-": "Sendinblue/Brevo", "vault-": "Vault"}
ARCHIVE_MEMBERS = 100
GO_PACKAGES = {"fmt", "strings", "regexp", "base64", "config", "secrets", "utils", "os", "logging", "detect", "base"}


class EvalError(Exception):
    """A construct the interpreter (or the regex generator) does not handle."""


# ----------------------------------------------------------------------------------- Go tokens and syntax

TOKEN = re.compile(r"""(?P<nl>\n)|(?P<ws>[ \t\r\f]+)|(?P<com>//[^\n]*|/\*.*?\*/)|(?P<raw>`[^`]*`)
    |(?P<str>"(?:\\.|[^"\\\n])*")|(?P<rune>'(?:\\.|[^'\\\n])+')|(?P<num>\d[\d_]*(?:\.\d+)?)|(?P<id>[^\W\d]\w*)
    |(?P<op>\.\.\.|:=|&&|\|\||==|!=|<=|>=|\+=|\+\+|--|&\^|<<|>>|[-+*/%&|!<>=(){}\[\],;:.^~])""", re.S | re.X)
ESCAPE = re.compile(r"\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{3}|.)", re.S)
SIMPLE = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v", "\\": "\\", "'": "'", '"': '"'}
BINARY = {"||": 1, "&&": 2, "==": 3, "!=": 3, "<": 3, "<=": 3, ">": 3, ">=": 3, "+": 4, "-": 4, "|": 4, "^": 4,
          "*": 5, "/": 5, "%": 5, "<<": 5, ">>": 5, "&": 5, "&^": 5}
Node = tuple


def unquote(body: str) -> str:
    def one(m: re.Match[str]) -> str:
        e = m.group()[1:]
        return chr(int(e[1:], 16)) if e[0] in "xuU" else chr(int(e, 8)) if e[0].isdigit() else SIMPLE[e]
    return ESCAPE.sub(one, body)


def tokenize(src: str) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    pos = 0
    while pos < len(src):
        m = TOKEN.match(src, pos)
        if not m:
            raise EvalError(f"bad character {src[pos]!r}")
        kind, text, pos = m.lastgroup or "", m.group(), m.end()
        if kind == "nl" or (kind == "com" and "\n" in text):  # Go's automatic semicolons
            if out and (out[-1][0] in ("id", "str", "num") or out[-1] in {("op", c) for c in (")", "]", "}", "++", "--")}):
                out.append(("op", ";"))
        elif kind in ("raw", "str"):
            out.append(("str", text[1:-1].replace("\r", "") if kind == "raw" else unquote(text[1:-1])))
        elif kind == "rune":
            out.append(("num", ord(unquote(text[1:-1]))))
        elif kind not in ("ws", "com"):
            out.append((kind, text))
    return out + [("op", ";"), ("eof", "")]


@dataclass
class Func:
    package: str
    params: list[str]
    variadic: bool
    results: str
    body: list[Node]


class Parser:
    """Recursive descent over the Go subset of gitleaks' rule files; an unreadable statement becomes ("bad", text)."""

    def __init__(self, src: str) -> None:
        self.t, self.i, self.nolit, self.imports = tokenize(src), 0, False, {}

    def peek(self) -> tuple[str, Any]:
        return self.t[self.i]

    def next(self) -> Any:
        self.i += 1
        return self.t[self.i - 1][1]

    def at(self, *texts: str) -> bool:
        return self.t[self.i][0] in ("op", "id") and self.t[self.i][1] in texts

    def eat(self, text: str) -> bool:
        if self.at(text):
            self.i += 1
            return True
        return False

    def expect(self, text: str) -> None:
        if not self.eat(text):
            raise EvalError(f"expected {text!r}, got {self.peek()[1]!r}")

    def file(self, package: str) -> tuple[dict[str, Func], list[Node]]:
        funcs: dict[str, Func] = {}
        decls: list[Node] = []
        while self.peek()[0] != "eof":
            if self.eat(";"):
                continue
            if self.eat("package"):
                self.next()
            elif self.eat("import"):
                specs = self.until(")") if self.eat("(") else self.until(";")
                for spec in " ".join(map(str, specs)).split(";"):
                    if words := spec.split():
                        self.imports[words[0] if len(words) > 1 else words[-1].rsplit("/", 1)[-1]] = \
                            words[-1].rsplit("/", 1)[-1]
            elif self.eat("func"):
                method = self.eat("(") and self.until(")")
                name = self.next()
                self.expect("(")
                params = " ".join(map(str, self.until(")"))).split(",")
                results = "".join(map(str, self.until("{", consume=False)))
                body = self.block()
                if not method:
                    funcs[name] = Func(package, [p.split()[0] for p in params if p.strip()], "..." in "".join(params),
                                       results, body)
            elif self.at("var", "const"):
                decls.append(self.decl())
            else:
                self.skip()
        return funcs, decls

    def until(self, stop: str, consume: bool = True) -> list[Any]:
        """Tokens up to the unnested ``stop`` (nesting counted with (), [], {})."""
        out, depth = [], 0
        while not (depth == 0 and self.at(stop)) and self.peek()[0] != "eof":
            depth += self.at("(", "[", "{") - self.at(")", "]", "}")
            out.append(self.next())
        if consume:
            self.next()
        return out

    def skip(self) -> str:
        return " ".join(map(str, self.until(";")))

    def block(self) -> list[Node]:
        self.expect("{")
        out: list[Node] = []
        while not self.eat("}"):
            if self.eat(";"):
                continue
            start = self.i
            try:
                node = self.statement()
            except EvalError:
                self.i = start
                node = ("bad", self.skip())
            out.extend([("decls", [spec]) for spec in node[1]] if node[0] == "decls" else [node])
        return out

    def statement(self) -> Node:
        if self.at("var", "const"):
            return self.decl()
        if self.eat("return"):
            return ("return", [] if self.at(";", "}") else self.exprlist())
        if self.eat("if"):
            return self.if_stmt()
        if self.eat("for"):
            return self.for_stmt()
        if self.at("break", "continue"):
            return (self.next(),)
        if self.at("{"):
            return ("block", self.block())
        if self.at("switch", "select", "go", "defer", "goto", "type", "func"):
            raise EvalError("unsupported statement")
        return self.simple()

    def simple(self) -> Node:
        lhs = self.exprlist()
        if self.at(":=", "=", "+="):
            op = self.next()
            if self.eat("range"):
                return ("range", lhs, self.expr())
            return ("assign", op, lhs, self.exprlist())
        if self.at("++", "--"):
            return ("assign", "+=", lhs, [("const", 1 if self.next() == "++" else -1)])
        return ("expr", lhs)

    def header(self) -> Node | None:
        self.nolit = True
        try:
            return None if self.at("{", ";") else self.simple()
        finally:
            self.nolit = False

    def if_stmt(self) -> Node:
        init, cond = None, self.header()
        if self.eat(";"):
            init, cond = cond, self.header()
        body, other = self.block(), []
        if self.eat("else"):
            other = [self.if_stmt()] if self.eat("if") else self.block()
        return ("if", init, cond, body, other)

    def for_stmt(self) -> Node:
        init, cond, post = None, self.header(), None
        if self.eat(";"):
            init, cond = cond, self.header()
            self.expect(";")
            post = self.header()
        return ("for", init, cond, post, self.block())

    def decl(self) -> Node:
        self.next()
        if not self.eat("("):
            return ("decls", [self.spec()])
        specs = []
        while not self.eat(")"):
            if not self.eat(";"):
                specs.append(self.spec())
        return ("decls", specs)

    def spec(self) -> Node:
        names = [self.next()]
        while self.eat(","):
            names.append(self.next())
        typ = None if self.at("=", ";", ")") else self.type()
        return (names, typ, self.exprlist() if self.eat("=") else [])

    def type(self) -> str:
        if self.eat("*") or self.eat("..."):
            return "*" + self.type()
        if self.eat("["):
            size = "" if self.at("]") else str(self.next())
            self.expect("]")
            return f"[{size}]" + self.type()
        if self.eat("map"):
            self.expect("[")
            key = self.type()
            self.expect("]")
            return f"map[{key}]" + self.type()
        if self.at("interface", "struct", "func"):
            raise EvalError("unsupported type")
        name = str(self.next())
        return f"{self.imports.get(name, name)}.{self.next()}" if self.eat(".") else name

    def exprlist(self) -> list[Node]:
        out = [self.expr()]
        while self.eat(","):
            out.append(self.expr())
        return out

    def expr(self, prec: int = 1) -> Node:
        left = self.unary()
        while self.peek()[0] == "op" and BINARY.get(self.peek()[1], 0) >= prec:
            op = self.next()
            left = ("bin", op, left, self.expr(BINARY[op] + 1))
        return left

    def unary(self) -> Node:
        if self.peek()[0] == "op" and self.peek()[1] in ("!", "-", "&", "*", "^", "+"):
            return ("un", self.next(), self.unary())
        return self.primary()

    def primary(self) -> Node:
        x = self.operand()
        while True:
            if self.eat("."):
                x = ("sel", x, self.next())
            elif self.eat("("):
                args, spread, old, self.nolit = [], False, self.nolit, False
                while not self.eat(")"):
                    args.append(self.expr())
                    spread = self.eat("...")
                    if not self.eat(","):
                        self.expect(")")
                        break
                self.nolit, x = old, ("call", x, args, spread)
            elif self.eat("["):
                lo = None if self.at(":") else self.expr()
                if self.eat(":"):
                    x = ("slice", x, lo, None if self.at("]") else self.expr())
                else:
                    x = ("index", x, lo)
                self.expect("]")
            elif self.at("{") and not self.nolit and x[0] in ("name", "sel", "type"):
                x = ("comp", type_text(x), self.elements())
            else:
                return x

    def operand(self) -> Node:
        kind, text = self.peek()
        if kind in ("str", "num"):
            self.next()
            return ("const", text if kind == "str" or isinstance(text, int) else float(text) if "." in text else int(text))
        if self.eat("("):
            old, self.nolit = self.nolit, False
            inner = self.expr()
            self.expect(")")
            self.nolit = old
            return inner
        if self.at("[", "map"):
            return ("type", self.type())
        if kind == "id" and not self.at("func", "range", "interface", "struct"):
            self.next()
            return ("name", self.imports.get(text, text))
        raise EvalError(f"unexpected {text!r}")

    def elements(self) -> list[tuple[Node | None, Node]]:
        self.expect("{")
        old, self.nolit, items = self.nolit, False, []
        while not self.eat("}"):
            if self.eat(";"):
                continue
            value, key = self.element(), None
            if self.eat(":"):
                key, value = value, self.element()
            items.append((key, value))
            if not self.eat(","):
                self.eat(";")
                self.expect("}")
                break
        self.nolit = old
        return items

    def element(self) -> Node:
        return ("comp", None, self.elements()) if self.at("{") else self.expr()


def type_text(x: Node) -> str:
    return x[1] if x[0] in ("name", "type") else f"{type_text(x[1])}.{x[2]}"


def elem_type(t: str | None) -> str | None:
    t = (t or "").lstrip("*")
    if t.startswith("map["):
        depth = 0
        for i, c in enumerate(t[3:], 3):
            depth += (c == "[") - (c == "]")
            if depth == 0:
                return t[i + 1:]
    return t[t.index("]") + 1:] if t.startswith("[") else None


# ----------------------------------------------------------------------------------- Go evaluation


class Struct(dict):  # type: ignore[type-arg]
    def __init__(self, type_name: str) -> None:
        super().__init__()
        self.type = type_name


@dataclass
class Type:
    text: str


@dataclass
class PkgRef:
    name: str


@dataclass
class Lazy:
    expr: Node


@dataclass
class Regex:
    source: str


class Builder(list):  # type: ignore[type-arg]  # strings.Builder
    pass


MISSING = PkgRef("<missing>")  # a variable whose assignment could not be evaluated


class Scope:
    def __init__(self, parent: Scope | None, values: dict[str, Any] | None = None) -> None:
        self.parent, self.vars = parent, values or {}

    def find(self, name: str) -> Scope | None:
        scope: Scope | None = self
        while scope is not None and name not in scope.vars:
            scope = scope.parent
        return scope


@dataclass
class Validated:
    rule: Any
    tps: list[Any]
    fps: list[Any]


class Interpreter:
    def __init__(self, generator: SecretGenerator) -> None:
        self.generator, self.packages, self.validated, self.skips = generator, {}, [], []  # type: ignore[var-annotated]
        self.universe = Scope(None, {"true": True, "false": False, "nil": None, "string": Type("string"),
                                     "byte": Type("byte"), "len": len, "make": make, "append": "append"})
        self.builtins: dict[str, Callable[..., Any]] = {
            "fmt.Sprintf": sprintf, "strings.Join": lambda xs, sep: sep.join(xs), "strings.ToUpper": str.upper,
            "strings.ToLower": str.lower, "strings.Repeat": lambda s, n: s * n, "strings.TrimSpace": str.strip,
            "strings.ReplaceAll": lambda s, a, b: s.replace(a, b), "strings.NewReplacer": replacer,
            "regexp.MustCompile": Regex, "secrets.NewSecret": generator.new_secret,
            "utils.Validate": lambda r, tps, fps: self.validate(r, tps, fps),
            "utils.ValidateWithPaths": lambda r, tps, fps: self.validate(r, list((tps or {}).values()),
                                                                         list((fps or {}).values())),
            "base64.StdEncoding.EncodeToString": lambda b: base64.b64encode(as_bytes(b)).decode(),
            "base64.RawStdEncoding.EncodeToString": lambda b: base64.b64encode(as_bytes(b)).decode().rstrip("="),
            "base64.URLEncoding.EncodeToString": lambda b: base64.urlsafe_b64encode(as_bytes(b)).decode(),
            "base64.RawURLEncoding.EncodeToString": lambda b: base64.urlsafe_b64encode(as_bytes(b)).decode().rstrip("=")}

    def load(self, package: str, files: list[Path]) -> None:
        scope = self.packages.setdefault(package, Scope(self.universe))
        for path in files:
            funcs, decls = Parser(path.read_text(encoding="utf-8")).file(package)
            scope.vars.update(funcs)
            for _, specs in decls:
                for names, _, values in specs:
                    scope.vars.update((n, Lazy(v)) for n, v in zip(names, values))

    def validate(self, rule: Any, tps: Any, fps: Any) -> Any:
        self.validated.append(Validated(rule, [] if tps in (None, MISSING) else tps, [] if fps in (None, MISSING) else fps))
        return rule

    def lookup(self, name: str, env: Scope) -> Any:
        scope = env.find(name)
        if scope is None:
            if name in self.packages or name in GO_PACKAGES:
                return PkgRef(name)
            raise EvalError(f"undefined: {name}")
        value = scope.vars[name]
        if isinstance(value, Lazy):
            value = scope.vars[name] = self.ev(value.expr, scope)
        return value

    def ev(self, e: Node, env: Scope) -> Any:
        try:
            return self._ev(e, env)
        except (TypeError, KeyError, IndexError, ValueError, AttributeError, re.error, RecursionError) as exc:
            raise EvalError(f"{type(exc).__name__}: {exc}") from None

    def _ev(self, e: Node, env: Scope) -> Any:
        kind = e[0]
        if kind == "const":
            return e[1]
        if kind == "name":
            return self.lookup(e[1], env)
        if kind == "type":
            return Type(e[1])
        if kind == "bin":
            return self.binary(e[1], e[2], e[3], env)
        if kind == "un":
            value = self.ev(e[2], env)
            return {"!": lambda v: not v, "-": lambda v: -v, "+": lambda v: v}.get(e[1], lambda v: v)(value)
        if kind == "sel":
            return self.attribute(self.ev(e[1], env), e[2])
        if kind == "index":
            return self.ev(e[1], env)[self.ev(e[2], env)]
        if kind == "slice":
            lo, hi = (None if x is None else self.ev(x, env) for x in (e[2], e[3]))
            return self.ev(e[1], env)[lo:hi]
        if kind == "comp":
            return self.composite(e[1], e[2], env)
        if kind == "call":
            return self.call(e[1], e[2], e[3], env)
        raise EvalError(f"unsupported expression {kind}")

    def binary(self, op: str, left: Node, right: Node, env: Scope) -> Any:
        a = self.ev(left, env)
        if op in ("&&", "||"):
            return (a and self.ev(right, env)) if op == "&&" else (a or self.ev(right, env))
        b = self.ev(right, env)
        ops: dict[str, Callable[[Any, Any], Any]] = {
            "+": lambda x, y: x + y, "-": lambda x, y: x - y, "*": lambda x, y: x * y, "/": lambda x, y: x // y,
            "%": lambda x, y: x % y, "==": lambda x, y: x == y, "!=": lambda x, y: x != y, "<": lambda x, y: x < y,
            "<=": lambda x, y: x <= y, ">": lambda x, y: x > y, ">=": lambda x, y: x >= y}
        if op not in ops:
            raise EvalError(f"operator {op}")
        return ops[op](a, b)

    def attribute(self, obj: Any, name: str) -> Any:
        if isinstance(obj, PkgRef):
            full = f"{obj.name}.{name}"
            if full in self.builtins:
                return self.builtins[full]
            if obj.name in self.packages and name in self.packages[obj.name].vars:
                return self.lookup(name, self.packages[obj.name])
            return PkgRef(full)
        if isinstance(obj, Struct) and name in obj:
            return obj[name]
        if isinstance(obj, Builder) and name in ("WriteString", "String"):
            return obj.append if name == "WriteString" else lambda: "".join(obj)
        if isinstance(obj, Regex) and name in ("String", "MatchString"):
            return (lambda: obj.source) if name == "String" else lambda s: re.search(go_to_python(obj.source), s) is not None
        if isinstance(obj, Struct) and name == "ContainsStopWord":
            return lambda s: stop_word(obj.get("StopWords") or [], s)
        if callable(obj) and name == "Replace":  # a strings.Replacer
            return obj
        raise EvalError(f"no attribute {name} on {type(obj).__name__}")

    def composite(self, typ: str | None, items: list[tuple[Node | None, Node]], env: Scope) -> Any:
        inner = elem_type(typ)

        def value(node: Node) -> Any:
            return self.composite(inner, node[2], env) if node[0] == "comp" and node[1] is None else self.ev(node, env)
        if typ is None or typ.lstrip("*").startswith("map["):
            return {self.ev(k, env) if k is not None else i: value(v) for i, (k, v) in enumerate(items)}
        if typ.startswith("["):
            out = []
            for _, v in items:
                try:
                    out.append(value(v))
                except EvalError as exc:
                    self.skips.append(str(exc))
            return out
        struct = Struct(typ.lstrip("*"))
        for k, v in items:
            try:
                struct[k[1] if k is not None else len(struct)] = value(v)
            except EvalError as exc:
                struct[k[1] if k is not None else len(struct)] = exc
        return struct

    def call(self, fn: Node, args: list[Node], spread: bool, env: Scope) -> Any:
        if fn == ("name", "append") and env.find("append") is self.universe:
            out = [] if (base := self.ev(args[0], env)) is MISSING else list(base)
            for i, arg in enumerate(args[1:], 1):
                try:
                    value = self.ev(arg, env)
                except EvalError as exc:
                    self.skips.append(str(exc))
                    continue
                if spread and i == len(args) - 1:
                    out.extend([] if value is MISSING else value)
                else:
                    out.append(value)
            return out
        f = self.ev(fn, env)
        argv = [self.ev(a, env) for a in args]
        if spread:
            argv = argv[:-1] + list(argv[-1])
        if isinstance(f, Type):
            return convert(f.text, argv[0])
        if isinstance(f, Func):
            return self.invoke(f, argv)
        if callable(f) and not isinstance(f, PkgRef):
            return f(*argv)
        raise EvalError(f"cannot call {f!r}")

    def invoke(self, fn: Func, argv: list[Any], tolerant: bool = False) -> Any:
        n = len(fn.params)
        if fn.variadic:
            argv = argv[:n - 1] + [argv[n - 1:]]
        signal = self.run(fn.body, Scope(self.packages[fn.package], dict(zip(fn.params, argv))), tolerant)
        return signal[1] if signal and signal[0] == "return" else None

    def run(self, stmts: list[Node], env: Scope, tolerant: bool = False) -> Node | None:
        for s in stmts:
            try:
                signal = self.statement(s, env)
            except EvalError as exc:
                if not tolerant or s[0] == "return":
                    raise
                self.skips.append(str(exc))
                names = [t[1] for t in s[2] if t[0] == "name"] if s[0] == "assign" else s[1][0][0] if s[0] == "decls" else []
                for name in names:  # later uses see MISSING (append treats it as empty), not "undefined"
                    if env.find(name) is None:
                        env.vars[name] = MISSING
                continue
            if signal is not None:
                return signal
        return None

    def statement(self, s: Node, env: Scope) -> Node | None:
        kind = s[0]
        if kind == "expr":
            for e in s[1]:
                self.ev(e, env)
        elif kind == "assign":
            values = [self.ev(e, env) for e in s[3]]
            if len(s[2]) > 1 and len(values) == 1:
                values = list(values[0])
            for target, value in zip(s[2], values):
                self.store(target, value, s[1], env)
        elif kind == "decls":
            for names, typ, values in s[1]:
                for i, name in enumerate(names):
                    env.vars[name] = self.ev(values[i], env) if values else zero(typ)
        elif kind == "return":
            values = [self.ev(e, env) for e in s[1]]
            return ("return", values[0] if len(values) == 1 else tuple(values))
        elif kind == "if":
            scope = Scope(env)
            if s[1] is not None:
                self.statement(s[1], scope)
            return self.run(s[3] if self.ev(s[2][1][0], scope) else s[4], Scope(scope))
        elif kind == "for":
            return self.loop(s, Scope(env))
        elif kind in ("break", "continue"):
            return (kind,)
        elif kind == "block":
            return self.run(s[1], Scope(env))
        else:
            raise EvalError(f"unsupported statement: {str(s[1])[:60]}")
        return None

    def store(self, target: Node, value: Any, op: str, env: Scope) -> None:
        if target[0] == "index":
            self.ev(target[1], env)[self.ev(target[2], env)] = value
        elif target != ("name", "_"):
            scope = env if op == ":=" else env.find(target[1]) or env
            scope.vars[target[1]] = scope.vars[target[1]] + value if op == "+=" else value

    def loop(self, s: Node, env: Scope) -> Node | None:
        _, init, cond, post, body = s
        if cond is not None and cond[0] == "range":
            seq = self.ev(cond[2], env)
            pairs = list(seq.items()) if isinstance(seq, dict) else list(enumerate(seq))
            for key, value in pairs:
                scope = Scope(env)
                for target, v in zip(cond[1], (key, value)):
                    self.store(target, v, ":=", scope)
                signal = self.run(body, scope)
                if signal and signal[0] != "continue":
                    return None if signal[0] == "break" else signal
            return None
        if init is not None:
            self.statement(init, env)
        for _ in range(100_000):
            if cond is not None and not self.ev(cond[1][0], env):
                return None
            signal = self.run(body, Scope(env))
            if signal and signal[0] != "continue":
                return None if signal[0] == "break" else signal
            if post is not None:
                self.statement(post, env)
        raise EvalError("loop ran 100000 times")


def make(t: Type, n: int = 0, *_: int) -> Any:
    return {} if t.text.startswith("map[") else [zero(elem_type(t.text))] * n


def zero(typ: str | None) -> Any:
    return {"string": "", "int": 0, "bool": False, "strings.Builder": Builder()}.get(
        typ or "", [] if (typ or "").startswith("[") else {} if (typ or "").startswith("map[") else None)


def convert(typ: str, value: Any) -> Any:
    if typ == "[]byte":
        return as_bytes(value)
    if typ == "string":
        return value.decode() if isinstance(value, bytes) else chr(value) if isinstance(value, int) else str(value)
    return list(value) if typ.startswith("[") else value


def as_bytes(value: Any) -> bytes:
    return value if isinstance(value, bytes) else str(value).encode()


def go_str(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, bytes):
        return value.decode(errors="replace")
    if isinstance(value, list):
        return "[" + " ".join(map(go_str, value)) + "]"
    return str(value)


def sprintf(fmt: str, *args: Any) -> str:
    values = iter(args)

    def one(m: re.Match[str]) -> str:
        verb = m.group(2)
        if verb == "%":
            return "%"
        value = next(values)
        if verb in "xX":
            text = as_bytes(value).hex() if isinstance(value, (str, bytes)) else format(value, "x")
            return text.upper() if verb == "X" else text
        return json.dumps(go_str(value), ensure_ascii=False) if verb == "q" else go_str(value)
    return re.sub(r"%([-+# 0]*\d*(?:\.\d+)?)([a-zA-Z%])", one, fmt)


def replacer(*pairs: str) -> Callable[[str], str]:
    table = dict(zip(pairs[::2], pairs[1::2]))
    pattern = re.compile("|".join(map(re.escape, pairs[::2])))
    return lambda s: pattern.sub(lambda m: table[m.group()], s)


def stop_word(words: list[str], secret: str) -> tuple[bool, str]:
    lowered = secret.lower()
    return next(((True, w) for w in words if w.lower() in lowered), (False, ""))


# ----------------------------------------------------------------------------------- regexes: Go to Python, and strings from them

POSIX = {"alnum": "0-9A-Za-z", "alpha": "A-Za-z", "digit": "0-9", "lower": "a-z", "upper": "A-Z", "space": r"\s",
         "xdigit": "0-9A-Fa-f", "word": r"\w", "punct": r"!-/:-@\[-`{-~", "print": " -~", "graph": "!-~"}


def go_to_python(pattern: str) -> str:
    """Go RE2 syntax as Python ``re`` reads it (global flags moved to the front, \\z, POSIX classes, (?<name>)."""
    p = pattern.replace(r"\z", r"\Z")
    p = re.sub(r"\[:(\w+):\]", lambda m: POSIX.get(m.group(1), m.group()), p)
    p = re.sub(r"\\x\{([0-9a-fA-F]+)\}", lambda m: f"\\U{int(m.group(1), 16):08x}", p)
    p = re.sub(r"\(\?<(?=[A-Za-z_])", "(?P<", p)
    flags = set("".join(re.findall(r"\(\?([ims]+)\)", p)))
    p = re.sub(r"\(\?[ims]+\)", "", p)
    return (f"(?{''.join(sorted(flags))})" if flags else "") + p


def compile_go(pattern: str) -> re.Pattern[str] | None:
    try:
        return re.compile(go_to_python(pattern))
    except (re.error, OverflowError):
        return None


PRINTABLE = [chr(c) for c in range(32, 127)]
CATEGORIES = {"DIGIT": string.digits, "WORD": string.ascii_letters + string.digits + "_", "SPACE": " \t\n"}


def category(name: str) -> list[str]:
    base = name.removeprefix("CATEGORY_")
    if base.startswith("NOT_"):
        return [c for c in PRINTABLE if c not in CATEGORIES.get(base[4:], "")]
    return list(CATEGORIES.get(base, string.ascii_letters))


class SecretGenerator:
    """Strings matching a regex, like gitleaks' secrets.NewSecret (reggen, limit 1: x* is 0-1 x, x{n,} is n-n+1 x)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def new_secret(self, pattern: str) -> str:
        try:
            parsed = sre_parse.parse(go_to_python(pattern))
        except (re.error, OverflowError) as exc:
            raise EvalError(f"regex {pattern[:40]!r}: {exc}") from None
        out: list[str] = []
        self.emit(parsed, out)
        return "".join(out)

    def emit(self, parsed: Any, out: list[str]) -> None:
        for op, av in parsed:
            name = str(op)
            if name == "LITERAL":
                out.append(chr(av))
            elif name == "NOT_LITERAL":
                out.append(self.rng.choice([c for c in PRINTABLE if c != chr(av)]))
            elif name == "ANY":
                out.append(self.rng.choice(PRINTABLE))
            elif name == "IN":
                out.append(self.rng.choice(self.charset(av)))
            elif name == "CATEGORY":
                out.append(self.rng.choice(category(str(av))))
            elif name == "BRANCH":
                self.emit(self.rng.choice(av[1]), out)
            elif name == "SUBPATTERN":
                self.emit(av[-1], out)
            elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
                low, high, sub = av
                for _ in range(self.rng.randint(low, low + 1 if high > 100_000 else high)):
                    self.emit(sub, out)
            elif name not in ("AT", "ASSERT", "ASSERT_NOT"):
                raise EvalError(f"cannot generate {name}")

    def charset(self, items: Any) -> list[str]:
        chars: set[str] = set()
        negate = False
        for op, av in items:
            name = str(op)
            negate |= name == "NEGATE"
            if name == "LITERAL":
                chars.add(chr(av))
            elif name == "RANGE":
                chars.update(chr(c) for c in range(av[0], min(av[1], 0x2FF) + 1))
            elif name == "CATEGORY":
                chars.update(category(str(av)))
        result = sorted(set(PRINTABLE) - chars if negate else chars)
        if not result:
            raise EvalError("empty character class")
        return result


# ----------------------------------------------------------------------------------- gitleaks' samples


@dataclass
class Sample:
    rule: str
    positive: bool
    text: str
    secret: str | None = None  # positives: what the gitleaks rule's regex captures in the text
    other_rule: str = ""  # negatives: another gitleaks rule whose regex matches the text (its positive, then)


@dataclass
class RuleReport:
    tps: int = 0
    fps: int = 0
    skipped: list[str] = field(default_factory=list)
    error: str = ""


def raw_value(pattern: re.Pattern[str] | None, group: Any, text: str) -> str | None:
    """The secret in a true positive: the rule's SecretGroup, else its first non-empty unnamed group (as gitleaks
    reports it; named groups only label alternatives), else the whole match."""
    unnamed = [i for i in range(1, pattern.groups + 1) if i not in pattern.groupindex.values()] if pattern else []
    for m in pattern.finditer(text) if pattern is not None else ():
        value = m.group(group) if isinstance(group, int) and 0 < group <= pattern.groups else None
        value = value or next((m.group(i) for i in unnamed if m.group(i)), None) or m.group()
        if value:
            return value
    return None


def gitleaks_samples(root: Path, seed: int) -> tuple[list[Sample], dict[str, RuleReport]]:
    base = root / "cmd" / "generate" / "config"
    interp = Interpreter(SecretGenerator(random.Random(seed)))
    for package in ("utils", "rules"):
        interp.load(package, sorted(p for p in (base / package).glob("*.go") if not p.name.endswith("_test.go")))
    samples: list[Sample] = []
    reports: dict[str, RuleReport] = {}
    patterns: dict[str, re.Pattern[str] | None] = {}
    for name, fn in sorted(interp.packages["rules"].vars.items()):
        if not isinstance(fn, Func) or fn.params or "config.Rule" not in fn.results:
            continue
        interp.validated, interp.skips, error = [], [], ""
        try:
            interp.invoke(fn, [], tolerant=True)
        except EvalError as exc:
            error = str(exc)
        if not interp.validated:
            reports[name] = RuleReport(skipped=interp.skips, error=error or "no utils.Validate call")
        for checked in interp.validated:
            rule = checked.rule if isinstance(checked.rule, Struct) else Struct("config.Rule")
            rule_id = rule.get("RuleID") if isinstance(rule.get("RuleID"), str) else name
            regex = rule.get("Regex")
            pattern = patterns[rule_id] = compile_go(regex.source) if isinstance(regex, Regex) else None
            report = reports.setdefault(rule_id, RuleReport())
            report.skipped += interp.skips
            for positive, texts in ((True, checked.tps), (False, checked.fps)):
                for text in texts:
                    if not isinstance(text, str) or not text.strip():
                        report.skipped.append("empty or not a string (a path-only sample)")
                        continue
                    secret = raw_value(pattern, rule.get("SecretGroup"), text) if positive else None
                    samples.append(Sample(rule_id, positive, text, secret))
                    report.tps += positive
                    report.fps += not positive
    for s in samples:
        if not s.positive:
            s.other_rule = next((r for r, p in patterns.items() if r != s.rule and p and p.search(s.text)), "")
    return samples, reports


def named_kind(rule: str) -> str | None:
    return next((kind for prefix, kind in NAMED.items() if rule.startswith(prefix)), None)


TOKENISH = re.compile(r"[A-Za-z0-9+/=_.\-]{12,}")


def shown(secret: str) -> str:
    return f"{secret[:4]}…({len(secret)} chars)"


def masked(sample: Sample) -> str:
    """A true positive with its secret cut to 4 characters (and any other long token with a digit too)."""
    text = sample.text.replace(sample.secret, shown(sample.secret)) if sample.secret else sample.text
    return TOKENISH.sub(lambda m: shown(m.group()) if re.search(r"\d", m.group()) and (
        len(m.group()) >= 20 or not sample.secret) else m.group(), text)


# ----------------------------------------------------------------------------------- carriers


def render_yaml(s: Sample) -> str:
    lines = s.text.split("\n")
    indicator = "|2" if lines[0][:1] in (" ", "\t") else "|"
    return f"app:\n  settings: {indicator}\n" + "\n".join("    " + line if line.strip() else "" for line in lines) + "\n"


def is_python(text: str) -> bool:
    try:
        compile(text, "<sample>", "exec")
        return True
    except (SyntaxError, ValueError):
        return False


def render_py_string(s: Sample) -> str | None:
    """A sample that is not Python as written: a snippet in a raw string (in comments if it holds three quotes)."""
    if is_python(s.text):
        return None
    if "'''" not in s.text:
        return f"SNIPPET = r'''\n{s.text}\n'''\n"
    return "".join(f"# {line}\n" for line in s.text.split("\n"))


def notebook(value: str) -> str:
    cell = {"cell_type": "code", "execution_count": 1, "id": "c1", "metadata": {}, "source": ["print(blob)"],
            "outputs": [{"name": "stdout", "output_type": "stream", "text": [value + "\n"]}]}
    return json.dumps({"cells": [cell], "metadata": {"language_info": {"name": "python"}}, "nbformat": 4,
                       "nbformat_minor": 5}, indent=1) + "\n"


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


ENCODINGS: dict[str, Callable[[str], str]] = {
    "base64": b64, "base64url": lambda t: base64.urlsafe_b64encode(t.encode()).decode(),
    "hex": lambda t: t.encode().hex(), "percent": lambda t: "".join(f"%{b:02X}" for b in t.encode()),
    "base64(base64)": lambda t: b64(b64(t))}
BOXES: dict[str, tuple[str, Callable[[str], str]]] = {
    "configmap": ("configmap.yaml", lambda v: f'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-settings\n'
                                              f'data:\n  blob: "{v}"\n'),
    "env": (".env", lambda v: f"BLOB={v}\n"), "notebook": ("analysis.ipynb", notebook)}


@dataclass
class Carrier:
    name: str
    filename: str
    render: Callable[[Sample], str | None]
    positives_only: bool = False
    archive: str = ""  # "zip" or "tar.gz": the rendered files are members, ARCHIVE_MEMBERS to an archive


def make_carriers(chosen: set[str]) -> list[Carrier]:
    plain: dict[str, tuple[str, Callable[[Sample], str | None]]] = {
        "env": (".env", lambda s: s.text + "\n"), "sh": ("run.sh", lambda s: f"#!/usr/bin/env bash\nset -eu\n\n{s.text}\n"),
        "yaml": ("config.yaml", render_yaml), "py": ("settings.py", lambda s: s.text + "\n" if is_python(s.text) else None),
        "py, in a string": ("settings.py", render_py_string),
        "txt": ("notes.txt", lambda s: f"Notes from the deployment review.\n\nWhat we used:\n\n{s.text}\n\n"
                                       f"Next steps are in the tracker.\n")}
    out = [Carrier(name, filename, render) for name, (filename, render) in plain.items() if name.split(",")[0] in chosen]
    if "encoded" in chosen:
        for encoding, encode in ENCODINGS.items():
            for box, (filename, wrap) in BOXES.items():
                if encoding != "base64(base64)" or box == "env":
                    out.append(Carrier(f"{encoding} {box}", filename, positives_only=True, render=lambda s, e=encode, w=wrap:
                                       None if s.secret is None else w(e(s.secret))))
    if "archived" in chosen:
        out += [Carrier(f".env in .{kind}", ".env", lambda s: s.text + "\n", archive=kind) for kind in ("zip", "tar.gz")]
    return out


def write_archive(path: Path, members: list[tuple[str, str]]) -> None:
    if path.suffix == ".zip":
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as bundle:
            for name, text in members:
                bundle.writestr(name, text)
        return
    with tarfile.open(path, "w:gz") as tar:
        for name, text in members:
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def write_carrier(carrier: Carrier, samples: list[Sample], folder: Path) -> list[int]:
    """One file (or archive member) per sample, under a folder named by the sample's number; the numbers written."""
    files = [(i, text) for i, s in enumerate(samples) if s.positive or not carrier.positives_only
             if (text := carrier.render(s)) is not None]
    folder.mkdir(parents=True)
    if carrier.archive:
        for n in range(0, len(files), ARCHIVE_MEMBERS):
            write_archive(folder / f"bundle{n // ARCHIVE_MEMBERS:03d}.{carrier.archive}",
                          [(f"{i:05d}/{carrier.filename}", text) for i, text in files[n:n + ARCHIVE_MEMBERS]])
    else:
        for i, text in files:
            (folder / f"{i:05d}").mkdir()
            (folder / f"{i:05d}" / carrier.filename).write_text(text, encoding="utf-8")
    return [i for i, _ in files]


def spikelint_findings(spikelint: str, folder: Path) -> dict[int, list[dict[str, Any]]]:
    """SPK201-SPK206 findings by sample number (a path ``00012/.env`` or ``bundle000.zip!00012/.env``)."""
    proc = subprocess.run([spikelint, "check", "--select", "SPK2", "--format", "json", "--no-cache", "."],
                          cwd=folder, capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        last = (proc.stderr.strip().splitlines() or ["no error output"])[-1]
        sys.exit(f"spikelint exited {proc.returncode} in {folder}: {TOKENISH.sub(lambda m: shown(m.group()), last)}")
    found: dict[int, list[dict[str, Any]]] = {}
    for finding in json.loads(proc.stdout)["findings"]:
        head = finding["path"].split("!", 1)[-1].removeprefix("./").split("/", 1)[0]
        if finding["rule"] in SECRET_RULES and head.isdigit():
            found.setdefault(int(head), []).append(finding)
    return found


# ----------------------------------------------------------------------------------- scoring


HEADER = ("carrier", "recall, named kinds", "recall, all rules", "negatives reported", "not another rule's")


def table_line(row: tuple[str, ...]) -> str:
    return f"{row[0]:<22}" + "".join(f" {cell:>19}" for cell in row[1:])


def share(part: int, whole: int) -> str:
    return f"{part}/{whole} {100 * part / whole:5.1f}%" if whole else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gitleaks", type=Path, required=True, help="a gitleaks source tree")
    parser.add_argument("--spikelint", default="spikelint", help="the spikelint executable")
    parser.add_argument("--out", type=Path, required=True, help="JSON file of the misses and reported negatives")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--carriers", default="env,sh,yaml,py,txt,encoded,archived")
    parser.add_argument("--workdir", type=Path, help="write the carrier folders here (kept) instead of a temporary folder")
    args = parser.parse_args()

    samples, reports = gitleaks_samples(args.gitleaks, args.seed)
    positives = sum(s.positive for s in samples)
    skipped = sum(len(r.skipped) for r in reports.values())
    print(f"gitleaks rules: {len(reports)}; samples: {positives} true positives, {len(samples) - positives} negatives; "
          f"{skipped} expressions skipped; {sum(s.positive and s.secret is None for s in samples)} positives without "
          f"a raw value (left out of the encoded carriers)")
    for rule, report in sorted(reports.items()):
        if report.skipped or report.error:
            reasons = Counter(report.skipped).most_common(2)
            print(f"  skipped {rule}: {len(report.skipped)} {report.error and '(rule failed: ' + report.error + ') '}"
                  + "; ".join(f"{n}x {why[:70]}" for why, n in reasons))

    rows, missed, negatives = [], [], []
    with tempfile.TemporaryDirectory(prefix="peer-samples-") as temp:
        work = args.workdir or Path(temp)
        for number, carrier in enumerate(make_carriers(set(args.carriers.split(",")))):
            written = write_carrier(carrier, samples, work / f"c{number:02d}")
            found = spikelint_findings(args.spikelint, work / f"c{number:02d}")
            pos = [i for i in written if samples[i].positive]
            named = [i for i in pos if named_kind(samples[i].rule)]
            neg = [i for i in written if not samples[i].positive]
            own = [i for i in neg if not samples[i].other_rule]
            rows.append((carrier.name, share(sum(i in found for i in named), len(named)),
                         share(sum(i in found for i in pos), len(pos)), share(sum(i in found for i in neg), len(neg)),
                         share(sum(i in found for i in own), len(own))))
            print(table_line(rows[-1]), flush=True)
            missed += [{"rule": samples[i].rule, "kind": named_kind(samples[i].rule), "carrier": carrier.name,
                        "sample": masked(samples[i])} for i in named if i not in found]
            negatives += [{"rule": samples[i].rule, "carrier": carrier.name, "sample": samples[i].text,
                           "other_rule_matches": samples[i].other_rule,
                           "findings": [f"{f['rule']} line {f['line']}: {f['message']}" for f in found[i]]}
                          for i in neg if i in found]

    print()
    for row in [HEADER] + rows:
        print(table_line(row))
    print("\nmissed named-kind samples, most common (rule, carrier):")
    for (rule, carrier), n in Counter((m["rule"], m["carrier"]) for m in missed).most_common(40):
        example = next(m["sample"] for m in missed if (m["rule"], m["carrier"]) == (rule, carrier))
        print(f"  {n:4d}  {rule:<36} {carrier:<22} e.g. {example[:110]!r}")
    print("\nreported negatives:")
    for (rule, text), group in groupby_sample(negatives):
        print(f"  {rule:<32} {', '.join(g['carrier'] for g in group)}: {text[:100]!r}\n      {group[0]['findings'][0][:160]}")
    args.out.write_text(json.dumps({"gitleaks": str(args.gitleaks), "seed": args.seed, "table": rows,
                                    "rules": {k: vars(v) for k, v in sorted(reports.items())},
                                    "missed_named": missed, "reported_negatives": negatives}, indent=1, ensure_ascii=False))
    print(f"\nwrote {args.out}")


def groupby_sample(items: list[dict[str, Any]]) -> Iterator[tuple[tuple[str, str], list[dict[str, Any]]]]:
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for item in items:
        groups.setdefault((item["rule"], item["sample"]), []).append(item)
    yield from sorted(groups.items())


if __name__ == "__main__":
    main()
