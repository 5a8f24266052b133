"""JUnit XML, the lowest common denominator of CI test reports (GitLab, Jenkins, Azure …).

Layout: one ``<testsuite>`` per rule family with one ``<testcase>`` per file and rule that
fired; each such testcase has a single ``<failure>`` listing every finding of that rule in
that file, one ``path:line:col: message`` line each.  A single failure element per testcase
because Jenkins reads only the first and GitLab turns several into an unreadable array.
Checked files without findings are passing testcases in suite ``spikelint`` so that a clean
run reports tests > 0 instead of looking like nothing was scanned.  Only findings at or above
the run's ``--fail-on`` are failures: a testcase whose findings are all below it passes and
lists them in ``<system-out>``, so a CI test report never fails what the gate let through.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import Iterable

from spikelint.util.lazyre import lazy_regex
from spikelint.report import at_or_above
from spikelint.report import family_concern
from spikelint.report import ordered
from spikelint.report import repo_path
from spikelint.report import rule_family

if TYPE_CHECKING:
    from xml.etree.ElementTree import Element

    from spikelint.model import Finding
    from spikelint.model import Report
    from spikelint.report import RenderOptions

PASSING_SUITE = "spikelint"
PASSING_NAME = "no findings"

# Characters XML 1.0 cannot carry at all, even as character references.
_ILLEGAL_XML = lazy_regex("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_text(text: str) -> str:
    """``text`` without the characters XML 1.0 forbids (escaping itself is ElementTree's)."""
    return _ILLEGAL_XML.sub("", text)


def render_junit(report: Report, options: RenderOptions) -> str:
    """``<testsuites>``: suites per rule family, then the passing files."""
    from xml.etree import ElementTree

    findings = ordered(report.findings)
    families: dict[str, dict[tuple[str, str], list[Finding]]] = {}
    for finding in findings:
        cases = families.setdefault(rule_family(finding.rule), {})
        cases.setdefault((finding.path, finding.rule), []).append(finding)
    concerns = {rule.id: rule.concern for rule in report.rules}

    root = ElementTree.Element("testsuites", {"name": "spikelint"})
    total_tests = 0
    total_failures = 0
    for family in sorted(families):
        cases = families[family]
        concern = next((concerns[rule] for _, rule in cases if concerns.get(rule)), family_concern(family))
        failing_cases = sum(1 for group in cases.values() if _fails(group, options.fail_on))
        suite = _suite(root, f"{family} {concern}" if concern != family else family, len(cases), failing_cases)
        for (path, rule), group in sorted(cases.items()):
            _finding_case(suite, path, group, options.path_prefix, _fails(group, options.fail_on))
        total_tests += len(cases)
        total_failures += failing_cases

    failing = {finding.path for finding in findings}
    known = set(_checked_paths(report)) | failing
    passing: list[tuple[str, str, str | None]] = [(path, PASSING_NAME, path) for path in sorted(known - failing)]
    unnamed = report.files_checked - len(known)
    if unnamed > 0:
        # Checked files the report does not name still count, so a clean run never shows 0 tests.
        other = "1 other file" if unnamed == 1 else f"{unnamed} other files"
        passing.append((PASSING_SUITE, f"{other} checked, {PASSING_NAME}", None))
    if passing:
        suite = _suite(root, PASSING_SUITE, len(passing), 0)
        for classname, name, file_path in passing:
            case = _case(suite, classname, name)
            if file_path is not None:
                case.set("file", xml_text(repo_path(file_path, options.path_prefix)))
        total_tests += len(passing)

    root.set("tests", str(total_tests))
    root.set("failures", str(total_failures))
    root.set("errors", "0")
    root.set("time", "0")
    ElementTree.indent(root)
    body = ElementTree.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"


def _checked_paths(report: Report) -> Iterable[str]:
    """The files that were checked, as far as the report knows them (``sources`` keys)."""
    return report.sources.keys()


def _suite(root: Element, name: str, tests: int, failures: int) -> Element:
    from xml.etree import ElementTree

    return ElementTree.SubElement(root, "testsuite", {
        "name": xml_text(name),
        "tests": str(tests),
        "failures": str(failures),
        "errors": "0",
        "skipped": "0",
        "time": "0",
    })


def _case(suite: Element, classname: str, name: str) -> Element:
    from xml.etree import ElementTree

    return ElementTree.SubElement(suite, "testcase", {
        "classname": xml_text(classname),
        "name": xml_text(name),
        "time": "0",
    })


def _fails(group: list[Finding], fail_on: str) -> bool:
    return any(at_or_above(finding.severity, fail_on) for finding in group)


def _finding_case(suite: Element, path: str, group: list[Finding], prefix: str, fails: bool) -> None:
    from xml.etree import ElementTree

    first = group[0]
    case = _case(suite, path, f"{first.rule} {first.name}")
    case.set("file", xml_text(repo_path(path, prefix)))
    severity = _worst(group)
    message = first.message if len(group) == 1 else f"{len(group)} findings; first: {first.message}"
    if fails:
        failure = ElementTree.SubElement(case, "failure", {
            "message": xml_text(message),
            "type": xml_text(f"{first.rule} [{severity}]"),
        })
    else:
        failure = ElementTree.SubElement(case, "system-out")
    failure.text = xml_text("\n".join(
        f"{finding.path}:{finding.line}:{finding.column}: {finding.rule} [{finding.severity}] {finding.message}"
        for finding in group
    ))


def _worst(group: list[Finding]) -> str:
    rank = {"error": 0, "warning": 1, "info": 2}
    return min((finding.severity for finding in group), key=lambda severity: rank.get(severity, 3))
