// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// KAIROS_EXPORT marks what libkairos exports: the public classes and free functions of
// include/kairos/. The library is compiled with -fvisibility=hidden and
// -fvisibility-inlines-hidden, so everything else (the internal namespaces, the generated
// Protobuf code, the template instances it uses) stays inside libkairos.so and cannot clash
// with, or be mistaken for, API by a program that links it.
//
// A static libkairos defines KAIROS_STATIC for itself and for its users (the CMake target
// kairos::kairos carries it): the macro is then empty, so that a shared library that links
// libkairos.a does not re-export kairos's API as its own.

#ifndef KAIROS_EXPORT_H_
#define KAIROS_EXPORT_H_

#if defined(KAIROS_STATIC)
#define KAIROS_EXPORT
#elif defined(__GNUC__) || defined(__clang__)
#define KAIROS_EXPORT __attribute__((visibility("default")))
#else
#define KAIROS_EXPORT
#endif

#endif  // KAIROS_EXPORT_H_
