// Child processes for integration tests: run the farm binary, capture its output, kill it.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <fcntl.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace test_process {

class Child {
 public:
  // Starts `args` (argv[0] = the program) with stdout+stderr going to `log_path`.
  Child(const std::vector<std::string>& args, const std::string& log_path) : m_log(log_path) {
    // Emptied before the fork: a caller waiting for a line must not find the previous run's.
    ::close(::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644));
    m_pid = ::fork();
    if (m_pid == 0) {
      int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      std::vector<char*> argv;
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
  }
  ~Child() { kill(SIGKILL); }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return m_pid; }  // -1 once it has been waited for
  // Exit code (or 128+signal) if the child has ended, -1 while it runs; never kills it.
  int poll() {
    if (m_pid <= 0) return m_status;
    int status = 0;
    if (::waitpid(m_pid, &status, WNOHANG) != m_pid) return -1;
    m_pid = -1;
    m_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return m_status;
  }
  // Exit code, or -1 on timeout (the child is then killed), or 128+signal.
  int wait(double timeout_seconds) {
    if (m_pid <= 0) return m_status;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (::waitpid(m_pid, &status, WNOHANG) == m_pid) {
        m_pid = -1;
        m_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        return m_status;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    kill(SIGKILL);
    return -1;
  }
  void kill(int sig) {
    if (m_pid > 0) {
      ::kill(m_pid, sig);
      if (sig == SIGKILL) {
        ::waitpid(m_pid, nullptr, 0);
        m_pid = -1;
        m_status = 128 + SIGKILL;
      }
    }
  }
  std::string log() const {
    std::ifstream f(m_log);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  }
  // Waits until the log contains `text`; false on timeout.
  bool wait_for_log(const std::string& text, double timeout_seconds) const {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
    while (std::chrono::steady_clock::now() < deadline) {
      if (log().find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

 private:
  pid_t m_pid = -1;
  int m_status = -1;
  std::string m_log;
};

inline int run(const std::vector<std::string>& args, const std::string& log_path, double timeout_seconds = 120) {
  Child c(args, log_path);
  return c.wait(timeout_seconds);
}

inline bool same_file(const std::string& a, const std::string& b) {
  std::ifstream fa(a, std::ios::binary), fb(b, std::ios::binary);
  std::stringstream sa, sb;
  sa << fa.rdbuf();
  sb << fb.rdbuf();
  return fa && fb && !sa.str().empty() && sa.str() == sb.str();
}

}  // namespace test_process
