// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The public API of libkairos (kairos::kairos). Eigen views are in kairos/eigen.h; what a
// program decides about its own process (kairos/run.h: RunWorkers and the launcher's
// environment; kairos/allocator.h) is in libkairos_process (kairos::process).

#ifndef KAIROS_KAIROS_H_
#define KAIROS_KAIROS_H_

#include "kairos/buffer.h"
#include "kairos/checkpoint.h"
#include "kairos/coordinator.h"
#include "kairos/eager.h"
#include "kairos/env.h"
#include "kairos/job.h"
#include "kairos/keys.h"
#include "kairos/local_cluster.h"
#include "kairos/log.h"
#include "kairos/metrics.h"
#include "kairos/options.h"
#include "kairos/parameter_layout.h"
#include "kairos/server.h"
#include "kairos/status.h"
#include "kairos/table.h"
#include "kairos/transport_context.h"
#include "kairos/updater.h"
#include "kairos/worker.h"

#endif  // KAIROS_KAIROS_H_
