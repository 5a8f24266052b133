from __future__ import annotations

from xml.etree import ElementTree

from report_samples import SECRET
from report_samples import SPACED
from report_samples import make_finding

from spikelint.model import Report
from spikelint.report import RenderOptions
from spikelint.report.junit import render_junit


def parse(report: Report, **options: object) -> ElementTree.Element:
    return ElementTree.fromstring(render_junit(report, RenderOptions(**options)).encode("utf-8"))  # type: ignore[arg-type]


def test_counts_match(sample_report):
    root = parse(sample_report)
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    for suite in suites:
        cases = suite.findall("testcase")
        assert int(suite.get("tests")) == len(cases)
        assert int(suite.get("failures")) == sum(1 for case in cases if case.find("failure") is not None)
        assert suite.get("errors") == "0"
    assert int(root.get("tests")) == sum(int(s.get("tests")) for s in suites)
    assert int(root.get("failures")) == sum(int(s.get("failures")) for s in suites)
    # One failing testcase per file and rule: the two SPK303 findings share one.
    assert int(root.get("failures")) == len({(f.path, f.rule) for f in sample_report.findings})


def test_one_suite_per_family_and_a_passing_suite(sample_report):
    root = parse(sample_report)
    names = [suite.get("name") for suite in root.findall("testsuite")]
    assert names == ["SPK1 images", "SPK2 secrets", "SPK3 storage", "SPK5 logs", "SPK7 capacity", "spikelint"]
    passing = root.findall("testsuite")[-1]
    cases = [(case.get("classname"), case.get("name")) for case in passing.findall("testcase")]
    # clean/ok.yaml is named in the sources; one more checked file is known only by count.
    assert cases == [("clean/ok.yaml", "no findings"), ("spikelint", "1 other file checked, no findings")]
    assert passing.get("failures") == "0"


def test_testcases_and_failure_bodies(sample_report):
    root = parse(sample_report)
    case = next(c for c in root.iter("testcase") if c.get("name") == "SPK303 emptydir-for-durable-data")
    assert case.get("classname") == SPACED
    assert case.get("file") == SPACED
    (failure,) = case.findall("failure")
    assert failure.get("message") and failure.get("type") == "SPK303 [warning]"
    assert failure.text.splitlines() == [
        f"{SPACED}:15:11: SPK303 [warning] emptyDir volume mounted at a durable path",
        f"{SPACED}:17:11: SPK303 [warning] emptyDir volume mounted at a durable path",
    ]
    total = sum(len(c.find("failure").text.splitlines()) for c in root.iter("testcase") if c.find("failure") is not None)
    assert total == len(sample_report.findings)


def test_clean_run_has_passing_tests(empty_report):
    root = parse(empty_report)
    assert int(root.get("tests")) == 3 and root.get("failures") == "0"
    assert [case.get("classname") for case in root.iter("testcase")] == ["a.yaml", "b.yaml", "c d/e.sh"]
    assert not list(root.iter("failure"))


def test_clean_run_without_sources_still_counts():
    root = parse(Report([], 7))
    assert int(root.get("tests")) == 1
    assert next(root.iter("testcase")).get("name") == "7 other files checked, no findings"


def test_escaping_and_illegal_characters():
    finding = make_finding(path="a<&>\"b.yaml", message="bad \x00\x1b value <tag> & \"quote\" \ud800 end")
    text = render_junit(Report([finding], 1), RenderOptions())
    text.encode("utf-8")  # no lone surrogates left
    root = ElementTree.fromstring(text.encode("utf-8"))
    failure = next(root.iter("failure"))
    assert failure.get("message") == "bad  value <tag> & \"quote\"  end"
    assert next(root.iter("testcase")).get("classname") == "a<&>\"b.yaml"


def test_xml_declaration_and_prefix(sample_report):
    text = render_junit(sample_report, RenderOptions(path_prefix="ml"))
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>')
    root = ElementTree.fromstring(text.encode("utf-8"))
    assert {case.get("file") for case in root.iter("testcase") if case.get("file")} >= {f"ml/{SPACED}"}


def test_secret_never_in_output(sample_report):
    assert SECRET not in render_junit(sample_report, RenderOptions())
