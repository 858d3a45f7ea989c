// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0
//
// The roles a launcher's environment gives a process (src/process/launch_env.h), each launcher's
// variables in turn, the errors that name the variable, and the rendezvous file.

#include "process/launch_env.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kairos::internal {
namespace {

using ::testing::HasSubstr;
using Role = LaunchEnvironment::Role;
using Vars = std::map<std::string, std::string>;

absl::StatusOr<LaunchEnvironment> Read(const Vars& vars) {
  return ReadLaunchEnvironment(
      [&vars](const char* name) -> const char* {
        auto it = vars.find(name);
        return it == vars.end() || it->second.empty() ? nullptr : it->second.c_str();
      },
      /*uid=*/1000);
}

LaunchEnvironment MustRead(const Vars& vars) {
  absl::StatusOr<LaunchEnvironment> e = Read(vars);
  EXPECT_TRUE(e.ok()) << e.status();
  return e.ok() ? *e : LaunchEnvironment();
}

std::string ErrorOf(const Vars& vars) {
  absl::StatusOr<LaunchEnvironment> e = Read(vars);
  EXPECT_FALSE(e.ok());
  EXPECT_TRUE(e.ok() || absl::IsInvalidArgument(e.status())) << e.status();
  return e.ok() ? "" : std::string(e.status().message());
}

// Sets (or replaces) one variable. (Not vars[name] = value: GCC 12 warns falsely about
// that assignment of a literal, -Wrestrict.)
void Set(Vars& vars, const std::string& name, const std::string& value) {
  vars.erase(name);
  vars.emplace(name, value);
}

Vars Ompi(int rank, int size, int local_size) {
  return {{"OMPI_COMM_WORLD_RANK", absl::StrCat(rank)},
          {"OMPI_COMM_WORLD_SIZE", absl::StrCat(size)},
          {"OMPI_COMM_WORLD_LOCAL_SIZE", absl::StrCat(local_size)},
          {"OMPI_MCA_ess_base_jobid", "972029953"},
          {"PMIX_NAMESPACE", "972029953"}};
}

TEST(LaunchEnvTest, NothingSetIsEmbedded) {
  LaunchEnvironment e = MustRead({});
  EXPECT_EQ(e.role, Role::kEmbedded);
  EXPECT_EQ(e.source, "");
  EXPECT_EQ(e.world_size, 1);
}

TEST(LaunchEnvTest, KairosLaunchWorker) {
  LaunchEnvironment e = MustRead({{"KAIROS_COORDINATOR", "tcp://127.0.0.1:4000"},
                                  {"KAIROS_RANK", "2"},
                                  {"KAIROS_NUM_WORKERS", "4"},
                                  {"KAIROS_NUM_SERVERS", "3"},
                                  {"KAIROS_ROLE", "worker"},
                                  // inherited from an outer mpirun: kairos-launch wins
                                  {"OMPI_COMM_WORLD_RANK", "0"},
                                  {"OMPI_COMM_WORLD_SIZE", "8"}});
  EXPECT_EQ(e.role, Role::kWorker);
  EXPECT_EQ(e.source, "kairos-launch");
  EXPECT_EQ(e.rank, 2);
  EXPECT_EQ(e.num_workers, 4);
  EXPECT_EQ(e.num_servers, 3);
  EXPECT_EQ(e.coordinator, "tcp://127.0.0.1:4000");
}

TEST(LaunchEnvTest, WorkerStartedByHand) {
  LaunchEnvironment e = MustRead({{"KAIROS_COORDINATOR", "tcp://10.0.0.1:7000"}});
  EXPECT_EQ(e.role, Role::kWorker);
  EXPECT_EQ(e.source, "KAIROS_COORDINATOR");
  EXPECT_EQ(e.rank, -1);
  EXPECT_EQ(e.num_workers, 0);
}

TEST(LaunchEnvTest, OpenMpiRanksOnOneHost) {
  // mpirun -np 7 -x KAIROS_NUM_SERVERS=2: coordinator, 2 servers, 4 workers.
  for (int rank = 0; rank < 7; ++rank) {
    Vars vars = Ompi(rank, 7, 7);
    Set(vars, "KAIROS_NUM_SERVERS", "2");
    Set(vars, "TMPDIR", "/scratch");
    LaunchEnvironment e = MustRead(vars);
    EXPECT_EQ(e.source, "OMPI_COMM_WORLD_RANK");
    EXPECT_EQ(e.world_rank, rank);
    EXPECT_EQ(e.world_size, 7);
    EXPECT_EQ(e.num_servers, 2);
    EXPECT_EQ(e.num_workers, 4);
    EXPECT_FALSE(e.multi_host);
    EXPECT_EQ(e.job_id, "972029953");
    EXPECT_EQ(e.rendezvous, "/scratch/kairos-rendezvous-1000-972029953");
    EXPECT_EQ(e.coordinator, "");
    if (rank == 0) {
      EXPECT_EQ(e.role, Role::kCoordinator);
      EXPECT_EQ(e.rank, -1);
    } else if (rank <= 2) {
      EXPECT_EQ(e.role, Role::kServer);
      EXPECT_EQ(e.rank, -1);
    } else {
      EXPECT_EQ(e.role, Role::kWorker);
      EXPECT_EQ(e.rank, rank - 3);
    }
  }
}

TEST(LaunchEnvTest, OneServerByDefault) {
  LaunchEnvironment e = MustRead(Ompi(2, 3, 3));
  EXPECT_EQ(e.num_servers, 1);
  EXPECT_EQ(e.num_workers, 1);
  EXPECT_EQ(e.role, Role::kWorker);
  EXPECT_EQ(e.rank, 0);
  EXPECT_EQ(e.rendezvous, "/tmp/kairos-rendezvous-1000-972029953");
}

TEST(LaunchEnvTest, OneRankIsEmbedded) {
  EXPECT_EQ(MustRead(Ompi(0, 1, 1)).role, Role::kEmbedded);
  Vars vars = Ompi(0, 1, 1);
  Set(vars, "KAIROS_COORDINATOR", "tcp://10.0.0.1:7000");
  EXPECT_EQ(MustRead(vars).role, Role::kWorker);
}

TEST(LaunchEnvTest, PmiRanks) {
  LaunchEnvironment e = MustRead({{"PMI_RANK", "4"},
                                  {"PMI_SIZE", "5"},
                                  {"MPI_LOCALNRANKS", "5"},
                                  {"KAIROS_RENDEZVOUS", "/shared/job.rdv"}});
  EXPECT_EQ(e.source, "PMI_RANK");
  EXPECT_EQ(e.role, Role::kWorker);
  EXPECT_EQ(e.rank, 2);
  EXPECT_EQ(e.num_workers, 3);
  EXPECT_EQ(e.rendezvous, "/shared/job.rdv");
  EXPECT_EQ(e.job_id, "");
  // Hydra names no job: the default file would have no name.
  EXPECT_THAT(ErrorOf({{"PMI_RANK", "1"}, {"PMI_SIZE", "3"}}),
              HasSubstr("PMI_RANK gives no job id to name the rendezvous file after"));
}

TEST(LaunchEnvTest, SlurmRanksOnSeveralNodes) {
  Vars vars = {{"SLURM_PROCID", "1"},        {"SLURM_NTASKS", "16"},
               {"SLURM_STEP_NUM_TASKS", "8"}, {"SLURM_STEP_NUM_NODES", "2"},
               {"SLURM_JOB_ID", "4242"},      {"SLURM_STEP_ID", "3"},
               {"KAIROS_NUM_SERVERS", "2"},   {"KAIROS_RENDEZVOUS", "/home/u/rdv"}};
  LaunchEnvironment e = MustRead(vars);
  EXPECT_EQ(e.source, "SLURM_PROCID");
  EXPECT_EQ(e.world_size, 8);  // the step's tasks, not the allocation's
  EXPECT_EQ(e.role, Role::kServer);
  EXPECT_EQ(e.num_workers, 5);
  EXPECT_TRUE(e.multi_host);
  EXPECT_EQ(e.job_id, "4242.3");
  EXPECT_EQ(e.rendezvous, "/home/u/rdv");
  // An sbatch script has SLURM_PROCID and SLURM_NTASKS but is no task of a step: embedded.
  EXPECT_EQ(MustRead({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "16"}, {"SLURM_JOB_ID", "4242"}})
                .role,
            Role::kEmbedded);
  // Several nodes and nothing shared: refused, naming the way out.
  vars.erase("KAIROS_RENDEZVOUS");
  EXPECT_THAT(ErrorOf(vars), HasSubstr("set KAIROS_RENDEZVOUS to a path on a file system every "
                                       "host shares, or KAIROS_COORDINATOR"));
  Set(vars, "KAIROS_COORDINATOR", "tcp://node01:7000");
  e = MustRead(vars);
  EXPECT_EQ(e.coordinator, "tcp://node01:7000");
  EXPECT_EQ(e.rendezvous, "");
}

TEST(LaunchEnvTest, OpenMpiOnSeveralHosts) {
  Vars vars = Ompi(5, 8, 4);
  Set(vars, "KAIROS_RENDEZVOUS", "/nfs/rdv");
  Set(vars, "KAIROS_ADVERTISE_HOST", "10.1.0.5");
  Set(vars, "KAIROS_PORT_RANGE", "7000-7099");
  LaunchEnvironment e = MustRead(vars);
  EXPECT_TRUE(e.multi_host);
  EXPECT_EQ(e.advertise_host, "10.1.0.5");
  EXPECT_EQ(e.port_range, "7000-7099");
  EXPECT_EQ(e.rank, 3);
}

TEST(LaunchEnvTest, KairosWorldRanksForAStatefulSet) {
  LaunchEnvironment e = MustRead({{"KAIROS_WORLD_RANK", "0"},
                                  {"KAIROS_WORLD_SIZE", "4"},
                                  {"KAIROS_COORDINATOR", "tcp://kairos-0.kairos:7000"},
                                  // KAIROS_WORLD_* wins over a launcher's
                                  {"SLURM_PROCID", "3"},
                                  {"SLURM_NTASKS", "9"}});
  EXPECT_EQ(e.source, "KAIROS_WORLD_RANK");
  EXPECT_EQ(e.role, Role::kCoordinator);
  EXPECT_TRUE(e.multi_host);
  EXPECT_EQ(e.num_workers, 2);
}

TEST(LaunchEnvTest, ErrorsNameTheVariable) {
  EXPECT_THAT(ErrorOf({{"OMPI_COMM_WORLD_RANK", "2"}}),
              HasSubstr("OMPI_COMM_WORLD_RANK is set but OMPI_COMM_WORLD_SIZE is not"));
  EXPECT_THAT(ErrorOf({{"OMPI_COMM_WORLD_RANK", "x"}, {"OMPI_COMM_WORLD_SIZE", "4"}}),
              HasSubstr("OMPI_COMM_WORLD_RANK must be a non-negative integer, got 'x'"));
  EXPECT_THAT(ErrorOf({{"OMPI_COMM_WORLD_RANK", "4"}, {"OMPI_COMM_WORLD_SIZE", "4"}}),
              HasSubstr("OMPI_COMM_WORLD_RANK is 4 but OMPI_COMM_WORLD_SIZE is 4"));
  Vars vars = Ompi(0, 4, 4);
  Set(vars, "KAIROS_NUM_SERVERS", "3");
  EXPECT_THAT(ErrorOf(vars), HasSubstr("4 processes cannot hold a coordinator, 3 servers "
                                       "(KAIROS_NUM_SERVERS) and at least one worker: start at "
                                       "least 5"));
  Set(vars, "KAIROS_NUM_SERVERS", "0");
  EXPECT_THAT(ErrorOf(vars), HasSubstr("KAIROS_NUM_SERVERS must be a positive integer, got '0'"));
  Set(vars, "KAIROS_NUM_SERVERS", "1");
  Set(vars, "KAIROS_NUM_WORKERS", "4");
  EXPECT_THAT(ErrorOf(vars), HasSubstr("KAIROS_NUM_WORKERS is 4, but 4 processes with 1 server "
                                       "leave 2 workers"));
  vars.erase("KAIROS_NUM_WORKERS");
  Set(vars, "KAIROS_PORT_RANGE", "7099-7000");
  EXPECT_THAT(ErrorOf(vars), HasSubstr("KAIROS_PORT_RANGE must be FIRST-LAST"));
  EXPECT_THAT(ErrorOf({{"KAIROS_ROLE", "server"}}), HasSubstr("KAIROS_ROLE must be 'worker'"));
  EXPECT_THAT(ErrorOf({{"KAIROS_COORDINATOR", "tcp://h:1"}, {"KAIROS_RANK", "-1"}}),
              HasSubstr("KAIROS_RANK must be a non-negative integer, got '-1'"));
}

// ------------------------------------------------------------------ the rendezvous file

TEST(RendezvousTest, TextRoundTrips) {
  const std::string text = RendezvousText("job-7", "tcp://10.0.0.1:7000");
  EXPECT_EQ(text, "kairos-rendezvous 1\njob job-7\ncoordinator tcp://10.0.0.1:7000\n");
  auto endpoint = ParseRendezvous(text, "job-7");
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  EXPECT_EQ(endpoint->value_or(""), "tcp://10.0.0.1:7000");
  // Another job's file is not this job's endpoint; an unknown job id accepts any.
  EXPECT_FALSE(ParseRendezvous(text, "job-8")->has_value());
  EXPECT_TRUE(ParseRendezvous(text, "")->has_value());
  EXPECT_FALSE(ParseRendezvous("hello\n", "job-7").ok());
  EXPECT_FALSE(ParseRendezvous("kairos-rendezvous 1\njob j\ncoordinator \n", "j").ok());
}

class RendezvousFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           absl::StrCat("kairos-rdv-test-", ::getpid(), "-",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "rdv").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path dir_;
  std::string path_;
};

TEST_F(RendezvousFileTest, PublishedEndpointIsRead) {
  ASSERT_TRUE(PublishRendezvous(path_, "j1", "tcp://127.0.0.1:5555").ok());
  auto endpoint = AwaitRendezvous(path_, "j1", absl::Seconds(5));
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  EXPECT_EQ(*endpoint, "tcp://127.0.0.1:5555");
  // Only the file itself is left (the temporary one was renamed over it).
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
    (void)entry;
    ++files;
  }
  EXPECT_EQ(files, 1);
}

TEST_F(RendezvousFileTest, WaitsForAFileWrittenLater) {
  std::thread writer([this] {
    // An earlier job's file first, which the reader must ignore, then this job's.
    ASSERT_TRUE(PublishRendezvous(path_, "old", "tcp://127.0.0.1:1").ok());
    ASSERT_TRUE(PublishRendezvous(path_, "j2", "tcp://127.0.0.1:2").ok());
  });
  auto endpoint = AwaitRendezvous(path_, "j2", absl::Seconds(10));
  writer.join();
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  EXPECT_EQ(*endpoint, "tcp://127.0.0.1:2");
}

TEST_F(RendezvousFileTest, DeadlineNamesTheFile) {
  const absl::Time start = absl::Now();
  auto endpoint = AwaitRendezvous(path_, "j3", absl::Milliseconds(300));
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(300));
  ASSERT_TRUE(absl::IsDeadlineExceeded(endpoint.status())) << endpoint.status();
  EXPECT_THAT(std::string(endpoint.status().message()),
              HasSubstr(absl::StrCat("rendezvous file ", path_, " within 300ms (it does not "
                                     "exist)")));
  ASSERT_TRUE(PublishRendezvous(path_, "other", "tcp://127.0.0.1:1").ok());
  endpoint = AwaitRendezvous(path_, "j3", absl::Milliseconds(100));
  EXPECT_THAT(std::string(endpoint.status().message()), HasSubstr("it belongs to another job"));
}

TEST_F(RendezvousFileTest, AnotherUsersFileIsRefused) {
  ASSERT_TRUE(PublishRendezvous(path_, "j4", "tcp://127.0.0.1:4").ok());
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give the file to another user";
  ASSERT_EQ(::chown(path_.c_str(), 65534, 65534), 0);
  auto endpoint = AwaitRendezvous(path_, "j4", absl::Seconds(5));
  EXPECT_TRUE(absl::IsPermissionDenied(endpoint.status())) << endpoint.status();
  EXPECT_THAT(std::string(endpoint.status().message()),
              HasSubstr("belongs to user 65534, not to this user (0): refusing the coordinator"));
}

TEST_F(RendezvousFileTest, UnwritablePlaceIsAnError) {
  absl::Status s = PublishRendezvous((dir_ / "missing" / "rdv").string(), "j", "tcp://h:1");
  EXPECT_TRUE(absl::IsUnavailable(s)) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("cannot write the rendezvous file"));
}

absl::StatusOr<std::optional<absl::Duration>> SendDelayOf(const Vars& vars) {
  return ReadSendDelay([&vars](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() || it->second.empty() ? nullptr : it->second.c_str();
  });
}

TEST(LaunchEnvTest, SendDelayIsUnsetWithoutTheVariable) {
  absl::StatusOr<std::optional<absl::Duration>> d = SendDelayOf({});
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_FALSE(d->has_value());
}

TEST(LaunchEnvTest, SendDelayIsReadInMicroseconds) {
  absl::StatusOr<std::optional<absl::Duration>> d = SendDelayOf({{"KAIROS_SEND_DELAY_US", "2500"}});
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(*d, absl::Microseconds(2500));
  d = SendDelayOf({{"KAIROS_SEND_DELAY_US", "0"}});
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(*d, absl::ZeroDuration());
}

TEST(LaunchEnvTest, MalformedSendDelayNamesTheVariable) {
  for (const char* bad : {"-1", "1.5", "ms", "60000001"}) {
    absl::StatusOr<std::optional<absl::Duration>> d =
        SendDelayOf({{"KAIROS_SEND_DELAY_US", bad}});
    ASSERT_FALSE(d.ok()) << bad;
    EXPECT_TRUE(absl::IsInvalidArgument(d.status())) << d.status();
    EXPECT_THAT(std::string(d.status().message()), HasSubstr("KAIROS_SEND_DELAY_US")) << bad;
  }
}

}  // namespace
}  // namespace kairos::internal
