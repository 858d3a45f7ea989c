# Installation rules and the CMake package (find_package(kairos CONFIG)).
#
# `cmake --install build --prefix P` lays out:
#   P/include/kairos/*.h                       the public API (nothing from src/)
#   P/lib/libkairos.so.0.2.0 (+ .so.0.2, .so)  the library (static: libkairos.a)
#   P/lib/libkairos_process.so.0.2.0 (+ ...)   the process helpers: allocator.h, run.h
#   P/lib/libkairos_testing.a                  for users' tests: kairos/testing/*.h
#   P/lib/cmake/kairos/kairosConfig.cmake      the package: kairos::kairos, kairos::process,
#                                              kairos::testing
#   P/lib/cmake/kairos/kairosConfigVersion.cmake
#   P/lib/cmake/kairos/kairosTargets*.cmake
#   P/bin/kairos-*                             the programs (install rule in apps/)
#   P/share/doc/kairos/LICENSE
# ("lib" is CMAKE_INSTALL_LIBDIR: lib/<multiarch> when the prefix is /usr.) Installed
# programs find libkairos through their RPATH, $ORIGIN/../lib (set in the top-level
# CMakeLists.txt), so the tree works from any prefix without LD_LIBRARY_PATH.
#
# A consumer writes
#   find_package(kairos 0.2 CONFIG REQUIRED)
#   target_link_libraries(app PRIVATE kairos::kairos)    # + kairos::process for run.h, allocator.h
#   target_link_libraries(app_test PRIVATE kairos::testing)  # ManualEnv, FaultyEnv
# and gets the include directory, C++20 and the public dependencies (Abseil, Eigen,
# Threads), which kairosConfig.cmake finds. tests/install builds such a consumer against a
# fresh install tree.

include(CMakePackageConfigHelpers)

set(KAIROS_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/kairos
    CACHE STRING "Where kairosConfig.cmake is installed, relative to the prefix")
mark_as_advanced(KAIROS_INSTALL_CMAKEDIR)

# The public headers use C++20 (std::span, defaulted operator==): every consumer of the
# exported target must compile as C++20 at least.
target_compile_features(kairos INTERFACE cxx_std_20)
# The RPATH is for the programs in bin/; libkairos's own dependencies are system libraries.
set_target_properties(kairos kairos_process_library PROPERTIES INSTALL_RPATH "")

install(TARGETS kairos kairos_process_library kairos_testing EXPORT kairosTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/kairos
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR})

# A shared libkairos carries its private dependencies (Protobuf, ZeroMQ, spdlog, the rest
# of Abseil) in its own DT_NEEDED entries (it links with --no-undefined: src/CMakeLists.txt),
# so a consumer needs only the public ones. A static one lists them in the export as
# $<LINK_ONLY:...>, so the package must find them too. Either exports only the public API
# (KAIROS_EXPORT, kairos/export.h); a static one defines KAIROS_STATIC for its users.
get_target_property(_kairos_type kairos TYPE)
if(_kairos_type STREQUAL "STATIC_LIBRARY")
  set(KAIROS_STATIC_LIBRARY ON)
else()
  set(KAIROS_STATIC_LIBRARY OFF)
endif()
unset(_kairos_type)

install(EXPORT kairosTargets
        NAMESPACE kairos::
        DESTINATION ${KAIROS_INSTALL_CMAKEDIR})
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/kairosConfig.cmake.in
  ${PROJECT_BINARY_DIR}/kairosConfig.cmake
  INSTALL_DESTINATION ${KAIROS_INSTALL_CMAKEDIR}
  NO_SET_AND_CHECK_MACRO)
# SameMinorVersion: while the major version is 0 a minor release may change the API
# (CHANGELOG.md), so find_package(kairos 0.2) accepts 0.2.x only.
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/kairosConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/kairosConfig.cmake
              ${PROJECT_BINARY_DIR}/kairosConfigVersion.cmake
        DESTINATION ${KAIROS_INSTALL_CMAKEDIR})
