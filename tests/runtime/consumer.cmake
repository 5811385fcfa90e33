# The runtime library from an application's side (issue 30): installs this build's runtime component into a
# prefix of its own, builds examples/runtime-consumer against that installation with find_package(varex), and
# runs it on the first OpenCL device:
#   - without a profile: every call checks out against the example's own computation, the defaults run;
#   - with a profile exported from a real sweep on that device: the sweep's best variant runs, matched as the
#     call's own class (exact_class; the entry's generator is not a key the call knows);
#   - with a corrupt profile: the example reports the error and exits 2.
# cmake -DBUILD=<varex build> -DSOURCE=<varex source> -DVAREX=<varex binary> -DWORK=<scratch>
#       [-DFLAGS=<compiler flags of this build's sanitizers>] -P consumer.cmake
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(rc "${rc}" PARENT_SCOPE)
  set(out "${out}" PARENT_SCOPE)
  set(err "${err}" PARENT_SCOPE)
endfunction()

function(expect_ok what)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
endfunction()

file(REMOVE_RECURSE ${WORK})
set(prefix ${WORK}/prefix)
run(${CMAKE_COMMAND} --install ${BUILD} --prefix ${prefix} --component runtime)
expect_ok("installing the runtime component")
if(EXISTS ${prefix}/bin)
  message(FATAL_ERROR "the runtime component installed binaries: ${prefix}/bin")
endif()

run(${CMAKE_COMMAND} -S ${SOURCE}/examples/runtime-consumer -B ${WORK}/build -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_PREFIX_PATH=${prefix} "-DCMAKE_CXX_FLAGS=${FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${FLAGS}"
    -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON)  # the OpenCL application only: CI has no GPU
expect_ok("configuring the example against the installed package")
run(${CMAKE_COMMAND} --build ${WORK}/build)
expect_ok("building the example")
set(consumer ${WORK}/build/runtime_consumer)

run(${consumer} --rows 5003)
expect_ok("the example without a profile")
if(NOT out MATCHES "select_range: ok .* level=default")
  message(FATAL_ERROR "without a profile the defaults should run:\n${out}")
endif()

# A real sweep of four variants on the example's device (the first OpenCL device: ocl:0:0), exported; its
# query is the one of the example's --expect-variant call, so that call's class is the sweep's.
run(${VAREX} sweep --op selection --device ocl:0:0 --rows 5003 --query lo=0 --query hi=5 --db ${WORK}/tuned.db
    --quiet --set kernel=overflow
    --set ept=8,16 --set vec=1,4 --set padding=none --set local=auto --set grid=cover --min-reps 3 --max-reps 5)
expect_ok("varex sweep")
run(${VAREX} export --db ${WORK}/tuned.db --format json --out ${WORK}/tuned.json)
expect_ok("varex export")
run(${VAREX} best --db ${WORK}/tuned.db --json)
expect_ok("varex best")
string(JSON best GET "${out}" 0 variant)
run(${consumer} --rows 5003 --profile ${WORK}/tuned.json --expect-variant ${best})
expect_ok("the example with the exported profile (expecting variant ${best})")
if(NOT out MATCHES "expected variant: ok [^\n]* level=exact_device exact_class=true")
  message(FATAL_ERROR "the profile's entry for this device and the call's own class should answer:\n${out}")
endif()

file(WRITE ${WORK}/corrupt.json "{\"format\": \"varex-profile\", \"version\": 3, \"devices\": [")
run(${consumer} --profile ${WORK}/corrupt.json)
if(NOT rc EQUAL 2 OR NOT err MATCHES "profile")
  message(FATAL_ERROR "a corrupt profile should stop the example with status 2 and say why (${rc}):\n${err}")
endif()
message(STATUS "runtime consumer: ok\n${out}")

# Without the CUDA toolkit and driver (issue 48): the runtime library needs neither (NVRTC and the driver are
# loaded at run time, where a CUDA device asks for them), and the OpenCL example runs with /usr/local/cuda
# hidden from it: in a mount namespace of its own where this runs as root (as CI does), else only the first.
file(GLOB runtime_library ${prefix}/lib*/libvarex_runtime.so)
run(readelf -d ${runtime_library})
expect_ok("readelf of ${runtime_library}")
if(out MATCHES "NEEDED[^\n]*(libnvrtc|libcuda)")
  message(FATAL_ERROR "the runtime library links a CUDA library:\n${out}")
endif()
run(id -u)
if(out MATCHES "^0" AND EXISTS /usr/local/cuda)
  file(MAKE_DIRECTORY ${WORK}/no-cuda)
  run(unshare --mount sh -c "mount --bind '${WORK}/no-cuda' /usr/local/cuda && exec \"$0\" --rows 5003"
      ${consumer})
  expect_ok("the example with /usr/local/cuda hidden")
  if(NOT out MATCHES "select_range: ok")
    message(FATAL_ERROR "with /usr/local/cuda hidden the example should run:\n${out}\n${err}")
  endif()
  message(STATUS "runtime consumer without CUDA: ok")
endif()
