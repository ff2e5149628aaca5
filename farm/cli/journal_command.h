// `farm journal FILE`: what a master's journal holds (job, starts, blocks per start, torn
// bytes) and the proof that no pixel was committed twice; with --complete, also that every
// pixel of every frame was committed (a finished job kept with --keep-journal).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace farm {

struct JournalCommandOptions {
  std::string path;
  bool complete = false;
};

void add_journal_command(CLI::App& app, JournalCommandOptions& o);
// 0: consistent; 1: a pixel committed twice, outside the image, or (--complete) never; 2: not a journal.
int run_journal_command(const JournalCommandOptions& o);

}  // namespace farm
