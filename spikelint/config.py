"""``.spikelint.yaml`` / ``[tool.spikelint]`` -> a validated :class:`Config`."""

from __future__ import annotations

import re
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any
from typing import Iterable

DEFAULT_MUTABLE_TAGS = (
    "latest", "main", "master", "dev", "develop", "devel", "nightly", "edge", "stable",
    "head", "canary", "trunk", "current", "rolling", "unstable",
)
# a full x.y.z version, also after a word (``efa1.37.0-ofiv1.13.2-…``, ``release-2.3.1``), a Git SHA or a date
# stamp (``v20220916…`` too); a tag that ends in a Git SHA after ``-``, ``.`` or ``_`` (``v1beta1-45c5727``,
# ``2024.05-abc1234f``, ``git describe``'s ``-g45c5727``) too:
# 7-40 hex digits with at least one digit and one letter, so a build number (``-1234567``) or a word
# (``-deadbee``) is not taken for one
DEFAULT_IMMUTABLE_TAG_PATTERN = (r"^(([A-Za-z][A-Za-z_-]*?)?v?\d+\.\d+\.\d+.*|[0-9a-f]{7,40}|v?\d{8}.*|"
                                 r"([A-Za-z][A-Za-z_.-]*?)?v?(19|20)\d\d-[01]\d-[0-3]\d.*|"
                                 r".*[-._](?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}|.*-g[0-9a-f]{7,40})$")
DEFAULT_RUN_IDENTITY = ("seed", "code_revision", "dataset_version")
DEFAULT_PREEMPTIBLE_PRIORITY_WORDS = ("preemptible", "low", "spot", "over-quota")
DEFAULT_MAX_FILE_SIZE = 5 * 1024 * 1024
DEFAULT_RULES_DIR = ".spikelint/rules"  # team rules, found beside a configuration without a setting


if TYPE_CHECKING:
    from spikelint.documents.limits import ImageLimits


class ConfigError(Exception):
    """The configuration is unreadable or invalid; the message names the file and key."""


@dataclass(frozen=True)
class Config:
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    fail_on: str = "error"
    severity: dict[str, str] = field(default_factory=dict)
    per_path_ignores: dict[str, tuple[str, ...]] = field(default_factory=dict)
    persistent_paths: tuple[str, ...] = ()
    allowed_registries: tuple[str, ...] = ()
    mutable_tags: tuple[str, ...] = DEFAULT_MUTABLE_TAGS
    immutable_tag_pattern: str = DEFAULT_IMMUTABLE_TAG_PATTERN
    max_gpus: float | None = None  # SPK701 runs only when a team sets it (`spikelint init` writes 1)
    min_grace_period_seconds: int = 30
    required_run_identity: tuple[str, ...] = ()  # SPK604 runs only when set (`spikelint init`: DEFAULT_RUN_IDENTITY)
    schemas: dict[str, str] = field(default_factory=dict)
    exclude: tuple[str, ...] = ()
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    max_image_bytes: int = 4 * 1024**3  # decompressed bytes read from one image tarball's layers
    max_image_seconds: float = 20.0  # time spent reading one image tarball
    max_layer_entries: int = 50_000  # members read per image layer
    max_compression_ratio: int = 100  # a layer expanding more than this is a decompression bomb
    preemptible_priority_classes: tuple[str, ...] = DEFAULT_PREEMPTIBLE_PRIORITY_WORDS
    # False: in-file suppressions (comments, pragmas, annotations) do nothing; only the configuration and
    # the baseline can silence a finding (teams that gate centrally)
    allow_inline_suppressions: bool = True
    # the baseline every gating command applies (check, fix, history, so the hooks too), relative to the
    # configuration file's folder; --baseline FILE wins
    baseline: str | None = None
    # the team rules folder, relative to the configuration file (default .spikelint/rules when it exists)
    rules_dir: str | None = None
    # the rules folders of sub-folder configurations above the files this configuration is for, added to the
    # top one's: (folder, how messages name it)
    added_rules_dirs: tuple[tuple[str, str], ...] = ()
    root: str = "."  # folder the configuration was found in (schemas: paths resolve from it)
    path: str | None = None  # the configuration file, when there is one

    def team_rules_folder(self) -> tuple[Path, str] | None:
        """The team rules folder and how messages name it: ``rules_dir``, else ``.spikelint/rules`` beside the
        configuration when it exists (``None``: no team rules)."""
        written = self.rules_dir or DEFAULT_RULES_DIR
        folder = Path(self.root) / written
        if self.rules_dir is None and not folder.is_dir():
            return None
        shown = written if self.root in (".", "") or Path(written).is_absolute() else \
            f"{Path(self.root).as_posix().rstrip('/')}/{written}"
        return folder, shown

    def immutable_tag_regex(self) -> re.Pattern[str]:
        return re.compile(self.immutable_tag_pattern)

    def mutable_tag_words(self) -> frozenset[str]:
        """``mutable_tags`` lower-cased, as image checks compare them."""
        return _lowered(tuple(self.mutable_tags))

    def image_limits(self) -> ImageLimits:
        from spikelint.documents.limits import ImageLimits

        return ImageLimits(max_bytes=self.max_image_bytes, max_seconds=self.max_image_seconds,
                           max_entries=self.max_layer_entries, max_ratio=self.max_compression_ratio)


LIST_KEYS = ("select", "ignore", "persistent_paths", "allowed_registries", "mutable_tags",
             "required_run_identity", "exclude", "preemptible_priority_classes")


def config_from_mapping(data: dict[str, Any], *, source: str, root: str) -> Config:
    """Validate ``data`` against the shipped schema and build a Config."""
    from spikelint.schemas import describe
    from spikelint.schemas import remembered_errors

    data = _upper_rule_ids(data)
    for error in remembered_errors("spikelint-config.schema.json", data):
        unknown = next((key for key in data if key not in CONFIG_KEYS), None)
        if unknown is not None:
            raise ConfigError(_unknown_key(str(unknown), source))
        key = str(error.absolute_path[0]) if error.absolute_path else ""
        listed = error.validator == "type" and error.validator_value == "array" and isinstance(error.instance, str)
        hint = f" — write a list: {key}: [{error.instance}]" if listed and len(error.absolute_path) == 1 else ""
        value = error.instance if len(error.absolute_path) > 1 else None  # an item of a list or a map
        if error.validator == "pattern" and key in RULE_KEYS and isinstance(error.instance, str):
            raise ConfigError(f"{where_written(source, key, error.instance)}: {key}: {_not_a_rule_id(error.instance)}")
        if error.validator == "enum" and isinstance(error.instance, str):
            meant = closest(error.instance, [str(choice) for choice in error.validator_value])
            hint = f" (did you mean {meant!r}?)" if meant is not None else ""
        raise ConfigError(f"{where_written(source, key, value)}: {describe(error)}{hint}")
    values: dict[str, Any] = {}
    for key, value in data.items():
        if key in LIST_KEYS:
            values[key] = tuple(str(item) for item in value)
        elif key == "per_path_ignores":
            values[key] = {str(glob): tuple(rules) for glob, rules in value.items()}
        else:
            values[key] = value
    if "immutable_tag_pattern" in values:
        try:
            re.compile(values["immutable_tag_pattern"])
        except re.error as error:
            raise ConfigError(f"{source}: immutable_tag_pattern is not a valid regular expression: {error}") from None
    return Config(root=root, path=source, **values)


# the top-level keys of the configuration (schemas/spikelint-config.schema.json; tests hold the two equal)
CONFIG_KEYS = frozenset((
    "allow_inline_suppressions", "allowed_registries", "baseline", "exclude", "fail_on", "ignore",
    "immutable_tag_pattern", "max_compression_ratio", "max_file_size", "max_gpus", "max_image_bytes",
    "max_image_seconds", "max_layer_entries", "min_grace_period_seconds", "mutable_tags", "per_path_ignores",
    "persistent_paths", "preemptible_priority_classes", "required_run_identity", "rules_dir", "schemas", "select",
    "severity"))
# keys that are written elsewhere, and where
ELSEWHERE = {
    "rules": "a team's rules go in a rule file under .spikelint/rules/ (or the folder rules_dir names), not in the "
             "configuration (docs/team-rules.md)",
    "secrets": "a team's secret patterns go in a rule file under .spikelint/rules/ (or the folder rules_dir names), "
               "not in the configuration (docs/team-rules.md)",
    "disable": "to turn rules off, list them under ignore:",
    "enable": "to run only some rules, list them under select:",
}


def closest(text: str, choices: Iterable[str], cutoff: float = 0.6) -> str | None:
    """The choice ``text`` most likely meant to be (a typo's answer), if one is close enough."""
    import difflib

    found = difflib.get_close_matches(text, sorted(choices), n=1, cutoff=cutoff)
    return found[0] if found else None


def _unknown_key(key: str, source: str) -> str:
    """The message for a key the configuration does not know: where it is written, and the fix."""
    where = where_written(source, key)
    if key in ELSEWHERE:
        return f"{where}: unknown key {key!r}: {ELSEWHERE[key]}"
    meant = closest(key, CONFIG_KEYS)
    if meant is not None:
        return f"{where}: unknown key {key!r} (did you mean {meant!r}?)"
    return (f"{where}: unknown key {key!r} — the configuration knows {', '.join(sorted(CONFIG_KEYS))} "
            "(`spikelint init` writes a starter one)")


PYPROJECT_TABLE = " [tool.spikelint]"  # how messages name a pyproject.toml's table


def config_source(path: str | Path) -> str:
    """How messages name a configuration file: a pyproject.toml by its ``[tool.spikelint]`` table."""
    return f"{path}{PYPROJECT_TABLE}" if Path(path).name == "pyproject.toml" else str(path)


def where_written(source: str, key: str, value: object = None) -> str:
    """How a message names where ``key`` is written: ``file:line`` (``file:line: [tool.spikelint]`` in a pyproject);
    with ``value``, the line below the key that holds it, in a block list or map."""
    line = _key_line(source, key, value) if key else None
    if line is None:
        return source
    if source.endswith(PYPROJECT_TABLE):
        return f"{source[: -len(PYPROJECT_TABLE)]}:{line}:{PYPROJECT_TABLE}"
    return f"{source}:{line}"


def _key_line(source: str, key: str, value: object = None) -> int | None:
    """The line of a top-level key of a configuration: in a YAML file, or in a pyproject.toml's table (or of
    ``value`` among the lines the key's block spans, when it is written on one of them)."""
    table = source.endswith(PYPROJECT_TABLE)
    try:
        text = Path(source[: -len(PYPROJECT_TABLE)] if table else source).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    start = 0
    if table:
        header = re.search(r"(?m)^\s*\[tool\.spikelint\]\s*$", text)
        if header is None:
            return None
        start = header.end()
        following = re.search(r"(?m)^\s*\[", text[start:])
        text = text[: start + following.start()] if following else text
        pattern = rf"(?m)^\s*['\"]?{re.escape(key)}['\"]?\s*="
    else:
        pattern = rf"(?m)^['\"]?{re.escape(key)}['\"]?\s*:"
    match = re.compile(pattern).search(text, start)
    if match is None:
        return None
    line = text.count("\n", 0, match.start()) + 1
    if isinstance(value, (str, int, float)) and not isinstance(value, bool) and not table:
        block = re.search(r"(?m)^\S", text[match.end():])  # the next top-level key ends the block
        end = match.end() + block.start() if block else len(text)
        found = re.search(rf"(?<![\w.-]){re.escape(str(value))}(?![\w.-])", text[match.end():end])
        if found is not None:
            return text.count("\n", 0, match.end() + found.start()) + 1
    return line


def load_config_file(path: Path) -> Config:
    """Read a ``.spikelint.yaml`` or a ``pyproject.toml`` ``[tool.spikelint]`` table."""
    data, source = read_config_mapping(path)
    return config_from_mapping(data, source=source, root=str(path.parent))


def read_config_mapping(path: Path) -> tuple[dict[str, Any], str]:
    """The raw keys of a configuration file (not yet validated) and how to name it in messages."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise ConfigError(f"{path}: the configuration is not UTF-8 text (byte {error.object[error.start]:#04x} at "
                          f"offset {error.start}): save it as UTF-8") from None
    except OSError as error:
        raise ConfigError(f"{path}: cannot read configuration: {error}") from None
    if path.name == "pyproject.toml":
        from spikelint.documents.tomldoc import load_toml

        try:
            data = load_toml(text)
        except ValueError as error:
            raise ConfigError(f"{path}: {error}") from None
        tool = data.get("tool", {})
        table = tool.get("spikelint", {}) if isinstance(tool, dict) else {}
        return table, f"{path}{PYPROJECT_TABLE}"
    import yaml

    try:
        data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
        raise ConfigError(f"{path}{where}: invalid YAML: {getattr(error, 'problem', error)}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the configuration must be a mapping of keys, not {type(data).__name__}")
    _no_repeated_keys(path, text)
    return data, str(path)


def _no_repeated_keys(path: Path, text: str) -> None:
    """A key written twice (``ignore:`` on two lines): the reader keeps the last and drops the first silently."""
    from spikelint.documents.yamldoc import DuplicateKey
    from spikelint.documents.yamldoc import YamlError
    from spikelint.documents.yamldoc import parse_yaml

    duplicates: list[DuplicateKey] = []
    try:
        parse_yaml(text, duplicates)
    except YamlError:
        return  # read above; a limit of the positioned reader is not the user's mistake
    for duplicate in duplicates:
        raise ConfigError(f"{path}:{duplicate.line}:{duplicate.column}: the key {duplicate.key!r} is written twice "
                          f"(first at line {duplicate.first_line}), and only the last would count; "
                          "remove one of them (or merge their values)")


def find_config_file(start: Path) -> Path | None:
    """Nearest ``.spikelint.yaml`` (or ``.yml``), else ``pyproject.toml`` with ``[tool.spikelint]``, upward."""
    folder = start.resolve()
    for candidate_folder in (folder, *folder.parents):
        for name in (".spikelint.yaml", ".spikelint.yml"):
            candidate = candidate_folder / name
            if candidate.is_file():
                return candidate
        pyproject = candidate_folder / "pyproject.toml"
        if pyproject.is_file():
            try:
                if "[tool.spikelint" in pyproject.read_text(encoding="utf-8", errors="replace"):
                    return pyproject
            except OSError:
                pass
    return None


def load_config(explicit: str | None, start: Path | None = None) -> Config:
    if explicit is not None:
        path = Path(explicit)
        if not path.is_file():
            raise ConfigError(f"{explicit}: configuration file not found")
        return load_config_file(path)
    found = find_config_file(start or Path.cwd())
    return load_config_file(found) if found is not None else Config()


RULE_KEYS = ("select", "ignore", "severity", "per_path_ignores")  # keys whose items or keys are rule ids


LOWER_ID = re.compile(r"[A-Za-z][A-Za-z0-9]{1,9}\d{1,3}")  # ``spk105``, ``spk1``: an id written in lower case


def _upper_rule_ids(data: dict[str, Any]) -> dict[str, Any]:
    """``ignore: [spk105]`` as ``--ignore spk105`` reads it: rule ids are upper-case."""
    def upper(items: Any) -> Any:
        return [item.upper() if isinstance(item, str) and LOWER_ID.fullmatch(item) else item for item in items] \
            if isinstance(items, list) else items

    if not any(key in data for key in RULE_KEYS):
        return data
    data = dict(data)
    for key in ("select", "ignore"):
        if key in data:
            data[key] = upper(data[key])
    if isinstance(data.get("severity"), dict):
        data["severity"] = {rule.upper() if isinstance(rule, str) and LOWER_ID.fullmatch(rule) else rule: level
                            for rule, level in data["severity"].items()}
    if isinstance(data.get("per_path_ignores"), dict):
        data["per_path_ignores"] = {glob: upper(rules) for glob, rules in data["per_path_ignores"].items()}
    return data


# a rule id (SPK101, a team's ACME001) or a family prefix of one (SPK1, ACME); checked against the catalog later
RULE_OR_FAMILY = re.compile(r"^[A-Z][A-Z0-9]{1,9}[0-9]{0,3}$")


def _not_a_rule_id(text: str) -> str:
    """Why an item is no rule id, and the id it was most likely meant to be (``spk105``, ``SPK1O5``: SPK105)."""
    meant = re.sub(r"(?<=\d)O|O(?=\d)", "0", text.upper())
    guess = f" — did you mean {meant}?" if RULE_OR_FAMILY.match(meant) else ""
    return f"{text!r} is not a rule id or family (upper-case letters then up to three digits, such as SPK102){guess}"


def with_suggestions(wrong: list[str], known: tuple[str, ...]) -> str:
    """``SPK1O5 (did you mean SPK105?)``: each unknown id with the known one it most likely meant."""
    return ", ".join(f"{rule} (did you mean {meant}?)" if (meant := closest(rule.upper(), known, 0.75)) else rule
                     for rule in wrong)


def unknown_rule_names(config: Config, known: tuple[str, ...], source: str | None = None) -> list[str]:
    """What in ``select``/``ignore``/``severity``/``per_path_ignores`` names no rule of ``known``.

    An id or a family prefix is known when some rule id starts with it; ``severity`` takes
    exact ids only.  Each problem names the key (with ``source``, the file and line it is written on) and the
    closest id, so the message says where the typo is and what was meant.
    """
    def unknown(rules: tuple[str, ...] | list[str]) -> list[str]:
        return [rule for rule in rules if not any(rule_id.startswith(rule) for rule_id in known)]

    def at(key: str, wrong: list[str]) -> str:
        return f"{where_written(source, key, wrong[0])}: {key}" if source is not None else key

    problems = []
    for key in ("select", "ignore"):
        wrong = unknown(getattr(config, key))
        if wrong:
            problems.append(f"{at(key, wrong)}: unknown rule id or family {with_suggestions(wrong, known)}")
    wrong = [rule for rule in config.severity if rule not in known]
    if wrong:
        problems.append(f"{at('severity', wrong)}: unknown rule id {with_suggestions(wrong, known)} "
                        "(severity takes exact ids such as SPK102)")
    for glob, rules in config.per_path_ignores.items():
        wrong = unknown(rules)
        if wrong:
            problems.append(f"{at('per_path_ignores', wrong)}[{glob!r}]: unknown rule id or family "
                            f"{with_suggestions(wrong, known)}")
    if problems:
        problems[-1] += " (spikelint rules lists them)"
    return problems


def with_overrides(config: Config, **overrides: Any) -> Config:
    """Command-line options win over the file; ``None`` means 'not given'."""
    given = {key: value for key, value in overrides.items() if value is not None}
    return replace(config, **given)


@lru_cache(maxsize=8)
def _lowered(words: tuple[str, ...]) -> frozenset[str]:
    return frozenset(word.lower() for word in words)


def selected(rule: str, config: Config) -> bool:
    """``select``/``ignore`` by exact id or family prefix; the longer match wins, ``ignore`` on a tie."""
    def best(patterns: Iterable[str]) -> int:
        return max((len(pattern) for pattern in patterns if rule.startswith(pattern)), default=-1)

    chosen = best(config.select) if config.select else 0
    return chosen >= 0 and chosen > best(config.ignore)
