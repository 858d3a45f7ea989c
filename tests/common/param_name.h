// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// ParamName: the name of a parameterized test's instance made from a spec ("ssp:s=2",
// "adam:beta1=0.8,eps=1e-7"), every character that is not a letter or a digit replaced by
// '_' ("ssp_s_2"), since GoogleTest allows only those and '_' in a test's name. The CTest
// names (docs/testing.md) are made of these.

#ifndef KAIROS_TESTS_COMMON_PARAM_NAME_H_
#define KAIROS_TESTS_COMMON_PARAM_NAME_H_

#include <cctype>
#include <string>

namespace kairos::testing {

inline std::string ParamName(std::string spec) {
  for (char& c : spec) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return spec;
}

}  // namespace kairos::testing

#endif  // KAIROS_TESTS_COMMON_PARAM_NAME_H_
