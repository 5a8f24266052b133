"""Options, fail-fast preflight and exit codes of ``spikelint smoke`` (nothing is trained here)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from spikelint import __version__  # noqa: E402
from spikelint.schemas import validation_errors  # noqa: E402
from spikelint.smoke.cli import main  # noqa: E402

REPOSITORY = Path(__file__).resolve().parents[2]


def run_main(*argv: str) -> tuple[int, str, str]:
    stdout, stderr = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=stdout, stderr=stderr, process_exits=False)
    return code, stdout.getvalue(), stderr.getvalue()


def python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], cwd=REPOSITORY, capture_output=True, text=True, timeout=60)


def test_help_and_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    help_text = capsys.readouterr().out
    for option in ("--device", "--steps", "--checkpoint-every", "--kill-at-step", "--signal", "--nproc",
                   "--checkpoint-dir", "--run-dir", "--job", "--seed", "--require-persistent", "--format", "--timeout"):
        assert option in help_text
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"spikelint smoke {__version__}"


def test_the_command_line_module_does_not_import_torch() -> None:
    result = python("import sys, spikelint.smoke.cli; print('torch' in sys.modules)")
    assert result.returncode == 0 and result.stdout.strip() == "False"


def test_without_torch_exit_2_says_how_to_install_it(tmp_path: Path) -> None:
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "from spikelint.smoke.cli import main\n"
        f"sys.exit(main(['--run-dir', {str(tmp_path / 'run')!r}, '--format', 'json']))"
    )
    result = python(code)
    assert result.returncode == 2
    assert 'pip install "torch>=2.1" "numpy>=1.24"' in result.stderr
    assert json.loads(result.stdout)["verdict"] == "setup_error"
    assert not (tmp_path / "run").exists()
    version = python("import sys; sys.modules['torch'] = None\nfrom spikelint.smoke.cli import main\nsys.exit(main(['--version']))")
    assert version.returncode == 0 and version.stdout.startswith("spikelint smoke ")


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--steps", "0"], "must be a positive integer"),
        (["--device", "tpu"], "invalid choice"),
        (["--kill-at-step", "24"], "between two checkpoints"),
        (["--steps", "8"], "too short"),
    ],
)
def test_bad_options_exit_2(argv: list[str], words: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, stderr = run_main(*argv)
    assert code == 2
    assert words in stderr + capsys.readouterr().err


def test_an_existing_run_folder_is_refused(tmp_path: Path) -> None:
    code, stdout, stderr = run_main("--device", "cpu", "--run-dir", str(tmp_path), "--format", "json")
    assert code == 2 and "already exists" in stderr
    summary = json.loads(stdout)
    assert summary["verdict"] == "setup_error" and summary["exit_code"] == 2
    assert validation_errors("smoke-summary.v1.schema.json", summary) == []
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_device_cuda_without_cuda_exits_2_naming_the_torch_build(tmp_path: Path) -> None:
    code, stdout, stderr = run_main("--device", "cuda", "--run-dir", str(tmp_path / "run"))
    assert code == 2
    assert str(torch.__version__) in stderr
    expected = "built without CUDA" if torch.version.cuda is None else f"built with CUDA {torch.version.cuda}"
    assert expected in stderr and expected in stdout
    assert not (tmp_path / "run").exists()


def test_require_persistent_refuses_volatile_storage(tmp_path: Path) -> None:
    shm = Path("/dev/shm")
    mounts = Path("/proc/self/mountinfo")
    if not shm.is_dir() or not mounts.exists() or " /dev/shm " not in mounts.read_text() or "tmpfs" not in mounts.read_text():
        pytest.skip("no tmpfs /dev/shm here")
    checkpoints = shm / f"spikelint-cli-{tmp_path.name}"
    try:
        code, stdout, stderr = run_main(
            "--device", "cpu", "--run-dir", str(tmp_path / "run"), "--checkpoint-dir", str(checkpoints),
            "--require-persistent",
        )
        assert code == 2
        assert "not persistent" in stderr and "--require-persistent" in stderr
        summary = json.loads((tmp_path / "run" / "summary.json").read_text())
        assert summary["verdict"] == "setup_error" and summary["exit_code"] == 2
        assert "volatile" in summary["errors"][0] or "tmpfs" in summary["errors"][0]
        assert "SETUP ERROR" in stdout
    finally:
        if checkpoints.exists():
            checkpoints.rmdir()
