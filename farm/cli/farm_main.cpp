#include "cli/farm_main.h"

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "backend/sandbox.h"
#include "cli/console_log.h"
#include "cli/exit_codes.h"
#include "cli/farm_commands.h"
#include "cli/journal_command.h"
#include "cli/keygen_command.h"
#include "cli/plan_command.h"
#include "cli/relay_command.h"
#include "cli/service_commands.h"
#include "cli/sim_command.h"
#include "cli/single_command.h"
#include "job/build_id.h"

#include <unistd.h>

#include <climits>

#include "base/memory.h"

namespace {

int run_command_line(int argc, char** argv) {
  farm::use_console_log();
  CLI::App app{"farm: a distributed ray-tracing render farm with adaptive block sizing"};
  farm::use_console_format(app);
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Show help for every command");
  app.set_version_flag("--version", farm::farm_version_text(), "Print the version, source commit and build, and exit");

  farm::SingleOptions single;
  farm::add_single_command(app, single);
  farm::RenderCommandOptions render;
  farm::add_render_command(app, render);
  farm::MasterCommandOptions master;
  farm::add_master_command(app, master);
  farm::WorkerCommandOptions worker;
  farm::add_worker_command(app, worker);
  farm::RelayCommandOptions relay;
  farm::add_relay_command(app, relay);
  farm::SimCommandOptions sim;
  farm::add_sim_command(app, sim);
  farm::PlanCommandOptions plan;
  farm::add_plan_command(app, plan);
  farm::JournalCommandOptions journal;
  farm::add_journal_command(app, journal);
  farm::KeygenOptions keygen;
  farm::add_keygen_command(app, keygen);
  farm::ServiceCommands service;
  farm::add_service_commands(app, service);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return farm::k_exit_bad_input;
  }
  // The operator's explicit choice, for every renderer process this one starts.
  farm::set_sandbox_disabled(single.render.no_sandbox || render.master.render.no_sandbox ||
                             master.master.render.no_sandbox || worker.no_sandbox);
  if (app.got_subcommand("single")) return farm::run_single(single);
  if (app.got_subcommand("master")) return farm::run_master_command(master);
  if (app.got_subcommand("worker")) return farm::run_worker_command(worker);
  if (app.got_subcommand("sim")) return farm::run_sim_command(sim);
  if (app.got_subcommand("plan")) return farm::run_plan_command(plan);
  if (app.got_subcommand("journal")) return farm::run_journal_command(journal);
  if (app.got_subcommand("keygen")) return farm::run_keygen_command(keygen);
  if (app.got_subcommand("relay")) return farm::run_relay_command(relay);
  if (int code = farm::run_service_command(app, service); code >= 0) return code;
  if (app.got_subcommand("render")) {
    // Local workers are this same binary.
    char self[PATH_MAX];
    ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
    std::string exe = n > 0 ? std::string(self, static_cast<size_t>(n)) : std::string(argv[0]);
    return farm::run_render_command(render, exe);
  }
  return farm::k_exit_bad_input;
}

}  // namespace

namespace farm {

int farm_main(int argc, char** argv) {
  try {
    return run_command_line(argc, argv);
  } catch (const std::exception& e) {
    // Every command catches its own; this is the last guard, never an abort.
    spdlog::error("{}", error_text(e));
    return k_exit_failure;
  }
}

}  // namespace farm
