"""SPK107: pickle-based loads of checkpoint-like or downloaded files."""

from __future__ import annotations

import pytest

from tests.hub.conftest import found


@pytest.mark.parametrize("code, line", [
    ('import torch\ndef f(ckpt_path):\n    return torch.load(ckpt_path, weights_only=False)\n', 3),
    ('from torch import load\nstate = load("checkpoints/last.pt", weights_only=False)\n', 2),
    ('import pickle\nwith open("model.pkl", "rb") as f:\n    m = pickle.load(f)\n', 3),
    ('import pickle as pkl\ndef f(cache_dir):\n    fh = open(cache_dir + "/x.pkl", "rb")\n    return pkl.load(fh)\n', 4),
    ('import joblib\nclf = joblib.load("weights/classifier.joblib")\n', 2),
    ('import dill\nobj = dill.load(open(download_path, "rb"))\n', 2),
    ('import numpy as np\na = np.load("ckpt/state.npy", allow_pickle=True)\n', 2),
    ('import pandas as pd\ndf = pd.read_pickle("https://example.org/model_outputs.pkl")\n', 2),
    ('import pickle, requests\nobj = pickle.loads(requests.get(url).content)\n', 2),
    ('import torch\nfrom huggingface_hub import hf_hub_download\n'
     'p = hf_hub_download("org/m", "x.bin", revision="7231864981174d9bee8c7687c24c8344414eae6b")\n'
     'sd = torch.load(p, weights_only=False)\n', 4),
])
def test_unsafe_loads(code: str, line: int) -> None:
    assert found("train/resume.py", code) == {(line, "SPK107")}


@pytest.mark.parametrize("code", [
    # torch.load without weights_only=False: weights_only=True is the default from torch 2.6
    'import torch\nsd = torch.load("checkpoints/last.pt", map_location="cpu")\n',
    'import torch\nsd = torch.load("checkpoints/last.pt", weights_only=True)\n',
    # numpy without allow_pickle, safetensors
    'import numpy as np\na = np.load("ckpt/state.npy")\n',
    'from safetensors.torch import load_file\nsd = load_file("checkpoints/model.safetensors")\n',
    # a path that names no checkpoint, download or cache
    'import pickle\nwith open("results/metrics.pkl", "rb") as f:\n    metrics = pickle.load(f)\n',
    'import pickle\nvocab = pickle.load(open(vocab_file, "rb"))\n',
    # written by the same function just before
    'import torch\ndef f(model_state, ckpt_path):\n    torch.save(model_state, ckpt_path)\n'
    '    return torch.load(ckpt_path, weights_only=False)\n',
    'import pickle\ndef f(obj, cache_file):\n    with open(cache_file, "wb") as out:\n        pickle.dump(obj, out)\n'
    '    with open(cache_file, "rb") as f:\n        return pickle.load(f)\n',
    'import os, torch\ndef test_convert(trainer, tmp_path):\n'
    '    trainer.save_checkpoint(os.path.join(tmp_path, "checkpoint.pt"))\n'
    '    sd = torch.load(os.path.join(tmp_path, "checkpoint.pt"), weights_only=False)\n',
    # an in-memory round trip reads no file
    'import pickle\nmodel_copy = pickle.loads(pickle.dumps(model))\n',
    'import pickle\ndef f(model):\n    blob = pickle.dumps(model)\n    return pickle.loads(blob)\n',
    # a profiler snapshot is not a checkpoint
    'import pickle\nwith open("memory_snapshot.pickle", "rb") as f:\n    snap = pickle.load(f)\n',
    # json is not pickle
    'import json\ncfg = json.load(open("model/config.json"))\n',
])
def test_safe_or_unrelated_loads(code: str) -> None:
    assert found("train/resume.py", code) == set()


def test_each_unsafe_load_is_reported() -> None:
    code = ('import torch\n'
            'a = torch.load("ckpt/a.pt", weights_only=False)\n'
            'b = torch.load("ckpt/b.pt", weights_only=False)\n')
    assert found("train/resume.py", code) == {(2, "SPK107"), (3, "SPK107")}


# --------------------------------------------------------------------------- the module's own cache and offsets files

@pytest.mark.parametrize("code, line", [
    # a cache folder the module never writes to: another tool's download cache
    ('import os, pickle\ndef save(feats, cache_dir):\n'
     '    pickle.dump(feats, open(os.path.join(cache_dir, "feats.pkl"), "wb"))\n'
     'def load(model_cache):\n    return pickle.load(open(os.path.join(model_cache, "model.pkl"), "rb"))\n', 5),
    # opened for reading twice: nothing writes it
    ('import pickle\ndef f(cache_file):\n    with open(cache_file, "rb") as f:\n        header = f.read(8)\n'
     '    with open(cache_file, "rb") as f:\n        return pickle.load(f)\n', 6),
])
def test_cache_files_the_module_does_not_write(code: str, line: int) -> None:
    assert found("data/features.py", code) == {(line, "SPK107")}


@pytest.mark.parametrize("code", [
    # load-or-build: the same function writes the offsets file after reading it
    'import os, pickle\nclass Index:\n    def offsets(self):\n'
    '        offsets_file = os.path.join(self.model_dir, "offsets.pkl")\n'
    '        if os.path.exists(offsets_file):\n            with open(offsets_file, "rb") as f:\n'
    '                return pickle.load(f)\n        offsets = self.scan()\n'
    '        with open(offsets_file, "wb") as f:\n            pickle.dump(offsets, f)\n        return offsets\n',
    # another method of the module writes the same cache path
    'import os, torch\nclass Features:\n    def __init__(self, cache_dir):\n'
    '        self.cache_path = os.path.join(cache_dir, "features.pt")\n'
    '    def build(self, data):\n        torch.save(data, self.cache_path)\n'
    '    def load(self):\n        return torch.load(self.cache_path, weights_only=False)\n',
    # a cache folder the module manages: it writes its own pickles there
    'import os, pickle\nCACHE_DIR = os.path.expanduser("~/.cache/tokenized")\n'
    'def store(name, obj):\n    with open(os.path.join(CACHE_DIR, name + ".pkl"), "wb") as f:\n'
    '        pickle.dump(obj, f)\n'
    'def fetch(name):\n    with open(os.path.join(CACHE_DIR, name + ".pkl"), "rb") as f:\n'
    '        return pickle.load(f)\n',
])
def test_own_cache_files_are_not_downloads(code: str) -> None:
    assert found("data/features.py", code) == set()


# --------------------------------------------------------------------------- the binding that reaches the load

def test_the_binding_that_reaches_the_load_is_traced() -> None:
    # the name rebound to the load's own result: the path is the binding before it
    code = ('import os, pickle\ndef f(args):\n    blob = os.path.join(args.resume_dir, "state.pkl")\n'
            '    blob = pickle.load(open(blob, "rb"))\n    return blob\n')
    assert found("train/resume.py", code) == {(4, "SPK107")}
    code = ('import torch\ndef f():\n    scores = "results/scores.pt"\n'
            '    scores = torch.load(scores, weights_only=False)\n')
    assert found("train/resume.py", code) == set()


def test_a_comprehension_variable_is_not_the_earlier_binding() -> None:
    code = ('import pickle\ndef f(args, feature_files):\n    path = args.checkpoint\n    print(path)\n'
            '    return [pickle.load(open(path, "rb")) for path in feature_files]\n')
    assert found("train/resume.py", code) == set()


ATTRIBUTE_ROUND_TRIP = ('import pickle\n\n\nclass Buckets:\n    def __init__(self, folder):\n'
                        '        self.progress_file = folder + "/offsets.ckpt"\n'
                        '        self.positions = pickle.load(open(self.progress_file, "rb"))\n\n'
                        '    def save(self):\n        pickle.dump(self.positions, open(self.progress_file, "wb"))\n')
CACHE_WRITER = ('import pickle\n\n\nclass Pool:\n    def get(self):\n        with open(self.cache_path, "rb") as f:\n'
                '            return pickle.load(f)\n\n    def _write_to_cache(self, path, data):\n'
                '        with open(path, "wb") as f:\n            f.write(data)\n')


@pytest.mark.parametrize("code", [ATTRIBUTE_ROUND_TRIP, CACHE_WRITER], ids=["same-attribute", "cache-writer"])
def test_a_file_the_module_writes_itself_is_not_a_download(code: str) -> None:
    assert found("data/pool.py", code) == set()


def test_a_cache_named_load_in_a_module_that_writes_no_cache_fires() -> None:
    code = CACHE_WRITER.replace("_write_to_cache", "_send").replace('open(path, "wb")', 'open(path, "rb")')
    assert found("data/pool.py", code) == {(7, "SPK107")}
