// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The spdlog sink that hands each line to a program's LogSink (kairos/log.h). Its class
// lives in callback_sink.cc, compiled without RTTI: a class derived from spdlog's visible
// sink interface would otherwise make libkairos.so export spdlog's typeinfo. Only these two
// functions touch the object (no virtual call on it from a file with RTTI, which UBSan's
// vptr check would refuse); spdlog's logger calls it from libspdlog.

#ifndef KAIROS_COMMON_CALLBACK_SINK_H_
#define KAIROS_COMMON_CALLBACK_SINK_H_

#include "kairos/log.h"
#include "spdlog/sinks/sink.h"

namespace kairos::internal {

// A new sink that calls `sink` with each line's level and text; free it with
// DeleteCallbackSink.
spdlog::sinks::sink* NewCallbackSink(LogSink sink);
void DeleteCallbackSink(spdlog::sinks::sink* sink);

}  // namespace kairos::internal

#endif  // KAIROS_COMMON_CALLBACK_SINK_H_
