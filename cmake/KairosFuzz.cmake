# KAIROS_FUZZ: the libFuzzer targets of tests/fuzz (docs/testing.md), built with
# AddressSanitizer and UndefinedBehaviorSanitizer, and their CTest tests (label `fuzz`).
# They need clang with the libFuzzer runtime (Debian: clang-14 and libclang-rt-14-dev);
# with another compiler, or without the runtime, they are skipped with a message and the
# rest of the build is unchanged. Use a build directory of its own (the `fuzz` preset):
# every object of it is instrumented.
option(KAIROS_FUZZ "Build the libFuzzer targets (clang with libFuzzer only)" OFF)

set(KAIROS_FUZZ_ENABLED OFF)
if(NOT KAIROS_FUZZ)
  message(STATUS "kairos: fuzz targets skipped (KAIROS_FUZZ=OFF; see docs/testing.md)")
  return()
endif()
if(NOT KAIROS_SANITIZE STREQUAL "")
  message(FATAL_ERROR "KAIROS_FUZZ brings its own sanitizers (address, undefined): "
                      "leave KAIROS_SANITIZE empty")
endif()
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(WARNING "kairos: fuzz targets skipped: KAIROS_FUZZ needs clang with libFuzzer, "
                  "and the C++ compiler is ${CMAKE_CXX_COMPILER_ID} "
                  "${CMAKE_CXX_COMPILER_VERSION}. Configure a build directory of its own "
                  "with CC=clang-14 CXX=clang++-14 (cmake --preset fuzz).")
  return()
endif()
include(CheckCXXSourceCompiles)
set(CMAKE_REQUIRED_FLAGS "-fsanitize=fuzzer")
check_cxx_source_compiles(
  "#include <cstddef>
   #include <cstdint>
   extern \"C\" int LLVMFuzzerTestOneInput(const uint8_t*, std::size_t) { return 0; }"
  KAIROS_HAVE_LIBFUZZER)
unset(CMAKE_REQUIRED_FLAGS)
if(NOT KAIROS_HAVE_LIBFUZZER)
  message(WARNING "kairos: fuzz targets skipped: ${CMAKE_CXX_COMPILER} cannot link "
                  "-fsanitize=fuzzer (Debian: apt-get install libclang-rt-14-dev)")
  return()
endif()

set(KAIROS_FUZZ_ENABLED ON)
message(STATUS "kairos: fuzz targets on (libFuzzer, ASan, UBSan)")
# Every object gets coverage instrumentation and the sanitizers; only the fuzz targets
# link libFuzzer's main (-fsanitize=fuzzer, in tests/fuzz). Undefined behaviour aborts, so
# libFuzzer keeps it as a crash. Assertions stay on whatever the build type.
add_compile_options(-fsanitize=fuzzer-no-link,address,undefined
                    -fno-sanitize-recover=undefined -fno-omit-frame-pointer -UNDEBUG)
add_link_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined)
