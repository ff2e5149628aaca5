#include "cli/console_log.h"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <memory>
#include <sstream>
#include <mutex>

namespace farm {

namespace {

bool is_control(unsigned char c) { return (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f; }

bool has_control(spdlog::string_view_t text) {
  for (char c : text)
    if (is_control(static_cast<unsigned char>(c))) return true;
  return false;
}

std::string escape_control(spdlog::string_view_t text) {
  std::string out;
  out.reserve(text.size() + 16);
  for (char c : text) {
    if (is_control(static_cast<unsigned char>(c))) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned char>(c));
      out += hex;
    } else {
      out += c;
    }
  }
  return out;
}

// One sink in front of two: the logger's level filter and formatting stay in one place.
class SplitByLevelSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  SplitByLevelSink()
      : m_out(std::make_unique<spdlog::sinks::stdout_color_sink_st>()),
        m_err(std::make_unique<spdlog::sinks::stderr_color_sink_st>()) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& original) override {
    // Messages quote what users and files wrote (a host file's line, a scene's name): control
    // characters in it are shown as \xNN, so a file cannot drive the terminal (escape
    // sequences that recolour, retitle or hide the message).
    spdlog::details::log_msg msg = original;
    std::string escaped;
    if (has_control(msg.payload)) {
      escaped = escape_control(msg.payload);
      msg.payload = escaped;
    }
    if (msg.level >= spdlog::level::warn) {
      m_out->flush();  // what came before a problem is printed before it
      m_err->log(msg);
    } else {
      m_out->log(msg);
    }
  }
  void flush_() override {
    m_out->flush();
    m_err->flush();
  }
  void set_pattern_(const std::string& pattern) override {
    m_out->set_pattern(pattern);
    m_err->set_pattern(pattern);
  }
  void set_formatter_(std::unique_ptr<spdlog::formatter> formatter) override {
    m_out->set_formatter(formatter->clone());
    m_err->set_formatter(std::move(formatter));
  }

 private:
  std::unique_ptr<spdlog::sinks::stdout_color_sink_st> m_out;
  std::unique_ptr<spdlog::sinks::stderr_color_sink_st> m_err;
};

// CLI11's wording, said the way the rest of the farm speaks: "A subcommand is required" for
// `farm bogus`, "At Most 1 required but received 2" for an option given twice, and extra
// arguments listed back to front.
std::string plain_usage_error(const CLI::App* command, const CLI::Error& e) {
  const std::string what = e.what();
  const CLI::App* innermost = command;  // the command that was given, if any
  for (auto given = innermost->get_subcommands(); !given.empty(); given = innermost->get_subcommands()) {
    innermost = given.front();
  }
  const std::string farm_command = innermost->get_parent() ? "farm " + innermost->get_name() : "farm";
  if (!command->get_parent() && dynamic_cast<const CLI::RequiredError*>(&e) && what.find("subcommand") != std::string::npos) {
    std::string names;
    for (const CLI::App* sub : command->get_subcommands({})) names += (names.empty() ? "" : ", ") + sub->get_name();
    const std::vector<std::string> rest = command->remaining();
    if (!rest.empty() && !rest.front().empty() && rest.front()[0] != '-') {
      return "unknown command '" + rest.front() + "' (commands: " + names + ")";
    }
    return "a command is required (" + names + ")";
  }
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e)) {
    const std::string marker = ": At Most 1 required but received ";
    if (const size_t at = what.find(marker); at != std::string::npos) {
      return what.substr(0, at) + " is given " + what.substr(at + marker.size()) + " times; it takes one value";
    }
  }
  if (dynamic_cast<const CLI::ExtrasError*>(&e)) {
    // CLI11 lists them back to front, joined by spaces (its rjoin), and keeps no list by then.
    std::string extras;
    if (const size_t colon = what.find(": "); colon != std::string::npos) {
      std::istringstream words(what.substr(colon + 2));
      for (std::string word; words >> word;) extras = extras.empty() ? word : word + " " + extras;
    }
    if (!extras.empty()) {
      return "`" + farm_command + "` does not take: " + extras + " (`" + farm_command + " --help` lists what it takes)";
    }
  }
  return what;
}

}  // namespace

void use_console_log() {
  auto logger = std::make_shared<spdlog::logger>("farm", std::make_shared<SplitByLevelSink>());
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("%^%l%$: %v");
}

void use_console_format(CLI::App& app) {
  // Set before the subcommands are added: each copies its parent's at creation.
  app.failure_message([](const CLI::App* command, const CLI::Error& e) {
    // CLI11's own text is e.what() and then a line pointing to --help: keep that line.
    std::string text = CLI::FailureMessage::simple(command, e);
    const std::string what = e.what();
    if (text.compare(0, what.size(), what) == 0) text.replace(0, what.size(), plain_usage_error(command, e));
    return "error: " + escape_control(text);
  });
}

}  // namespace farm
