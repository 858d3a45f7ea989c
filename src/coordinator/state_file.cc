// Copyright 2026 The kairos Authors. SPDX-License-Identifier: Apache-2.0

#include "coordinator/state_file.h"

#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/record_file.h"
#include "kairos/status.h"

namespace kairos::internal {
namespace {

namespace fs = std::filesystem;

constexpr absl::string_view kMagic("KCOST001", kRecordMagicBytes);
constexpr RecordFormat kFormats[] = {{kMagic}};
constexpr uint32_t kStateRecord = 1;
// A state names at most 2 x kMaxNodes nodes (each with a few short strings) and the job's
// tables: far below this.
constexpr uint64_t kMaxStateBytes = uint64_t{64} << 20;

RecordFileName StateName(const std::string& path) {
  return {path, "coordinator state", absl::StatusCode::kUnavailable};
}

}  // namespace

absl::Status WriteCoordinatorState(const Env& env, const std::string& dir,
                                   const wire::CoordinatorState& state) {
  if (absl::Status s = env.CreateDirs(dir); !s.ok()) {
    return absl::UnavailableError(absl::StrCat("cannot create ", dir, ": ", s.message()));
  }
  const std::string final_path = (fs::path(dir) / kCoordinatorStateFile).string();
  const std::string temp_path = final_path + ".tmp";
  std::string body;
  if (!state.SerializeToString(&body)) {
    return absl::InternalError(absl::StrCat("coordinator state ", final_path, ": cannot encode"));
  }
  {
    // 0600: the state holds the workers' credentials.
    (void)env.RemoveFile(temp_path);  // one left by a crash keeps its mode: made anew
    KAIROS_ASSIGN_OR_RETURN(RecordWriter out,
                            RecordWriter::Create(env, StateName(temp_path), kMagic, 0600));
    out.Add(kStateRecord, std::move(body));
    KAIROS_RETURN_IF_ERROR(out.Flush());
    KAIROS_RETURN_IF_ERROR(out.Sync(/*data_only=*/true));
    KAIROS_RETURN_IF_ERROR(out.Close());
  }
  if (absl::Status s = env.RenameFile(temp_path, final_path); !s.ok()) {
    return StateName(final_path).Failed(s);
  }
  if (absl::Status s = env.SyncDir(dir); !s.ok()) return StateName(dir).Failed(s);
  return absl::OkStatus();
}

absl::StatusOr<std::optional<wire::CoordinatorState>> ReadCoordinatorState(const Env& env,
                                                                           const std::string& dir) {
  const std::string path = (fs::path(dir) / kCoordinatorStateFile).string();
  absl::StatusOr<RecordReader> opened =
      RecordReader::Open(env, StateName(path), {kFormats, kMaxStateBytes, /*torn_tail=*/false});
  if (absl::IsNotFound(opened.status())) return std::nullopt;
  if (!opened.ok()) return opened.status();
  RecordReader& in = *opened;
  KAIROS_ASSIGN_OR_RETURN(std::optional<RecordHead> head, in.Next());
  if (!head.has_value()) return in.Corrupt(in.size(), "no state record");
  if (head->type != kStateRecord) return in.Corrupt(head->offset, "not a state record");
  std::string body;
  KAIROS_RETURN_IF_ERROR(in.ReadRest(&body));
  if (!in.ChecksumMatches()) return in.Reject("the record's checksum does not match");
  wire::CoordinatorState state;
  if (!state.ParseFromString(body)) return in.Corrupt(head->offset, "the state does not parse");
  KAIROS_ASSIGN_OR_RETURN(std::optional<RecordHead> more, in.Next());
  if (more.has_value()) return in.Corrupt(more->offset, "a second record");
  return state;
}

}  // namespace kairos::internal
