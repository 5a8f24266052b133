"""What SPK301 tells a user to do depends on what holds the path: a declared volume is what it is."""

from __future__ import annotations

from spikelint.engine import lint_snippet


EMPTYDIR_JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: bert}
spec:
  template:
    spec:
      restartPolicy: OnFailure
      containers:
      - name: t
        image: nvcr.io/nvidia/pytorch@sha256:%s
        args: ["python", "train.py", "--output_dir=/output/bert"]
        volumeMounts: [{name: out, mountPath: /output}]
      volumes: [{name: out, emptyDir: {}}]
""" % ("0" * 64)


def test_an_emptydir_output_is_told_to_use_a_claim_not_persistent_paths() -> None:
    """Listing /output in persistent_paths, as the message offered, swapped SPK301 for SPK303: an emptyDir is never
    persistent, whatever the configuration says."""
    found = [finding for finding in lint_snippet("k8s/job.yaml", EMPTYDIR_JOB) if finding.rule == "SPK301"]
    assert len(found) == 1 and "persistentVolumeClaim" in found[0].message
    assert "persistent_paths" not in found[0].message
