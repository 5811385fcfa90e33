#!/usr/bin/env python3
"""The Kernel Tuner script whose work reduce_kt brings to varex: it tunes reduce_sum's kernel
(examples/user-operators/reduce_sum/reduce_sum.cl) with `tune_kernel(..., cache="cache.json")`, stores its results as
T4 (t4_results.json) and dumps its tune_params and restrictions to tune_params.json, which operator.json reads as
its space.

cache.json and t4_results.json here were written by this script with Kernel Tuner 1.5.0 and pyopencl on PoCL
(pthread, the project's 2-core machine), 2026-11-29, from no cache:
  python3 -m venv /tmp/kt && /tmp/kt/bin/pip install kernel_tuner pyopencl
  /tmp/kt/bin/python run_kt.py
Then, from the repository's root:
  varex import --op-dir examples/kernel-tuner --format kt-cache examples/kernel-tuner/reduce_kt/cache.json \
    --op reduce_kt --db kt.db
  varex tuner-bench --op-dir examples/kernel-tuner --db kt.db --op reduce_kt
  varex import --op-dir examples/kernel-tuner --format t4 examples/kernel-tuner/reduce_kt/t4_results.json \
    --op reduce_kt --rows 100000 --db kt-t4.db
"""
import json
import os

import numpy as np
from kernel_tuner import tune_kernel
from kernel_tuner.file_utils import store_output_file

here = os.path.dirname(os.path.abspath(__file__))
kernels = os.path.join(here, "..", "..", "..", "kernels")
source = open(os.path.join(here, "..", "..", "user-operators", "reduce_sum", "reduce_sum.cl")).read()

n = np.uint32(100000)
values = np.random.default_rng(1).integers(-1000000, 1000000, size=int(n), dtype=np.int32)
total = np.zeros(1, dtype=np.uint32)
# Every parameter is a define, as Kernel Tuner makes them: TREE picks the work-group's reduction, `block` is
# also the work-group's size (block_size_names), and the grid covers the rows once (grid_div_x).
tune_params = {"block": [32, 64, 128, 256, 512], "ept": [1, 2, 4, 8, 16], "TREE": [1, 0]}
restrictions = ["TREE == 1 or block >= 64"]
with open(os.path.join(here, "tune_params.json"), "w") as f:
    json.dump({"tune_params": tune_params, "restrictions": restrictions}, f)
answer = [None, np.array([np.sum(values.astype(np.int64)) % 2**32], dtype=np.uint32), None]
results, _ = tune_kernel("reduce_sum", source, int(n), [values, total, n], tune_params, restrictions=restrictions,
            block_size_names=["block"], grid_div_x=["block", "ept"], lang="OpenCL",
            compiler_options=["-I" + kernels, "-DMAX_BLOCK=512"], answer=answer,
            cache=os.path.join(here, "cache.json"), iterations=5, quiet=True)
# T4 with its times in milliseconds, as Kernel Tuner writes them (the schema says seconds).
store_output_file(os.path.join(here, "t4_results.json"), results, tune_params)
