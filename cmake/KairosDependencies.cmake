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
find_path(CPPZMQ_INCLUDE_DIR zmq.hpp REQUIRED)
if(KAIROS_BUILD_TESTS)
  find_package(GTest CONFIG REQUIRED)
endif()
if(KAIROS_BUILD_BENCH)
  find_package(benchmark CONFIG REQUIRED)
endif()
