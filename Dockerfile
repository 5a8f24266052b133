# spikelint as a container image, for CI systems that run images rather than Python:
#   docker build -t spikelint .
#   docker run --rm -v "$PWD:/src" spikelint check .
#   docker run --rm -v "$PWD:/src" spikelint check --format sarif --output spikelint.sarif --fail-on never .
# (add --user "$(id -u):$(id -g)" so a report written into the mounted repository is yours).
FROM python:3.12.8-slim

# git: spikelint lists files with git ls-files (so .gitignore is honoured) and --diff reads history
RUN apt-get update \
    && apt-get install -y --no-install-recommends git \
    && rm -rf /var/lib/apt/lists/* \
    && git config --system --add safe.directory '*'

COPY pyproject.toml setup.py README.md /opt/spikelint-src/
COPY spikelint /opt/spikelint-src/spikelint
COPY rules /opt/spikelint-src/rules
COPY schemas /opt/spikelint-src/schemas
RUN python -m pip install --no-cache-dir --disable-pip-version-check /opt/spikelint-src \
    && rm -rf /opt/spikelint-src

WORKDIR /src
ENTRYPOINT ["spikelint"]
CMD ["check", "."]
