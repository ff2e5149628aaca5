// The `farm` executable: parses the command line and hands over to one command.
#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "cli/exit_codes.h"
#include "cli/single_command.h"

int main(int argc, char** argv) {
  CLI::App app{"farm: a distributed ray-tracing render farm with adaptive block sizing"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Show help for every command");
  spdlog::set_pattern("%^%l%$: %v");

  farm::SingleOptions single;
  farm::add_single_command(app, single);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return farm::k_exit_bad_input;
  }
  if (app.got_subcommand("single")) return farm::run_single(single);
  return farm::k_exit_bad_input;
}
