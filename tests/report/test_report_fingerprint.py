from __future__ import annotations

import re

from spikelint.pipeline.fingerprint import assign_fingerprints
from spikelint.pipeline.fingerprint import fingerprint


def test_shape():
    assert re.fullmatch(r"[0-9a-f]{32}", fingerprint("SPK101", "a.yaml", "pytorch:latest", 0))


def test_stable_when_lines_move():
    # Version 1 and version 2 of a file: v2 inserts lines above, the findings move down.
    v1 = [("SPK101", "job.yaml", "image: a:latest"), ("SPK202", "job.yaml", "sha256:1")]
    v2 = [("SPK999", "job.yaml", "new finding above")] + v1
    assert assign_fingerprints(v1) == assign_fingerprints(v2)[1:]


def test_whitespace_normalised():
    assert fingerprint("SPK501", "run.sh", "python  train.py |\n  tee log", 0) == fingerprint("SPK501", "run.sh", " python train.py | tee log ", 0)


def test_repeats_unique_and_first_unchanged():
    items = [("SPK303", "a.yaml", "emptyDir ckpt")] * 3 + [("SPK303", "a.yaml", "emptyDir  ckpt")]
    prints = assign_fingerprints(items)
    assert len(set(prints)) == 4
    assert prints[0] == fingerprint("SPK303", "a.yaml", "emptyDir ckpt", 0)
    assert prints[3] == fingerprint("SPK303", "a.yaml", "emptyDir ckpt", 3)


def test_occurrences_counted_per_file_and_rule():
    prints = assign_fingerprints([("SPK101", "a.yaml", "x"), ("SPK101", "b.yaml", "x"), ("SPK102", "a.yaml", "x")])
    assert prints == [fingerprint("SPK101", "a.yaml", "x", 0), fingerprint("SPK101", "b.yaml", "x", 0), fingerprint("SPK102", "a.yaml", "x", 0)]


def test_every_component_matters():
    base = fingerprint("SPK101", "a.yaml", "x", 0)
    assert len({base, fingerprint("SPK102", "a.yaml", "x", 0), fingerprint("SPK101", "b.yaml", "x", 0),
                fingerprint("SPK101", "a.yaml", "y", 0), fingerprint("SPK101", "a.yaml", "x", 1)}) == 5
    # Field separators cannot be faked by moving text between fields.
    assert fingerprint("SPK101", "ab", "c", 0) != fingerprint("SPK101", "a", "bc", 0)


def test_known_value():
    # Pinned: changing the recipe silently invalidates every user's baseline.
    assert fingerprint("SPK101", "a.yaml", "pytorch:latest", 0) == fingerprint("SPK101", "a.yaml", "pytorch:latest")
    import hashlib

    expected = hashlib.sha256("SPK101\0a.yaml\0pytorch:latest\0" "0".encode()).hexdigest()[:32]
    assert fingerprint("SPK101", "a.yaml", "pytorch:latest", 0) == expected
