// Where the farm's messages go: errors and warnings to stderr, everything else (progress,
// results, "wrote ...") to stdout, all as "LEVEL: message" (docs/cli.md, Output). A script can
// collect the problems from stderr and still parse the results on stdout.
#pragma once

#include <CLI/CLI.hpp>

namespace farm {

// Makes spdlog's default logger split by level as above. Call once, first thing in main().
void use_console_log();

// CLI11's usage errors in the same format: "error: MESSAGE" on stderr, then where to find help.
void use_console_format(CLI::App& app);

}  // namespace farm
