# Configures and builds engine/ on its own (`cmake -S engine`), with
# protobuf and gRPC hidden from find_package, to prove the engine core needs
# Abseil alone (and Highway); runs the engine's own suites there
# (tests/engine/suites.cmake); then checks that no engine file includes
# protobuf or gRPC.
# Arguments: SOURCE_DIR (the repository), WORK_DIR, LAUNCHER (the
# compiler launcher, e.g. ccache; may be empty).
file(REMOVE_RECURSE ${WORK_DIR})
foreach(step IN ITEMS configure build test)
  if(step STREQUAL configure)
    set(cmd ${CMAKE_COMMAND} -S ${SOURCE_DIR}/engine -B ${WORK_DIR}
        -DCMAKE_DISABLE_FIND_PACKAGE_Protobuf=ON
        -DCMAKE_DISABLE_FIND_PACKAGE_gRPC=ON
        -DCMAKE_DISABLE_FIND_PACKAGE_yaml-cpp=ON
        -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER})
  elseif(step STREQUAL build)
    set(cmd ${CMAKE_COMMAND} --build ${WORK_DIR} -j2)
  else()
    # Fails when no test was found, too: the suites must be there.
    set(cmd ${CMAKE_CTEST_COMMAND} --test-dir ${WORK_DIR} -j2
        --output-on-failure --no-tests=error)
  endif()
  execute_process(COMMAND ${cmd} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "engine-only ${step} failed")
  endif()
endforeach()
file(GLOB_RECURSE sources ${SOURCE_DIR}/engine/*.cc ${SOURCE_DIR}/engine/*.h)
foreach(f IN LISTS sources)
  file(STRINGS ${f} bad REGEX "#include [<\"](grpc|google/protobuf|yaml-cpp|utilityd/v1)")
  if(bad)
    message(FATAL_ERROR "${f} includes ${bad}")
  endif()
endforeach()
