// `farm keygen NAME`: a CURVE key pair for a master or a worker (NAME.key secret, NAME.pub public).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace farm {

struct KeygenOptions {
  std::string name;  // path without extension; a trailing .key/.pub is dropped
  bool force = false;
};

void add_keygen_command(CLI::App& app, KeygenOptions& options);
// 0 when both files are written; 2 (nothing written) when a file exists or cannot be written.
int run_keygen_command(const KeygenOptions& options);

}  // namespace farm
