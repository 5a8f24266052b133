"""Documents -> findings: runs the checks, then applies selection, suppressions, severity
overrides, fingerprints, baseline and diff filters.  Nothing here prints."""

from __future__ import annotations

import os
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from functools import partial
from datetime import date
from pathlib import Path
from pathlib import PurePosixPath
from typing import Any
from typing import Iterable
from typing import Iterator
from typing import Sequence

from spikelint import __version__
from spikelint.adapters import workloads_in
from spikelint.adapters.purpose import TRAINING_RULES
from spikelint.adapters.purpose import reconsider
from spikelint.catalog import load_catalog
from spikelint.checks import all_checks
from spikelint.checks.registry import CheckContext
from spikelint.checks.registry import CheckSpec
from spikelint.team import catalog_with_team_rules
from spikelint.team import rule_set_for
from spikelint.team import team_checks
from spikelint.team import with_team_companions
from spikelint.config import Config
from spikelint.config import config_from_mapping
from spikelint.config import selected
from spikelint.files import Discovery
from spikelint.files import detect_kind
from spikelint.files import discover
from spikelint.files import leave_out_vendored
from spikelint.files import matches_any
from spikelint.discovery.hierarchy import SUB_CONFIG_NAMES
from spikelint.discovery.hierarchy import Layers
from spikelint.discovery.kustomize import is_patch_fragment
from spikelint.facts.entry_script import workload_entry_texts
from spikelint.documents import FILLED_IN_KEY
from spikelint.pipeline.fingerprint import identity_path
from spikelint.pipeline.fingerprint import identity_root
from spikelint.pipeline.fingerprint import root_prefix
from spikelint.pipeline.fingerprint import next_fingerprint
from spikelint.pipeline.masking import finding_lines
from spikelint.pipeline.masking import mask_file
from spikelint.pipeline.commit import keep_commit_findings
from spikelint.model import Document
from spikelint.model import FileKind
from spikelint.model import Finding
from spikelint.model import Problem
from spikelint.model import Report
from spikelint.model import SEVERITIES
from spikelint.model import Rule
from spikelint.model import SourceFile
from spikelint.model import Suppression
from spikelint.model import Workload
from spikelint.discovery.project import Project
from spikelint.documents.suppressions import covers
from spikelint.documents.suppressions import expired
from spikelint.documents.suppressions import until_date
from spikelint.discovery.workspace import workspace
from spikelint.pipeline.results import FileResult
from spikelint.pipeline.results import result_from_data
from spikelint.pipeline.results import result_to_data
from spikelint.pipeline.workers import file_cost
from spikelint.pipeline.workers import free_cpus
from spikelint.pipeline.workers import run_split
from spikelint.pipeline.workers import usable_cpus
from spikelint.pipeline.workers import worker_count

def _check_name(spec: CheckSpec) -> str:
    function = getattr(spec.function, "func", spec.function)  # the team rules' check is a partial
    return str(getattr(function, "__name__", function))


def _rules_and_checks(config: Config) -> tuple[Config, dict[str, Rule], tuple[CheckSpec, ...], tuple[Any, ...]]:
    """The catalog with the team's rules, the selected checks (the team's among them), and the team's own
    token shapes (masked in the source lines kept for code frames, like the shapes spikelint knows)."""
    team = rule_set_for(config)
    config = with_team_companions(config, team)
    checks = [spec for spec in all_checks() if any(selected(rule, config) for rule in spec.rules)]
    # the team's first: _finish keeps the first finding of one value at one place, so a secret is named as the team names it
    return (config, catalog_with_team_rules(load_catalog(), team), (*team_checks(config, team), *checks),
            tuple(pattern.regex for pattern in team.secrets))


@dataclass(frozen=True)
class Engine:
    config: Config
    catalog: dict[str, Rule]
    checks: tuple[CheckSpec, ...]
    today: date
    cwd: Path = Path(".")  # what document paths are relative to (per_path_ignores may be relative to config.root)
    root_prefix: str = ""  # cwd relative to the repository root: fingerprints key on root-relative paths
    layers: Layers | None = None  # sub-folder configurations, when a run has them
    _engines: dict[int, Engine] = field(default_factory=dict, compare=False, repr=False)
    masks: tuple[Any, ...] = ()  # the team's token shapes (compiled patterns)

    @classmethod
    def create(cls, config: Config, today: date | None = None, cwd: Path | None = None,
               root_prefix: str = "", layers: Layers | None = None) -> Engine:
        config, catalog, checks, masks = _rules_and_checks(config)
        return cls(config, catalog, checks, today or date.today(), cwd or Path.cwd(), root_prefix, layers,
                   masks=masks)

    def for_path(self, path: str) -> Engine:
        """The engine of the configuration that applies to ``path`` (a sub-folder's may refine the top one)."""
        if self.layers is None:
            return self
        layer = self.layers.for_path(path)
        if layer is self.layers.top:
            return self
        if id(layer) not in self._engines:
            config, catalog, checks, masks = _rules_and_checks(layer)
            self._engines[id(layer)] = replace(self, config=config, catalog=catalog, checks=checks, layers=None,
                                               _engines={}, masks=masks)
        return self._engines[id(layer)]

    def check_document(self, document: Document, project: Project) -> FileResult:
        problems: list[Problem] = list(document.problems)
        internal: list[str] = []
        workloads: list[Workload] = []
        checked = _checkable_view(document)
        if checked is not None:
            if checked is document:
                workloads = self._workloads(document, internal)
                if workloads and is_patch_fragment(project, document.path):
                    workloads = []  # a kustomize patch: a fragment of the workload it patches
                for workload in workloads:
                    if workload.is_training and not workload.training_stated:
                        reconsider(workload, workload_entry_texts(workload, document, project))
            context = CheckContext(self.config, project, self.today, tuple(workloads))
            for spec in self.checks:
                if spec.scope == "document" and (not spec.kinds or checked.kind in spec.kinds):
                    problems.extend(self._run(spec, (checked, context), document, internal))
                elif spec.scope == "workload":
                    for workload in workloads:
                        found = self._run(spec, (workload, document, context), document, internal)
                        problems.extend(_with_evidence(found, workload))
        result = FileResult(document.path, internal_errors=internal)
        self._finish(document, workloads, problems, result)
        masked: list[Finding] = []
        for path in sorted({finding.path for finding in result.findings}):  # snippets need only these files
            shown = document if path == document.path else project.parsed.get(path)
            own = [finding for finding in result.findings if finding.path == path]
            notes = result.internal_errors if path == document.path else []
            own, lines, notes = mask_file(own, path, finding_lines(shown.text, own) if shown is not None else [], notes,
                                          self.masks)
            if path == document.path:
                result.internal_errors = notes
            result.sources[path] = lines
            masked.extend(own)
        result.findings = masked
        return result

    def _workloads(self, document: Document, internal: list[str]) -> list[Workload]:
        try:
            return workloads_in(document, self.config)
        except Exception as error:  # noqa: BLE001 - one bad file must not stop the run
            internal.append(_describe_crash("workload adapters", document, error))
            return []

    def _run(self, spec: CheckSpec, arguments: tuple[Any, ...], document: Document, internal: list[str]) -> list[Problem]:
        try:
            problems = list(spec.function(*arguments))
        except Exception as error:  # noqa: BLE001 - one bad check must not stop the run
            internal.append(_describe_crash(_check_name(spec), document, error))
            return []
        undeclared = sorted({problem.rule for problem in problems} - set(spec.rules))
        if undeclared:  # a check that reports a rule it does not declare: a bug to say, never a finding to drop quietly
            internal.append(f"{document.path}: internal error in {_check_name(spec)}: it reported "
                            f"{', '.join(undeclared)}, which it does not declare")
        return [problem for problem in problems if problem.rule in spec.rules]

    def _finish(self, document: Document, workloads: list[Workload], problems: list[Problem], result: FileResult) -> None:
        """Selection, de-duplication, suppressions, severity, fingerprints."""
        suppressions = list(document.suppressions)
        object_suppressions: list[tuple[Suppression, tuple[int, int]]] = []
        for workload in workloads:
            line_range = workload.platform.line_range
            object_suppressions.extend((suppression, line_range) for suppression in workload.disabled_rules)
        disallowed: list[Suppression] = []
        if not self.config.allow_inline_suppressions:
            disallowed = [*suppressions, *(suppression for suppression, _ in object_suppressions)]
            suppressions, object_suppressions = [], []
        path_ignores = self._path_ignores(document.path)
        seen: set[tuple[str, int, int, str]] = set()
        occurrences: dict[tuple[str, str, str], int] = {}
        matched: dict[int, set[str]] = {}  # id(suppression) -> the rule ids/prefixes it named that matched
        kept: list[Finding] = []
        lines: list[str] | None = None
        for problem in sorted(problems, key=lambda p: (p.line, p.column, p.rule)):
            if not selected(problem.rule, self.config) or problem.rule not in self.catalog:
                continue
            identity = problem.identity()
            if identity in seen:
                continue
            seen.add(identity)
            foreign = problem.path if problem.path != document.path else None  # e.g. in a referenced config
            ignores = self._path_ignores(foreign) if foreign is not None else path_ignores
            if any(problem.rule.startswith(prefix) for rules in ignores for prefix in rules):
                result.suppressed += 1
                continue
            if foreign is None and self._suppressed(problem, suppressions, object_suppressions, matched):
                result.suppressed += 1
                continue
            if lines is None and problem.key == "":
                lines = document.text.splitlines()
            kept.append(self._finding(problem, document, occurrences, lines or ()))
        kept.extend(self._suppression_findings(document, suppressions, [s for s, _ in object_suppressions], matched))
        kept.extend(self._disallowed_findings(document, disallowed))
        result.findings = kept

    def _disallowed_findings(self, document: Document, disallowed: list[Suppression]) -> Iterator[Finding]:
        """SPK002 for each spikelint suppression that ``allow_inline_suppressions: false`` turns off."""
        if not disallowed or not selected("SPK002", self.config) or "SPK002" not in self.catalog:
            return
        occurrences: dict[tuple[str, str, str], int] = {}
        for suppression in disallowed:
            if not suppression.report_unused:
                continue  # a detect-secrets pragma: ignored too, but other tools own it
            rules = ",".join(suppression.rules)
            problem = Problem("SPK002", suppression.line, suppression.column,
                              f"suppression of {rules} has no effect: the configuration sets "
                              f"allow_inline_suppressions: false — fix the finding, or ask for a per_path_ignores "
                              f"entry or a baseline", key=f"disallowed:{rules}")
            yield self._finding(problem, document, occurrences)

    def _path_ignores(self, path: str) -> list[tuple[str, ...]]:
        if not self.config.per_path_ignores:
            return []
        base = Path(self.config.root) if self.config.path is not None else None
        return [rules for glob, rules in self.config.per_path_ignores.items()
                if matches_any(path, (glob,), self.cwd, base)]

    def _suppressed(self, problem: Problem, inline: list[Suppression],
                    object_wide: list[tuple[Suppression, tuple[int, int]]], matched: dict[int, set[str]]) -> bool:
        hit = [suppression for suppression in inline
               if not suppression.misplaced and covers(suppression, problem.rule, problem.line)]
        hit.extend(suppression for suppression, (first, last) in object_wide
                   if first <= problem.line <= last
                   and covers(suppression, problem.rule, problem.line if suppression.applies_to else 0))
        for suppression in hit:
            suppression.used = True
            matched.setdefault(id(suppression), set()).update(
                rule for rule in suppression.rules if problem.rule.startswith(rule))
        return any(not expired(suppression, self.today) for suppression in hit)

    def _suppression_findings(self, document: Document, inline: list[Suppression], object_wide: list[Suppression],
                              matched: dict[int, set[str]]) -> Iterator[Finding]:
        """SPK002 for suppressions that expired, or that name a rule which matched nothing."""
        if not selected("SPK002", self.config) or "SPK002" not in self.catalog:
            return
        occurrences: dict[tuple[str, str, str], int] = {}
        for suppression in [*inline, *object_wide]:
            rules = ",".join(suppression.rules)
            if suppression.misplaced:
                problem = Problem("SPK002", suppression.line, suppression.column,
                                  f"suppression of {rules} is not honoured: {suppression.misplaced}",
                                  severity="warning", key=f"misplaced:{rules}")
                yield self._finding(problem, document, occurrences)
                continue
            unknown = [rule for rule in suppression.rules if not any(known.startswith(rule) for known in self.catalog)]
            unused = [rule for rule in suppression.rules
                      if rule not in matched.get(id(suppression), ()) and self._judged(rule)]
            if unknown and suppression.report_unused:
                problem = Problem("SPK002", suppression.line, suppression.column, f"suppression names {','.join(unknown)}"
                                  ", which is no rule id: correct it (spikelint rules lists them) or remove it",
                                  key=f"unknown:{','.join(unknown)}")
            elif suppression.until is not None and until_date(suppression.until) is None:
                problem = Problem("SPK002", suppression.line, suppression.column, f"suppression of {rules} has until="
                                  f"{suppression.until}, which is not a date (YYYY-MM-DD, e.g. 2026-12-31): it "
                                  "suppresses nothing until the date is fixed", key=f"bad-until:{rules}")
            elif suppression.used and expired(suppression, self.today):
                problem = Problem("SPK002", suppression.line, suppression.column,
                                  f"suppression of {rules} expired on {suppression.until}: it no longer suppresses; "
                                  f"fix the finding or renew the date", key=f"expired:{rules}")
            elif not suppression.report_unused or not unused:
                continue
            elif suppression.used:
                names = ",".join(unused)
                problem = Problem("SPK002", suppression.line, suppression.column,
                                  f"suppression names {names}, which matches no finding here: remove it from the "
                                  f"list", key=f"unused:{names}")
            elif len(unused) == len(suppression.rules):
                problem = Problem("SPK002", suppression.line, suppression.column,
                                  f"suppression of {rules} matches no finding: remove it", key=f"unused:{rules}")
            else:
                continue  # some named rules do not run here, so the suppression cannot be judged
            yield self._finding(problem, document, occurrences)

    def _judged(self, rule: str) -> bool:
        """A suppression of ``rule`` can be judged unused only when every rule it covers runs."""
        covered = [rule_id for rule_id in self.catalog if rule_id.startswith(rule)]
        return bool(covered) and all(selected(rule_id, self.config) for rule_id in covered)

    def _finding(self, problem: Problem, document: Document, occurrences: dict[tuple[str, str, str], int],
                 lines: Sequence[str] = ()) -> Finding:
        """``lines``: the document's lines, split once by the caller (a split per finding is quadratic)."""
        rule = self.catalog[problem.rule]
        stated = problem.severity if problem.severity in SEVERITIES else None
        severity = self.config.severity.get(problem.rule) or stated or rule.severity
        path = problem.path or document.path
        key = problem.key or (lines[problem.line - 1].strip() if 0 < problem.line <= len(lines) else problem.message)
        print_, aliases = next_fingerprint(occurrences, problem.rule, identity_path(path, self.root_prefix), key,
                                           problem.legacy_key)
        line, column = max(problem.line, 1), max(problem.column, 1)  # 1-based in every report format
        backwards = problem.end_line is not None and problem.end_line < line
        end_line, end_column = (None, None) if backwards else (problem.end_line, problem.end_column)
        return Finding(problem.rule, rule.name, severity, path, line, column, problem.message, print_, end_line,
                       end_column, aliases=aliases)


def _with_evidence(problems: list[Problem], workload: Workload) -> list[Problem]:
    """A training rule's finding names what makes the object a training workload (rules.md)."""
    if not workload.is_training or not workload.evidence:
        return problems
    return [replace(problem, message=f"{problem.message} (because: {workload.evidence})")
            if problem.rule in TRAINING_RULES and problem.path is None else problem for problem in problems]


def _checkable_view(document: Document) -> Document | None:
    """What the checks may look at, so a parse error or a skipped template never hides a token.

    A script or Dockerfile with a syntax error keeps what its parser recovered; any other file
    that could not be parsed, or an unrendered template, is still scanned as plain text (only
    the text-level rules, secrets, apply to that); a file skipped unread has nothing to check.
    """
    # a Dockerfile's lines that a program fills in are a note about those lines: the rest was read
    rules = {problem.rule for problem in document.problems if problem.key != FILLED_IN_KEY}
    if not rules & {"SPK001", "SPK003"}:
        return document
    if "SPK003" not in rules and document.parsed is not None and document.kind in (FileKind.SHELL, FileKind.DOCKERFILE):
        return document
    if not document.text:
        return None
    return Document(SourceFile(document.path, document.source.abspath, FileKind.TEXT), document.text)


def _describe_crash(where: str, document: Document, error: Exception) -> str:
    import traceback

    frame = traceback.extract_tb(error.__traceback__)[-1] if error.__traceback__ else None
    location = f" ({Path(frame.filename).name}:{frame.lineno})" if frame else ""
    return f"{document.path}: internal error in {where}{location}: {type(error).__name__}: {error}"


# --------------------------------------------------------------------------- whole runs


@dataclass
class RunResult:
    report: Report
    discovery: Discovery
    internal_errors: list[str]
    root_prefix: str = ""  # the current folder relative to the repository root ("deploy/")
    dependents: list[str] = field(default_factory=list)  # not given, checked: they reference a given file
    outside: int = 0  # hook: findings of referrers outside the commit left out (they name no file of it)


@dataclass(frozen=True)
class _Plan:
    """What to check (``sources``; from index ``first_dependent`` on, only if they reference a ``given`` file)
    and what references resolve against (``context``)."""

    sources: list[SourceFile]
    context: list[SourceFile]
    first_dependent: int
    given: frozenset[str]
    root: str = "/"  # listed context files are read only inside it (a link out of the tree is not followed)


def _check_chunk(engine: Engine, plan: _Plan, chunk: Iterable[int]) -> list[FileResult]:
    project = Project(plan.context, image_limits=engine.config.image_limits(), root=plan.root,
                      max_file_size=engine.config.max_file_size)
    results = []
    for index in chunk:
        project.resolved.clear()
        project.touched.clear()
        project.looked_up.clear()
        source = plan.sources[index]
        result = _check_source(engine.for_path(source.path), source, project)
        project.release(source.path)
        if index >= plan.first_dependent:
            if not project.resolved & plan.given:
                continue
            result.dependent = True
        result.touched = sorted(project.touched - {result.path})
        result.looked_up = sorted(project.looked_up)
        results.append(result)
    return results


def _check_source(engine: Engine, source: SourceFile, project: Project) -> FileResult:
    """Read and check one file; a crash while reading it is an internal error, not the end of the run."""
    try:
        document = project.document(source)
    except Exception as error:  # noqa: BLE001 - a parser bug must not stop the other files
        empty = Document(source, "")
        return FileResult(source.path, internal_errors=[_describe_crash("the parser", empty, error)])
    return engine.check_document(document, project)


def skipped_results(discovery: Discovery, engine: Engine) -> list[FileResult]:
    """SPK003 for what discovery skipped (too large, not a regular file, links out of the tree)."""
    results = []
    for path, reason in discovery.skipped:
        document = Document(SourceFile(path, path, detect_kind(path)), "",
                            problems=[Problem("SPK003", 1, 1, f"file skipped: {reason}", key=reason)])
        results.append(engine.check_document(document, Project()))
    from spikelint.documents.bounded import oversized_document

    for source, size in discovery.oversized:
        results.append(engine.check_document(oversized_document(source, size, engine.config.max_file_size), Project()))
    return results


def check_paths(paths: list[str], config: Config, *, cwd: Path | None = None, jobs: int | None = None,
                stdin_text: str | bytes | None = None, stdin_filename: str | None = None,
                overrides: dict[str, Any] | None = None, cache: bool = False, hook: bool = False) -> RunResult:
    """Check ``paths`` (or ``stdin_text`` as if it were ``stdin_filename``); bytes are decoded like a file.

    ``overrides``: the command-line settings already in ``config``, re-applied over sub-folder
    configurations.  Raises ConfigError for an invalid sub-folder configuration.
    ``cache``: reuse the results of unchanged files from ``.spikelint_cache/`` and update it.
    ``hook``: ``paths`` are a commit's files (what pre-commit passes): only tracked files re-check them as
    referrers, and only for the findings that name a file of the commit (:mod:`spikelint.pipeline.commit`).
    """
    cwd = cwd or Path.cwd()
    config_root = cwd / config.root if config.path is not None else None
    layers = Layers(config, (config_root or cwd).resolve(), cwd.resolve(), dict(overrides or {}),
                    tuple(catalog_with_team_rules(load_catalog(), rule_set_for(config))),
                    lambda layer: tuple(rule.id for rule in rule_set_for(layer).rules))
    engine = Engine.create(config, cwd=cwd, root_prefix=root_prefix(cwd, identity_root(cwd, config_root)),
                           layers=layers)
    if stdin_text is not None and stdin_filename is not None:
        discovery = Discovery()
        head = stdin_text[:128] if isinstance(stdin_text, str) else stdin_text[:128].decode("utf-8", "replace")
        name = Path(os.path.normpath(stdin_filename)).as_posix()  # ./a/b.yaml -> a/b.yaml, like discovered paths
        source = SourceFile(name, str(cwd / name), detect_kind(name, head))
        from spikelint.documents import parse_bytes
        from spikelint.documents import parse_text

        space = workspace([name], [source], config, cwd)
        project = Project([source, *space.context], root=space.root or "/", max_file_size=config.max_file_size)
        document = parse_text(source, stdin_text) if isinstance(stdin_text, str) else parse_bytes(source, stdin_text)
        project.parsed[source.path] = document
        results = [engine.check_document(document, project)]
        discovery.files.append(source)
    else:
        base = Path(config.root) if config.path is not None else None
        discovery = discover(paths, cwd=cwd, exclude=config.exclude, max_file_size=config.max_file_size, base=base)
        if hook:
            leave_out_vendored(discovery)
        _sub_folder_excludes(discovery, layers, cwd, base)
        space = workspace(paths, discovery.files, config, cwd, hook)
        space.dependents = [source for source in space.dependents
                            if not matches_any(source.path, layers.for_path(source.path).exclude, cwd, base)]
        plan = _Plan([*discovery.files, *space.dependents], [*discovery.files, *space.context], len(discovery.files),
                     frozenset(source.path for source in discovery.files), space.root or "/")
        results = _cached_check(engine, plan, jobs, base or cwd) \
            if cache and not config.schemas and not _has_sub_folder_configs(discovery, cwd, config) \
            else _check_sources(engine, plan, jobs)
        results.extend(skipped_results(discovery, engine))
    dependents = sorted(result.path for result in results if result.dependent)
    outside = keep_commit_findings(results, [source.path for source in discovery.files]) if hook and dependents else 0
    checked = len(discovery.files) + len(dependents) + len(discovery.skipped) + len(discovery.oversized)
    return RunResult(build_report(engine, results, checked), discovery,
                     [message for result in results for message in result.internal_errors], engine.root_prefix,
                     dependents, outside)


def _has_sub_folder_configs(discovery: Discovery, cwd: Path, config: Config) -> bool:
    """Whether a sub-folder refines the configuration: the cache is keyed on one configuration only."""
    top = (cwd / config.path).resolve() if config.path is not None else None
    return any(PurePosixPath(source.path).name in SUB_CONFIG_NAMES and (cwd / source.path).resolve() != top
               for source in discovery.files)


def _sub_folder_excludes(discovery: Discovery, layers: Layers, cwd: Path, base: Path | None) -> None:
    """Leave out what a sub-folder's configuration excludes (the top one's was applied by discovery)."""
    kept = []
    for source in discovery.files:
        config = layers.for_path(source.path)
        if config is not layers.top and matches_any(source.path, config.exclude, cwd, base or layers.top_folder):
            discovery.excluded.append((source.path, "matches an exclude pattern of a sub-folder configuration"))
        else:
            kept.append(source)
    discovery.files = kept


def _cached_check(engine: Engine, plan: _Plan, jobs: int | None, folder: Path) -> list[FileResult]:
    """Check only the given files whose cached results are stale (and the dependents, always)."""
    from spikelint.pipeline.cache import FOLDER
    from spikelint.pipeline.cache import Dependencies
    from spikelint.pipeline.cache import ResultCache
    from spikelint.pipeline.cache import file_digest
    from spikelint.pipeline.cache import run_key

    store = ResultCache(folder / FOLDER, run_key(engine.config, engine.cwd, engine.today))
    by_path = {source.path: source for source in plan.context}
    digests: dict[str, str | None] = {}

    def digest(path: str) -> str | None:
        if path not in digests:
            digests[path] = file_digest(by_path[path].abspath) if path in by_path else None
        return digests[path]

    named: dict[str, list[str]] = {}
    for source in plan.context:
        named.setdefault(PurePosixPath(source.path).name, []).append(source.path)
    given = plan.sources[:plan.first_dependent]
    reused: dict[str, FileResult] = {}
    stale: list[SourceFile] = []
    for source in given:
        own = digest(source.path)
        data = store.lookup(source.path, own, digest, named) if own is not None else None
        if data is None:
            stale.append(source)
        else:
            reused[source.path] = result_from_data(source.path, data)
    todo = _Plan([*stale, *plan.sources[plan.first_dependent:]], plan.context, len(stale), plan.given, plan.root)
    results = _check_sources(engine, todo, jobs)
    for result in results:
        own = digest(result.path)
        if not result.dependent and own is not None and not result.internal_errors:
            dependencies = Dependencies({path: digest(path) or "" for path in result.touched},
                                        {name: sorted(named.get(name, [])) for name in result.looked_up})
            store.store(result.path, own, dependencies, result_to_data(result))
    store.save()
    checked = {result.path: result for result in results if not result.dependent}
    return [reused.get(source.path) or checked[source.path] for source in given
            if source.path in reused or source.path in checked] + [result for result in results if result.dependent]


def _check_sources(engine: Engine, plan: _Plan, jobs: int | None) -> list[FileResult]:
    size = sum(source.size for source in plan.sources)
    workers = worker_count(jobs, len(plan.sources), size, usable_cpus()) if jobs is None or jobs > 1 else 1
    if workers > 1:  # worth splitting on an idle machine: how many CPUs are free now?
        workers = worker_count(workers, len(plan.sources), size, free_cpus())
    return check_sources(engine, plan, workers)


def check_sources(engine: Engine, plan: _Plan, workers: int) -> list[FileResult]:
    """Check ``plan`` in-process (``workers`` <= 1) or in ``workers`` processes of about equal work."""
    if workers <= 1:
        return _check_chunk(engine, plan, range(len(plan.sources)))
    results = run_split(partial(_check_chunk, engine, plan), [file_cost(source.size) for source in plan.sources],
                        workers)
    order = {source.path: index for index, source in enumerate(plan.sources)}
    return sorted(results, key=lambda result: order.get(result.path, len(order)))


def build_report(engine: Engine, results: list[FileResult], files_checked: int) -> Report:
    findings = sorted((finding for result in results for finding in result.findings), key=Finding.sort_key)
    rules = [rule for rule_id, rule in sorted(engine.catalog.items()) if selected(rule_id, engine.config)]
    return Report(findings=findings, files_checked=files_checked,
                  suppressed=sum(result.suppressed for result in results), rules=rules,
                  sources=_sources(results), tool_version=__version__)


def _sources(results: list[FileResult]) -> dict[str, list[str]]:
    """Every checked path (JUnit lists them), with lines only where a finding needs a snippet."""
    sources: dict[str, list[str]] = {result.path: [] for result in results}
    for result in results:
        for path, lines in result.sources.items():
            if lines or path not in sources:
                sources[path] = lines
    return sources


def lint_snippet(filename: str, text: str, config: dict[str, Any] | None = None,
                 extra_files: dict[str, str] | None = None, today: date | None = None) -> list[Finding]:
    """Lint ``text`` as if it were ``filename`` (tests, catalog examples, editors)."""
    from spikelint.documents import parse_text

    settings = config_from_mapping(dict(config or {}), source="<snippet config>", root=".")
    engine = Engine.create(settings, today)
    sources = [SourceFile(filename, filename, detect_kind(filename, text[:128]))]
    texts = {filename: text}
    for name, body in (extra_files or {}).items():
        sources.append(SourceFile(name, name, detect_kind(name, body[:128])))
        texts[name] = body
    project = Project(sources)
    for source in sources:
        project.parsed[source.path] = parse_text(source, texts[source.path])
    result = engine.check_document(project.parsed[filename], project)
    if result.internal_errors:
        raise RuntimeError("; ".join(result.internal_errors))
    return sorted(result.findings, key=Finding.sort_key)


def apply_baseline(report: Report, fingerprints: set[str]) -> Report:
    kept = [finding for finding in report.findings
            if finding.fingerprint not in fingerprints and fingerprints.isdisjoint(finding.aliases)]
    return replace(report, findings=kept, baselined=report.baselined + len(report.findings) - len(kept))
