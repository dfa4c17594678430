# Configures and builds engine/ on its own, with only Abseil available, to
# prove the engine core needs neither protobuf nor gRPC.
# Arguments: SOURCE_DIR (the repository), WORK_DIR.
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/src)
file(WRITE ${WORK_DIR}/src/CMakeLists.txt "
cmake_minimum_required(VERSION 3.25)
project(engine_only LANGUAGES CXX)
set(CMAKE_CXX_STANDARD 20)
find_package(absl CONFIG REQUIRED)
add_library(engine_only
  ${SOURCE_DIR}/engine/src/curve.cc ${SOURCE_DIR}/engine/src/compiled_set.cc
  ${SOURCE_DIR}/engine/src/decide.cc ${SOURCE_DIR}/engine/src/explain.cc
  ${SOURCE_DIR}/engine/src/batch.cc ${SOURCE_DIR}/engine/src/error_reason.cc)
target_include_directories(engine_only PRIVATE ${SOURCE_DIR}/engine/include)
target_link_libraries(engine_only PRIVATE absl::status absl::statusor
  absl::span absl::flat_hash_map absl::strings absl::str_format)
")
foreach(step IN ITEMS configure build)
  if(step STREQUAL configure)
    set(cmd ${CMAKE_COMMAND} -S ${WORK_DIR}/src -B ${WORK_DIR}/build
        -DCMAKE_DISABLE_FIND_PACKAGE_Protobuf=ON
        -DCMAKE_DISABLE_FIND_PACKAGE_gRPC=ON)
  else()
    set(cmd ${CMAKE_COMMAND} --build ${WORK_DIR}/build -j2)
  endif()
  execute_process(COMMAND ${cmd} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "engine-only ${step} failed")
  endif()
endforeach()
# And no engine source includes protobuf or gRPC headers.
file(GLOB_RECURSE sources ${SOURCE_DIR}/engine/src/*.cc
     ${SOURCE_DIR}/engine/include/utilityd/engine/*.h)
foreach(f IN LISTS sources)
  get_filename_component(name ${f} NAME)
  if(f MATCHES "/src/loader/")
    continue()  # the loader, which may use protobuf
  endif()
  file(STRINGS ${f} bad REGEX "#include [<\"](grpc|google/protobuf)")
  if(bad)
    message(FATAL_ERROR "${f} includes ${bad}")
  endif()
endforeach()
