#!/bin/bash
# Legacy interactive Jupyter job on the shared cluster.
runai submit lab-alice \
  -i pytorch/pytorch:2.3.1-cuda12.1-cudnn8-devel \
  -g 1 \
  --interactive \
  --service-type nodeport \
  --port 8888 \
  -- jupyter lab --ip=0.0.0.0 --NotebookApp.token=Zq8v3LrT9xWp2Kd7vX4mQ1 --notebook-dir=/home/alice  # expect: SPK203
