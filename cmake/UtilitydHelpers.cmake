# Warnings every utilityd target compiles with (PRIVATE, never exported).
set(UTILITYD_WARNINGS -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
    -Wno-missing-field-initializers)

# utilityd_cc_library(NAME name [INTERNAL] [EXPORT core|client|engine]
#                     SRCS ... [HEADERS ...]
#                     [PUBLIC_DEPS ...] [PRIVATE_DEPS ...])
# Builds utilityd_<name> with alias utilityd::<name>, public headers from
# ${CMAKE_CURRENT_SOURCE_DIR}/include. HEADERS (paths below include/) are
# installed, and the library joins the export set utilityd-<EXPORT>
# (default engine), when the whole project is configured, unless it is
# INTERNAL (used by the binaries only). See utilityd_install.
function(utilityd_cc_library)
  cmake_parse_arguments(ARG "INTERNAL" "NAME;EXPORT"
                        "SRCS;HEADERS;PUBLIC_DEPS;PRIVATE_DEPS" ${ARGN})
  if(NOT ARG_EXPORT)
    set(ARG_EXPORT engine)
  endif()
  add_library(utilityd_${ARG_NAME} ${ARG_SRCS})
  add_library(utilityd::${ARG_NAME} ALIAS utilityd_${ARG_NAME})
  set_target_properties(utilityd_${ARG_NAME} PROPERTIES
    EXPORT_NAME ${ARG_NAME} POSITION_INDEPENDENT_CODE ON)
  target_include_directories(utilityd_${ARG_NAME} PUBLIC
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_link_libraries(utilityd_${ARG_NAME}
    PUBLIC ${ARG_PUBLIC_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  target_compile_options(utilityd_${ARG_NAME} PRIVATE ${UTILITYD_WARNINGS})
  if(PROJECT_NAME STREQUAL "utilityd" AND NOT ARG_INTERNAL)
    utilityd_install(${ARG_EXPORT} TARGETS utilityd_${ARG_NAME})
    foreach(header IN LISTS ARG_HEADERS)
      get_filename_component(dir ${header} DIRECTORY)
      utilityd_install(${ARG_EXPORT} FILES include/${header}
                       DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/${dir})
    endforeach()
  endif()
endfunction()

# utilityd_install(core|client|engine TARGETS ... | FILES ... DESTINATION d)
# The package has three export sets, each a file of targets the package
# config loads: core (utilityd::base, utilityd::proto: Abseil and
# Protobuf), client (the SDK and the gRPC stubs: + gRPC) and engine (the
# engine, loader, codec, replay, analysis: + Highway, yaml-cpp, CLP). The
# core and client sets are the install component "client", so
# `cmake --install BUILD --component client` installs the SDK alone; the
# engine set is the component "engine".
function(utilityd_install set kind)
  set(component ${set})
  if(set STREQUAL "core")
    set(component client)
  endif()
  if(kind STREQUAL "TARGETS")
    install(TARGETS ${ARGN} EXPORT utilityd-${set} COMPONENT ${component})
  else()
    install(FILES ${ARGN} COMPONENT ${component})
  endif()
endfunction()

# utilityd_cc_test(NAME name SRCS ... DEPS ... [LABELS ...])
# A GoogleTest binary registered with ctest, test by test.
function(utilityd_cc_test)
  cmake_parse_arguments(ARG "" "NAME" "SRCS;DEPS;LABELS" ${ARGN})
  add_executable(${ARG_NAME} ${ARG_SRCS})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS}
    GTest::gmock GTest::gtest_main)
  target_compile_options(${ARG_NAME} PRIVATE ${UTILITYD_WARNINGS})
  # Every case is bounded, so a hang fails fast instead of eating CI's time.
  gtest_discover_tests(${ARG_NAME}
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT 180
    DISCOVERY_TIMEOUT 60)
endfunction()
