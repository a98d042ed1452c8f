# Shared build settings: warnings, sanitizers, and the one helper that adds a test.

# -Wno-missing-field-initializers: our value structs give every member a default, so a brace
# initializer that names the first few members is intended, not an omission.
add_compile_options(-Wall -Wextra -Wpedantic -Wno-unused-parameter -Wno-missing-field-initializers)
# GCC 12 warns falsely on "literal" + std::string at -O2 and above (GCC bug 105651).
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  add_compile_options(-Wno-restrict)
endif()
# -Werror for the project's own code. Generated code is compiled with -w (schemas/, cli/'s
# pprof_profile.pb.cc) and its headers come from SYSTEM include directories, as third-party
# headers do, so only our code can fail the build.
if(TRAILMAP_WERROR)
  add_compile_options(-Werror)
endif()
if(TRAILMAP_SANITIZE)
  # ASan's instrumentation makes GCC 12 see uninitialized reads inside std::regex and
  # std::function that are not there (-Wmaybe-uninitialized false positives).
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    add_compile_options(-Wno-maybe-uninitialized)
  endif()
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
if(TRAILMAP_TSAN)
  # One sanitizer runtime per program: ThreadSanitizer cannot share a build with ASan.
  if(TRAILMAP_SANITIZE)
    message(FATAL_ERROR "TRAILMAP_TSAN and TRAILMAP_SANITIZE exclude each other: configure a "
                        "separate build (scripts/test --tsan builds build-tsan)")
  endif()
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
endif()
if(TRAILMAP_FUZZ)
  # libFuzzer's coverage on everything the fuzz targets link; fuzz/ adds -fsanitize=fuzzer (the
  # driver and its main) to the targets themselves.
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

# trailmap_add_test(NAME SOURCES... LIBS ...): a GoogleTest binary registered with CTest.
# Unit tests sit beside their code (thing_test.cc); system tests live in tests/.
function(trailmap_add_test name)
  cmake_parse_arguments(T "" "TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gtest GTest::gmock GTest::gtest_main)
  add_test(NAME ${name} COMMAND ${name})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  set_tests_properties(${name} PROPERTIES TIMEOUT ${T_TIMEOUT})
  if(T_LABELS)
    set_tests_properties(${name} PROPERTIES LABELS "${T_LABELS}")
  endif()
endfunction()
