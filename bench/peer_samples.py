"""Recall and false positives of spikelint's secret rules (SPK201-SPK206) on gitleaks' own test samples.

Why: next to each detection rule gitleaks keeps the strings the rule must find (true positives) and
must not find (false positives).  They are a peer's idea of what a leak looks like, written by other
people than ours, so they test spikelint where our own fixtures cannot.

How: nothing of gitleaks is stored here.  The samples are Go expressions in
cmd/generate/config/rules/*.go of the gitleaks source tree given with --gitleaks; a small interpreter
of the Go those files use (literals, +, slices, maps, append, range loops, fmt.Sprintf, base64, and
gitleaks' own helpers, read from cmd/generate/config/utils/*.go) runs each rule function, with
secrets.NewSecret replaced by a seeded generator of strings matching a regex (sre_parse).  Each
sample is written alone into a file of each carrier (.env, shell, YAML block, Python as written
when it parses and else in a string, prose .txt; the true positives' raw value base64/hex/percent-
encoded in a ConfigMap, an .env line and a notebook output, for the values the rule's regex matches on
their own, with no keyword beside them; .env files inside .zip and .tar.gz),
spikelint checks each carrier folder once, and a sample counts as reported when its file gets any
SPK201-SPK206 finding.

    python bench/peer_samples.py --gitleaks /tmp/gitleaks --spikelint .venv/bin/spikelint \\
        --out /tmp/peer.json [--seed 1] [--carriers env,sh,yaml,py,txt,encoded,archived]

A gitleaks negative is a negative of one rule: the "not another rule's" column leaves out those that
another gitleaks rule's regex matches.  True-positive secrets are never printed or written beyond
their first four characters.
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

try:
    import re._parser as sre_parse  # Python 3.11+
except ImportError:  # pragma: no cover
    import sre_parse

SECRET_RULES = {f"SPK20{n}" for n in range(1, 7)}  # --select SPK2 also enables SPK207 (notebook outputs)
NAMED = {"aws-": "AWS", "gcp-": "GCP", "azure-": "Azure", "github-": "GitHub", "gitlab-": "GitLab", "slack-": "Slack",
         "stripe-": "Stripe", "jwt": "JWT", "huggingface-": "Hugging Face", "openai-": "OpenAI",
         "anthropic-": "Anthropic", "private-key": "private keys", "npm-": "npm", "pypi-": "PyPI",
         "databricks-": "Databricks", "cohere-": "Cohere", "mailgun-": "Mailgun", "sendinblue-": "Sendinblue/Brevo",
         "vault-": "Vault"}
ARCHIVE_MEMBERS = 100
Node = tuple  # the parser's syntax tree: ("kind", ...)


class EvalError(Exception):
    """A construct the interpreter (or the regex generator) does not handle: the sample is skipped and counted."""


# ------------------------------------------------------------------------------------------ Go syntax

TOKEN = re.compile(r"""(?P<nl>\n)|(?P<ws>[ \t\r\f]+)|(?P<com>//[^\n]*|/\*.*?\*/)|(?P<raw>`[^`]*`)
    |(?P<str>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])+')|(?P<num>\d+(?:\.\d+)?)|(?P<id>[^\W\d]\w*)
    |(?P<op>\.\.\.|:=|&&|\|\||==|!=|<=|>=|\+=|\+\+|--|[-+*/%&|!<>=(){}\[\],;:.^])""", re.S | re.X)
ESCAPE = re.compile(r"\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{3}|.)", re.S)
SIMPLE = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v", "\\": "\\", "'": "'", '"': '"'}
BINARY = {"||": 1, "&&": 2, "==": 3, "!=": 3, "<": 3, "<=": 3, ">": 3, ">=": 3, "+": 4, "-": 4, "*": 5, "/": 5, "%": 5}
ENDS_LINE = {("op", c) for c in (")", "]", "}", "++", "--")}


def unquote(body: str) -> str:
    def one(m: re.Match[str]) -> str:
        e = m.group()[1:]
        return chr(int(e[1:], 16)) if e[0] in "xuU" else chr(int(e, 8)) if e[0].isdigit() else SIMPLE[e]
    return ESCAPE.sub(one, body)


def tokenize(src: str) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    pos = 0
    while pos < len(src):
        if not (m := TOKEN.match(src, pos)):
            raise EvalError(f"bad character {src[pos]!r}")
        kind, text, pos = m.lastgroup or "", m.group(), m.end()
        if kind == "nl" or (kind == "com" and "\n" in text):  # Go's automatic semicolons
            if out and (out[-1][0] in ("id", "str", "num") or out[-1] in ENDS_LINE):
                out.append(("op", ";"))
        elif kind in ("raw", "str"):
            out.append(("str", text[1:-1].replace("\r", "") if kind == "raw" else unquote(text[1:-1])))
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
    """Recursive descent over the Go of gitleaks' rule files; a statement it cannot read becomes ("bad", text)."""

    def __init__(self, src: str) -> None:
        self.t, self.i, self.nolit = tokenize(src), 0, False
        self.imports: dict[str, str] = {}

    def next(self) -> Any:
        self.i += 1
        return self.t[self.i - 1][1]

    def at(self, *texts: str) -> bool:
        return self.t[self.i][0] in ("op", "id") and self.t[self.i][1] in texts

    def eat(self, text: str) -> bool:
        self.i += (found := self.at(text))
        return found

    def expect(self, text: str) -> None:
        if not self.eat(text):
            raise EvalError(f"expected {text!r}, got {self.t[self.i][1]!r}")

    def until(self, stop: str, consume: bool = True) -> list[Any]:
        """Token texts up to the unnested ``stop``."""
        out, depth = [], 0
        while not (depth == 0 and self.at(stop)) and self.t[self.i][0] != "eof":
            depth += self.at("(", "[", "{") - self.at(")", "]", "}")
            out.append(self.next())
        self.i += consume
        return out

    def file(self, package: str) -> tuple[dict[str, Func], list[Node]]:
        funcs, decls = {}, []
        while self.t[self.i][0] != "eof":
            if self.eat("import"):
                for spec in " ".join(self.until(")") if self.eat("(") else self.until(";")).split(";"):
                    if words := spec.split():
                        self.imports[words[0] if len(words) > 1 else words[-1].rsplit("/", 1)[-1]] = \
                            words[-1].rsplit("/", 1)[-1]
            elif self.eat("func"):
                method = self.eat("(") and self.until(")")
                name = self.next()
                self.expect("(")
                params = " ".join(map(str, self.until(")"))).split(",")
                results, body = "".join(map(str, self.until("{", consume=False))), self.block()
                if not method:
                    names = [p.split()[0] for p in params if p.strip()]
                    funcs[name] = Func(package, names, "..." in "".join(params), results, body)
            elif self.at("var", "const"):
                decls += self.block_item()
            else:
                self.until(";")  # package, type
        return funcs, decls

    def block(self) -> list[Node]:
        self.expect("{")
        out: list[Node] = []
        while not self.eat("}"):
            if not self.eat(";"):
                out += self.block_item()
        return out

    def block_item(self) -> list[Node]:
        start = self.i
        try:
            node = self.statement()
        except EvalError:
            self.i = start
            return [("bad", " ".join(map(str, self.until(";"))))]
        return [("decl", spec) for spec in node[1]] if node[0] == "decls" else [node]

    def statement(self) -> Node:
        if self.eat("var") or self.eat("const"):
            if not self.eat("("):
                return ("decls", [self.spec()])
            specs = []
            while not self.eat(")"):
                if not self.eat(";"):
                    specs.append(self.spec())
            return ("decls", specs)
        if self.eat("return"):
            return ("return", [] if self.at(";", "}") else self.exprlist())
        if self.eat("if"):
            init, cond = None, self.header()
            if self.eat(";"):
                init, cond = cond, self.header()
            body, other = self.block(), []
            if self.eat("else"):
                other = self.block() if self.at("{") else [self.statement()]
            return ("if", init, cond, body, other)
        if self.eat("for"):
            return ("for", self.header(), self.block())
        if self.at("break", "continue"):
            return (self.next(),)
        if self.at("{"):
            return ("block", self.block())
        return self.simple()

    def simple(self) -> Node:
        lhs = self.exprlist()
        if not self.at(":=", "="):
            return ("expr", lhs)
        op = self.next()
        return ("range", lhs, self.expr()) if self.eat("range") else ("assign", op, lhs, self.exprlist())

    def header(self) -> Node | None:
        """The condition of an if or for, where ``name {`` opens the block, not a composite literal."""
        self.nolit = True
        try:
            return None if self.at("{", ";") else self.simple()
        finally:
            self.nolit = False

    def spec(self) -> Node:
        names = [self.next()]
        while self.eat(","):
            names.append(self.next())
        typ = None if self.at("=", ";", ")") else self.type()
        return (names, typ, self.exprlist() if self.eat("=") else [])

    def type(self) -> str:
        if self.eat("*"):
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
        name = str(self.next())
        return f"{self.imports.get(name, name)}.{self.next()}" if self.eat(".") else name

    def exprlist(self) -> list[Node]:
        out = [self.expr()]
        while self.eat(","):
            out.append(self.expr())
        return out

    def expr(self, prec: int = 1) -> Node:
        left: Node
        if self.t[self.i][0] == "op" and self.t[self.i][1] in ("!", "-", "&", "*"):
            left = ("un", self.next(), self.expr(6))
        else:
            left = self.primary()
        while self.t[self.i][0] == "op" and BINARY.get(self.t[self.i][1], 0) >= prec:
            op = self.next()
            left = ("bin", op, left, self.expr(BINARY[op] + 1))
        return left

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
                x = ("index", x, self.expr())
                self.expect("]")
            elif self.at("{") and not self.nolit and x[0] in ("name", "sel", "type"):
                x = ("comp", type_text(x), self.elements())
            else:
                return x

    def operand(self) -> Node:
        kind, text = self.t[self.i]
        if kind in ("str", "num"):
            self.i += 1
            return ("const", text if kind == "str" else float(text) if "." in text else int(text))
        if self.eat("("):
            old, self.nolit = self.nolit, False
            inner = self.expr()
            self.expect(")")
            self.nolit = old
            return inner
        if self.at("[", "map"):
            return ("type", self.type())
        if kind == "id" and not self.at("func", "range", "interface", "struct", "switch"):
            self.i += 1
            return ("name", self.imports.get(text, text))
        raise EvalError(f"unexpected {text!r}")

    def elements(self) -> list[tuple[Node | None, Node]]:
        """``{a, b}`` or ``{k: v, ...}``; an inner ``{...}`` without a type is ("comp", None, ...)."""
        self.expect("{")
        old, self.nolit, items = self.nolit, False, []
        while not self.eat("}"):
            if not self.eat(";"):
                key, value = None, self.element()
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
    """The element type of a slice or the value type of a map."""
    t, depth = (t or "").lstrip("*"), 0
    for i, c in enumerate(t):
        depth += (c == "[") - (c == "]")
        if c == "]" and depth == 0:
            return t[i + 1:]
    return None


# ------------------------------------------------------------------------------------------ Go evaluation


class Struct(dict[Any, Any]):
    pass


class Builder(list[str]):  # a strings.Builder
    pass


@dataclass
class Ref:
    """A package (or package member) name, a type used as a conversion, or a not-yet-evaluated package variable."""
    kind: str
    name: Any


MISSING = Ref("missing", "")  # a variable whose assignment could not be evaluated: append() takes it as empty


class Scope:
    def __init__(self, parent: Scope | None, values: dict[str, Any] | None = None) -> None:
        self.parent, self.vars = parent, values or {}

    def find(self, name: str) -> Scope | None:
        scope: Scope | None = self
        while scope is not None and name not in scope.vars:
            scope = scope.parent
        return scope


class Interpreter:
    def __init__(self, generator: SecretGenerator) -> None:
        self.packages: dict[str, Scope] = {}
        self.validated: list[tuple[Any, list[Any], list[Any]]] = []
        self.skips: list[str] = []
        self.universe = Scope(None, {"true": True, "false": False, "nil": None, "string": Ref("type", "string"),
                                     "len": len, "make": make, "append": "append"})
        raw = lambda b: base64.b64encode(b if isinstance(b, bytes) else b.encode()).decode()  # noqa: E731
        self.builtins: dict[str, Callable[..., Any]] = {
            "fmt.Sprintf": sprintf, "strings.Join": lambda xs, sep: sep.join(xs), "strings.ToUpper": str.upper,
            "strings.ToLower": str.lower, "strings.Repeat": lambda s, n: s * n, "strings.NewReplacer": replacer,
            "regexp.MustCompile": lambda p: Ref("regex", p), "secrets.NewSecret": generator.new_secret,
            "utils.Validate": self.validate, "utils.ValidateWithPaths":
                lambda r, tps, fps: self.validate(r, list((tps or {}).values()), list((fps or {}).values())),
            "base64.StdEncoding.EncodeToString": raw,
            "base64.RawStdEncoding.EncodeToString": lambda b: raw(b).rstrip("="),
            "base64.URLEncoding.EncodeToString": lambda b: raw(b).replace("+", "-").replace("/", "_"),
            "base64.RawURLEncoding.EncodeToString": lambda b: raw(b).replace("+", "-").replace("/", "_").rstrip("=")}

    def load(self, package: str, files: list[Path]) -> None:
        scope = self.packages.setdefault(package, Scope(self.universe))
        for path in files:
            funcs, decls = Parser(path.read_text(encoding="utf-8")).file(package)
            scope.vars.update(funcs)
            for names, _, values in (spec for kind, spec in decls if kind == "decl"):
                scope.vars.update((n, Ref("lazy", v)) for n, v in zip(names, values))

    def validate(self, rule: Any, tps: Any, fps: Any) -> Any:
        self.validated.append((rule, [] if tps in (None, MISSING) else tps, [] if fps in (None, MISSING) else fps))
        return rule

    def lookup(self, name: str, env: Scope) -> Any:
        if (scope := env.find(name)) is None:
            return Ref("package", name)
        if isinstance(value := scope.vars[name], Ref) and value.kind == "lazy":
            value = scope.vars[name] = self.ev(value.name, scope)
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
            return Ref("type", e[1])
        if kind == "un":
            value = self.ev(e[2], env)
            return not value if e[1] == "!" else -value if e[1] == "-" else value  # & and * : the same object
        if kind == "bin":
            a = self.ev(e[2], env)
            if e[1] in ("&&", "||"):
                return (a and self.ev(e[3], env)) if e[1] == "&&" else (a or self.ev(e[3], env))
            b = self.ev(e[3], env)
            return {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "/": lambda: a // b,
                    "%": lambda: a % b, "==": lambda: a == b, "!=": lambda: a != b, "<": lambda: a < b,
                    "<=": lambda: a <= b, ">": lambda: a > b, ">=": lambda: a >= b}[e[1]]()
        if kind == "sel":
            return self.attribute(self.ev(e[1], env), e[2])
        if kind == "index":
            return self.ev(e[1], env)[self.ev(e[2], env)]
        if kind == "comp":
            return self.composite(e[1], e[2], env)
        if kind == "call":
            return self.call(e[1], e[2], e[3], env)
        raise EvalError(f"unsupported expression {kind}")

    def attribute(self, obj: Any, name: str) -> Any:
        if isinstance(obj, Ref) and obj.kind == "package":
            full = f"{obj.name}.{name}"
            if full in self.builtins:
                return self.builtins[full]
            if obj.name in self.packages and name in self.packages[obj.name].vars:
                return self.lookup(name, self.packages[obj.name])
            return Ref("package", full)
        if isinstance(obj, Struct) and name in obj:
            return obj[name]
        if isinstance(obj, Builder) and name in ("WriteString", "String"):
            return obj.append if name == "WriteString" else lambda: "".join(obj)
        if isinstance(obj, Ref) and obj.kind == "regex" and name in ("String", "MatchString"):
            return (lambda: obj.name) if name == "String" else lambda s: bool(re.search(go_to_python(obj.name), s))
        if isinstance(obj, Struct) and name == "ContainsStopWord":  # a gitleaks config.Allowlist
            words = [w.lower() for w in obj.get("StopWords") or []]
            return lambda s: next(((True, w) for w in words if w in s.lower()), (False, ""))
        if callable(obj) and name == "Replace":  # a strings.Replacer
            return obj
        raise EvalError(f"no {name} on {type(obj).__name__}")

    def composite(self, typ: str | None, items: list[tuple[Node | None, Node]], env: Scope) -> Any:
        inner = elem_type(typ)

        def value(node: Node) -> Any:
            return self.composite(inner, node[2], env) if node[0] == "comp" and node[1] is None else self.ev(node, env)
        if typ is None or typ.startswith("map["):
            return {self.ev(k, env) if k is not None else i: value(v) for i, (k, v) in enumerate(items)}
        if typ.startswith("["):
            return self.each(value, [v for _, v in items])
        struct = Struct()  # a field that fails holds its error (a rule's Path, say, need not be readable)
        for k, v in items:
            try:
                struct[k[1] if k else len(struct)] = value(v)
            except EvalError as exc:
                struct[k[1] if k else len(struct)] = exc
        return struct

    def each(self, evaluate: Callable[[Node], Any], nodes: list[Node]) -> list[Any]:
        """The values of the nodes that evaluate; the others are counted as skipped."""
        out = []
        for node in nodes:
            try:
                out.append(evaluate(node))
            except EvalError as exc:
                self.skips.append(str(exc))
        return out

    def call(self, fn: Node, args: list[Node], spread: bool, env: Scope) -> Any:
        if fn == ("name", "append") and env.find("append") is self.universe:
            out = [] if (base := self.ev(args[0], env)) is MISSING else list(base)
            for n, node in enumerate(args[1:], 2):
                try:
                    value = self.ev(node, env)
                except EvalError as exc:
                    self.skips.append(str(exc))
                    continue
                if spread and n == len(args):
                    out += [] if value is MISSING else list(value)
                else:
                    out.append(value)
            return out
        f, argv = self.ev(fn, env), [self.ev(a, env) for a in args]
        argv = argv[:-1] + list(argv[-1]) if spread else argv
        if isinstance(f, Ref) and f.kind == "type":
            return convert(f.name, argv[0])
        if isinstance(f, Func):
            return self.invoke(f, argv)
        if callable(f):
            return f(*argv)
        raise EvalError(f"cannot call {f!r}")

    def invoke(self, fn: Func, argv: list[Any], tolerant: bool = False) -> Any:
        if fn.variadic:
            argv = argv[:len(fn.params) - 1] + [argv[len(fn.params) - 1:]]
        signal = self.run(fn.body, Scope(self.packages[fn.package], dict(zip(fn.params, argv))), tolerant)
        return signal[1] if signal and signal[0] == "return" else None

    def run(self, stmts: list[Node], env: Scope, tolerant: bool = False) -> Node | None:
        """Statements in order; ``tolerant`` (a rule function's own body) skips one that fails and goes on."""
        for s in stmts:
            try:
                if (signal := self.statement(s, env)) is not None:
                    return signal
            except EvalError as exc:
                if not tolerant or s[0] == "return":
                    raise
                self.skips.append(str(exc))
                names = [t[1] for t in s[2] if t[0] == "name"] if s[0] == "assign" else s[1][0] if s[0] == "decl" else []
                for name in names:
                    if env.find(name) is None:
                        env.vars[name] = MISSING
        return None

    def statement(self, s: Node, env: Scope) -> Node | None:
        kind = s[0]
        if kind == "expr":
            for e in s[1]:
                self.ev(e, env)
        elif kind == "assign":
            values = [self.ev(e, env) for e in s[3]]
            if len(s[2]) > 1 and len(values) == 1:  # ok, _ := f()
                values = list(values[0])
            for target, value in zip(s[2], values):
                self.store(target, value, s[1], env)
        elif kind == "decl":
            names, typ, values = s[1]
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
            return self.loop(s[1], s[2], env)
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
            (env if op == ":=" else env.find(target[1]) or env).vars[target[1]] = value

    def loop(self, head: Node | None, body: list[Node], env: Scope) -> Node | None:
        if head is not None and head[0] == "range":
            seq = self.ev(head[2], env)
            for pair in list(seq.items() if isinstance(seq, dict) else enumerate(seq)):
                scope = Scope(env)
                for target, value in zip(head[1], pair):
                    self.store(target, value, ":=", scope)
                if (signal := self.run(body, scope)) and signal[0] != "continue":
                    return None if signal[0] == "break" else signal
            return None
        for _ in range(100_000):
            if head is not None and not self.ev(head[1][0], env):
                return None
            if (signal := self.run(body, Scope(env))) and signal[0] != "continue":
                return None if signal[0] == "break" else signal
        raise EvalError("a loop ran 100000 times")


def make(t: Ref, n: int = 0, *_: int) -> Any:
    return {} if t.name.startswith("map[") else [zero(elem_type(t.name))] * n


def zero(typ: str | None) -> Any:
    typ = typ or ""
    return ("" if typ == "string" else Builder() if typ == "strings.Builder" else [] if typ.startswith("[")
            else {} if typ.startswith("map[") else None)


def convert(typ: str, value: Any) -> Any:
    if typ == "[]byte":
        return value if isinstance(value, bytes) else str(value).encode()
    if typ == "string":
        return value.decode() if isinstance(value, bytes) else str(value)
    return value


def sprintf(fmt: str, *args: Any) -> str:
    values = iter(args)

    def one(m: re.Match[str]) -> str:
        if m.group(2) == "%":
            return "%"
        value = next(values)
        text = ("true" if value else "false") if isinstance(value, bool) else \
            value.decode() if isinstance(value, bytes) else str(value)
        return json.dumps(text, ensure_ascii=False) if m.group(2) == "q" else text
    return re.sub(r"%([-+# 0]*\d*(?:\.\d+)?)([a-zA-Z%])", one, fmt)


def replacer(*pairs: str) -> Callable[[str], str]:
    table, pattern = dict(zip(pairs[::2], pairs[1::2])), re.compile("|".join(map(re.escape, pairs[::2])))
    return lambda s: pattern.sub(lambda m: table[m.group()], s)


# ------------------------------------------------------------------------------------------ regexes


POSIX = {"alnum": "0-9A-Za-z", "alpha": "A-Za-z", "digit": "0-9", "lower": "a-z", "upper": "A-Z", "space": r"\s",
         "xdigit": "0-9A-Fa-f", "word": r"\w", "punct": r"!-/:-@\[-`{-~", "print": " -~", "graph": "!-~"}
PRINTABLE = [chr(c) for c in range(32, 127)]
CATEGORIES = {"DIGIT": string.digits, "WORD": string.ascii_letters + string.digits + "_", "SPACE": " \t\n"}


def go_to_python(pattern: str) -> str:
    """Go RE2 syntax as Python reads it: \\z, POSIX classes, \\x{..}, (?<name>), global flags moved to the front."""
    p = re.sub(r"\[:(\w+):\]", lambda m: POSIX.get(m.group(1), m.group()), pattern.replace(r"\z", r"\Z"))
    p = re.sub(r"\\x\{([0-9a-fA-F]+)\}", lambda m: f"\\U{int(m.group(1), 16):08x}", p)
    p = re.sub(r"\(\?<(?=[A-Za-z_])", "(?P<", p)
    flags = "".join(sorted(set("".join(re.findall(r"\(\?([ims]+)\)", p)))))
    return (f"(?{flags})" if flags else "") + re.sub(r"\(\?[ims]+\)", "", p)


def compile_go(pattern: str) -> re.Pattern[str] | None:
    try:
        return re.compile(go_to_python(pattern))
    except (re.error, OverflowError):
        return None


def category(name: str) -> list[str]:
    base = name.removeprefix("CATEGORY_")
    if base.startswith("NOT_"):
        return [c for c in PRINTABLE if c not in CATEGORIES.get(base[4:], "")]
    return list(CATEGORIES.get(base, string.ascii_letters))


class SecretGenerator:
    """Strings matching a regex, like gitleaks' secrets.NewSecret (reggen with limit 1: x{n,} gives n or n+1 x)."""

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
            elif name in ("NOT_LITERAL", "ANY", "IN", "CATEGORY"):
                chars = ([c for c in PRINTABLE if c != chr(av)] if name == "NOT_LITERAL" else PRINTABLE
                         if name == "ANY" else self.charset(av) if name == "IN" else category(str(av)))
                out.append(self.rng.choice(chars))
            elif name == "BRANCH":
                self.emit(self.rng.choice(av[1]), out)
            elif name == "SUBPATTERN":
                self.emit(av[-1], out)
            elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
                for _ in range(self.rng.randint(av[0], av[0] + 1 if av[1] > 100_000 else av[1])):
                    self.emit(av[2], out)
            elif name not in ("AT", "ASSERT", "ASSERT_NOT"):
                raise EvalError(f"cannot generate {name}")

    def charset(self, items: Any) -> list[str]:
        chars: set[str] = set()
        for op, av in items:
            name = str(op)
            if name == "LITERAL":
                chars.add(chr(av))
            elif name == "RANGE":
                chars.update(chr(c) for c in range(av[0], min(av[1], 0x2FF) + 1))
            elif name == "CATEGORY":
                chars.update(category(str(av)))
        result = sorted(set(PRINTABLE) - chars if any(str(op) == "NEGATE" for op, _ in items) else chars)
        if not result:
            raise EvalError("empty character class")
        return result


# ------------------------------------------------------------------------------------------ gitleaks' samples


@dataclass
class Sample:
    rule: str
    positive: bool
    text: str
    secret: str | None = None  # a positive's raw value: what the gitleaks rule's regex captures in it
    other_rule: str = ""  # a negative: another gitleaks rule whose regex matches it (a positive of that rule)
    # a positive whose raw value the rule's regex matches on its own: the value names its kind without a key or a
    # keyword beside it (a Mailgun signing key does not), so that encoded alone it can still be recognised
    standalone: bool = False


@dataclass
class RuleReport:
    tps: int = 0
    fps: int = 0
    skipped: list[str] = field(default_factory=list)
    error: str = ""


def raw_value(pattern: re.Pattern[str] | None, group: Any, text: str) -> str | None:
    """The rule's SecretGroup, else its first non-empty unnamed group (what gitleaks reports; named groups only
    label alternatives), else the whole match."""
    if pattern is None:
        return None
    unnamed = [i for i in range(1, pattern.groups + 1) if i not in pattern.groupindex.values()]
    for m in pattern.finditer(text):
        index = group if isinstance(group, int) and 0 < group <= pattern.groups and m.group(group) else \
            next((i for i in unnamed if m.group(i)), 0)
        if m.group(index):
            return whole_token(text, m.start(index), m.end(index))
    return None


TOKEN_CHAR = re.compile(r"[A-Za-z0-9_.+/-]")


def whole_token(text: str, start: int, end: int) -> str:
    """The capture, carried on to the end of the token it cuts: gitleaks' Slack legacy pattern captures
    ``xoxa-2-511111111`` of ``xoxa-2-511111111-3111…-e039…``, and what a user encodes is the whole token."""
    while end < len(text) and TOKEN_CHAR.match(text, end):
        end += 1
    return text[start:end].rstrip(".")


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
        for rule, tps, fps in interp.validated:
            rule = rule if isinstance(rule, Struct) else Struct()
            rule_id = rid if isinstance(rid := rule.get("RuleID"), str) else name
            regex = rule.get("Regex")
            pattern = patterns[rule_id] = compile_go(regex.name) if isinstance(regex, Ref) else None
            report = reports.setdefault(rule_id, RuleReport())
            report.skipped += interp.skips
            for positive, texts in ((True, tps), (False, fps)):
                for text in texts:
                    if not isinstance(text, str) or not text.strip():
                        report.skipped.append("empty or not a string (a path-only sample)")
                        continue
                    secret = raw_value(pattern, rule.get("SecretGroup"), text) if positive else None
                    standalone = bool(secret and pattern and pattern.search(secret))
                    samples.append(Sample(rule_id, positive, text, secret, standalone=standalone))
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
    """A true positive with its secret cut to 4 characters (and any other long token that has a digit)."""
    text = sample.text.replace(sample.secret, shown(sample.secret)) if sample.secret else sample.text
    return TOKENISH.sub(lambda m: shown(m.group()) if re.search(r"\d", m.group()) and (
        len(m.group()) >= 20 or not sample.secret) else m.group(), text)


# ------------------------------------------------------------------------------------------ carriers


def is_python(text: str) -> bool:
    try:
        compile(text, "<sample>", "exec")
        return True
    except (SyntaxError, ValueError):
        return False


def render_yaml(s: Sample) -> str:
    lines = s.text.split("\n")
    indicator = "|2" if lines[0][:1] in (" ", "\t") else "|"
    return f"app:\n  settings: {indicator}\n" + "\n".join("    " + ln if ln.strip() else "" for ln in lines) + "\n"


def render_py_string(s: Sample) -> str | None:
    """A sample that is not Python as written: a snippet in a raw string (in comments if it holds ''')."""
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
    "configmap": ("configmap.yaml",
                  lambda v: f'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-settings\ndata:\n  blob: "{v}"\n'),
    "env": (".env", lambda v: f"BLOB={v}\n"), "notebook": ("analysis.ipynb", notebook)}


@dataclass
class Carrier:
    name: str
    filename: str
    render: Callable[[Sample], str | None]  # None: the sample has no file of this carrier
    archive: str = ""  # "zip" or "tar.gz": the files are members, ARCHIVE_MEMBERS to an archive


def encoded(encode: Callable[[str], str], wrap: Callable[[str], str]) -> Callable[[Sample], str | None]:
    """The raw value alone, encoded, under a neutral key: only values that name their kind on their own (what
    could a reader, or gitleaks, tell of a bare Mailgun signing key under ``blob:``?)."""
    return lambda s: wrap(encode(s.secret)) if s.positive and s.secret and s.standalone else None


def make_carriers(chosen: set[str]) -> list[Carrier]:
    plain: dict[str, tuple[str, Callable[[Sample], str | None]]] = {
        "env": (".env", lambda s: s.text + "\n"),
        "sh": ("run.sh", lambda s: f"#!/usr/bin/env bash\nset -eu\n\n{s.text}\n"),
        "yaml": ("config.yaml", render_yaml),
        "py": ("settings.py", lambda s: s.text + "\n" if is_python(s.text) else None),
        "py (in a string)": ("settings.py", render_py_string),
        "txt": ("notes.txt", lambda s: f"Notes from the deployment review.\n\nWhat we used:\n\n{s.text}\n\n"
                                       "Next steps are in the tracker.\n")}
    out = [Carrier(name, filename, render) for name, (filename, render) in plain.items()
           if name.split()[0] in chosen]
    for encoding, encode in ENCODINGS.items() if "encoded" in chosen else ():
        for box, (filename, wrap) in BOXES.items():
            if encoding != "base64(base64)" or box == "env":
                out.append(Carrier(f"{encoding} {box}", filename, encoded(encode, wrap)))
    if "archived" in chosen:
        out += [Carrier(f".env in .{kind}", ".env", lambda s: s.text + "\n", kind) for kind in ("zip", "tar.gz")]
    return out


def write_archive(path: Path, members: list[tuple[str, str]]) -> None:
    if path.suffix == ".zip":
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as bundle:
            for name, text in members:
                bundle.writestr(name, text)
        return
    with tarfile.open(path, "w:gz") as tar:
        for name, text in members:
            info = tarfile.TarInfo(name)
            info.size = len(data := text.encode())
            tar.addfile(info, io.BytesIO(data))


def write_carrier(carrier: Carrier, samples: list[Sample], folder: Path) -> list[int]:
    """One file (or archive member) per sample, in a folder named by the sample's number; the numbers written."""
    files = [(i, text) for i, s in enumerate(samples) if (text := carrier.render(s)) is not None]
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
    """SPK201-SPK206 findings by sample number (from a path ``00012/.env`` or ``bundle000.zip!00012/.env``)."""
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


# ------------------------------------------------------------------------------------------ scoring


HEADER = ("carrier", "recall, named kinds", "recall, all rules", "negatives reported", "not another rule's")


def share(part: int, whole: int) -> str:
    return f"{part}/{whole} {100 * part / whole:5.1f}%" if whole else "-"


def table_line(row: tuple[str, ...]) -> str:
    return f"{row[0]:<22}" + "".join(f" {cell:>19}" for cell in row[1:])


@dataclass
class Results:
    rows: list[tuple[str, ...]] = field(default_factory=list)
    missed: list[dict[str, Any]] = field(default_factory=list)  # named-kind positives no finding reported
    negatives: list[dict[str, Any]] = field(default_factory=list)  # negatives a finding was reported on
    by_rule: dict[str, dict[str, list[int]]] = field(default_factory=dict)  # rule -> carrier -> [missed, found]


def measure(samples: list[Sample], carriers: list[Carrier], spikelint: str, work: Path) -> Results:
    results = Results()
    for number, carrier in enumerate(carriers):
        written = write_carrier(carrier, samples, work / f"c{number:02d}")
        found = spikelint_findings(spikelint, work / f"c{number:02d}")
        pos = [i for i in written if samples[i].positive]
        named = [i for i in pos if named_kind(samples[i].rule)]
        neg = [i for i in written if not samples[i].positive]
        own = [i for i in neg if not samples[i].other_rule]
        results.rows.append((carrier.name, *(share(sum(i in found for i in group), len(group))
                                             for group in (named, pos, neg, own))))
        print(table_line(results.rows[-1]), flush=True)
        for i in pos:
            results.by_rule.setdefault(samples[i].rule, {}).setdefault(carrier.name, [0, 0])[i in found] += 1
        results.missed += [{"rule": samples[i].rule, "kind": named_kind(samples[i].rule), "carrier": carrier.name,
                            "secret": shown(samples[i].secret or ""), "sample": masked(samples[i])}
                           for i in named if i not in found]
        results.negatives += [{"rule": samples[i].rule, "carrier": carrier.name, "sample": samples[i].text,
                               "other_rule_matches": samples[i].other_rule,
                               "findings": [f"{f['rule']} line {f['line']}: {f['message']}" for f in found[i]]}
                              for i in neg if i in found]
    return results


def summary(results: Results) -> None:
    print("\n" + "\n".join(table_line(row) for row in [HEADER, *results.rows]))
    print("\nmissed named-kind samples by rule and secret (its spellings; the carriers that missed them), most first:")
    misses: dict[tuple[str, str], tuple[set[str], Counter[str]]] = {}
    for m in results.missed:
        spellings, carriers = misses.setdefault((m["rule"], m["secret"]), (set(), Counter()))
        spellings.add(m["sample"])
        carriers[m["carrier"]] += 1
    for (rule, secret), (spellings, carriers) in sorted(misses.items(), key=lambda kv: -sum(kv[1][1].values()))[:40]:
        print(f"  {rule} {secret}: {len(spellings)} sample(s), e.g. {min(spellings, key=len)[:80]!r}\n"
              f"      missed in {', '.join(f'{c} {n}' for c, n in carriers.items())}")
    print("\nreported negatives (rule, sample: carriers; the first finding):")
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for item in results.negatives:
        groups.setdefault((item["rule"], item["sample"]), []).append(item)
    for (rule, text), group in sorted(groups.items()):
        also = f" [{group[0]['other_rule_matches']} matches it]" if group[0]["other_rule_matches"] else ""
        print(f"  {rule}{also}: {text[:90]!r}: {', '.join(g['carrier'] for g in group)}\n"
              f"      {group[0]['findings'][0][:150]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--gitleaks", type=Path, required=True, help="a gitleaks source tree")
    parser.add_argument("--spikelint", default="spikelint", help="the spikelint executable")
    parser.add_argument("--out", type=Path, required=True, help="JSON file: misses, reported negatives, per rule")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--carriers", default="env,sh,yaml,py,txt,encoded,archived")
    parser.add_argument("--workdir", type=Path, help="write the carrier folders here, a new or empty folder (kept)")
    args = parser.parse_args()
    if args.workdir and args.workdir.exists() and any(args.workdir.iterdir()):
        sys.exit(f"--workdir {args.workdir} is not empty")

    samples, reports = gitleaks_samples(args.gitleaks, args.seed)
    positives = sum(s.positive for s in samples)
    print(f"gitleaks rules: {len(reports)}; samples: {positives} true positives, {len(samples) - positives} negatives "
          f"({sum(bool(s.other_rule) for s in samples)} of them matched by another rule's regex); "
          f"{sum(len(r.skipped) for r in reports.values())} skipped; "
          f"{sum(s.positive and not s.secret for s in samples)} positives without a raw value (not encoded)")
    for rule, report in sorted(reports.items()):
        if report.skipped or report.error:
            reasons = "; ".join(f"{n}x {why[:70]}" for why, n in Counter(report.skipped).most_common(2))
            print(f"  {rule}: {len(report.skipped)} skipped {report.error and '(' + report.error + ')'} {reasons}")
    with tempfile.TemporaryDirectory(prefix="peer-samples-") as temp:
        carriers = make_carriers(set(args.carriers.split(",")))
        results = measure(samples, carriers, args.spikelint, args.workdir or Path(temp))
    summary(results)
    version = subprocess.run([args.spikelint, "--version"], capture_output=True, text=True).stdout.strip()
    recall = {rule: {c: f"{hit}/{miss + hit}" for c, (miss, hit) in by_carrier.items()}
              for rule, by_carrier in results.by_rule.items()}
    args.out.write_text(json.dumps({"gitleaks": str(args.gitleaks), "spikelint": version, "seed": args.seed,
                                    "table": [HEADER, *results.rows], "rules": {k: vars(v) for k, v in sorted(reports.items())},
                                    "recall_by_rule": recall, "missed_named": results.missed,
                                    "reported_negatives": results.negatives}, indent=1, ensure_ascii=False))
    print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
