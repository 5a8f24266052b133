"""SPK003 once per chart; templated files elsewhere parse as YAML and keep their real errors (SPK001)."""

from __future__ import annotations

from spikelint.documents import UnrenderedTemplate
from spikelint.documents import parse_text
from spikelint.engine import lint_snippet
from spikelint.files import detect_kind
from spikelint.model import SourceFile

CHART = "apiVersion: v2\nname: trainer\nversion: 0.3.1\n"
TEMPLATE = ("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {{ include \"trainer.fullname\" . }}\nspec:\n"
            "  template:\n    spec:\n      containers:\n        - name: trainer\n"
            "          image: \"{{ .Values.image.repository }}:{{ .Values.image.tag }}\"\n")
HELPERS = '{{- define "trainer.fullname" -}}\n{{ .Release.Name }}-trainer\n{{- end }}\n'
SUITE = ("suite: job renders\ntemplates:\n  - templates/job.yaml\ntests:\n  - it: sets the image\n"
         "    set:\n      image.tag: latest\n    asserts:\n      - isKind:\n          of: Job\n")
JOB = ("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: smoke\nspec:\n  template:\n    spec:\n"
       "      restartPolicy: Never\n      containers:\n        - name: main\n"
       "          image: registry.example.org/tools/smoke:1.2.3@sha256:" + "ab" * 32 + "\n")


def pairs(filename: str, text: str, extra: dict[str, str] | None = None, rule: str = "SPK003") -> list[tuple[int, str]]:
    return [(f.line, f.rule) for f in lint_snippet(filename, text, extra_files=extra) if f.rule == rule]


def chart_files(prefix: str = "chart/") -> dict[str, str]:
    return {f"{prefix}Chart.yaml": CHART, f"{prefix}templates/job.yaml": TEMPLATE,
            f"{prefix}templates/_helpers.tpl": HELPERS, f"{prefix}templates/NOTES.txt": "Installed {{ .Release.Name }}\n",
            f"{prefix}values.yaml": "image:\n  repository: registry.example.org/ml/trainer\n  tag: 1.4.2\n"}


def test_one_notice_per_chart_at_its_chart_yaml() -> None:
    files = chart_files()
    findings = [f for f in lint_snippet("chart/Chart.yaml", CHART, extra_files=files) if f.rule == "SPK003"]
    assert [(f.line, f.column) for f in findings] == [(1, 1)]
    assert "3 unrendered Helm templates" in findings[0].message
    assert "helm template release chart | spikelint check --stdin-filename chart/rendered.yaml" in findings[0].message
    for name in ("chart/templates/job.yaml", "chart/templates/_helpers.tpl", "chart/templates/NOTES.txt"):
        assert pairs(name, files[name], files) == [], name


def test_a_chart_without_templates_needing_rendering_has_no_notice() -> None:
    files = {"chart/Chart.yaml": CHART, "chart/templates/configmap.yaml": "kind: ConfigMap\ndata: {}\n"}
    assert pairs("chart/Chart.yaml", CHART, files) == []


def test_a_subchart_counts_its_own_templates() -> None:
    files = {**chart_files(), **chart_files("chart/charts/worker/")}
    parent = [f for f in lint_snippet("chart/Chart.yaml", CHART, extra_files=files) if f.rule == "SPK003"]
    child = [f for f in lint_snippet("chart/charts/worker/Chart.yaml", CHART, extra_files=files) if f.rule == "SPK003"]
    assert len(parent) == len(child) == 1
    assert "3 unrendered" in parent[0].message and "3 unrendered" in child[0].message


def test_templated_chart_files_outside_templates_count_with_the_chart() -> None:
    patch = "spec:\n  template:\n    spec:\n      containers:\n        {{- toYaml .Values.containers | nindent 8 }}\n"
    files = {**chart_files(), "chart/files/deployment-patch.yaml": patch}
    findings = [f for f in lint_snippet("chart/Chart.yaml", CHART, extra_files=files) if f.rule == "SPK003"]
    assert "4 unrendered" in findings[0].message
    assert pairs("chart/files/deployment-patch.yaml", patch, files) == []


def test_templates_without_chart_yaml_report_at_the_first_template() -> None:
    assert pairs("deploy/templates/a.yaml", TEMPLATE, {"deploy/templates/b.yaml": TEMPLATE}) == [(1, "SPK003")]
    assert pairs("deploy/templates/b.yaml", TEMPLATE, {"deploy/templates/a.yaml": TEMPLATE}) == []
    (finding,) = [f for f in lint_snippet("deploy/templates/a.yaml", TEMPLATE,
                                          extra_files={"deploy/templates/b.yaml": TEMPLATE}) if f.rule == "SPK003"]
    assert "2 unrendered Helm templates" in finding.message


def test_a_templates_folder_of_another_tool_gets_no_helm_advice() -> None:
    """CloudFormation templates rendered by a Go program (``{{ .db.password }}``, sprig's ``toYaml``) sit in a
    ``templates/`` folder with no Chart.yaml: they are skipped, but `helm template` would not render them."""
    cloudformation = ("AWSTemplateFormatVersion: '2010-09-09'\nResources:\n  Master:\n    Properties:\n"
                      "      UserData: |\n        password: \"{{ .db.password }}\"\n        {{- toYaml .pools | nindent 6}}\n"
                      "        {{- if .db.ssl_mode }}\n")
    (finding,) = [f for f in lint_snippet("deploy/aws/templates/efs.yaml", cloudformation) if f.rule == "SPK003"]
    assert "unrendered template in deploy/aws/ not checked" in finding.message and "helm" not in finding.message


def test_one_template_on_standard_input_is_reported_there() -> None:
    (finding,) = [f for f in lint_snippet("chart/templates/job.yaml", TEMPLATE) if f.rule == "SPK003"]
    assert finding.line == 1 and "1 unrendered Helm template " in finding.message


def test_skipped_templates_are_still_scanned_for_secrets() -> None:
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    text = TEMPLATE + f"          env:\n            - name: GH\n              value: {token}\n"
    rules = {f.rule for f in lint_snippet("chart/templates/job.yaml", text)}
    assert "SPK003" in rules and rules & {"SPK201", "SPK202"}


def test_helm_unittest_suites_are_skipped_silently_and_never_workloads() -> None:
    files = {**chart_files(), "chart/tests/job_test.yaml": SUITE}
    assert lint_snippet("chart/tests/job_test.yaml", SUITE, extra_files=files) == []
    findings = [f for f in lint_snippet("chart/Chart.yaml", CHART, extra_files=files) if f.rule == "SPK003"]
    assert "3 unrendered" in findings[0].message  # the suite is not a template either


def test_a_job_in_a_tests_folder_without_suite_is_still_a_workload() -> None:
    assert {f.rule for f in lint_snippet("chart/tests/smoke_test.yaml", JOB.replace("1.2.3@sha256:" + "ab" * 32,
                                                                                   "latest"))} >= {"SPK101"}


WORKFLOW = ("name: ci\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-24.04\n    steps:\n"
            "      - uses: actions/checkout@v4\n      - run: echo ${{ github.sha }}\n"
            "        if: ${{ github.event_name == 'push' }}\n")


def document(name: str, text: str) -> object:
    return parse_text(SourceFile(name, name, detect_kind(name)), text)


def test_a_github_workflow_with_expressions_is_parsed() -> None:
    parsed = parse_text(SourceFile(".github/workflows/ci.yaml", "ci.yaml", "yaml"), WORKFLOW)
    assert parsed.problems == [] and parsed.trees and parsed.kind == "yaml"
    assert pairs(".github/workflows/ci.yaml", WORKFLOW) == []


def test_a_github_workflow_syntax_error_is_spk001_at_its_line() -> None:
    broken = WORKFLOW + "      - run: echo ${{ matrix.python }}\n       name: misindented\n"
    assert pairs(".github/workflows/ci.yaml", broken, rule="SPK001") == [(11, "SPK001")]
    assert pairs(".github/workflows/ci.yaml", broken) == []


def test_jinja_that_breaks_yaml_is_an_unrendered_template_not_spk001() -> None:
    text = "kind: Job\nspec:\n  {% if gpu %}\n  gpus: 8\n  {% endif %}\n  name: {{ name }}\n"
    parsed = parse_text(SourceFile("deploy/job.yaml", "deploy/job.yaml", "yaml"), text)
    assert isinstance(parsed.parsed, UnrenderedTemplate) and parsed.problems == []
    assert pairs("deploy/job.yaml", text) == [(1, "SPK003")]
    assert pairs("deploy/job.yaml", text, rule="SPK001") == []


# Helm values that a Terraform module renders with templatefile(): whole lines filled in by ``${…}`` and ``%{…}``
TERRAFORM_VALUES = ("head:\n  labels:\n    node-type: head\n    ${indent(4, yamlencode(extra_labels))}\n"
                    "  serviceAccountName: ${service_account}\n  %{~ if gpu ~}\n  gpus: 1\n  %{~ endif ~}\n")


def test_lines_a_terraform_template_fills_in_are_an_unrendered_template_not_spk001() -> None:
    parsed = parse_text(SourceFile("modules/ray/values.yaml", "values.yaml", "yaml"), TERRAFORM_VALUES)
    assert isinstance(parsed.parsed, UnrenderedTemplate) and parsed.problems == []
    assert pairs("modules/ray/values.yaml", TERRAFORM_VALUES) == [(1, "SPK003")]
    assert pairs("modules/ray/values.yaml", TERRAFORM_VALUES, rule="SPK001") == []


def test_terraform_values_inline_parse_and_a_real_error_far_from_them_is_spk001() -> None:
    inline = "head:\n  serviceAccountName: ${service_account}\n  image: ${image}\n"
    assert document("modules/ray/values.yaml", inline).trees  # ``key: ${var}`` is a plain YAML value
    broken = "a: 1\n  b: 2\nc: 3\nd: 4\n${extra}\ne: 5\n"
    assert pairs("modules/ray/values.yaml", broken, rule="SPK001") == [(2, "SPK001")]


def test_a_workflow_line_that_is_only_an_expression_is_not_taken_for_a_filled_in_line() -> None:
    broken = "jobs:\n  test:\n    ${{ matrix.extra }}\n    runs-on: ubuntu-24.04\n"
    assert [rule for _, rule in pairs(".github/workflows/ci.yaml", broken, rule="SPK001")] == ["SPK001"]


def test_a_template_variable_above_the_manifest_makes_an_unrendered_template() -> None:
    text = "{{ $run := .Values.prep }}\n\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {{ $run.name }}\n"
    assert pairs("launcher/conf/prep/job.yaml", text) == [(1, "SPK003")]
    assert pairs("launcher/conf/prep/job.yaml", text, rule="SPK001") == []
    commented = "{{/* rendered by the launcher */}}\n\nkind: Job\n"
    assert pairs("launcher/conf/prep/job.yaml", commented, rule="SPK001") == []


def test_a_real_error_far_from_the_markup_is_spk001() -> None:
    text = "kind: Job\nmetadata:\n  name: {{ name }}\nspec:\n  a: 1\n  b: 2\n  args: [--lr, 0.1\n  c: 3\n"
    assert pairs("deploy/job.yaml", text, rule="SPK001") == [(8, "SPK001")]
    assert pairs("deploy/job.yaml", text) == []


def test_jinja_values_that_parse_are_checked_as_yaml() -> None:
    text = JOB.replace("name: smoke", "name: '{{ run_name }}'").replace("1.2.3@sha256:" + "ab" * 32, "latest")
    assert (11, "SPK101") in pairs("deploy/job.yaml", text, rule="SPK101")


def test_concatenated_json_values_are_documents_not_spk001() -> None:
    text = '{\n  "file": "a.rst",\n  "status": "broken"\n}\n{\n  "file": "b.rst",\n  "status": "ok"\n}\n'
    parsed = parse_text(SourceFile("docs/links.json", "docs/links.json", "json"), text)
    assert parsed.problems == [] and [tree.line for tree in parsed.trees] == [1, 5]
    broken = text.replace('"ok"\n}', '"ok"\n')
    assert pairs("docs/links.json", broken, rule="SPK001") == [(5, "SPK001")]


def test_a_makefile_with_a_shell_shebang_is_not_a_shell_script() -> None:
    assert detect_kind("vendor/tool/Makefile", "#!/usr/bin/env bash") == "text"
    assert detect_kind("build/rules.mk", "#!/bin/bash") == "text"
    assert detect_kind("scripts/make-release", "#!/usr/bin/env bash") == "shell"


DS_TEMPLATE = ('{\n  "train_batch_size": GLOBAL_BATCH_SIZE,\n  "train_micro_batch_size_per_gpu": BATCH_SIZE_PER_GPU,\n'
               '  "gradient_accumulation_steps": 4,\n  "zero_optimization": {"stage": 2, "offload": [CPU_OPTION]},\n'
               '  "fp16": {"enabled": true}\n}\n')


def test_a_json_template_with_placeholders_is_spk003_not_spk001() -> None:
    findings = [f for f in lint_snippet("deepspeed/ds_config_TEMPLATE.json", DS_TEMPLATE)
                if f.rule in ("SPK001", "SPK003")]
    assert [(f.line, f.column, f.rule) for f in findings] == [(1, 1, "SPK003")]
    message = findings[0].message
    assert "`GLOBAL_BATCH_SIZE` on line 2" in message and "3 placeholders" in message
    assert "--stdin-filename deepspeed/ds_config.json" in message
    assert pairs("configs/zero.template.json", DS_TEMPLATE) == [(1, "SPK003")]


def test_the_same_json_without_a_template_name_is_spk001() -> None:
    assert pairs("deepspeed/ds_config.json", DS_TEMPLATE, rule="SPK001") == [(2, "SPK001")]
    assert pairs("deepspeed/ds_config.json", DS_TEMPLATE) == []


def test_a_json_template_with_a_real_mistake_besides_its_placeholders_is_spk001() -> None:
    broken = DS_TEMPLATE.replace('"fp16": {"enabled": true}', '"fp16": {"enabled": true},')
    assert pairs("deepspeed/ds_config_TEMPLATE.json", broken, rule="SPK001") == [(2, "SPK001")]
    assert pairs("deepspeed/ds_config_TEMPLATE.json", broken) == []
    lowercase = DS_TEMPLATE.replace("GLOBAL_BATCH_SIZE", "global_batch_size")  # not an ALL_CAPS placeholder
    assert pairs("deepspeed/ds_config_TEMPLATE.json", lowercase, rule="SPK001") == [(2, "SPK001")]


def test_a_json_template_that_parses_is_checked_normally() -> None:
    text = DS_TEMPLATE.replace("GLOBAL_BATCH_SIZE", "64").replace("BATCH_SIZE_PER_GPU", "8").replace(
        "[CPU_OPTION]", '["cpu"]')
    parsed = parse_text(SourceFile("ds_config_TEMPLATE.json", "ds_config_TEMPLATE.json", "json"), text)
    assert parsed.problems == [] and parsed.trees


def test_a_json_template_is_still_scanned_for_secrets() -> None:
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    text = DS_TEMPLATE.replace('"gradient_accumulation_steps": 4', f'"wandb_token": "{token}"')
    rules = {f.rule for f in lint_snippet("ds_config_TEMPLATE.json", text)}
    assert "SPK003" in rules and rules & {"SPK201", "SPK202"}


def test_a_mixed_case_placeholder_is_a_placeholder_too() -> None:
    text = DS_TEMPLATE.replace("GLOBAL_BATCH_SIZE", "QuantW_BATCH")
    assert pairs("deepspeed/ds_config_TEMPLATE.json", text, rule="SPK001") == []
