# The optional libtorch adapter (include/kairos/torch.h, docs/pytorch.md). kairos itself never
# needs libtorch: the header is installed with the others, and its tests and example are
# built only where libtorch is found (Debian 12: libtorch-dev).
#
# KAIROS_WITH_TORCH: AUTO (default) builds them when libtorch is found and the build has no
# sanitizer (libtorch is not instrumented: ASan and TSan would report inside it), ON requires
# libtorch, OFF never builds them. KAIROS_TORCH_ENABLED says what was decided.
set(KAIROS_WITH_TORCH AUTO CACHE STRING
    "Build the libtorch adapter's tests and example: AUTO (when libtorch is found), ON, OFF")
set_property(CACHE KAIROS_WITH_TORCH PROPERTY STRINGS AUTO ON OFF)

set(KAIROS_TORCH_ENABLED OFF)
if(KAIROS_WITH_TORCH STREQUAL "ON")
  find_package(Torch REQUIRED)
  set(KAIROS_TORCH_ENABLED ON)
elseif(KAIROS_WITH_TORCH STREQUAL "AUTO" AND KAIROS_SANITIZE STREQUAL "" AND NOT KAIROS_FUZZ_ENABLED)
  find_package(Torch QUIET)
  if(Torch_FOUND)
    set(KAIROS_TORCH_ENABLED ON)
  endif()
elseif(NOT KAIROS_WITH_TORCH MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "KAIROS_WITH_TORCH must be AUTO, ON or OFF, not '${KAIROS_WITH_TORCH}'")
endif()
if(KAIROS_TORCH_ENABLED)
  message(STATUS "kairos: the libtorch adapter's tests and example are built (Torch ${Torch_VERSION})")
else()
  message(STATUS "kairos: the libtorch adapter's tests and example are not built (KAIROS_WITH_TORCH=${KAIROS_WITH_TORCH}, libtorch found: ${Torch_FOUND})")
endif()
