"""Every byte written passes the token detectors last: secrets of many kinds planted in every
placement (an unknown Dockerfile instruction, an image reference, a path, a same-line YAML
value under a code frame, a ``runai`` command line, precheck's config and options) appear in
full in no output format, no report file, no baseline and no manifest."""

from __future__ import annotations

import json
import string
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest
from fakes import ALNUM
from fakes import Fakes

from spikelint.cli import main
from spikelint.secrets.output_mask import MaskedStream
from spikelint.secrets.output_mask import mask_output

FAKE = Fakes(351)
FORMATS = ("text", "json", "sarif", "junit", "gitlab", "github")


def _token_kinds() -> dict[str, str]:
    """Secrets recognisable by their shape alone (safe inside a path or an image name)."""
    return {
        "aws_key_id": FAKE.aws_key_id(), "github": FAKE.github(), "hf": FAKE.hf(), "gitlab": FAKE.gitlab(),
        "slack": FAKE.slack(), "stripe": FAKE.stripe(), "openai": FAKE.openai(), "nvidia": FAKE.nvidia(),
        "google": FAKE.google_api_key(), "jwt": FAKE.jwt(),
    }


TOKENS = _token_kinds()
AWS_SECRET = FAKE.aws_secret()
KEYED = FAKE.high_entropy(32)
PASSWORD_IN_URL = FAKE.chars(ALNUM, 18)
PRIVATE_KEY = FAKE.private_key()
KEY_BODY = [line for line in PRIVATE_KEY.splitlines() if not line.startswith("-----")]


def _leaks(text: str) -> list[str]:
    """The planted values that appear in full in ``text``."""
    values = [*TOKENS.values(), AWS_SECRET, KEYED, PASSWORD_IN_URL, *KEY_BODY]
    return [value[:12] + "…" for value in values if value in text]  # never print what leaked in full


def _job(name: str, image: str, extra: str) -> str:
    return ("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: " + name + "\nspec:\n  template:\n    spec:\n"
            "      restartPolicy: Never\n      containers:\n      - name: c\n        image: " + image + "\n" + extra)


def _repository(root: Path) -> Path:
    files: dict[str, str] = {}
    for index, (kind, token) in enumerate(TOKENS.items()):
        files[f"docker/{kind}/Dockerfile"] = f"FROM busybox:1.36.1\nBOGUS {token}\n{token} x\n"
        files[f"images/{kind}.yaml"] = _job(f"i{index}", f"registry.example.org/ml/{token}:latest", "")
        files[f"paths/{kind}.yaml"] = _job(
            f"p{index}", "busybox:latest",
            f"        command: [\"python\", \"train.py\", \"--output_dir\", \"/tmp/{token}\"]\n"
            f"        volumeMounts: [{{name: d, mountPath: /data/{token}}}]\n")
        files[f"values/{kind}.yaml"] = f"image: {{repository: busybox, tag: latest, note: {token}}}\n"
        files[f"scripts/{kind}.sh"] = (f"#!/bin/bash\nrunai submit t{index} -i busybox:latest -g 1 "
                                       f"-e TOKEN={token} -- python train.py --key {token}\n")
    files["docker/keyed/Dockerfile"] = (f"FROM busybox:1.36.1\naws_secret_access_key={AWS_SECRET}\n"
                                        f"API_KEY {KEYED}\n")
    files["values/keyed.yaml"] = (f"image: {{repository: busybox, tag: latest, api_key: {KEYED}}}\n"
                                  f"aws: {{aws_secret_access_key: {AWS_SECRET}, image: \"busybox:latest\"}}\n")
    files["values/url.yaml"] = f"image: busybox:latest\nrepo: https://ci:{PASSWORD_IN_URL}@git.example.org/r.git\n"
    files["values/key.yaml"] = "image: busybox:latest\ntls_key: |\n" + "".join(
        "  " + line + "\n" for line in PRIVATE_KEY.splitlines())
    files["docker/pem/Dockerfile"] = "FROM busybox:1.36.1\nBOGUS " + PRIVATE_KEY.replace("\n", "\\n") + "\n"
    for name, body in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(body, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def repository(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _repository(tmp_path_factory.mktemp("planted"))


def _run(arguments: list[str], cwd: Path, monkeypatch: pytest.MonkeyPatch,
         capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    monkeypatch.chdir(cwd)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    capsys.readouterr()
    code = main(arguments)
    captured = capsys.readouterr()
    return code, captured.out + captured.err


@pytest.mark.parametrize("fmt", FORMATS)
def test_no_planted_secret_in_any_format(fmt: str, repository: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    code, printed = _run(["check", "--format", fmt, "--jobs", "1", "."], repository, monkeypatch, capsys)
    assert code == 1
    assert _leaks(printed) == []
    report = tmp_path / f"report.{fmt}"
    _run(["check", "--format", fmt, "--jobs", "1", "--output", str(report), "."], repository, monkeypatch, capsys)
    written = report.read_text(encoding="utf-8")
    assert _leaks(written) == []
    if fmt in ("json", "sarif", "gitlab"):
        json.loads(written)  # the mask keeps the report valid
    if fmt == "junit":
        ElementTree.fromstring(written)


def test_the_text_report_without_frames_and_with_statistics(repository: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    for arguments in (["--no-code-frame"], ["--statistics"], ["--show-files"]):
        code, printed = _run(["check", *arguments, "--jobs", "1", "."], repository, monkeypatch, capsys)
        assert _leaks(printed) == [], arguments


def test_baseline_holds_no_secret(repository: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    baseline = tmp_path / "baseline.json"
    code, printed = _run(["check", "--jobs", "1", "--write-baseline", str(baseline), "."], repository, monkeypatch,
                         capsys)
    assert code == 0 and _leaks(printed + baseline.read_text(encoding="utf-8")) == []


def test_precheck_output_and_init_manifest_hold_no_secret(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "prompts.jsonl").write_text('{"prompt": "hi"}\n', encoding="utf-8")
    config = tmp_path / "run.json"
    settings = {"schema_version": 1, "input": "prompts.jsonl", "batch_size": 4, "device": "cuda"}
    config.write_text(json.dumps({**settings, "aws_secret_access_key": AWS_SECRET, "wandb": {"api_key": KEYED},
                                  "tls_key": PRIVATE_KEY, "note": TOKENS["hf"]}), encoding="utf-8")
    for fmt in ("text", "json"):
        code, printed = _run(["precheck", "--config", str(config), "--run-dir", str(tmp_path / "a"), "--format", fmt],
                             tmp_path, monkeypatch, capsys)
        assert _leaks(printed) == [], fmt
    config.write_text(json.dumps(settings), encoding="utf-8")
    code, printed = _run(["precheck", "--config", str(config), "--run-dir", str(tmp_path / "r"), "--init",
                          "--model", f"https://ci:{PASSWORD_IN_URL}@models.example.org/m",
                          "--image", f"registry.example.org/ml/{TOKENS['github']}:1"], tmp_path, monkeypatch, capsys)
    assert code == 0, printed
    assert _leaks(printed + (tmp_path / "r" / "manifest.json").read_text(encoding="utf-8")) == []


# ---------------------------------------------------------------- the final mask on its own


@pytest.mark.parametrize("kind", sorted(TOKENS))
def test_the_final_mask_hides_each_token_shape_wherever_it_sits(kind: str) -> None:
    token = TOKENS[kind]
    for text in (f"unknown instruction: {token}", f"image 'registry.example.org/{token}:1' has tag",
                 f"written to '/tmp/{token}/ckpt' — move it", f'{{"message": "x {token} y"}}',
                 f"<failure message=\"{token}\"/>"):
        masked = mask_output(text)
        ellipsis = "..." if text.isascii() else "…"  # an ASCII-only report (JSON) stays ASCII-only
        assert token not in masked and token[:4] + ellipsis in masked, text


def test_the_final_mask_hides_keyed_values_private_keys_and_url_passwords() -> None:
    text = (f"aws_secret_access_key={AWS_SECRET}\napi_key: {KEYED}\nclone https://ci:{PASSWORD_IN_URL}@git.example.org/r\n"
            + json.dumps({"key": PRIVATE_KEY}) + "\n" + PRIVATE_KEY)
    assert _leaks(mask_output(text)) == []


def test_the_final_mask_keeps_ordinary_report_text() -> None:
    """Digests, fingerprints, commit ids, paths and already-masked values pass unchanged."""
    digest = "sha256:" + FAKE.chars("0123456789abcdef", 64)
    text = (f'{{"fingerprint": "{digest}", "image": "busybox@{digest}", "commit": "{FAKE.chars(string.hexdigits[:16], 40)}",'
            f' "path": "deploy/train/job.yaml", "message": "hardcoded hf_a… (Hugging Face token): rotate it",'
            f' "max_tokens": 4096, "tokenizer": "meta-llama/Llama-3.1-8B"}}\n')
    assert mask_output(text) == text


def test_the_stream_masks_a_token_written_in_pieces_and_a_key_line_by_line() -> None:
    import io

    sink = io.StringIO()
    stream = MaskedStream(sink)
    token = TOKENS["github"]
    stream.write("before " + token[:10])
    stream.write(token[10:] + " after\n")
    for line in PRIVATE_KEY.splitlines():
        print(line, file=stream)
    stream.write("tail " + TOKENS["hf"])
    stream.flush()
    assert _leaks(sink.getvalue()) == [] and "before ghp_" in sink.getvalue() and sink.getvalue().startswith("before")


def test_the_final_mask_names_the_type_in_characters_every_format_carries() -> None:
    token = TOKENS["hf"]
    assert mask_output(f"image registry.example.org/{token}:1") == \
        f"image registry.example.org/{token[:4]}... (Hugging Face token):1"
    wandb_key = FAKE.chars("0123456789abcdef", 40)
    masked = mask_output(f'<failure message="wandb.login(key={wandb_key})"/>')
    assert wandb_key not in masked and "&" not in masked and "(Weights and Biases API key)" in masked
    assert mask_output(masked) == masked  # masking twice changes nothing


def test_a_url_password_with_an_unescaped_hash_is_masked() -> None:
    password = FAKE.chars(ALNUM, 5) + "#" + FAKE.chars(ALNUM, 6)
    assert password not in mask_output(f"  7 | note: https://u:{password}@git.example.org/r.git")


def test_a_rule_list_is_quoted_as_typed(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                        tmp_path: Path) -> None:
    """Upper-cased, a token is no token shape for the final mask: the error quotes what was typed."""
    token = TOKENS["hf"]
    code, printed = _run(["check", "--ignore", token, "."], tmp_path, monkeypatch, capsys)
    assert code == 2 and token.upper() not in printed and token not in printed


CUT_KINDS = sorted(set(TOKENS) - {"jwt"})  # a JWT's first part is its public header, not the secret


@pytest.mark.parametrize("kind", CUT_KINDS)
def test_a_token_cut_short_shows_at_most_its_first_four_characters(kind: str) -> None:
    """Whatever shortens a text (a quoted instruction, a log tail) may cut a token below the shape the
    detectors know: the final mask still recognises its prefix and hides the rest."""
    token = TOKENS[kind]
    for cut in (19, 23, len(token) - 3):
        for text in (f"unknown instruction: ENV_X={token[:cut]}", f"last output: {token[:cut]}… (truncated)"):
            masked = mask_output(text)
            assert token[:5] not in masked, (kind, cut, text[:30])


@pytest.mark.parametrize("kind", CUT_KINDS)
def test_an_unknown_dockerfile_instruction_holding_a_token_is_quoted_without_it(
        kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    token = TOKENS[kind]
    (tmp_path / "Dockerfile").write_text(f"FROM busybox:1.36.1\nENV_SERVICE_TOKEN={token}\nRUN true\n",
                                         encoding="utf-8")
    for fmt in FORMATS:
        _, printed = _run(["check", "--format", fmt, "--jobs", "1", "."], tmp_path, monkeypatch, capsys)
        assert "unknown instruction: ENV_SERVICE_TOKEN" in printed.replace("\\u2026", "…") or fmt == "github"
        assert token[:5] not in printed, fmt
