"""Every field docs/model.md documents, read by a rule on both sides: the rule fires where the value is the
bad one (at the line the field is written, or the element's / workload's anchor) and not on the near miss."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import pytest

from spikelint.engine import lint_snippet


class Case(NamedTuple):
    for_each: str
    check: str  # the assert: false on ``bad``, true on ``good``
    at: str | None
    filename: str
    bad: str
    good: str
    line: int | str  # where the finding on ``bad`` points: a line, or the first line holding this text


def job(metadata: str = "  name: sft\n", spec: str = "", container: str = "", pod: str = "") -> str:
    return ("apiVersion: batch/v1\nkind: Job\nmetadata:\n" + metadata + "spec:\n" + spec + "  template:\n    spec:\n"
            + pod + "      containers:\n        - name: trainer\n          image: harbor.acme.io/llm/train:1.2.0\n"
            "          command: [torchrun, train.py]\n" + container)


GPUS = "          resources: {limits: {nvidia.com/gpu: %s}}\n"
CKPT = ("          volumeMounts: [{name: ckpt, mountPath: %s, readOnly: %s}]\n")
VOLUMES = "      volumes:\n        - {name: ckpt, %s}\n"
SBATCH = "#!/bin/bash\n%s#SBATCH --gres=gpu:8\nsrun torchrun train.py\n"

CASES = {
    # workload
    "form": Case("workload", 'workload.form != "slurm"', None, "train.sbatch", SBATCH % "", None, 2),
    "kind": Case("workload", 'workload.kind != "Job"', None, "job.yaml", job(), None, 2),
    "name": Case("workload", 'workload.name.startsWith("acme-")', "name", "job.yaml", job(),
                 job("  name: acme-sft\n"), "name: sft"),
    "namespace": Case("workload", 'workload.namespace != "default"', "namespace", "job.yaml",
                      job("  name: sft\n  namespace: default\n"), job("  name: sft\n  namespace: nlp\n"), "namespace: default"),
    "labels": Case("workload", '"team" in workload.labels', "labels", "job.yaml", job(),
                   job("  name: sft\n  labels: {team: nlp}\n"), 2),
    "labels.KEY": Case("workload", 'workload.labels["tier"] != "gold"', "labels.tier", "job.yaml",
                       job("  name: sft\n  labels:\n    tier: gold\n"), job("  name: sft\n  labels:\n    tier: std\n"), "tier: gold"),
    "annotations.KEY": Case("workload", '!("debug" in workload.annotations)', "annotations.debug", "job.yaml",
                            job("  name: sft\n  annotations: {debug: 'on'}\n"), job(), "debug"),
    "training": Case("workload", "!workload.training", None, "job.yaml", job(container=GPUS % 8),
                     job(container=GPUS % 8).replace("[torchrun, train.py]", "[python, evaluate.py]"), 2),
    "purpose": Case("workload", 'workload.purpose != "evaluation"', None, "job.yaml",
                    job().replace("[torchrun, train.py]", "[python, evaluate.py]"), job(), 2),
    "gpus": Case("workload", "workload.gpus <= 8.0", "gpus", "job.yaml", job(container=GPUS % 16),
                 job(container=GPUS % 8), "nvidia.com/gpu"),
    "pods": Case("workload", "workload.pods <= 2", None, "job.yaml", job(spec="  parallelism: 4\n"),
                 job(spec="  parallelism: 2\n"), 2),
    "preemptible": Case("workload", "!workload.preemptible", None, "job.yaml",
                        job(pod="      priorityClassName: spot\n"), job(), 2),
    "retries": Case("workload", "workload.retries <= 3", "retries", "job.yaml", job(spec="  backoffLimit: 10\n"),
                    job(spec="  backoffLimit: 2\n"), "backoffLimit"),
    "retries (default)": Case("workload", "workload.retries == 0", None, "job.yaml", job(),
                              job(spec="  backoffLimit: 0\n"), 2),
    "deadline_seconds": Case("workload", "workload.deadline_seconds != null", "deadline", "job.yaml", job(),
                             job(spec="  activeDeadlineSeconds: 3600\n"), 2),
    "grace_period_seconds": Case("workload", "workload.grace_period_seconds == null || "
                                 "workload.grace_period_seconds >= 60", "grace_period_seconds", "job.yaml",
                                 job(pod="      terminationGracePeriodSeconds: 10\n"),
                                 job(pod="      terminationGracePeriodSeconds: 120\n"), "terminationGracePeriodSeconds"),
    "ttl_seconds": Case("workload", "workload.ttl_seconds != null", None, "job.yaml", job(),
                        job(spec="  ttlSecondsAfterFinished: 600\n"), 2),
    "priority_class": Case("workload", 'workload.priority_class != "system-node-critical"', "priority_class",
                           "job.yaml", job(pod="      priorityClassName: system-node-critical\n"), job(), "priorityClassName"),
    "containers": Case("workload", "workload.containers.size() == 1", None, "job.yaml",
                       job(container="        - {name: sidecar, image: harbor.acme.io/x:1.0.0}\n"), job(), 2),
    "volumes": Case("workload", 'workload.volumes.all(v, v.source != "hostPath")', None, "job.yaml",
                    job(pod=VOLUMES % "hostPath: {path: /data}"), job(pod=VOLUMES % "persistentVolumeClaim: {claimName: c}"), 2),
    "slurm": Case("workload", '!("partition" in workload.slurm) || workload.slurm["partition"] != "debug"',
                  "slurm.partition", "train.sbatch", SBATCH % "#SBATCH --partition=debug\n",
                  SBATCH % "#SBATCH --partition=gpu\n", 2),
    # container
    "container.name": Case("container", 'container.name != "trainer"', "name", "job.yaml", job(),
                           job().replace("name: trainer", "name: main"), "image:"),
    "container.role": Case("container", 'container.role != "init"', None, "job.yaml",
                           job(pod="      initContainers: [{name: fetch, image: harbor.acme.io/fetch:1.0.0}]\n"), job(), "initContainers"),
    "container.image.registry": Case("container", 'container.image.registry == "harbor.acme.io"', "image",
                                     "job.yaml", job().replace("harbor.acme.io/llm", "docker.io/llm"), job(), "image:"),
    "container.image.tag": Case("container", 'container.image.tag != "latest"', "image", "job.yaml",
                                job().replace(":1.2.0", ":latest"), job(), "image:"),
    "container.image.digest": Case("container", "container.image.digest != null", "image", "job.yaml", job(),
                                   job().replace(":1.2.0", ":1.2.0@sha256:" + "a" * 64), "image:"),
    "container.image.resolved": Case("container", "container.image.resolved", "image", "job.yaml",
                                     job().replace("harbor.acme.io/llm/train:1.2.0", "'{{ .Values.image }}'"), job(), "image:"),
    "container.argv": Case("container", '!container.argv.exists(a, a == "--debug")', "argv", "job.yaml",
                           job().replace("[torchrun, train.py]", "[torchrun, train.py, --debug]"), job(), "command:"),
    "container.entry_point": Case("container", 'container.entry_point == null || !container.entry_point.contains("pretrain")',
                                  None, "job.yaml", job().replace("train.py", "pretrain.py"), job(), "image:"),
    "container.env": Case("container", '!("HF_HUB_OFFLINE" in container.env) || container.env["HF_HUB_OFFLINE"] == "1"',
                          "env", "job.yaml", job(container="          env: [{name: HF_HUB_OFFLINE, value: '0'}]\n"),
                          job(container="          env: [{name: HF_HUB_OFFLINE, value: '1'}]\n"), "HF_HUB_OFFLINE"),
    "container.mounts": Case("container", "container.mounts.size() > 0", None, "job.yaml", job(),
                             job(container=CKPT % ("/ckpt", "false"), pod=VOLUMES % "persistentVolumeClaim: {claimName: c}"), "image:"),
    "container.gpus": Case("container", "container.gpus == null || container.gpus <= 4.0", "gpus", "job.yaml",
                           job(container=GPUS % 8), job(container=GPUS % 4), "nvidia.com/gpu"),
    # mount
    "mount.path": Case("mount", '!mount.path.startsWith("/tmp")', "path", "job.yaml",
                       job(container=CKPT % ("/tmp/ckpt", "false"), pod=VOLUMES % "emptyDir: {}"),
                       job(container=CKPT % ("/ckpt", "false"), pod=VOLUMES % "emptyDir: {}"), "mountPath"),
    "mount.persistent": Case("mount", "mount.persistent", "path", "job.yaml",
                             job(container=CKPT % ("/ckpt", "false"), pod=VOLUMES % "emptyDir: {}"),
                             job(container=CKPT % ("/ckpt", "false"), pod=VOLUMES % "persistentVolumeClaim: {claimName: c}"), "mountPath"),
    "mount.read_only": Case("mount", "!mount.read_only", "path", "job.yaml",
                            job(container=CKPT % ("/ckpt", "true"), pod=VOLUMES % "emptyDir: {}"),
                            job(container=CKPT % ("/ckpt", "false"), pod=VOLUMES % "emptyDir: {}"), "mountPath"),
    "mount.volume": Case("mount", "mount.volume != null", "path", "job.yaml", job(container=CKPT % ("/ckpt", "false")),
                         job(container=CKPT % ("/ckpt", "false"), pod=VOLUMES % "emptyDir: {}"), "mountPath"),
    # volume
    "volume.name": Case("volume", 'volume.name != "ckpt"', "name", "job.yaml", job(pod=VOLUMES % "emptyDir: {}"),
                        job(pod=VOLUMES % "emptyDir: {}").replace("name: ckpt", "name: scratch"), "- {name: ckpt"),
    "volume.source": Case("volume", 'volume.source != "hostPath"', None, "job.yaml",
                          job(pod=VOLUMES % "hostPath: {path: /data}"), job(pod=VOLUMES % "emptyDir: {}"), "- {name: ckpt"),
    "volume.persistent": Case("volume", "volume.persistent", None, "job.yaml", job(pod=VOLUMES % "emptyDir: {}"),
                              job(pod=VOLUMES % "persistentVolumeClaim: {claimName: c}"), "- {name: ckpt"),
    "volume.claim": Case("volume", 'volume.claim == null || volume.claim.startsWith("acme-")', None, "job.yaml",
                         job(pod=VOLUMES % "persistentVolumeClaim: {claimName: c}"),
                         job(pod=VOLUMES % "persistentVolumeClaim: {claimName: acme-c}"), "- {name: ckpt"),
    # env
    "env.name": Case("env", 'env.name != "NCCL_DEBUG"', "name", "job.yaml",
                     job(container="          env: [{name: NCCL_DEBUG, value: INFO}]\n"),
                     job(container="          env: [{name: NCCL_SOCKET_IFNAME, value: eth0}]\n"), "NCCL_DEBUG"),
    "env.value": Case("env", 'env.value != "INFO"', "value", "job.yaml",
                      job(container="          env: [{name: NCCL_DEBUG, value: INFO}]\n"),
                      job(container="          env: [{name: NCCL_DEBUG, value: WARN}]\n"), "NCCL_DEBUG"),
    "env.from_secret": Case("env", '!env.name.endsWith("_TOKEN") || env.from_secret', None, "job.yaml",
                            job(container="          env: [{name: HF_TOKEN, value: x}]\n"),
                            job(container="          env: [{name: HF_TOKEN, valueFrom: {secretKeyRef: {name: s, key: k}}}]\n"), "HF_TOKEN"),
}


def rule(case: Case) -> str:
    at = f"    at: {case.at}\n" if case.at else ""
    return (f"rules:\n  - id: ACME001\n    name: field\n    severity: error\n    for_each: {case.for_each}\n"
            f"    assert: '{case.check.replace(chr(39), chr(39) * 2)}'\n{at}    message: the field rule\n")


@pytest.mark.parametrize("field", CASES)
def test_a_rule_on_the_field_fires_on_the_bad_value_at_its_line_and_not_on_the_near_miss(field: str, tmp_path: Path) -> None:
    case = CASES[field]
    (tmp_path / "team.yaml").write_text(rule(case), encoding="utf-8")
    config = {"rules_dir": str(tmp_path), "select": ["ACME", "SPK004"]}
    found = [(finding.rule, finding.line) for finding in lint_snippet(case.filename, case.bad, config)]
    line = case.line if isinstance(case.line, int) else \
        next(number for number, text in enumerate(case.bad.splitlines(), 1) if case.line in text)
    assert found == [("ACME001", line)], (found, case.bad)
    if case.good is not None:
        assert lint_snippet(case.filename, case.good, config) == []


def test_the_fields_a_rule_is_checked_against_are_the_fields_it_sees() -> None:
    """The shapes a rule is tried on when it loads (team/view.py SHAPES) are the model's fields, key for key."""
    from spikelint.adapters import workloads_in
    from spikelint.config import Config
    from spikelint.documents import parse_text
    from spikelint.model import SourceFile
    from spikelint.team.view import SHAPES
    from spikelint.team.view import workload_view

    text = job(container=CKPT % ("/ckpt", "false") + "          env: [{name: A, value: b}]\n",
               pod=VOLUMES % "persistentVolumeClaim: {claimName: c}")
    [workload] = workloads_in(parse_text(SourceFile("job.yaml", "job.yaml", "yaml"), text), Config())
    view = workload_view(workload)
    assert set(view.workload.data) == set(SHAPES["workload"])
    for name in ("container", "mount", "volume", "env"):
        assert set(view.elements[name][0].data) == set(SHAPES[name]), name
    assert set(view.elements["container"][0].data["image"]) == set(SHAPES["container"]["image"])
