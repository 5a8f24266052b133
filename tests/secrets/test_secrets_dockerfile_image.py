"""SPK205 read from a Dockerfile: build arguments baked into the config or kept in the history,
credential files copied into a layer; exact lines, and the near misses that must stay quiet."""

from __future__ import annotations

from fakes import Fakes

from spikelint.catalog import load_catalog
from spikelint.engine import lint_snippet
from spikelint.model import Finding

FAKE = Fakes(30)
BASE = "FROM harbor.example.org/ml/base:2.4.1@sha256:" + "c" * 64 + "\n"


def lint(text: str, select: str = "SPK2") -> list[Finding]:
    return lint_snippet("docker/train.Dockerfile", text, {"select": [select]})


def found(text: str, select: str = "SPK2") -> list[tuple[int, int, str]]:
    return [(finding.line, finding.column, finding.rule) for finding in lint(text, select)]


# --------------------------------------------------------------------------- ENV / LABEL of a build argument


def test_env_of_a_build_argument_is_reported_at_the_value() -> None:
    text = (BASE + "ARG HF_TOKEN\nARG HUB_PASSWORD\nARG WANDB\n"
            "ENV HF_TOKEN=$HF_TOKEN\n"                      # 5
            "ENV MODE=train HUB=${HUB_PASSWORD:-}\n"        # 6: any name, a secret-named argument
            "ENV WANDB_API_KEY $WANDB\n"                    # 7: legacy form, a secret-named variable
            "LABEL org.example.token=${HF_TOKEN}\n")        # 8: config labels
    assert found(text) == [(5, 14, "SPK205"), (6, 20, "SPK205"), (7, 19, "SPK205"), (8, 25, "SPK205")]


def test_env_message_names_the_argument_and_the_fix_never_a_value() -> None:
    token = FAKE.hf()
    text = BASE + f"ARG HF_TOKEN={token}\nENV HF_TOKEN=${{HF_TOKEN}}\n"
    findings = lint(text)
    assert [(finding.line, finding.rule) for finding in findings] == [(2, "SPK202"), (3, "SPK205")]
    message = findings[1].message
    assert "build argument HF_TOKEN" in message and "config Env" in message
    assert "RUN --mount=type=secret,id=hf_token" in message
    assert all(token[:5] not in finding.message for finding in findings)


def test_env_near_misses() -> None:
    text = (BASE + "ARG HF_HOME=/cache\nARG HF_TOKEN\nARG DEBUG_AUTH=false\n"
            "ENV HF_HOME=$HF_HOME\n"                        # not secret-named
            "ENV TOKENIZERS_PARALLELISM=false\n"            # a known non-secret, no argument
            "ENV GITHUB_TOKEN=$GITHUB_TOKEN\n"              # no such ARG in this stage
            "ENV USE_AUTH=$DEBUG_AUTH\n"                    # a plain default
            "ENV CACHE=/cache/$HF_HOME_SUFFIX\n"            # another name that starts the same
            "COPY src/ /workspace/src/\nCMD [\"python\", \"-m\", \"src.train\"]\n")
    assert found(text) == []


def test_a_build_argument_reaches_only_its_own_stage() -> None:
    text = ("ARG HF_TOKEN\n" + BASE + "ENV HF_TOKEN=$HF_TOKEN\n"   # a global ARG is seen by FROM only
            "FROM harbor.example.org/ml/base:2.4.1@sha256:" + "d" * 64 + " AS second\nARG HF_TOKEN\n"
            "ENV HF_TOKEN=$HF_TOKEN\n")
    assert found(text) == [(6, 14, "SPK205")]


def test_an_unused_secret_argument_is_not_reported() -> None:
    text = BASE + "ARG HF_TOKEN\nARG GITHUB_TOKEN\nCOPY . /workspace\nWORKDIR /workspace\n"
    assert found(text) == []


# --------------------------------------------------------------------------- RUN with a build argument


def test_run_using_a_secret_build_argument_is_reported_at_the_reference() -> None:
    text = (BASE + "ARG HF_TOKEN\nARG GIT_TOKEN\n"
            "RUN huggingface-cli download --token $HF_TOKEN acme/llm-7b --local-dir /models/llm-7b\n"   # 4
            "RUN curl -fsSL -H \"Authorization: Bearer ${HF_TOKEN}\" \\\n"                            # 5
            "      -o /models/tok.json https://huggingface.co/acme/llm-7b/resolve/main/tok.json\n"
            "RUN <<EOF\nset -e\ngit clone https://oauth2:${GIT_TOKEN}@git.example.org/ml/tools.git /opt/t\nEOF\n")  # 9
    assert found(text) == [(4, 38, "SPK205"), (5, 42, "SPK205"), (9, 26, "SPK205")]
    message = lint(text)[0].message
    assert "docker history" in message and "|1 HF_TOKEN=…" in message and "--mount=type=secret" in message


def test_run_writing_a_build_argument_into_a_file_is_reported() -> None:
    """Quoted ``NAME=$NAME`` is text written out, not a shell assignment that would shadow the argument."""
    text = (BASE + "ARG WANDB_API_KEY\n"
            "RUN echo \"WANDB_API_KEY=$WANDB_API_KEY\" >> /workspace/.env\n"
            "RUN export WANDB_API_KEY=$(cat /run/secrets/wandb) && wandb login \"$WANDB_API_KEY\"\n")
    assert found(text) == [(3, 25, "SPK205")]


def test_run_near_misses() -> None:
    text = (BASE + "ARG HF_TOKEN\nARG PIP_INDEX\n"
            "RUN --mount=type=secret,id=hf_token HF_TOKEN=\"$(cat /run/secrets/hf_token)\" "
            "huggingface-cli download acme/llm-7b\n"
            "RUN --mount=type=secret,id=hf_token,env=HF_TOKEN huggingface-cli download --token $HF_TOKEN acme/x\n"
            "RUN test -n \"$HF_TOKEN_FILE\" && pip install --index-url $PIP_INDEX torch\n"
            "RUN echo \\$HF_TOKEN is read at run time > /etc/motd\n")
    assert found(text) == []


def test_a_literal_on_the_run_line_stays_spk203_and_an_env_covers_later_runs() -> None:
    text = (BASE + f"RUN huggingface-cli download --token {FAKE.hf()} acme/llm-7b\n"
            "ARG HF_TOKEN\nENV HF_TOKEN=$HF_TOKEN\nRUN huggingface-cli download --token $HF_TOKEN acme/llm-7b\n")
    assert found(text) == [(2, 38, "SPK203"), (4, 14, "SPK205")]


# --------------------------------------------------------------------------- COPY / ADD of a credential file


def test_credential_files_copied_into_the_image() -> None:
    text = (BASE +
            "COPY .netrc /root/.netrc\n"                                        # 2
            "COPY --chown=1000:1000 .git-credentials /home/ml/\n"               # 3
            "COPY ci/.docker/config.json /root/.docker/config.json\n"           # 4
            "ADD deploy/id_rsa /root/.ssh/id_rsa\n"                             # 5
            "COPY .aws/credentials /root/.aws/credentials\n"                    # 6
            "COPY certs/privkey.pem certs/tls.key /etc/ssl/private/\n"          # 7 (two)
            "COPY kubeconfig /root/.kube/config\n"                              # 8
            "COPY [\".ssh\", \"/root/.ssh\"]\n"                                 # 9 exec form, a folder
            "COPY --from=builder /root/.netrc /root/.netrc\n"                   # 10 from another stage
            "COPY conf/netrc.txt /root/.netrc\n")                               # 11 by its destination
    assert found(text) == [(2, 6, "SPK205"), (3, 24, "SPK205"), (4, 6, "SPK205"), (5, 5, "SPK205"),
                           (6, 6, "SPK205"), (7, 6, "SPK205"), (7, 24, "SPK205"), (8, 6, "SPK205"),
                           (9, 7, "SPK205"), (10, 21, "SPK205"), (11, 6, "SPK205")]


def test_credential_copy_messages() -> None:
    findings = lint(BASE + "COPY .netrc /root/.netrc\nCOPY id_ed25519 /root/.ssh/\n")
    assert "credential file .netrc" in findings[0].message
    assert "RUN --mount=type=secret,id=netrc,target=/root/.netrc" in findings[0].message
    assert "RUN --mount=type=ssh" in findings[1].message


def test_credential_copy_near_misses() -> None:
    text = (BASE +
            "COPY .netrc.example /root/.netrc\n"          # a template
            "COPY docker/netrc.template /root/\n"
            "COPY certs/ca.pem certs/fullchain.pem /etc/ssl/certs/\n"   # certificates
            "COPY nvidia-apt.key /usr/share/keyrings/\n"  # a repository's public signing key
            "ADD https://packages.example.org/repo.key /etc/apt/trusted.gpg.d/\n"
            "COPY id_rsa.pub /root/.ssh/authorized_keys\n"
            "COPY *.pem /etc/ssl/certs/\n"                # a pattern: nothing known by name
            "COPY tests/fixtures/server.key /workspace/tests/fixtures/\n"  # test data
            "COPY requirements.lock .docker/ /workspace/\n"
            "COPY <<EOF /root/.pip/pip.conf\n[global]\nindex-url = https://pypi.example.org/simple\nEOF\n")
    assert found(text) == []


def test_a_copy_is_found_in_a_dockerfile_without_a_secret_word() -> None:
    """The whole-file prefilter looks for secret-ish words, and ``COPY .netrc`` holds none."""
    text = BASE + "WORKDIR /workspace\nCOPY .netrc /root/.netrc\nCOPY src/ ./src/\n"
    assert found(text) == [(3, 6, "SPK205")]
    assert found(text, select="SPK205") == [(3, 6, "SPK205")]
    assert found(text, select="SPK201") == []


# --------------------------------------------------------------------------- the catalog's example


def test_the_catalog_example_reports_its_env_and_copy_lines() -> None:
    examples = load_catalog()["SPK205"].examples
    lines = examples["bad"].splitlines()
    findings = lint_snippet(examples["filename"], examples["bad"], {"select": ["SPK205"]})
    assert [(finding.line, finding.rule) for finding in findings] == [
        (lines.index("ENV HF_TOKEN=${HF_TOKEN}") + 1, "SPK205"), (lines.index("COPY .netrc /root/.netrc") + 1, "SPK205")]
    assert lint_snippet(examples["filename"], examples["good"], {"select": ["SPK2"]}) == []
