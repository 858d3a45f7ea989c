# The optional Python module `kairos` (python/, docs/pytorch.md): a pybind11 binding of the
# public API and a pure-Python kairos.torch. Built into ${CMAKE_BINARY_DIR}/python (so that
# PYTHONPATH=build/python imports it from the build tree) and installed by cmake --install.
#
# KAIROS_WITH_PYTHON: AUTO (default) builds it when pybind11 and Python's headers are found
# and the build has no sanitizer, ON requires them, OFF never builds it. The interpreter is
# Debian's /usr/bin/python3 when it exists (its python3-numpy, python3-torch and
# python3-pytest are the ones the tests use), else the first python3 found.
set(KAIROS_WITH_PYTHON AUTO CACHE STRING "Build the Python module: AUTO, ON or OFF")
set_property(CACHE KAIROS_WITH_PYTHON PROPERTY STRINGS AUTO ON OFF)
if(NOT KAIROS_WITH_PYTHON MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "KAIROS_WITH_PYTHON must be AUTO, ON or OFF, not '${KAIROS_WITH_PYTHON}'")
endif()

set(KAIROS_PYTHON_ENABLED OFF)
if(KAIROS_WITH_PYTHON STREQUAL "ON" OR
   (KAIROS_WITH_PYTHON STREQUAL "AUTO" AND KAIROS_SANITIZE STREQUAL "" AND NOT KAIROS_FUZZ_ENABLED))
  if(NOT DEFINED Python_EXECUTABLE AND EXISTS /usr/bin/python3)
    set(Python_EXECUTABLE /usr/bin/python3)
  endif()
  set(PYBIND11_FINDPYTHON ON)
  if(KAIROS_WITH_PYTHON STREQUAL "ON")
    find_package(Python REQUIRED COMPONENTS Interpreter Development.Module)
    find_package(pybind11 CONFIG REQUIRED)
  else()
    find_package(Python QUIET COMPONENTS Interpreter Development.Module)
    find_package(pybind11 CONFIG QUIET)
  endif()
  if(Python_FOUND AND pybind11_FOUND)
    set(KAIROS_PYTHON_ENABLED ON)
  endif()
endif()
if(KAIROS_PYTHON_ENABLED)
  message(STATUS "kairos: the Python module is built (${Python_EXECUTABLE}, pybind11 ${pybind11_VERSION})")
else()
  message(STATUS "kairos: the Python module is not built (KAIROS_WITH_PYTHON=${KAIROS_WITH_PYTHON})")
endif()
