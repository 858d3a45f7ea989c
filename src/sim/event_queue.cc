// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// EventQueue (see event_queue.h).

#include "sim/event_queue.h"

namespace kairos::sim {

void EventQueue::Schedule(Event event) {
  event.sequence = next_sequence_++;
  heap_.push(event);
}

Event EventQueue::Pop() {
  Event e = heap_.top();
  heap_.pop();
  return e;
}

}  // namespace kairos::sim
