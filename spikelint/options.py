"""What every subcommand's front end shares: exit codes, the argument parser that turns argparse's
errors into usage errors, rule-id options, the exit code from findings, report emission and
baselines. ``cli``, ``fix`` and ``history`` build on it; it knows none of them.
"""

from __future__ import annotations

import argparse
import re
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any
from typing import Callable
from typing import NoReturn
from typing import Sequence

if TYPE_CHECKING:
    from spikelint.config import Config
    from spikelint.model import Finding
    from spikelint.model import Report

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
FORMATS = ("text", "json", "sarif", "junit", "gitlab", "github", "html")
SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}


class UsageError(Exception):
    """Bad options or configuration: exit 2 with this message."""


def terminal_width() -> int:
    """What ``shutil.get_terminal_size`` gives, without importing shutil (and its compressors)."""
    try:
        columns = int(os.environ["COLUMNS"])
        if columns > 0:
            return columns
    except (KeyError, ValueError):
        pass
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns if sys.__stdout__ else 80
    except (AttributeError, ValueError, OSError):
        return 80


class Formatter(argparse.HelpFormatter):
    """argparse's formatter with the width given: argparse builds one per ``add_argument`` and
    each would import shutil and ask the terminal for its size."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position, width or max(terminal_width() - 2, 11))


class RawDescriptionFormatter(argparse.RawDescriptionHelpFormatter, Formatter):
    """The same, keeping an epilog's line breaks."""


class Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        # main() prints "spikelint: error: ", so only the subcommand is named here
        command = self.prog.split(" ", 1)[1] if " " in self.prog else ""
        if message.startswith("unrecognized arguments:"):
            message += self._closest_options(message.split(":", 1)[1].split())
        raise UsageError(f"{command}: {message}" if command else message)

    def _closest_options(self, given: list[str]) -> str:
        """`` (did you mean --format?)`` for a mistyped long option, from this parser's and its commands' options."""
        from spikelint.config import closest

        known: set[str] = set()
        parsers: list[argparse.ArgumentParser] = [self]
        while parsers:
            parser = parsers.pop()
            for action in parser._actions:
                known.update(option for option in action.option_strings if option.startswith("--"))
                if isinstance(action, argparse._SubParsersAction):
                    parsers.extend(action.choices.values())
        hints = [meant for word in given if word.startswith("--")
                 and (meant := closest(word.split("=", 1)[0], known, 0.75)) is not None]
        return f" (did you mean {', '.join(hints)}?)" if hints else ""


def positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return value


def rule_ids(text: str | None) -> tuple[str, ...] | None:
    if text is None:
        return None
    from spikelint.config import RULE_OR_FAMILY

    given = [part.strip() for part in text.split(",") if part.strip()]
    for word in given:
        if not RULE_OR_FAMILY.match(word.upper()):
            # quoted as typed: the final mask knows a token's shape, not its upper-cased copy
            raise UsageError(f"not a rule id or family: {word!r} (expected e.g. SPK101, SPK1, or a team's ACME)")
    return tuple(word.upper() for word in given)


def check_rule_names(config: Config, option: dict[str, tuple[str, ...] | None]) -> None:
    """A typo in a selection must not switch the gate off: unknown ids or prefixes are usage errors."""
    from spikelint.catalog import load_catalog
    from spikelint.config import config_source
    from spikelint.config import unknown_rule_names
    from spikelint.config import with_suggestions

    from spikelint.team import catalog_with_team_rules
    from spikelint.team import rule_set_for

    from spikelint.config import ConfigError

    try:
        known = tuple(catalog_with_team_rules(load_catalog(), rule_set_for(config)))
    except ConfigError as error:  # a team rule file that cannot be used: said before anything is checked
        raise UsageError(f"configuration error: {error}") from None
    for name, given in option.items():
        wrong = [rule for rule in given or () if not any(rule_id.startswith(rule) for rule_id in known)]
        if wrong:
            raise UsageError(f"--{name}: unknown rule id or family {with_suggestions(wrong, known)} "
                             "(spikelint rules lists them)")
    problems = unknown_rule_names(config, known, config_source(config.path) if config.path is not None else None)
    if problems:
        raise UsageError("configuration error: " + "; ".join(problems))


def exit_code(findings: Sequence[Finding], fail_on: str) -> int:
    if fail_on == "never":
        return EXIT_OK
    threshold = SEVERITY_RANK[fail_on]
    return EXIT_FINDINGS if any(SEVERITY_RANK[f.severity] >= threshold for f in findings) else EXIT_OK


def emit(report: Report, fmt: str, output: str | None, prefix: str | None = None, fail_on: str = "info",
          code_frame: bool = True, summary: bool | None = None, masks: Sequence[re.Pattern[str]] = ()) -> None:
    from spikelint.report.output import OutputError
    from spikelint.report.output import emit_report

    try:
        emit_report(report, fmt, output, prefix, fail_on, code_frame, summary, masks)
    except OutputError as error:
        raise UsageError(str(error)) from None


class ReportOption(argparse.Action):
    """``--format`` and ``--output`` as pairs, in the order given: a ``--format`` takes the ``--output``
    next to it (before or after), so ``--format sarif --output s.sarif --format text`` is two reports."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        pairs: list[list[str | None]] = [list(pair) for pair in getattr(namespace, "reports", None) or ()]
        slot = 0 if option_string == "--format" else 1
        if option_string == "-o" and values in FORMATS:  # checkov's ``-o json`` is a format; here it is a file
            parser.error(f"-o names the report's file; for the {values} format write --format {values}")
        if pairs and pairs[-1][slot] is None:
            pairs[-1][slot] = values
        else:
            pairs.append([values, None] if slot == 0 else [None, values])
        namespace.reports = [tuple(pair) for pair in pairs]


def add_report_options(parser: argparse.ArgumentParser, formats: tuple[str, ...]) -> None:
    """``--format``/``--output``, repeatable in pairs: one lint, several reports."""
    parser.add_argument("--format", choices=formats, action=ReportOption, dest="reports",
                        help="output format (default: text; see below); repeat with --output for several reports")
    parser.add_argument("-o", "--output", metavar="FILE", action=ReportOption, dest="reports",
                        help="write the report of the --format next to it to FILE (repeatable in pairs); "
                             "alone, the format the name ends in: .sarif, .json, .xml (JUnit), .html, else text")


# ``-o FILE`` without ``--format``: what the file's name says it holds (text for any other name)
FORMAT_BY_SUFFIX = {".sarif": "sarif", ".json": "json", ".xml": "junit", ".html": "html", ".htm": "html"}


def format_of(output: str | None) -> str:
    """The format an ``--output`` file's name asks for; GitLab's Code Quality report is a ``.json`` named so."""
    if output is None:
        return "text"
    name = os.path.basename(output).lower()
    if name.endswith(".json") and ("code-quality" in name or "codequality" in name or "code_quality" in name):
        return "gitlab"
    return FORMAT_BY_SUFFIX.get(os.path.splitext(name)[1], "text")


def report_targets(args: argparse.Namespace) -> list[tuple[str, str | None]]:
    """The (format, file) pairs asked for; ``None`` is standard output, which at most one may use."""
    targets = [(fmt or format_of(output), output) for fmt, output in getattr(args, "reports", None) or ()] \
        or [("text", None)]
    if sum(output is None for _, output in targets) > 1:
        raise UsageError("--format: at most one report goes to standard output; give the others an --output FILE")
    files = [os.path.normpath(output) for _, output in targets if output is not None]
    if len(set(files)) < len(files):
        raise UsageError("--output: the same file is named twice")
    return targets


def emit_reports(report: Report, targets: Sequence[tuple[str, str | None]], prefix: str | None = None,
                 fail_on: str = "info", code_frame: bool = True, masks: Sequence[re.Pattern[str]] = ()) -> None:
    """Write every report of one run; the summary line on stderr once, after the last. ``masks``: the team's
    own token shapes, masked in every report like the shapes spikelint knows."""
    if len(targets) == 1:
        emit(report, *targets[0], prefix, fail_on, code_frame, masks=masks)
        return
    for fmt, output in targets:
        emit(report, fmt, output, prefix, fail_on, code_frame, summary=False, masks=masks)
    if any(fmt == "text" or output for fmt, output in targets):
        from spikelint.report.output import print_summary

        print_summary(report, any(fmt == "text" for fmt, _ in targets))


def write_baseline(path: Path, report: Report, source: str = "check") -> None:
    """Fingerprints only (never a secret), and a line on stderr saying how many.

    One file serves ``check`` and ``history``: each entry says which wrote it, and writing one
    command's findings keeps the other's entries already in the file. ``check`` leaves out files
    Git does not track (a work-in-progress file is not "what is already there"), and says so, and
    a baseline that holds secrets says that a baselined secret still has to be rotated.
    """
    findings = list(report.findings)
    untracked = 0
    if source == "check":
        from spikelint.files import git_tracked

        tracked = git_tracked(Path.cwd())
        if tracked is not None:
            kept = [f for f in findings if f.path.split("!", 1)[0] in tracked]  # a member: its archive's
            untracked = len(findings) - len(kept)
            findings = kept
    entries = [{"fingerprint": f.fingerprint, "rule": f.rule, "path": f.path, "source": source} for f in findings]
    others = [entry for entry in _existing_entries(path) if entry.get("source", "check") != source]
    data = {"version": 1, "tool": "spikelint", "findings": entries + others}
    from spikelint.util.safe_write import UnsafeTarget
    from spikelint.secrets.output_mask import mask_output
    from spikelint.util.safe_write import write_text_safely

    try:
        write_text_safely(path, mask_output(json.dumps(data, indent=2) + "\n"))
    except UnsafeTarget as error:
        raise UsageError(f"cannot write baseline: {error}") from None
    except OSError as error:
        raise UsageError(f"cannot write baseline {path}: {error.strerror or error}") from None
    count = len(entries)
    kept_note = f" (kept {len(others)} {'history' if source == 'check' else 'check'} " \
        f"entr{'y' if len(others) == 1 else 'ies'} already in it)" if others else ""
    print(f"spikelint: wrote {count} finding{'' if count == 1 else 's'} to baseline {path}{kept_note}", file=sys.stderr)
    if untracked:
        print(f"spikelint: left out {untracked} finding{'' if untracked == 1 else 's'} of files Git does not track: "
              "commit them first if they are part of what is already there, or they stay new findings",
              file=sys.stderr)
    # one secret has one fingerprint, whichever rule (check's SPK202, history's SPK201) reported it
    secrets = len({entry.get("fingerprint") for entry in entries + others
                   if str(entry.get("rule", "")).startswith("SPK2") and entry.get("rule") != "SPK207"})
    if secrets:
        lister = "history --baseline none --ignore SPK207" if source == "history" else \
            "check --baseline none --select SPK2 --ignore SPK207 ."
        print(f"spikelint: warning: the baseline holds {secrets} secret{'' if secrets == 1 else 's'}: a "
              f"baselined secret is still leaked; rotate it (spikelint {lister} lists them)", file=sys.stderr)


def _existing_entries(path: Path) -> list[dict[str, Any]]:
    """The entries of a baseline already at ``path`` (none when there is no readable one)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    found = data.get("findings") if isinstance(data, dict) else None
    return [entry for entry in found if isinstance(entry, dict)] if isinstance(found, list) else []


def read_baseline(path: Path) -> set[str]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise UsageError(f"cannot read baseline {path}: {error.strerror or error}") from None
    except ValueError as error:
        raise UsageError(f"baseline {path} is not valid JSON: {error}") from None
    if not isinstance(data, dict) or not isinstance(data.get("findings"), list):
        raise UsageError(f"baseline {path}: expected an object with a 'findings' list (write one with --write-baseline)")
    return {entry["fingerprint"] for entry in data["findings"] if isinstance(entry, dict) and "fingerprint" in entry}


NO_BASELINE = "none"  # ``--baseline none``: see every finding although the configuration names a baseline


def gate_baseline(given: str | None, config: Config) -> set[str] | None:
    """The baseline a gating command applies: ``--baseline FILE``, else the configuration's
    ``baseline:`` (relative to the configuration file, so the hooks find it from any folder);
    ``None`` when neither names one.  A configured file that is missing is a configuration error."""
    if given == NO_BASELINE:
        return None  # every finding, the baselined ones too
    if given:
        return read_baseline(Path(given))
    if config.baseline is None:
        return None
    path = Path(config.root, config.baseline)
    if not path.exists():
        import shlex

        try:
            shown = os.path.relpath(path)
        except ValueError:  # another drive
            shown = str(path)
        from spikelint.config import config_source
        from spikelint.config import where_written

        place = where_written(config_source(config.path), "baseline") if config.path is not None else "configuration"
        raise UsageError(f"configuration error: {place}: baseline: {config.baseline}: no such file — write "
                         f"it with `spikelint check --write-baseline {shlex.quote(shown)} .` and commit it, or remove "
                         f"the key")
    return read_baseline(path)


def in_their_repository(args: argparse.Namespace, command: Callable[[argparse.Namespace], int]) -> int:
    """Run ``command`` (``check``, ``fix``) in the repository of the given paths when the current folder is not
    in it, as ``git -C`` would: its configuration, baseline, fingerprints and Git; back here afterwards."""
    from spikelint.discovery.repository import SeveralRepositories
    from spikelint.discovery.repository import foreign_root

    try:
        root = None if getattr(args, "stdin_filename", None) else foreign_root(args.paths or ["."], Path.cwd())
    except SeveralRepositories as error:
        raise UsageError(str(error)) from None
    if root is None:
        return command(args)
    here = Path.cwd()
    _rebase(args, here, root)
    print(f"spikelint: checking in {root}, the Git repository of the given paths (its configuration and baseline; "
          "paths relative to it)", file=sys.stderr)
    os.chdir(root)
    try:
        return command(args)
    finally:
        os.chdir(here)


def _rebase(args: argparse.Namespace, here: Path, root: Path) -> None:
    """The command line's paths as seen from ``root``: the given paths relative to it, the files the user names
    (configuration, baseline, pins, reports) absolute: they stay where the user said."""
    args.paths = [os.path.relpath(os.path.realpath(here / path), os.path.realpath(root)) for path in args.paths or ["."]]
    for name in ("config", "write_baseline", "pins"):
        if getattr(args, name, None):
            setattr(args, name, str(here / getattr(args, name)))
    if getattr(args, "baseline", None) and args.baseline != "none":
        args.baseline = str(here / args.baseline)
    if getattr(args, "reports", None):
        args.reports = [(fmt, str(here / output) if output else output) for fmt, output in args.reports]


def configured(args: argparse.Namespace, exclude: bool = True) -> Config:
    """The configuration a command runs with: the file (``--config`` or the nearest one), then
    ``--select``/``--ignore`` (checked against the catalog), ``--fail-on`` and ``--exclude``."""
    from spikelint.config import ConfigError
    from spikelint.config import load_config
    from spikelint.config import with_overrides

    try:
        config = load_config(args.config)
    except ConfigError as error:
        raise UsageError(f"configuration error: {error}") from None
    mask_team_shapes(config)
    select, ignore = rule_ids(args.select), rule_ids(args.ignore)
    check_rule_names(config, {"select": select, "ignore": ignore})
    extra = getattr(args, "exclude", None) if exclude else None
    return with_overrides(config, select=select, ignore=ignore, fail_on=args.fail_on,
                          exclude=(*config.exclude, *extra) if extra else None)


def team_shapes(config: Config) -> tuple[re.Pattern[str], ...]:
    """The team's own token shapes (``secrets:`` in its rule files); none where its rules cannot be read
    (the command that loads them says what is wrong)."""
    if config.team_rules_folder() is None and not config.added_rules_dirs:
        return ()
    from spikelint.team import rule_set_for
    from spikelint.team.ruleset import TeamRuleError

    try:
        return tuple(pattern.regex for pattern in rule_set_for(config).secrets)
    except TeamRuleError:
        return ()


def mask_team_shapes(config: Config) -> None:
    """The team's own token shapes masked in all the command writes from now on, as spikelint's are."""
    shapes = team_shapes(config)
    if shapes:
        from spikelint.secrets.output_mask import mask_team_shapes_on_streams

        mask_team_shapes_on_streams(shapes)


def overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The command-line overrides a sub-configuration must also take (``--select``, ``--ignore``, ``--fail-on``)."""
    pairs = (("select", rule_ids(args.select)), ("ignore", rule_ids(args.ignore)), ("fail_on", args.fail_on))
    return {key: value for key, value in pairs if value is not None}
