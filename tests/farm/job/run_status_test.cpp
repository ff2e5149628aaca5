// The error vocabulary (docs/architecture.md, Errors): which exceptions are the user's errors
// (exit 2) and which are failures while running (exit 1).
#include <doctest/doctest.h>

#include <stdexcept>
#include <system_error>

#include "base/status.h"
#include "job/run_status.h"
#include "launch/host_file.h"
#include "master/journal_format.h"
#include "security/curve_keys.h"
#include "scene/scene_desc.h"

TEST_SUITE_BEGIN("unit");

using farm::RunStatus;
using farm::run_status_of;

TEST_CASE("run_status_of: a scene's, an option's or a user file's error is bad input") {
  CHECK(run_status_of(rt::SceneError("s.toml:3:1: unknown key 'x'")) == RunStatus::bad_input);
  CHECK(run_status_of(std::invalid_argument("--frame 9 but the scene has 4 frames")) == RunStatus::bad_input);
  CHECK(run_status_of(farm::JournalFormatError("'j' is not a farm journal")) == RunStatus::bad_input);
  CHECK(run_status_of(farm::security::KeyFileError("k.key:2: expected a key")) == RunStatus::bad_input);
  CHECK(run_status_of(farm::HostFileError("hosts:3: threads must be 1-4096")) == RunStatus::bad_input);
}

TEST_CASE("run_status_of: I/O, the OS and broken invariants are failures") {
  CHECK(run_status_of(std::runtime_error("cannot read 'a.png'")) == RunStatus::failure);
  CHECK(run_status_of(std::system_error(std::make_error_code(std::errc::no_space_on_device))) == RunStatus::failure);
  CHECK(run_status_of(farm::JournalError("cannot sync the journal 'j': No space left on device")) == RunStatus::failure);
  CHECK(run_status_of(farm::InvariantError("internal error: check 'x' failed")) == RunStatus::failure);
}

TEST_SUITE_END();
