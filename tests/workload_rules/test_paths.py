"""Path semantics: expansion, resolution, mount lookup, embedded scripts and their positions."""

from __future__ import annotations

from dataclasses import replace

from spikelint.config import Config
from spikelint.documents import parse_text
from spikelint.model import Container
from spikelint.model import Located
from spikelint.model import Mount
from spikelint.model import SourceFile
from spikelint.model import Volume
from spikelint.model import Workload
from spikelint.facts.run_identity import TIMESTAMP
from spikelint.facts.expansion import Variable
from spikelint.facts.invocations import container_invocations
from spikelint.facts.expansion import expand
from spikelint.facts.placement import is_relative
from spikelint.facts.paths import launcher_nodes
from spikelint.facts.placement import mount_for
from spikelint.facts.run_identity import names_run
from spikelint.facts.placement import place
from spikelint.facts.placement import resolve
from spikelint.facts.invocations import script_argument
from spikelint.facts.paths import script_file
from spikelint.facts.runconfig import UNRESOLVED


def at(text: str, line: int = 1, column: int = 1) -> Located:
    return Located(text, line, column, line, column + len(text))


def words(*texts: str) -> list[Located]:
    return [at(text) for text in texts]


def mount(path: str, source: str, persistent: bool, name: str = "v") -> Mount:
    return Mount(at(path), Volume(name, source, persistent))


def workload(*mounts: Mount, **fields: object) -> tuple[Workload, Container]:
    container = Container("main", "main", at("img:1.0.0"), mounts=list(mounts))
    return Workload("w.yaml", "kubernetes", "Job", at("Job"), containers=[container], **fields), container


# --------------------------------------------------------------------------- expansion


def lookup_from(values: dict[str, str]):  # type: ignore[no-untyped-def]
    def lookup(name: str, where: Located | None) -> Variable | None:
        return Variable(values[name], at(values[name], 9, 1)) if name in values else None
    return lookup


def test_expand_plain_braced_default_and_kubernetes_forms() -> None:
    lookup = lookup_from({"OUT": "/ckpt/run", "ROOT": "/ckpt"})
    assert expand("$OUT/x", at("$OUT/x"), lookup).text == "/ckpt/run/x"
    assert expand("${ROOT}/y", at(""), lookup).text == "/ckpt/y"
    assert expand("${MISSING:-/data}/z", at(""), lookup).text == "/data/z"
    assert expand("$(OUT)/k8s", at(""), lookup).text == "/ckpt/run/k8s"
    assert expand("/a/$(date +%F)", at(""), lookup).text == f"/a/{UNRESOLVED}"
    assert expand("/a/`date`/b", at(""), lookup).text == f"/a/{UNRESOLVED}/b"
    assert expand("$UNKNOWN/b", at(""), lookup).text == f"{UNRESOLVED}/b"
    assert expand("$TMPDIR/ckpt", at(""), lookup).text == "/tmp/ckpt"


def test_expand_records_where_variables_were_written() -> None:
    lookup = lookup_from({"OUT": "/ckpt/$(date +%s)"})
    expanded = expand("$OUT", at("$OUT", 3, 5), lookup)
    assert [(where.line, text) for where, text in expanded.sources] == [(3, "$OUT"), (9, "/ckpt/$(date +%s)")]


def test_expand_stops_on_self_reference() -> None:
    lookup = lookup_from({"A": "$A/x"})
    assert UNRESOLVED in expand("$A", at("$A"), lookup).text


# --------------------------------------------------------------------------- resolving and placing


def test_relative_and_resolve() -> None:
    assert is_relative("out/run") and is_relative("./ckpt")
    assert not any(is_relative(text) for text in ("/abs", "~/x", "$OUT/x", "s3://bucket/x", f"{UNRESOLVED}/x"))
    assert resolve("out/../ckpt", "/workspace") == "/workspace/ckpt"
    assert resolve("out", None) is None
    assert resolve(f"/ckpt/run-{UNRESOLVED}/x", None) == "/ckpt"


def test_longest_mount_prefix_wins() -> None:
    outer = mount("/data", "pvc", True, "data")
    inner = mount("/data/scratch", "emptyDir", False, "scratch")
    assert mount_for("/data/scratch/x", [outer, inner]) is inner
    assert mount_for("/data/other", [outer, inner]) is outer
    assert mount_for("/database", [outer, inner]) is None


def test_place_explains_why() -> None:
    job, container = workload(mount("/ckpt", "pvc", True), mount("/scratch", "emptyDir", False, "scratch"),
                              mount("/raid", "hostPath", False, "raid"), mount("/eph", "ephemeral-pvc", False, "e"),
                              mount("/dev/shm", "emptyDir", False, "dshm"))
    config = Config()
    assert place("/ckpt/run", container, job, config).persistent is True
    for path, words_expected in (("/scratch/x", "emptyDir"), ("/raid/x", "hostPath"), ("/eph/x", "ephemeral"),
                                 ("/dev/shm/x", "shared memory"), ("/tmp/x", "/tmp"), ("/workspace/x", "filesystem")):
        placement = place(path, container, job, config)
        assert placement.persistent is False and words_expected in placement.reason, path


def test_place_honours_persistent_paths_and_unknown_storage() -> None:
    job, container = workload()
    assert place("/data/run", container, job, Config(persistent_paths=("/data",))).persistent is True
    job.platform = replace(job.platform, storage_unknown=True)
    assert place("/data/run", container, job, Config()).persistent is None
    undeclared = Mount(at("/ckpt"), None)
    job2, container2 = workload(undeclared)
    assert place("/ckpt/x", container2, job2, Config()).persistent is None


# --------------------------------------------------------------------------- commands


def test_script_argument_finds_the_c_string() -> None:
    found = script_argument(words("bash", "-euxc", "echo hi", "arg0"))
    assert found is not None and found[1].value == "echo hi"
    assert script_argument(words("/bin/sh", "-c", "x")) is not None
    assert script_argument(words("python", "-c", "print(1)")) is None
    assert script_argument(words("bash", "run.sh")) is None


def test_script_file() -> None:
    assert script_file(words("bash", "-e", "/workspace/train.sh", "--x")).value == "/workspace/train.sh"
    assert script_file(words("./launch.sh")).value == "./launch.sh"
    assert script_file(words("bash", "-c", "python x.py")) is None
    assert script_file(words("python", "train.py")) is None


def test_launcher_nodes() -> None:
    assert launcher_nodes(words("torchrun", "--nnodes", "4", "train.py")) == 4
    assert launcher_nodes(words("torchrun", "--nnodes=2:8", "x.py")) == 8
    assert launcher_nodes(words("python", "x.py", "--nnodes", "4")) == 1
    assert launcher_nodes(words("accelerate", "launch", "--num_machines", "3", "x.py")) == 3
    assert launcher_nodes(words("deepspeed", "--hostfile", "h", "--num_nodes", "2", "x.py")) == 1  # one launcher
    assert launcher_nodes(words("torchrun", "--nnodes=$NODES", "x.py"), lookup_from({"NODES": "2"})) == 2


def test_launch_time_and_run_identity_patterns() -> None:
    for text in ("/ckpt/${now:%Y-%m-%d}", "/ckpt/$(date +%F)", "/ckpt/`date +%s`", "/ckpt/{timestamp}",
                 "runs/%Y%m%d-%H%M%S"):
        assert TIMESTAMP.search(text), text
    for text in ("/ckpt/run", "/ckpt/{epoch:02d}", "/ckpt/${JOB_NAME}", "100%"):
        assert not TIMESTAMP.search(text), text
    for text in ("/ckpt/vit-b16-r5", "/ckpt/$JOB_UUID", "/ckpt/${oc.env:JOB_NAME}", "/ckpt/run-3"):
        assert names_run(text), text
    assert names_run("/ckpt/bert-ft", ["bert-ft"])
    assert not names_run("/ckpt/vit-b16") and not names_run("/ckpt/outputs")


# --------------------------------------------------------------------------- embedded scripts keep their positions

BLOCK = """\
apiVersion: v1
kind: Pod
spec:
  containers:
    - name: main
      image: img:1.0.0
      command: ["bash", "-c"]
      args:
        - |
          set -o pipefail
          OUT=/ckpt/run-1
          cd /workspace
          python train.py --output_dir "$OUT" 2>&1 | tee -a logs/train.log
"""


def _document(name: str, text: str):  # type: ignore[no-untyped-def]
    from spikelint.files import detect_kind

    return parse_text(SourceFile(name, name, detect_kind(name, text[:128])), text)


def _container(document) -> Container:  # type: ignore[no-untyped-def]
    from spikelint.adapters import workloads_in

    return workloads_in(document, Config())[0].main_containers()[0]


def test_block_scalar_script_words_are_placed_in_the_file() -> None:
    document = _document("pod.yaml", BLOCK)
    invocations = container_invocations(_container(document), document)
    python = next(inv for inv in invocations if inv.words and inv.words[0].value == "python")
    output = next(word for word in python.words if word.value == "$OUT")
    line = BLOCK.splitlines()[12]
    assert (output.line, output.column) == (13, line.index('"$OUT"') + 1)
    assert python.cwd == "/workspace"
    assert [(w.target.line, w.target.column, w.operator) for w in python.writes] == [
        (13, line.index("logs/") + 1, "tee -a")]
    lookup = python.lookup
    assert lookup is not None
    variable = lookup("OUT", output)
    assert variable is not None and (variable.where.line, variable.where.column) == (11, 15)
    assert variable.text == "/ckpt/run-1"


def test_json_string_script_words_are_placed_in_the_file() -> None:
    text = ('{"name": "r1", "projectId": "1", "clusterId": "c", "spec": {"image": "img:1.0.0",\n'
            ' "command": "bash", "args": "-c \'cd /w && python t.py --output_dir out > /w/log.txt\'"}}\n')
    document = _document("rest.json", text)
    invocations = container_invocations(_container(document), document)
    python = next(inv for inv in invocations if inv.words and inv.words[0].value == "python")
    output = python.words[-1]
    assert output.value == "out" and (output.line, output.column) == (2, text.splitlines()[1].index("out >") + 1)
    assert python.cwd == "/w"


def test_wide_variable_chains_are_bounded() -> None:
    import time

    values = {f"V{i}": f"$V{i + 1}$V{i + 1}$V{i + 1}" for i in range(30)}
    started = time.perf_counter()
    expanded = expand("$V0", at("$V0"), lookup_from(values))
    assert UNRESOLVED in expanded.text and time.perf_counter() - started < 10  # unbounded: 3**30 expansions
