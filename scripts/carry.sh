#!/usr/bin/env bash
# Stages a build for the lent GPU machine in .carry (git-ignored; name it in the device tool's carry):
# the installed varex package (bin/varex, bin/varex-bench, the runtime library, the headers and CMake package) with
# nlohmann/json beside it, the shared libraries that machine may lack (OpenCL ICD loader, Google
# Benchmark) and the word list of the titles dataset. SQLite, RE2 and Hyperscan are linked statically;
# NVRTC and the driver are that machine's own.
set -euo pipefail
cd "$(dirname "$0")/.."
# Every architecture (the tests build one); the two binaries and the runtime library, which is what the
# installation holds.
scripts/setup.sh --target varex --target varex-bench --target varex_runtime build -DVAREX_VENDOR=ON \
  "-DVAREX_VENDOR_ARCHS=75;80;90" >/dev/null
rm -rf .carry
cmake --install build --prefix .carry/prefix >/dev/null
mkdir -p .carry/bin .carry/lib .carry/prefix/share/cmake
mv .carry/prefix/bin/* .carry/bin/
cp -r /usr/include/nlohmann .carry/prefix/include/
cp -r /usr/share/cmake/nlohmann_json .carry/prefix/share/cmake/
# The CUB vendor library, where nvcc built it: bin/varex finds it in ../lib.
[ -f .carry/prefix/lib/libvarex_cub.so ] && mv .carry/prefix/lib/libvarex_cub.so .carry/lib/
cp -L /usr/lib/x86_64-linux-gnu/libOpenCL.so.1 /usr/lib/x86_64-linux-gnu/libbenchmark.so.1debian .carry/lib/
# The runtime library's pattern libraries and SQLite (shared there), and the example's CUDA timing built against the
# installed package (examples/runtime-consumer; gpu_evidence.sh runtime30).
cp -L /usr/lib/x86_64-linux-gnu/libre2.so.9 /usr/lib/x86_64-linux-gnu/libhs.so.5 /usr/lib/x86_64-linux-gnu/libsqlite3.so.0 .carry/lib/
cmake -S examples/runtime-consumer -B build/runtime-consumer -DCMAKE_BUILD_TYPE=Release \
  "-DCMAKE_PREFIX_PATH=$PWD/.carry/prefix" -DCUDAToolkit_ROOT=/usr/local/cuda >/dev/null
cmake --build build/runtime-consumer --target runtime_cuda_timing >/dev/null
cp build/runtime-consumer/runtime_cuda_timing .carry/bin/
cp /usr/share/dict/words .carry/words  # the titles dataset's word list
# The user operators' references that are shared libraries, built as their comments say (gpu_evidence.sh user51).
mkdir -p .carry/refs
for example in diffusion sum_cuda; do
  cc -O2 -shared -fPIC "examples/user-operators/$example/reference.c" -o ".carry/refs/$example.so"
done
du -sh .carry
