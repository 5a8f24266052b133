"""``spikelint smoke diff A B``: exit 0 equal, 1 different (leaves named file:key), 2 input that cannot be compared."""

from __future__ import annotations

import dataclasses
import io
import json
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from spikelint.schemas import validation_errors  # noqa: E402
from spikelint.smoke.cli import main  # noqa: E402

REPOSITORY = Path(__file__).resolve().parents[2]
SCHEMA = "smoke-diff.v1.schema.json"


@dataclasses.dataclass
class Record:
    step: int


def diff(*argv: str) -> tuple[int, str, str]:
    stdout, stderr = io.StringIO(), io.StringIO()
    code = main(["diff", *argv], stdout=stdout, stderr=stderr, process_exits=False)
    return code, stdout.getvalue(), stderr.getvalue()


def diff_json(*argv: str) -> tuple[int, dict[str, Any]]:
    code, out, _ = diff(*argv, "--format", "json")
    report = json.loads(out)
    assert validation_errors(SCHEMA, report) == []
    assert report["exit_code"] == code
    return code, report


def state(bump: float = 0.0) -> dict[str, Any]:
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model(torch.ones(2, 3)).sum().backward()
    optimizer.step()
    saved = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": 1}
    saved["optimizer"]["state"][0]["momentum_buffer"][0, 0] += bump
    return saved


def test_equal_torch_files_exit_0(tmp_path: Path) -> None:
    torch.save(state(), tmp_path / "a.pt")
    torch.save(state(), tmp_path / "b.pt")
    code, out, err = diff(str(tmp_path / "a.pt"), str(tmp_path / "b.pt"))
    assert code == 0 and err == ""
    assert out.startswith("spikelint smoke diff: EQUAL: 16 leaves of a.pt equal bit for bit")


def test_leaves_only_one_side_has_are_counted_apart_from_the_compared_ones(tmp_path: Path) -> None:
    torch.save({"w": torch.zeros(2), "b": torch.zeros(1)}, tmp_path / "a.pt")
    torch.save({"w": torch.ones(2), "extra": [torch.zeros(1)] * 5}, tmp_path / "b.pt")
    code, out, _ = diff(str(tmp_path / "a.pt"), str(tmp_path / "b.pt"))
    assert code == 1
    assert "DIFFERENT: 1 of 2 leaves differ, 1 leaves only in A, 5 leaves only in B" in out


def test_one_changed_tensor_exit_1_named_as_the_smoke_report_names_it(tmp_path: Path) -> None:
    torch.save(state(), tmp_path / "a.pt")
    torch.save(state(0.5), tmp_path / "b.pt")
    code, out, _ = diff(str(tmp_path / "a.pt"), str(tmp_path / "b.pt"))
    assert code == 1
    assert "DIFFERENT: 1 of 16 leaves differ (first: a.pt:optimizer.state.0.momentum_buffer)" in out
    assert "  a.pt:optimizer.state.0.momentum_buffer  value  max |diff| 0.5  (A torch.float32[2, 3] sha256:" in out
    code, report = diff_json(str(tmp_path / "a.pt"), str(tmp_path / "b.pt"))
    assert code == 1 and report["equal"] is False and report["leaves_compared"] == 16
    (difference,) = report["differences"]
    assert difference["key"] == "a.pt:optimizer.state.0.momentum_buffer" and difference["kind"] == "value"
    assert difference["max_abs_diff"] == pytest.approx(0.5) and difference["detail"].startswith("A torch.float32")


def test_folders_by_relative_name_with_missing_and_extra_files_listed(tmp_path: Path) -> None:
    a, b = tmp_path / "run-a" / "checkpoint-8", tmp_path / "run-b" / "checkpoint-8"
    for folder in (a, b):
        folder.mkdir(parents=True)
        torch.save(state(), folder / "optimizer.pt")
        (folder / "trainer_state.json").write_text(json.dumps({"global_step": 8, "log_history": [
            {"loss": 0.5, "step": 8, "train_runtime": 1.0 if folder == a else 2.0}]}))
        (folder / ".optimizer.pt.tmp").write_bytes(b"a temporary is no part of the checkpoint")
    torch.save({"scale": torch.tensor(1024.0)}, a / "scaler.pt")
    (b / "rng_state.pth").write_bytes(b"")
    code, report = diff_json(str(a), str(b))
    assert code == 1 and report["format"] == "folder"
    assert [(d["key"], d["kind"]) for d in report["differences"]] == [
        ("scaler.pt", "missing_in_b"), ("rng_state.pth", "extra_in_b")]
    assert report["compared"] == ["optimizer.pt", "trainer_state.json"]
    assert report["notes"] == ["trainer_state.json: left out (timing, or a summary of the steps one process ran): "
                               "train_runtime"]
    code, out, _ = diff(str(a), str(b))
    assert "DIFFERENT: 2 file(s) only on one side (first: scaler.pt)" in out
    assert "  scaler.pt  missing_in_b  (only in A (a torch.save file))" in out


def test_equal_folders_with_a_dcp_subfolder(tmp_path: Path) -> None:
    import torch.distributed.checkpoint as dcp

    for side in ("a", "b"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            dcp.save(state(0.25 if side == "b" else 0.0), checkpoint_id=str(tmp_path / side / "step-1"))
        (tmp_path / side / "meta.json").write_text('{"step": 1}')
    code, report = diff_json(str(tmp_path / "a"), str(tmp_path / "b"))
    assert code == 1 and report["compared"] == ["meta.json", "step-1"]
    assert [d["key"] for d in report["differences"]] == ["step-1:optimizer.state.0.momentum_buffer"]
    code, report = diff_json(str(tmp_path / "a" / "step-1"), str(tmp_path / "a" / "step-1"))
    assert code == 0 and report["format"] == "dcp" and report["equal"] is True


def test_unusable_input_exit_2_names_the_path_and_the_fix(tmp_path: Path) -> None:
    torch.save(state(), tmp_path / "a.pt")
    (tmp_path / "folder").mkdir()
    cases = [
        ((tmp_path / "a.pt", tmp_path / "missing.pt"), f"{tmp_path / 'missing.pt'}: no such file or folder"),
        ((tmp_path / "a.pt", tmp_path / "folder"), "is a torch.save file but"),
    ]
    (tmp_path / "model.safetensors").write_bytes(b"")
    cases.append(((tmp_path / "a.pt", tmp_path / "model.safetensors"),
                  "is a torch.save file but " + str(tmp_path / "model.safetensors") + " is a safetensors file; "
                  "compare two checkpoints of the same format"))
    (tmp_path / "torn1.pt").write_bytes(b"PK\x03\x04 not a whole archive")
    (tmp_path / "torn2.pt").write_bytes(b"PK\x03\x04 not a whole archive")
    cases.append(((tmp_path / "torn1.pt", tmp_path / "torn2.pt"), "cannot be read as a torch.save file"))
    cases.append(((tmp_path / "folder", tmp_path / "folder"), "hold no checkpoint files"))
    for (a, b), message in cases:
        code, out, err = diff(str(a), str(b))
        assert code == 2 and out == "" and message in err, err
        assert "Traceback" not in err
        code, report = diff_json(str(a), str(b))
        assert code == 2 and report["equal"] is None and message in report["message"]


def test_help_of_diff_and_of_smoke_and_old_invocations_unchanged(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", "--help"]) == 0
    assert "Exit 0 equal, 1 different, 2 input that cannot be compared" in " ".join(capsys.readouterr().out.split())
    assert main(["--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "spikelint smoke diff A B compares two checkpoints" in text and "--kill-at-step" in text
    assert main(["diff"]) == 2
    assert "the following arguments are required: A, B" in capsys.readouterr().err


def test_through_the_spikelint_command(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text('{"step": 3, "lr": 0.1}')
    (tmp_path / "b.json").write_text('{"step": 3, "lr": 0.2}')
    result = subprocess.run([sys.executable, "-m", "spikelint", "smoke", "diff", str(tmp_path / "a.json"),
                             str(tmp_path / "b.json")], cwd=REPOSITORY, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1, result.stderr
    assert "  a.json:lr  value  max |diff| 0.1  (A float sha256:" in result.stdout


def test_without_torch_exit_2_says_how_to_install_it(tmp_path: Path) -> None:
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "from spikelint.smoke.cli import main\n"
        f"sys.exit(main(['diff', {str(tmp_path / 'a.pt')!r}, {str(tmp_path / 'b.pt')!r}, '--format', 'json']))"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=REPOSITORY, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and 'pip install "torch>=2.1" "numpy>=1.24"' in result.stderr
    report = json.loads(result.stdout)
    assert validation_errors(SCHEMA, report) == [] and report["exit_code"] == 2
