// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// A TCP socket listening on 127.0.0.1 at an OS-chosen port, for as long as it lives: the
// busy port of the metrics endpoint's tests.

#ifndef KAIROS_TESTS_METRICS_BUSY_PORT_H_
#define KAIROS_TESTS_METRICS_BUSY_PORT_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "gtest/gtest.h"

namespace kairos::testing_util {

class BusyPort {
 public:
  BusyPort() : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in addr = {};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(::listen(fd_, 1), 0);
    socklen_t len = sizeof(addr);
    EXPECT_EQ(::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    port_ = ntohs(addr.sin_port);
    address_ = "127.0.0.1:" + std::to_string(port_);
  }
  ~BusyPort() { ::close(fd_); }
  BusyPort(const BusyPort&) = delete;
  BusyPort& operator=(const BusyPort&) = delete;

  const std::string& address() const { return address_; }
  int port() const { return port_; }

 private:
  int fd_;
  int port_ = 0;
  std::string address_;
};

}  // namespace kairos::testing_util

#endif  // KAIROS_TESTS_METRICS_BUSY_PORT_H_
