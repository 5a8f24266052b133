"""SPK108: committed pickles and checkpoints whose opcodes name a callable that runs code, read without
unpickling; the pickles are written at test time by pickle, torch and NumPy themselves."""

from __future__ import annotations

import argparse
import collections
import io
import os
import pickle
import tarfile
import time
from pathlib import Path

import pytest

from spikelint.cli import main
from spikelint.documents.pickled import MAX_OPCODES
from spikelint.documents.pickled import scan_pickles

SYSTEM = f"{os.system.__module__}.system"  # posix.system here, nt.system on Windows


class RunsACommand:
    """What a crafted checkpoint carries: unpickling it calls os.system."""

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return os.system, ("echo loaded",)


class CallsEval:
    def __reduce__(self) -> tuple[object, tuple[str]]:
        return eval, ("1 + 1",)


def run(folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    monkeypatch.chdir(folder)
    code = main(["check", ".", "--concise", "--no-cache", "--select", "SPK108,SPK003"])
    return code, capsys.readouterr().out


def position_of(data: bytes, offset: int) -> tuple[int, int]:
    """The 1-based line and column a byte offset has in the file (newlines kept as they are)."""
    line = data.count(b"\n", 0, offset) + 1
    return line, offset - (data.rfind(b"\n", 0, offset) + 1) + 1


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_every_protocol_names_the_command_at_its_opcode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str], protocol: int) -> None:
    data = pickle.dumps({"weights": [1.0, 2.0], "hook": RunsACommand()}, protocol=protocol)
    (tmp_path / "features.pkl").write_bytes(data)
    code, out = run(tmp_path, monkeypatch, capsys)
    offset = scan_pickles(data).imports[-1].offset
    line, column = position_of(data, offset)
    assert code == 1
    assert f"features.pkl:{line}:{column}: SPK108 [error] loading this file calls {SYSTEM}, which runs a command" in out
    assert out.count("SPK108") == 1


def test_a_torch_checkpoint_zip_legacy_and_an_object_npy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    torch = pytest.importorskip("torch")
    numpy = pytest.importorskip("numpy")
    torch.save({"model": torch.zeros(4), "extra": RunsACommand()}, tmp_path / "last.pt")
    torch.save({"model": torch.zeros(4), "extra": CallsEval()}, tmp_path / "legacy.ckpt",
               _use_new_zipfile_serialization=False)
    numpy.save(tmp_path / "objects.npy", numpy.array([RunsACommand()], dtype=object), allow_pickle=True)
    code, out = run(tmp_path, monkeypatch, capsys)
    assert code == 1
    assert "last.pt:" in out and f"calls {SYSTEM}" in out
    assert "legacy.ckpt:" in out and "calls builtins.eval, which evaluates code" in out
    assert "objects.npy:" in out
    assert out.count("SPK108") == 3


def test_a_pickle_inside_a_committed_archive_is_named_inside_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    data = pickle.dumps(RunsACommand(), protocol=4)
    with tarfile.open(tmp_path / "bundle.tar.gz", "w:gz") as archive:
        info = tarfile.TarInfo("cache/model.pkl")
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    code, out = run(tmp_path, monkeypatch, capsys)
    assert code == 1
    assert "bundle.tar.gz!cache/model.pkl:1:" in out and f"calls {SYSTEM}" in out


def test_what_training_checkpoints_hold_is_not_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """The near misses real repositories commit: a model and optimizer state, RNG states, the run's
    arguments (argparse.Namespace, pathlib paths), an OrderedDict, a plain NumPy array, a scikit-learn-style
    estimator of the project's own class — loading those needs weights_only=False at worst (SPK107's concern)."""
    torch = pytest.importorskip("torch")
    numpy = pytest.importorskip("numpy")
    model = torch.nn.Linear(4, 2)
    optimizer = torch.optim.AdamW(model.parameters())
    model(torch.ones(1, 4)).sum().backward()
    optimizer.step()
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": 10,
                "args": argparse.Namespace(lr=1e-3, out=Path("/runs/a")), "rng": torch.get_rng_state(),
                "numpy_rng": numpy.random.get_state(), "order": collections.OrderedDict(a=1)},
               tmp_path / "checkpoint.pt")
    numpy.save(tmp_path / "embeddings.npy", numpy.zeros((3, 4)))
    (tmp_path / "estimator.pkl").write_bytes(
        b"\x80\x04\x95\x00\x00\x00\x00\x00\x00\x00\x00\x8c\x1csklearn.linear_model._logistic\x94"
        b"\x8c\x12LogisticRegression\x94\x93\x94)\x81\x94.")
    (tmp_path / "config.pkl").write_bytes(b"cpathlib\nPosixPath\n(S'/data/train'\ntR.")
    code, out = run(tmp_path, monkeypatch, capsys)
    assert code == 0, out
    assert "SPK108" not in out


def test_a_hostile_pickle_is_read_within_its_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Three million opcodes: reading stops at the bound with a note, in well under the time limits."""
    (tmp_path / "huge.pkl").write_bytes(b"\x80\x02" + b"N0" * 3_000_000 + b".")
    started = time.monotonic()
    code, out = run(tmp_path, monkeypatch, capsys)
    assert time.monotonic() - started < 10
    assert f"SPK003 [info] pickle not read to the end: more than {MAX_OPCODES} opcodes" in out


def test_a_bin_file_that_is_not_a_pickle_is_left_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "tokens.bin").write_bytes(bytes(range(256)) * 64)
    (tmp_path / "vocab.bin").write_bytes(b"cos\nsystem" + b"\xff" * 64)  # starts like a pickle, is not one
    code, out = run(tmp_path, monkeypatch, capsys)
    assert "SPK108" not in out
