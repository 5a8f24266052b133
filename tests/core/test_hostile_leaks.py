"""One redaction pass: a secret a detector reports is masked wherever else it would appear."""

from __future__ import annotations

import json
import random
import string
from pathlib import Path

import pytest
from core_support import write

from spikelint.pipeline.masking import mask_file
from spikelint.pipeline.masking import masked
from spikelint.pipeline.masking import needles
from spikelint.model import Finding


def fake(prefix: str, length: int, seed: int) -> str:
    rng = random.Random(seed)
    return prefix + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(length))


TOKEN = fake("ghp_", 36, 1)
PASSWORD = fake("Zq8v", 20, 2)


def _files() -> dict[str, str]:
    return {
        "values.yaml": f"image: busybox:latest\npassword: *{PASSWORD}\n",
        "Dockerfile": f"FROM busybox:1.36.1\nBOGUS GITHUB_TOKEN={TOKEN}\n",
        "job.yaml": ("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: x\nspec:\n  template:\n    spec:\n"
                     "      restartPolicy: Never\n      containers:\n      - name: c\n"
                     f"        image: registry.acme-corp.io/app:{TOKEN}\n"
                     f"        command: [\"python\", \"train.py\", \"--output_dir\", \"/tmp/{TOKEN}\"]\n"),
        "train.sh": f"#!/bin/bash\nexport HF_TOKEN={TOKEN}; python train.py | tee log\n",
    }


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "junit", "gitlab", "github"])
def test_a_reported_secret_appears_nowhere_else(run_cli, tmp_path: Path, fmt: str) -> None:
    repo = write(tmp_path / "repo", _files())
    outcome = run_cli(["check", "--format", fmt, "--fail-on", "never", "."], cwd=repo)
    assert outcome.code == 0
    everything = outcome.out + outcome.err
    assert TOKEN not in everything and PASSWORD not in everything
    assert TOKEN[4:12] not in everything and PASSWORD[4:12] not in everything


def test_other_rules_still_report_with_the_value_masked(run_cli, tmp_path: Path) -> None:
    repo = write(tmp_path / "repo", _files())
    findings = run_cli(["check", "--format", "json", "--fail-on", "never", "."], cwd=repo).json()["findings"]
    rules = {(finding["path"], finding["rule"]) for finding in findings}
    assert {("values.yaml", "SPK001"), ("values.yaml", "SPK201"), ("Dockerfile", "SPK001"), ("job.yaml", "SPK102"),
            ("job.yaml", "SPK301"), ("train.sh", "SPK501")} <= rules
    alias = next(f for f in findings if f["path"] == "values.yaml" and f["rule"] == "SPK001")
    assert masked(PASSWORD) in alias["message"]
    output = next(f for f in findings if f["rule"] == "SPK301")
    assert "/tmp/ghp_…" in output["message"]


def test_code_frames_of_other_findings_keep_their_carets_aligned(run_cli, tmp_path: Path) -> None:
    repo = write(tmp_path / "repo", {"train.sh": _files()["train.sh"]})
    out = run_cli(["check", "--fail-on", "never", "train.sh"], cwd=repo).out
    frame = [line for line in out.splitlines() if line.startswith("  2 |")]
    assert frame and all(TOKEN not in line for line in frame)
    source = frame[0].split("| ", 1)[1]
    caret = out.splitlines()[out.splitlines().index(frame[0]) + 1].split("| ", 1)[1]
    assert source[caret.index("^"):].startswith("python")


def test_needles_and_unrelated_text() -> None:
    assert needles(["*" + PASSWORD, "short"]) == sorted({"*" + PASSWORD, PASSWORD}, key=lambda t: (-len(t), t))
    finding = Finding("SPK101", "x", "error", "a.yaml", 1, 1, "nothing secret here", "f")
    kept, lines, notes = mask_file([finding], "a.yaml", ["image: busybox:latest"], ["note"])
    assert kept == [finding] and lines == ["image: busybox:latest"] and notes == ["note"]


# --------------------------------------------------------------------------- precheck and verify-run


def test_precheck_never_echoes_a_secret_input(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from spikelint.run import precheck

    monkeypatch.chdir(tmp_path)
    config = tmp_path / "run.json"
    config.write_text(json.dumps({"schema_version": 1, "input": TOKEN, "batch_size": 4, "device": "cuda",
                                  TOKEN: 1}), encoding="utf-8")
    for fmt in ("text", "json"):
        code = precheck.main(["--config", str(config), "--run-dir", str(tmp_path / "r"), "--format", fmt])
        captured = capsys.readouterr()
        assert code == 1
        assert TOKEN not in captured.out + captured.err and "ghp_…" in captured.out + captured.err


def test_precheck_init_masks_model_and_image_in_the_manifest(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from spikelint.run import precheck

    monkeypatch.chdir(tmp_path)
    (tmp_path / "prompts.jsonl").write_text('{"prompt": "hi"}\n', encoding="utf-8")
    config = tmp_path / "run.json"
    config.write_text(json.dumps({"schema_version": 1, "input": "prompts.jsonl", "batch_size": 4,
                                  "device": "cuda"}), encoding="utf-8")
    code = precheck.main(["--config", str(config), "--run-dir", str(tmp_path / "r"), "--init",
                          "--model", f"https://user:{PASSWORD}@models.example.com/m", "--image", f"app:{TOKEN}"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    manifest = (tmp_path / "r" / "manifest.json").read_text(encoding="utf-8")
    assert TOKEN not in manifest and PASSWORD not in manifest
    assert TOKEN not in captured.out + captured.err


def test_verify_run_frames_never_show_a_secret(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from spikelint.run import verify

    monkeypatch.chdir(tmp_path)
    run = tmp_path / "run"
    run.mkdir()
    (run / "manifest.json").write_text('{"run_id": 5, "token": "' + TOKEN + '"}\n', encoding="utf-8")
    code = verify.main([str(run)])
    captured = capsys.readouterr()
    assert code in (0, 1)
    assert TOKEN not in captured.out + captured.err


def test_many_values_are_masked_by_prefix_lookup_like_the_alternation() -> None:
    """Past MAX_ALTERNATION values the masker looks values up by prefix (linear in their number:
    ``bench/scaling.py --kinds yaml-secret-keys``); it must hide exactly what the alternation hides."""
    import random
    import string

    from spikelint.pipeline.masking import MAX_ALTERNATION
    from spikelint.pipeline.masking import masker

    rng = random.Random(3)
    values = ["".join(rng.choice(string.ascii_letters + string.digits) for _ in range(20)) for _ in range(3000)]
    few = masker(values[:MAX_ALTERNATION])
    many = masker(values)
    text = f"key: {values[5]} and {values[2999]}, also {values[5][:12]}x"
    assert many(text) == f"key: {values[5][:4]}… and {values[2999][:4]}…, also {values[5][:12]}x"
    assert many(f"a {values[7]} b") == few(f"a {values[7]} b")
    longer = values[9] + "TAIL1234"
    assert masker([*values, longer])(longer) == longer[:4] + "…"  # the longest value sharing a prefix wins


def test_a_plain_word_value_is_masked_where_it_stands_alone_not_inside_the_name_that_holds_it() -> None:
    """A Secret's ``root_password: password``: the value is masked, the key name that holds it is not; a
    token-shaped value is masked even glued to other text (a path, a file name)."""
    import random
    import string

    from spikelint.pipeline.masking import MAX_ALTERNATION
    from spikelint.pipeline.masking import masker

    message = "credential committed: password (data.root_password of Secret 'pg'); 'password' again"
    assert masker(["password"])(message) == (
        "credential committed: pa… (data.root_password of Secret 'pg'); 'pa…' again")
    token = "Zq8vK2mX9pL4"
    assert masker([token])(f"/data/shard_{token}.bin") == f"/data/shard_{token[:3]}….bin"
    rng = random.Random(5)
    many = ["".join(rng.choice(string.ascii_letters + string.digits) for _ in range(20)) for _ in range(MAX_ALTERNATION)]
    assert masker([*many, "password"])(message) == masker(["password"])(message)  # the prefix lookup agrees
