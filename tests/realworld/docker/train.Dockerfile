# syntax=docker/dockerfile:1
# Two-stage CUDA build; flash-attn wheels come from our wheelhouse image.
ARG BASE=nvcr.io/nvidia/cuda
ARG CUDA_TAG=12.4.1-cudnn-devel-ubuntu22.04

FROM ${BASE}:${CUDA_TAG} AS build
RUN apt-get update && apt-get install -y python3-pip
# expect+1: SPK102
RUN --mount=type=bind,from=ghcr.io/acme/wheels:cu124,source=/wheels,target=/wheels \
    pip install /wheels/flash_attn-*.whl
# expect+1: SPK101
COPY --from=docker.io/bitnami/kubectl /opt/bitnami/kubectl/bin/kubectl /usr/local/bin/

FROM nvcr.io/nvidia/cuda:12.4.1-runtime-ubuntu22.04
COPY --from=build /usr/local/lib/python3.10/dist-packages /usr/local/lib/python3.10/dist-packages
COPY --from=0 /usr/local/bin/kubectl /usr/local/bin/kubectl
ENV PYTHONUNBUFFERED=1
ENTRYPOINT ["python3", "-m", "trainer"]
