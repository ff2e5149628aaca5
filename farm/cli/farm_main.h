// The `farm` command line: parses it and hands over to one command. In the farm_cli layer (one
// unity batch with the commands it calls, so CLI11 and spdlog are compiled once), while main.cpp
// keeps only what must run before anything else (the terminate handler).
#pragma once

namespace farm {

// The process's exit code (cli/exit_codes.h); never throws.
int farm_main(int argc, char** argv);

}  // namespace farm
