#!/usr/bin/env bash
# Builds bench/cub_baseline.cu (CUB from the CUDA toolkit) for the lent GPU machine into .carry/bin.
set -euo pipefail
cd "$(dirname "$0")/.."
nvcc="${CUDA_HOME:-/usr/local/cuda}/bin/nvcc"
mkdir -p .carry/bin
"$nvcc" -O3 -std=c++17 -arch=sm_90 -o .carry/bin/cub_baseline bench/cub_baseline.cu
echo ".carry/bin/cub_baseline"
