// A launched worker's local process (`ssh ...` or `srun ...`): its standard input is a pipe that
// first carries the worker's keys and then stays open as the lifeline; its standard error is
// read by a thread that keeps the last lines (for the one report of a failing host) and echoes
// them with the host's label. Its standard output goes the same way, or, for a child that talks
// to its launcher (a launched relay says where it listens), through a pipe of its own whose
// marked lines are also kept for the caller. The child dies with this process, even on SIGKILL.
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
  // ("cannot run 'ssh': No such file or directory"). `stdout_marker` empty: its standard output
  // is echoed with its standard error; else it is read apart, echoed the same way, and its lines
  // that start with `stdout_marker` are kept for take_marked_lines().
  ChildProcess(const std::vector<std::string>& argv, const std::string& stdin_text, std::string label,
               std::string stdout_marker = "");
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Reaps without blocking: the exit code (128 + signal if killed) once it has ended.
  std::optional<int> poll();
  // Closes the lifeline and waits `grace_seconds` for the end; then SIGTERM, and SIGKILL after
  // `grace_seconds` more (stop_children() with this one child).
  void stop(double grace_seconds = 2.0);
  // The steps of stop(), for stopping many at once with one grace period: close standard
  // input; send a signal if it still runs; SIGKILL it if it still runs, reap it, and join the
  // reader of its standard error.
  void close_lifeline();
  void signal(int signal_number);
  void finish();
  // The last lines it wrote to standard error.
  std::vector<std::string> stderr_tail() const;
  // The marked lines of its standard output since the last call, in order; at most
  // k_max_marked_lines wait (a child that floods them loses the later ones, not our memory).
  std::vector<std::string> take_marked_lines();
  // Its standard output reached its end (it exited or closed it): no marked line comes any more.
  // Always true without a marker.
  bool stdout_closed() const;
  static constexpr size_t k_max_marked_lines = 1000;
  pid_t pid() const { return m_pid; }

 private:
  // Echoes each line of `fd` with the label until its end; keeps the stderr tail or the marked lines.
  void read_lines(int fd, bool is_stdout);
  std::string m_label;
  std::string m_marker;
  pid_t m_pid = -1;
  int m_stdin = -1;
  std::optional<int> m_exit;
  std::thread m_reader;      // of standard error (and output, without a marker)
  std::thread m_out_reader;  // of standard output, with a marker
  mutable std::mutex m_mutex;
  std::condition_variable m_stderr_closed_cv;  // either reader reached its end
  bool m_stderr_closed = false;  // the reader saw EOF: m_tail holds every line
  std::deque<std::string> m_tail;
  std::vector<std::string> m_marked;
  bool m_stdout_closed = false;
};

// Stops many children at once, with one grace period for all (thousands of hosts must not mean
// thousands of waits): closes every lifeline and waits up to `exit_seconds` for them to end by
// themselves (a worker after JobDone, or at its lifeline's end), then SIGTERM to those still
// running and up to `term_seconds` more (a worker ends its renderers and removes its folders),
// then SIGKILL and reap.
void stop_children(const std::vector<ChildProcess*>& children, double exit_seconds, double term_seconds);

}  // namespace farm
