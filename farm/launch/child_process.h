// A launched worker's local process (`ssh ...` or `srun ...`): its standard input is a pipe that
// first carries the worker's keys and then stays open as the lifeline; its standard error is
// read by a thread that keeps the last lines (for the one report of a failing host) and echoes
// them with the host's label. The child dies with this process, even on SIGKILL.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace farm {

class ChildProcess {
 public:
  // Starts argv[0] (searched in PATH) with `stdin_text` written to its standard input.
  // Throws std::runtime_error if it cannot be started, naming the program and the OS reason
  // ("cannot run 'ssh': No such file or directory").
  ChildProcess(const std::vector<std::string>& argv, const std::string& stdin_text, std::string label);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Reaps without blocking: the exit code (128 + signal if killed) once it has ended.
  std::optional<int> poll();
  // Closes the lifeline and waits `grace_seconds` for the end; then SIGTERM, and SIGKILL after
  // `grace_seconds` more.
  void stop(double grace_seconds = 2.0);
  // The steps of stop(), for stopping many at once with one grace period: close standard
  // input; send a signal if it still runs; SIGKILL it if it still runs, reap it, and join the
  // reader of its standard error.
  void close_lifeline();
  void signal(int signal_number);
  void finish();
  // The last lines it wrote to standard error.
  std::vector<std::string> stderr_tail() const;
  pid_t pid() const { return m_pid; }

 private:
  void read_stderr(int fd);
  std::string m_label;
  pid_t m_pid = -1;
  int m_stdin = -1;
  std::optional<int> m_exit;
  std::thread m_reader;
  mutable std::mutex m_mutex;
  std::condition_variable m_stderr_closed_cv;
  bool m_stderr_closed = false;  // the reader saw EOF: m_tail holds every line
  std::deque<std::string> m_tail;
};

}  // namespace farm
