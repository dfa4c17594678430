# Configures and builds engine/ on its own (`cmake -S engine`), with
# protobuf and gRPC hidden from find_package, to prove the engine core needs
# Abseil alone; then checks that no engine file includes protobuf or gRPC.
# Arguments: SOURCE_DIR (the repository), WORK_DIR.
file(REMOVE_RECURSE ${WORK_DIR})
foreach(step IN ITEMS configure build)
  if(step STREQUAL configure)
    set(cmd ${CMAKE_COMMAND} -S ${SOURCE_DIR}/engine -B ${WORK_DIR}
        -DCMAKE_DISABLE_FIND_PACKAGE_Protobuf=ON
        -DCMAKE_DISABLE_FIND_PACKAGE_gRPC=ON
        -DCMAKE_DISABLE_FIND_PACKAGE_yaml-cpp=ON)
  else()
    set(cmd ${CMAKE_COMMAND} --build ${WORK_DIR} -j2)
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
