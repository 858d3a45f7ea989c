// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// CURVE: key pairs and key directories (kairos/keys.h), and the transport with keys: the
// right keys carry messages over tcp:// and ipc://; a client with other keys, without keys,
// with CURVE against a keyless listener, a bare ZeroMQ client, and one that knows only the
// public key are refused, counted, and deliver nothing; nodes of several jobs share one
// context. Every wait has a deadline; nothing sleeps.

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kairos/keys.h"
#include "tests/common/scratch_dir.h"
#include "transport/transport.h"
#include "zmq.h"

namespace kairos::internal {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// How long a test waits for something that should happen within milliseconds.
constexpr absl::Duration kWait = absl::Seconds(10);
// A refusal is reported within a few reconnection intervals (100-200 ms each).
constexpr absl::Duration kPromptly = absl::Seconds(3);

CurveKeys NewKeys() {
  absl::StatusOr<CurveKeys> keys = GenerateCurveKeys();
  EXPECT_TRUE(keys.ok()) << keys.status();
  return keys.value_or(CurveKeys());
}

// A fresh directory under the test's temporary directory, removed at the end.
class TempDir : public testing::UniqueTempDir {
 public:
  TempDir() : UniqueTempDir("kairos-curve-test-") {}
};

int ModeOf(const std::string& path) {
  struct stat st = {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return static_cast<int>(st.st_mode & 07777);
}

void WriteText(const std::string& path, const std::string& text, int mode) {
  std::ofstream(path) << text;
  ASSERT_EQ(::chmod(path.c_str(), mode), 0);
}

// ------------------------------------------------------------------------- keys
TEST(CurveKeysTest, GeneratedKeysAreValidAndFresh) {
  ASSERT_TRUE(CurveAvailable());
  const CurveKeys a = NewKeys();
  const CurveKeys b = NewKeys();
  EXPECT_EQ(a.public_key.size(), 40u);
  EXPECT_EQ(a.secret_key.size(), 40u);
  EXPECT_TRUE(CheckCurveKeys(a).ok()) << CheckCurveKeys(a);
  EXPECT_NE(a, b);
}

TEST(CurveKeysTest, CheckRefusesMalformedAndMismatchedKeysWithoutQuotingThem) {
  const CurveKeys a = NewKeys();
  const CurveKeys b = NewKeys();
  CurveKeys short_key = a;
  short_key.secret_key.pop_back();
  absl::Status s = CheckCurveKeys(short_key);
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("secret key must be 40 characters"));
  EXPECT_THAT(s.message(), Not(HasSubstr(short_key.secret_key)));

  CurveKeys not_z85 = a;
  not_z85.public_key[3] = '"';
  s = CheckCurveKeys(not_z85);
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("public key is not Z85"));

  CurveKeys mixed{b.public_key, a.secret_key};
  s = CheckCurveKeys(mixed);
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("not the secret key's"));
  EXPECT_THAT(s.message(), Not(HasSubstr(a.secret_key)));
}

TEST(CurveKeysTest, WrittenKeysLoadBackWithPrivateModes) {
  TempDir tmp;
  const std::string dir = tmp / "job/keys";  // parents are created too
  const CurveKeys keys = NewKeys();
  ASSERT_TRUE(WriteCurveKeys(dir, keys, /*overwrite=*/false).ok());
  EXPECT_EQ(ModeOf(dir), 0700);
  EXPECT_EQ(ModeOf(dir + "/secret.key"), 0600);
  EXPECT_EQ(ModeOf(dir + "/public.key"), 0644);
  absl::StatusOr<CurveKeys> loaded = LoadCurveKeys(dir);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(*loaded, keys);
  // Nothing but the two files (no temporary file left behind).
  int files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 2);
}

TEST(CurveKeysTest, WriteRefusesToReplaceKeysUnlessAskedTo) {
  TempDir tmp;
  const CurveKeys first = NewKeys();
  const CurveKeys second = NewKeys();
  ASSERT_TRUE(WriteCurveKeys(tmp.path(), first, false).ok());
  absl::Status again = WriteCurveKeys(tmp.path(), second, false);
  EXPECT_TRUE(absl::IsAlreadyExists(again)) << again;
  EXPECT_THAT(again.message(), HasSubstr("already holds CURVE keys"));
  EXPECT_EQ(LoadCurveKeys(tmp.path()).value_or(CurveKeys()), first);
  ASSERT_TRUE(WriteCurveKeys(tmp.path(), second, /*overwrite=*/true).ok());
  EXPECT_EQ(LoadCurveKeys(tmp.path()).value_or(CurveKeys()), second);
  EXPECT_EQ(ModeOf(tmp / "secret.key"), 0600);
}

TEST(CurveKeysTest, LoadAcceptsSurroundingWhiteSpaceAndAReadOnlySecret) {
  TempDir tmp;
  const CurveKeys keys = NewKeys();
  WriteText(tmp / "secret.key", "  " + keys.secret_key + "\r\n\n", 0400);
  WriteText(tmp / "public.key", keys.public_key, 0444);
  absl::StatusOr<CurveKeys> loaded = LoadCurveKeys(tmp.path());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(*loaded, keys);
}

TEST(CurveKeysTest, LoadErrorsNameTheFileAndTheProblem) {
  TempDir tmp;
  const CurveKeys keys = NewKeys();
  absl::StatusOr<CurveKeys> r = LoadCurveKeys(tmp / "missing");
  EXPECT_TRUE(absl::IsNotFound(r.status())) << r.status();
  EXPECT_THAT(r.status().message(), HasSubstr("missing does not exist"));

  r = LoadCurveKeys(tmp.path());  // empty directory
  EXPECT_TRUE(absl::IsNotFound(r.status())) << r.status();
  EXPECT_THAT(r.status().message(), HasSubstr("secret.key does not exist"));

  WriteText(tmp / "secret.key", keys.secret_key + "\n", 0644);
  WriteText(tmp / "public.key", keys.public_key + "\n", 0644);
  r = LoadCurveKeys(tmp.path());
  EXPECT_TRUE(absl::IsPermissionDenied(r.status())) << r.status();
  EXPECT_THAT(r.status().message(), HasSubstr("mode 0644"));
  EXPECT_THAT(r.status().message(), HasSubstr("chmod 600 " + (tmp / "secret.key")));

  ASSERT_EQ(::chmod((tmp / "secret.key").c_str(), 0600), 0);
  ASSERT_TRUE(LoadCurveKeys(tmp.path()).ok());

  WriteText(tmp / "public.key", keys.public_key.substr(0, 39) + "\n", 0644);
  r = LoadCurveKeys(tmp.path());
  EXPECT_TRUE(absl::IsInvalidArgument(r.status())) << r.status();
  EXPECT_THAT(r.status().message(), HasSubstr("public.key: the public key must be 40"));

  WriteText(tmp / "public.key", std::string(40, ' ') + "x", 0644);
  r = LoadCurveKeys(tmp.path());
  EXPECT_TRUE(absl::IsInvalidArgument(r.status())) << r.status();

  WriteText(tmp / "public.key", std::string(39, 'a') + "~", 0644);
  r = LoadCurveKeys(tmp.path());
  EXPECT_TRUE(absl::IsInvalidArgument(r.status())) << r.status();
  EXPECT_THAT(r.status().message(), HasSubstr("not Z85"));

  WriteText(tmp / "public.key", NewKeys().public_key, 0644);
  r = LoadCurveKeys(tmp.path());
  EXPECT_TRUE(absl::IsInvalidArgument(r.status())) << r.status();
  EXPECT_THAT(r.status().message(), HasSubstr("not the secret key's"));

  WriteText(tmp / "file", "x", 0644);
  r = LoadCurveKeys(tmp / "file");
  EXPECT_TRUE(absl::IsInvalidArgument(r.status())) << r.status();
}

// -------------------------------------------------------------------- transport
// What a transport's handlers saw. Thread-safety: handlers add on the I/O thread, the test
// thread waits with a deadline.
class Events {
 public:
  MessageHandler Messages() {
    return [this](PeerId, Message m) {
      absl::MutexLock lock(&mu_);
      messages_.push_back(std::move(m));
    };
  }
  ConnectErrorHandler ConnectErrors() {
    return [this](PeerId peer, const absl::Status& why) {
      absl::MutexLock lock(&mu_);
      errors_.push_back({peer, why});
    };
  }
  std::optional<Message> NextMessage(absl::Duration timeout = kWait) {
    absl::MutexLock lock(&mu_);
    auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !messages_.empty(); };
    if (!mu_.AwaitWithTimeout(absl::Condition(&ready), timeout)) return std::nullopt;
    Message m = std::move(messages_.front());
    messages_.pop_front();
    return m;
  }
  std::optional<std::pair<PeerId, absl::Status>> NextError(absl::Duration timeout = kWait) {
    absl::MutexLock lock(&mu_);
    auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !errors_.empty(); };
    if (!mu_.AwaitWithTimeout(absl::Condition(&ready), timeout)) return std::nullopt;
    auto e = errors_.front();
    errors_.pop_front();
    return e;
  }
  size_t messages() {
    absl::MutexLock lock(&mu_);
    return messages_.size();
  }
  size_t errors() {
    absl::MutexLock lock(&mu_);
    return errors_.size();
  }

 private:
  absl::Mutex mu_;
  std::deque<Message> messages_ ABSL_GUARDED_BY(mu_);
  std::deque<std::pair<PeerId, absl::Status>> errors_ ABSL_GUARDED_BY(mu_);
};

// A started transport and what it receives.
struct Node {
  Events events;  // declared first: outlives the transport's handlers
  std::unique_ptr<Transport> transport;

  ~Node() {
    if (transport != nullptr) transport->Stop();
  }
};

std::unique_ptr<Node> NewNode(const std::string& name, std::optional<CurveKeys> keys,
                              std::shared_ptr<TransportContext> context = nullptr) {
  auto node = std::make_unique<Node>();
  TransportOptions options;
  options.name = name;
  options.keys = std::move(keys);
  options.context = std::move(context);
  absl::StatusOr<std::unique_ptr<Transport>> t = MakeZmqTransport(options);
  EXPECT_TRUE(t.ok()) << t.status();
  if (!t.ok()) return nullptr;
  node->transport = *std::move(t);
  node->transport->SetConnectErrorHandler(node->events.ConnectErrors());
  return node;
}

void Start(Node& node) { node.transport->Start(node.events.Messages(), nullptr, nullptr); }

Message Hello(uint64_t id) {
  Message m;
  m.header.set_kind(wire::PUSH);
  m.header.set_request_id(id);
  m.header.set_length(3);
  m.payloads.push_back(Buffer::CopyOf(std::vector<float>{1.0f, 2.0f, 3.0f}));
  return m;
}

// Waits until `transport` has counted `n` refused handshakes (on its I/O thread, with no
// notification), and meanwhile checks that nothing gets through: `delivered(timeout)` waits
// up to `timeout` for a message that a refused peer must never get (or deliver) and says
// whether one came. Fails at the deadline or when something was delivered.
::testing::AssertionResult AwaitRefusals(const Transport& transport, uint64_t n,
                                         const std::function<bool(absl::Duration)>& delivered) {
  const absl::Time deadline = absl::Now() + kWait;
  while (transport.handshakes_refused() < n) {
    if (delivered(absl::Milliseconds(10))) {
      return ::testing::AssertionFailure() << "a message got through a refused connection";
    }
    if (absl::Now() >= deadline) {
      return ::testing::AssertionFailure()
             << "only " << transport.handshakes_refused() << " refusals counted, not " << n;
    }
  }
  return ::testing::AssertionSuccess();
}

// `delivered` for AwaitRefusals: a message at `node`.
std::function<bool(absl::Duration)> MessageAt(Node& node) {
  return [&node](absl::Duration timeout) { return node.events.NextMessage(timeout).has_value(); };
}

class CurveTransportTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    keys_ = NewKeys();
    other_keys_ = NewKeys();
  }
  // A listening endpoint of the parameter's kind.
  std::string ListenAt() const {
    if (GetParam() == "ipc") return absl::StrCat("ipc://", dir_.path(), "/listener");
    return "tcp://127.0.0.1:*";
  }

  TempDir dir_;
  CurveKeys keys_;
  CurveKeys other_keys_;
};

TEST_P(CurveTransportTest, TheJobsKeysCarryMessagesBothWays) {
  auto listener = NewNode("listener", keys_);
  auto client = NewNode("client", keys_);
  absl::StatusOr<std::string> endpoint = listener->transport->Listen(ListenAt());
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  Transport* server = listener->transport.get();
  listener->transport->Start(
      [server](PeerId from, Message m) {
        Message reply;
        reply.header = ReplyHeader(m.header, wire::PULL_REPLY, /*sender=*/1);
        reply.header.set_length(1);
        reply.payloads.push_back(Buffer::CopyOf(std::vector<float>{9.0f}));
        server->Send(from, std::move(reply));
      },
      nullptr, nullptr);
  Start(*client);
  absl::StatusOr<PeerId> peer = client->transport->Connect(*endpoint);
  ASSERT_TRUE(peer.ok()) << peer.status();
  client->transport->Send(*peer, Hello(7));
  std::optional<Message> reply = client->events.NextMessage();
  ASSERT_TRUE(reply.has_value()) << "no reply over CURVE";
  EXPECT_EQ(reply->header.request_id(), 7u);
  EXPECT_EQ(reply->payloads[0][0], 9.0f);
  EXPECT_EQ(listener->transport->handshakes_refused(), 0u);
  EXPECT_EQ(client->events.errors(), 0u);
}

TEST_P(CurveTransportTest, AClientWithAnotherJobsKeysIsRefusedAndDeliversNothing) {
  auto listener = NewNode("listener", keys_);
  auto client = NewNode("client", other_keys_);
  absl::StatusOr<std::string> endpoint = listener->transport->Listen(ListenAt());
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  Start(*listener);
  Start(*client);
  const absl::Time start = absl::Now();
  absl::StatusOr<PeerId> peer = client->transport->Connect(*endpoint);
  ASSERT_TRUE(peer.ok());
  client->transport->Send(*peer, Hello(1));  // queued until the handshake, which fails
  auto error = client->events.NextError();
  ASSERT_TRUE(error.has_value()) << "the refusal was not reported";
  EXPECT_LT(absl::Now() - start, kPromptly);
  EXPECT_EQ(error->first, *peer);
  EXPECT_TRUE(absl::IsUnauthenticated(error->second)) << error->second;
  EXPECT_THAT(error->second.message(), HasSubstr(*endpoint + " refused this node's CURVE keys"));
  EXPECT_TRUE(AwaitRefusals(*listener->transport, 1, MessageAt(*listener)));
  // The connection is given up: a later send is dropped, not queued.
  const uint64_t dropped = client->transport->dropped();
  client->transport->Send(*peer, Hello(2));
  absl::Notification sent;
  client->transport->Post([&sent] { sent.Notify(); });  // runs after the send
  ASSERT_TRUE(sent.WaitForNotificationWithTimeout(kWait));
  EXPECT_EQ(client->transport->dropped(), dropped + 1);
  EXPECT_EQ(listener->events.messages(), 0u) << "a refused client's message was delivered";
}

TEST_P(CurveTransportTest, AClientWithoutKeysIsRefused) {
  auto listener = NewNode("listener", keys_);
  auto client = NewNode("client", std::nullopt);
  absl::StatusOr<std::string> endpoint = listener->transport->Listen(ListenAt());
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  Start(*listener);
  Start(*client);
  const absl::Time start = absl::Now();
  absl::StatusOr<PeerId> peer = client->transport->Connect(*endpoint);
  ASSERT_TRUE(peer.ok());
  client->transport->Send(*peer, Hello(1));
  auto error = client->events.NextError();
  ASSERT_TRUE(error.has_value()) << "the refusal was not reported";
  EXPECT_LT(absl::Now() - start, kPromptly);
  EXPECT_TRUE(absl::IsUnauthenticated(error->second)) << error->second;
  EXPECT_THAT(error->second.message(), HasSubstr(*endpoint));
  EXPECT_THAT(error->second.message(), HasSubstr("this node has no keys"));
  EXPECT_TRUE(AwaitRefusals(*listener->transport, 1, MessageAt(*listener)));
}

TEST_P(CurveTransportTest, ACurveClientOfAListenerWithoutKeysFails) {
  auto listener = NewNode("listener", std::nullopt);
  auto client = NewNode("client", keys_);
  absl::StatusOr<std::string> endpoint = listener->transport->Listen(ListenAt());
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  Start(*listener);
  Start(*client);
  const absl::Time start = absl::Now();
  absl::StatusOr<PeerId> peer = client->transport->Connect(*endpoint);
  ASSERT_TRUE(peer.ok());
  client->transport->Send(*peer, Hello(1));
  auto error = client->events.NextError();
  ASSERT_TRUE(error.has_value()) << "the failure was not reported";
  EXPECT_LT(absl::Now() - start, kPromptly);
  EXPECT_TRUE(absl::IsUnauthenticated(error->second)) << error->second;
  EXPECT_THAT(error->second.message(), HasSubstr(*endpoint));
  EXPECT_THAT(error->second.message(), HasSubstr("CURVE"));
  // The keyless side counts it too.
  EXPECT_TRUE(AwaitRefusals(*listener->transport, 1, MessageAt(*listener)));
}

// A raw ZeroMQ DEALER of its own context. With `server_key`, a CURVE client that knows the
// job's public key but holds a key pair of its own.
class RawDealer {
 public:
  RawDealer(const std::string& endpoint, const std::string* server_key) {
    ctx_ = zmq_ctx_new();
    socket_ = zmq_socket(ctx_, ZMQ_DEALER);
    int linger = 0;
    zmq_setsockopt(socket_, ZMQ_LINGER, &linger, sizeof(linger));
    if (server_key != nullptr) {
      const CurveKeys own = NewKeys();
      zmq_setsockopt(socket_, ZMQ_CURVE_SERVERKEY, server_key->c_str(), server_key->size());
      zmq_setsockopt(socket_, ZMQ_CURVE_PUBLICKEY, own.public_key.c_str(), 40);
      zmq_setsockopt(socket_, ZMQ_CURVE_SECRETKEY, own.secret_key.c_str(), 40);
    }
    zmq_socket_monitor(socket_, "inproc://raw-monitor", ZMQ_EVENT_HANDSHAKE_FAILED_AUTH);
    monitor_ = zmq_socket(ctx_, ZMQ_PAIR);
    zmq_setsockopt(monitor_, ZMQ_LINGER, &linger, sizeof(linger));
    zmq_connect(monitor_, "inproc://raw-monitor");
    EXPECT_EQ(zmq_connect(socket_, endpoint.c_str()), 0);
  }
  ~RawDealer() {
    zmq_socket_monitor(socket_, nullptr, 0);
    zmq_close(monitor_);
    zmq_close(socket_);
    zmq_ctx_term(ctx_);
  }

  // Sends a kairos message: its encoded header and payload frames.
  void Send(Message m) {
    const std::string header = EncodeHeader(m);
    zmq_send(socket_, header.data(), header.size(), m.payloads.empty() ? 0 : ZMQ_SNDMORE);
    for (size_t i = 0; i < m.payloads.size(); ++i) {
      zmq_send(socket_, m.payloads[i].data(), m.payloads[i].size_bytes(),
               i + 1 < m.payloads.size() ? ZMQ_SNDMORE : 0);
    }
  }
  // True when anything arrives within `timeout`.
  bool Receives(absl::Duration timeout) {
    zmq_pollitem_t item = {socket_, 0, ZMQ_POLLIN, 0};
    return zmq_poll(&item, 1, absl::ToInt64Milliseconds(timeout)) > 0;
  }
  // The status code of the first ZMQ_EVENT_HANDSHAKE_FAILED_AUTH, or -1 after `timeout`.
  int AuthFailure(absl::Duration timeout) {
    zmq_pollitem_t item = {monitor_, 0, ZMQ_POLLIN, 0};
    if (zmq_poll(&item, 1, absl::ToInt64Milliseconds(timeout)) <= 0) return -1;
    zmq_msg_t head;
    zmq_msg_init(&head);
    zmq_msg_recv(&head, monitor_, 0);
    uint32_t value = 0;
    std::memcpy(&value, static_cast<const char*>(zmq_msg_data(&head)) + 2, sizeof(value));
    zmq_msg_close(&head);
    return static_cast<int>(value);
  }

 private:
  void* ctx_ = nullptr;
  void* socket_ = nullptr;
  void* monitor_ = nullptr;
};

// Starts `listener` answering every message with values.
void StartAnsweringWithValues(Transport& listener) {
  listener.Start(
      [&listener](PeerId from, Message m) {
        Message reply;
        reply.header = ReplyHeader(m.header, wire::PULL_REPLY, 1);
        reply.header.set_length(1);
        reply.payloads.push_back(Buffer::CopyOf(std::vector<float>{42.0f}));
        listener.Send(from, std::move(reply));
      },
      nullptr, nullptr);
}

TEST_P(CurveTransportTest, APlainZeroMqClientIsRefusedAndLearnsNothing) {
  // The control: at a listener without keys, the same raw client gets the values, so
  // Receives sees a reply when one is sent and the check at the end can fail.
  {
    auto open = NewNode("open listener", std::nullopt);
    absl::StatusOr<std::string> endpoint =
        open->transport->Listen(GetParam() == "ipc" ? ListenAt() + "-open" : ListenAt());
    ASSERT_TRUE(endpoint.ok()) << endpoint.status();
    StartAnsweringWithValues(*open->transport);
    RawDealer raw(*endpoint, nullptr);
    raw.Send(Hello(3));
    EXPECT_TRUE(raw.Receives(kWait)) << "the control: a listener without keys did not answer";
  }
  auto listener = NewNode("listener", keys_);
  absl::StatusOr<std::string> endpoint = listener->transport->Listen(ListenAt());
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  // A listener that answers every message with values: a refused client must get none.
  StartAnsweringWithValues(*listener->transport);
  RawDealer raw(*endpoint, nullptr);
  raw.Send(Hello(3));
  // Its message waits in its queue: ZeroMQ retries the connection (when the listener closed
  // it first) or gives up (when the client saw the mismatch first); nothing gets through,
  // so no reply is on its way (a refused connection never reaches the listener's handler).
  EXPECT_TRUE(
      AwaitRefusals(*listener->transport, 1, [&raw](absl::Duration t) { return raw.Receives(t); }));
  EXPECT_FALSE(raw.Receives(absl::Milliseconds(300))) << "a refused client got a reply";
}

TEST_P(CurveTransportTest, AClientThatKnowsOnlyThePublicKeyIsRefusedByTheAuthenticationHandler) {
  auto listener = NewNode("listener", keys_);
  absl::StatusOr<std::string> endpoint = listener->transport->Listen(ListenAt());
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  Start(*listener);
  RawDealer raw(*endpoint, &keys_.public_key);
  raw.Send(Hello(4));
  EXPECT_EQ(raw.AuthFailure(kWait), 400) << "the ZAP handler did not refuse the client's key";
  EXPECT_TRUE(AwaitRefusals(*listener->transport, 1, MessageAt(*listener)));
  EXPECT_FALSE(raw.Receives(absl::Milliseconds(100)));
}

INSTANTIATE_TEST_SUITE_P(Endpoints, CurveTransportTest, ::testing::Values("tcp", "ipc"),
                         [](const auto& info) { return info.param; });

TEST(CurveContextTest, NodesOfJobsWithDifferentKeysShareOneContext) {
  const CurveKeys a = NewKeys();
  const CurveKeys b = NewKeys();
  auto context = TransportContext::Create();
  auto listener_a = NewNode("listener a", a, context);
  auto listener_b = NewNode("listener b", b, context);
  auto listener_plain = NewNode("listener plain", std::nullopt, context);
  std::string endpoints[3];
  Node* listeners[3] = {listener_a.get(), listener_b.get(), listener_plain.get()};
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<std::string> e = listeners[i]->transport->Listen("tcp://127.0.0.1:*");
    ASSERT_TRUE(e.ok()) << e.status();
    endpoints[i] = *e;
    Start(*listeners[i]);
  }
  auto client_a = NewNode("client a", a, context);
  auto client_b = NewNode("client b", b, context);
  auto client_plain = NewNode("client plain", std::nullopt, context);
  Node* clients[3] = {client_a.get(), client_b.get(), client_plain.get()};
  for (int i = 0; i < 3; ++i) {
    Start(*clients[i]);
    absl::StatusOr<PeerId> peer = clients[i]->transport->Connect(endpoints[i]);
    ASSERT_TRUE(peer.ok());
    clients[i]->transport->Send(*peer, Hello(i));
  }
  for (int i = 0; i < 3; ++i) {
    std::optional<Message> m = listeners[i]->events.NextMessage();
    ASSERT_TRUE(m.has_value()) << "listener " << i << " got nothing";
    EXPECT_EQ(m->header.request_id(), static_cast<uint64_t>(i));
  }
  // Job a's keys at job b's listener, in the same context: refused.
  absl::StatusOr<PeerId> wrong = client_a->transport->Connect(endpoints[1]);
  ASSERT_TRUE(wrong.ok());
  client_a->transport->Send(*wrong, Hello(9));
  auto error = client_a->events.NextError();
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->first, *wrong);
  EXPECT_THAT(error->second.message(), HasSubstr(endpoints[1]));
  EXPECT_TRUE(AwaitRefusals(*listener_b->transport, 1, MessageAt(*listener_b)));
  EXPECT_EQ(listener_a->transport->handshakes_refused(), 0u);
  EXPECT_EQ(listener_plain->transport->handshakes_refused(), 0u);
}

// ZeroMQ applies no security mechanism to inproc://: keys change nothing there (and the
// connection never leaves the process). docs/security.md says so.
TEST(CurveContextTest, InprocEndpointsIgnoreKeys) {
  auto context = TransportContext::Create();
  auto listener = NewNode("listener", NewKeys(), context);
  auto client = NewNode("client", std::nullopt, context);
  ASSERT_TRUE(listener->transport->Listen("inproc://curve-test").ok());
  Start(*listener);
  Start(*client);
  absl::StatusOr<PeerId> peer = client->transport->Connect("inproc://curve-test");
  ASSERT_TRUE(peer.ok());
  client->transport->Send(*peer, Hello(5));
  EXPECT_TRUE(listener->events.NextMessage().has_value());
  EXPECT_EQ(client->events.errors(), 0u);
}

// The authentication handler's thread and socket end with the context, at once.
TEST(CurveContextTest, AContextWithAnAuthenticationHandlerEndsPromptly) {
  const absl::Time start = absl::Now();
  {
    auto context = TransportContext::Create();
    auto listener = NewNode("listener", NewKeys(), context);
    ASSERT_TRUE(listener->transport->Listen("tcp://127.0.0.1:*").ok());
    Start(*listener);
  }
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
}

TEST(CurveContextTest, InvalidKeysAreRefusedWhenTheTransportIsMade) {
  TransportOptions options;
  options.name = "worker";
  CurveKeys keys = NewKeys();
  keys.public_key = NewKeys().public_key;
  options.keys = keys;
  absl::StatusOr<std::unique_ptr<Transport>> t = MakeZmqTransport(options);
  EXPECT_TRUE(absl::IsInvalidArgument(t.status())) << t.status();
  EXPECT_THAT(t.status().message(), HasSubstr("worker: CURVE keys"));
}

}  // namespace
}  // namespace kairos::internal
