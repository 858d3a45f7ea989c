# kairos_target_warnings(<target>): the project's warning set, -Werror with KAIROS_WERROR,
# and clang's thread-safety analysis with KAIROS_THREAD_SAFETY.
#
# KAIROS_THREAD_SAFETY: clang's -Wthread-safety checks every ABSL_GUARDED_BY,
# ABSL_EXCLUSIVE_LOCKS_REQUIRED and the like at compile time (GCC ignores the attributes).
# Only clang has the analysis; with another compiler the option says so and does nothing.
# The `thread-safety` preset turns it on with clang-14 and -Werror (docs/testing.md).
option(KAIROS_THREAD_SAFETY "Check the thread-safety annotations (clang's -Wthread-safety)" OFF)
set(KAIROS_THREAD_SAFETY_ENABLED OFF)
if(KAIROS_THREAD_SAFETY)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    set(KAIROS_THREAD_SAFETY_ENABLED ON)
    # The analysis must see both abseil's annotations and ThreadChecker's role: an access
    # to a guarded field without the lock (or without KAIROS_DCHECK_ON_THREAD) must fail to
    # compile, and one after KAIROS_DCHECK_ON_THREAD must compile. Otherwise the build
    # would pass without checking anything.
    include(CheckCXXSourceCompiles)
    set(CMAKE_REQUIRED_FLAGS "-std=c++20 -Wthread-safety -Werror")
    set(CMAKE_REQUIRED_INCLUDES ${PROJECT_SOURCE_DIR}/src)
    set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)  # compiled, not linked
    set(_kairos_ts_prelude
        "#include \"absl/synchronization/mutex.h\"
         #include \"common/thread_checker.h\"
         using kairos::internal::ThreadChecker;
         struct S {
           absl::Mutex mu;
           int locked ABSL_GUARDED_BY(mu) = 0;
           ThreadChecker io{\"io\"};
           int io_only ABSL_GUARDED_BY(io) = 0;
         };")
    check_cxx_source_compiles("${_kairos_ts_prelude}
        int main() { S s; return s.locked; }" KAIROS_TS_MISSES_MUTEX)
    check_cxx_source_compiles("${_kairos_ts_prelude}
        int main() { S s; return s.io_only; }" KAIROS_TS_MISSES_ROLE)
    check_cxx_source_compiles("${_kairos_ts_prelude}
        int main() { S s; KAIROS_DCHECK_ON_THREAD(s.io); return s.io_only; }"
        KAIROS_TS_SEES_ASSERTION)
    unset(CMAKE_REQUIRED_FLAGS)
    unset(CMAKE_REQUIRED_INCLUDES)
    unset(CMAKE_TRY_COMPILE_TARGET_TYPE)
    if(KAIROS_TS_MISSES_MUTEX OR KAIROS_TS_MISSES_ROLE OR NOT KAIROS_TS_SEES_ASSERTION)
      message(FATAL_ERROR "kairos: KAIROS_THREAD_SAFETY=ON, but ${CMAKE_CXX_COMPILER} "
                          "-Wthread-safety does not check abseil's ABSL_GUARDED_BY or "
                          "ThreadChecker's role (src/common/thread_checker.h)")
    endif()
    message(STATUS "kairos: thread-safety analysis on (-Wthread-safety)")
  else()
    message(WARNING "kairos: KAIROS_THREAD_SAFETY=ON does nothing: -Wthread-safety needs "
                    "clang, and the C++ compiler is ${CMAKE_CXX_COMPILER_ID} "
                    "${CMAKE_CXX_COMPILER_VERSION}. Configure a build directory of its own "
                    "with clang++-14 (cmake --preset thread-safety).")
  endif()
endif()

function(kairos_target_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wno-unused-parameter)
  if(KAIROS_THREAD_SAFETY_ENABLED)
    target_compile_options(${target} PRIVATE -Wthread-safety)
  endif()
  if(KAIROS_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

if(KAIROS_SANITIZE STREQUAL "address")
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
elseif(KAIROS_SANITIZE STREQUAL "undefined")
  # UBSan alone, and fatal: the first undefined behaviour aborts the process, so it fails
  # the test that ran into it instead of printing a line that nobody reads.
  add_compile_options(-fsanitize=undefined -fno-sanitize-recover=undefined
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=undefined -fno-sanitize-recover=undefined)
elseif(KAIROS_SANITIZE STREQUAL "thread")
  add_compile_options(-fsanitize=thread)
  add_link_options(-fsanitize=thread)
elseif(NOT KAIROS_SANITIZE STREQUAL "")
  message(FATAL_ERROR "KAIROS_SANITIZE must be '', 'address', 'undefined' or 'thread'")
endif()
