// Copyright libtony authors.

#include "broker/mpi_board.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace tony::broker {

MpiBoard::MpiBoard(const std::vector<std::string>& tasks) {
  for (const std::string& t : tasks) slots_[t] = Slot();
}

absl::StatusOr<MpiBoard::Slot*> MpiBoard::Find(absl::string_view job, int index) {
  if (slots_.empty()) {
    return absl::FailedPreconditionError("this job is no MPI job (--framework mpi)");
  }
  const std::string id = absl::StrCat(job, ":", index);
  auto it = slots_.find(id);
  if (it == slots_.end()) {
    return absl::NotFoundError(absl::StrCat("task ", id, " runs no MPI daemon in this job"));
  }
  return &it->second;
}

absl::StatusOr<MpiBoard::View> MpiBoard::Launch(absl::string_view job, int index,
                                                absl::string_view command) {
  if (command.empty() || command.size() > kMaxMpiCommandBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("an MPI daemon's command must have 1 to ", kMaxMpiCommandBytes, " bytes"));
  }
  absl::StatusOr<Slot*> found = Find(job, index);
  if (!found.ok()) return found.status();
  Slot& slot = **found;
  if (slot.view.state == State::kIdle) {
    slot.command = std::string(command);
    slot.view.state = State::kAssigned;
    return slot.view;
  }
  if (slot.command.empty()) {
    return absl::FailedPreconditionError(absl::StrCat("task ", job, ":", index,
                                                      " exited with code ", slot.view.exit_code,
                                                      " before mpirun started its daemon"));
  }
  if (slot.command != command) {
    return absl::AlreadyExistsError(
        absl::StrCat("task ", job, ":", index, " already runs another MPI daemon"));
  }
  return slot.view;
}

absl::StatusOr<std::string> MpiBoard::Fetch(absl::string_view job, int index) {
  absl::StatusOr<Slot*> found = Find(job, index);
  if (!found.ok()) return found.status();
  Slot& slot = **found;
  if (slot.view.state == State::kAssigned) slot.view.state = State::kRunning;
  if (slot.view.state != State::kRunning) return std::string();
  return slot.command;
}

void MpiBoard::Exit(absl::string_view job, int index, int exit_code) {
  auto it = slots_.find(absl::StrCat(job, ":", index));
  if (it == slots_.end()) return;
  it->second.view = {State::kExited, exit_code};
}

}  // namespace tony::broker
