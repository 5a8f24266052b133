# spikelint as a container image, for CI systems that run images rather than Python:
#   docker build -t spikelint .
#   docker run --rm -v "$PWD:/src" spikelint check .
#   docker run --rm -v "$PWD:/src" spikelint check --format sarif --output spikelint.sarif --fail-on never .
# (add --user "$(id -u):$(id -g)" so a report written into the mounted repository is yours).
# The entrypoint runs spikelint for its own arguments (`check .`, `--version`) and any other command
# as given, so GitLab's `image:` jobs, which start a shell in the image, work without
# `entrypoint: [""]`.
#
# The base is pinned by digest (the multi-platform index of python:3.12.8-slim); to move it, take
# the new digest from `docker buildx imagetools inspect python:3.12.8-slim` (or the newer tag).
FROM python:3.12.8-slim@sha256:2199a62885a12290dc9c5be3ca0681d367576ab7bf037da120e564723292a2f0

# git: spikelint lists files with git ls-files (so .gitignore is honoured) and --diff reads history
RUN apt-get update \
    && apt-get install -y --no-install-recommends git \
    && rm -rf /var/lib/apt/lists/* \
    && git config --system --add safe.directory '*'

COPY pyproject.toml README.md /opt/spikelint-src/
COPY spikelint /opt/spikelint-src/spikelint
COPY rules /opt/spikelint-src/rules
COPY schemas /opt/spikelint-src/schemas
RUN python -m pip install --no-cache-dir --disable-pip-version-check /opt/spikelint-src \
    && rm -rf /opt/spikelint-src \
    && printf '%s\n' '#!/bin/sh' \
        '# spikelint for an option or a subcommand; any other command (a CI shell) runs as given' \
        'case "${1:-}" in' \
        '  ""|-*|check|rules|explain|init|precheck|verify-run|smoke) exec spikelint "$@" ;;' \
        'esac' \
        'if command -v "$1" >/dev/null 2>&1; then exec "$@"; fi' \
        'exec spikelint "$@"' \
        > /usr/local/bin/spikelint-entrypoint \
    && chmod 0755 /usr/local/bin/spikelint-entrypoint

WORKDIR /src
ENTRYPOINT ["spikelint-entrypoint"]
CMD ["check", "."]
