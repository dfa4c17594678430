# Turns the examples in the SDK's public headers into code the build
# compiles with -Wall -Wextra -Werror (tests/CMakeLists.txt), so an
# example cannot rot or teach a pattern that warns.
#
# An example is the lines after "// Example (compiled by
# tests/client_sdk/header_examples.cmake):" that start with "//   " (or are
# "//" alone) up to the first that does not. Each becomes the body of a
# function given `Client& client` and the helpers of header_examples.h.
#   cmake -DHEADERS=a.h|b.h -DOUT=examples.cc -P header_examples.cmake
string(REPLACE "|" ";" HEADERS "${HEADERS}")
set(code "// Generated from the SDK headers' examples; do not edit.\n")
string(APPEND code "#include \"tests/client_sdk/header_examples.h\"\n")
set(count 0)
foreach(header IN LISTS HEADERS)
  file(STRINGS ${header} lines)
  get_filename_component(name ${header} NAME)
  string(APPEND code "#include \"utilityd/client/${name}\"\n")
  set(inside FALSE)
  set(body "")
  foreach(line IN LISTS lines)
    if(line MATCHES "^// Example \\(compiled by tests/client_sdk/header_examples.cmake\\):$")
      set(inside TRUE)
      set(body "")
      continue()
    endif()
    if(inside)
      if(line MATCHES "^//   (.*)$")
        string(APPEND body "  ${CMAKE_MATCH_1}\n")
      elseif(line STREQUAL "//")
        string(APPEND body "\n")
      else()
        math(EXPR count "${count} + 1")
        string(APPEND examples
          "// ${name}\n[[maybe_unused]] void Example${count}(Client& client) {\n"
          "  (void)client;\n${body}}\n\n")
        set(inside FALSE)
      endif()
    endif()
  endforeach()
endforeach()
if(count EQUAL 0)
  message(FATAL_ERROR "header_examples: no example in ${HEADERS}")
endif()
string(APPEND code "\nnamespace utilityd::client::examples {\n\n${examples}"
  "int Count() { return ${count}; }\n\n}  // namespace utilityd::client::examples\n")
file(WRITE ${OUT}.tmp "${code}")
configure_file(${OUT}.tmp ${OUT} COPYONLY)
