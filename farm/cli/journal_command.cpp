#include "cli/journal_command.h"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <map>
#include <sstream>

#include "cli/exit_codes.h"
#include "scene/scene_desc.h"
#include "master/journal.h"

namespace farm {

namespace {

// The image's size and frames, from the identity the master wrote ("width=...", "frames=1,2").
bool image_of(const std::string& identity, int& width, int& height, std::vector<int>& frames) {
  std::istringstream in(identity);
  width = height = 0;
  frames.clear();
  for (std::string line; std::getline(in, line);) {
    try {
      if (line.rfind("width=", 0) == 0) width = std::stoi(line.substr(6));
      if (line.rfind("height=", 0) == 0) height = std::stoi(line.substr(7));
      if (line.rfind("frames=", 0) == 0) {
        std::istringstream list(line.substr(7));
        for (std::string f; std::getline(list, f, ',');) frames.push_back(std::stoi(f));
      }
    } catch (const std::exception&) {
      return false;
    }
  }
  return width > 0 && height > 0 && width <= rt::k_max_image_side && height <= rt::k_max_image_side && !frames.empty() && frames.size() <= 100000;
}

}  // namespace

void add_journal_command(CLI::App& app, JournalCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand("journal", "Show a master's journal and check that every block was committed once");
  cmd->add_option("file", o.path, "The journal (OUTPUT.journal by default; kept after success with --keep-journal)")
      ->required();
  cmd->add_flag("--complete", o.complete, "Also require every pixel of every frame to be committed");
}

int run_journal_command(const JournalCommandOptions& o) {
  JournalContents c;
  try {
    c = read_journal(o.path);
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return exit_code(run_status_of(e));  // not a journal (JournalFormatError): 2; cannot read it: 1
  }
  int width = 0, height = 0;
  std::vector<int> frames;
  if (!image_of(c.identity, width, height, frames)) {
    spdlog::error("'{}': the job's identity does not give the image size and frames", o.path);
    return k_exit_bad_input;
  }
  std::map<uint32_t, std::pair<size_t, int64_t>> per_epoch;  // blocks, pixels
  int64_t pixels = 0;
  for (const JournalBlock& b : c.blocks) {
    per_epoch[b.epoch].first++;
    per_epoch[b.epoch].second += b.rect.pixels();
    pixels += b.rect.pixels();
  }
  const int64_t total = static_cast<int64_t>(width) * height * static_cast<int64_t>(frames.size());
  std::printf("journal %s\n", o.path.c_str());
  std::printf("image: %dx%d, %zu frame(s)\n", width, height, frames.size());
  std::printf("master starts: %u\n", c.epochs);
  for (const auto& [epoch, n] : per_epoch) std::printf("  start %u: %zu block(s), %lld pixels\n", epoch + 1, n.first, static_cast<long long>(n.second));
  std::printf("blocks: %zu\n", c.blocks.size());
  std::printf("pixels committed: %lld of %lld (%.2f%%)\n", static_cast<long long>(pixels), static_cast<long long>(total),
              total ? 100.0 * static_cast<double>(pixels) / static_cast<double>(total) : 0.0);
  std::printf("torn bytes at the end: %llu\n", static_cast<unsigned long long>(c.torn_bytes));
  if (!c.damage.empty()) std::printf("damaged in the middle:\n%s", journal_damage_report(c).c_str());
  Status problem = check_exactly_once(c.blocks, width, height, frames, o.complete);
  if (!problem.ok()) {
    std::printf("exactly once: NO: %s\n", problem.message().c_str());
    return k_exit_failure;
  }
  std::printf("exactly once: yes%s\n", o.complete ? ", every pixel committed" : "");
  return k_exit_ok;
}

}  // namespace farm
