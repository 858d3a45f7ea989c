# All dependencies come from Debian 12 packages (scripts/install-deps.sh); nothing is
# downloaded at build time.
find_package(Threads REQUIRED)
find_package(absl CONFIG REQUIRED)
find_package(Protobuf REQUIRED)
find_package(spdlog CONFIG REQUIRED)
find_package(Eigen3 3.4 CONFIG REQUIRED NO_MODULE)
find_package(CLI11 CONFIG REQUIRED)
find_package(ZLIB REQUIRED)  # the simulator reads gzip'd Fashion-MNIST
find_package(PkgConfig REQUIRED)
pkg_check_modules(ZMQ REQUIRED IMPORTED_TARGET libzmq)
# Debian's libzmq.pc lists the include directories of libraries that zmq.h never includes
# (krb5 as `-isystem`, pgm, libxml2). CMake put them at different places of the compile line
# on the first configure and on every later one, so that a second configure (scripts/test.sh
# after scripts/demo.sh) recompiled every user of ZeroMQ. zmq.h is in the default include
# path and needs none of them: the target carries only the library.
set_target_properties(PkgConfig::ZMQ PROPERTIES INTERFACE_COMPILE_OPTIONS ""
                                                INTERFACE_INCLUDE_DIRECTORIES "")
find_path(CPPZMQ_INCLUDE_DIR zmq.hpp REQUIRED)
# The /metrics endpoint (src/metrics): Debian's cpp-httplib, a compiled library. Its
# pkg-config file defines the feature macros it was built with (CPPHTTPLIB_OPENSSL_SUPPORT,
# ...), on which its classes' layout depends: every user compiles with the target's flags.
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
if(KAIROS_BUILD_TESTS)
  find_package(GTest CONFIG REQUIRED)
endif()
if(KAIROS_BUILD_BENCH)
  find_package(benchmark CONFIG REQUIRED)
endif()
