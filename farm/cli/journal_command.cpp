#include "cli/journal_command.h"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <map>
#include <sstream>

#include "base/memory.h"
#include "cli/exit_codes.h"
#include "master/journal.h"

namespace farm {

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
    spdlog::error("{}", error_text(e));
    return exit_code(run_status_of(e));  // not a journal (JournalFormatError): 2; cannot read it: 1
  }
  // The reader --resume uses, with its limits: every journal a master resumes is shown here.
  IdentityImage image;
  if (Status unreadable = identity_image(c.identity, image); !unreadable.ok()) {
    spdlog::error("'{}': {}", o.path, unreadable.message());
    return k_exit_bad_input;
  }
  const int width = image.width, height = image.height;
  const std::vector<int>& frames = image.frames;
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
  Status problem = check_journal_blocks(c.blocks, image, o.complete);
  if (!problem.ok()) {
    std::printf("exactly once: NO: %s\n", problem.message().c_str());
    return k_exit_failure;
  }
  std::printf("exactly once: yes%s\n", o.complete ? ", every pixel committed" : "");
  return k_exit_ok;
}

}  // namespace farm
