#include "cli/console_log.h"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <mutex>

namespace farm {

namespace {

// One sink in front of two: the logger's level filter and formatting stay in one place.
class SplitByLevelSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  SplitByLevelSink()
      : m_out(std::make_unique<spdlog::sinks::stdout_color_sink_st>()),
        m_err(std::make_unique<spdlog::sinks::stderr_color_sink_st>()) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
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

}  // namespace

void use_console_log() {
  auto logger = std::make_shared<spdlog::logger>("farm", std::make_shared<SplitByLevelSink>());
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("%^%l%$: %v");
}

void use_console_format(CLI::App& app) {
  // Set before the subcommands are added: each copies its parent's at creation.
  app.failure_message([](const CLI::App* command, const CLI::Error& e) {
    return "error: " + CLI::FailureMessage::simple(command, e);
  });
}

}  // namespace farm
