# kairos_target_warnings(<target>): the project's warning set, -Werror with KAIROS_WERROR.
function(kairos_target_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wno-unused-parameter)
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
