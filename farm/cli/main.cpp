// The `farm` executable: parses the command line and hands over to one command.
// The command line itself is cli/farm_main.cpp (in the farm_cli layer).
#include "cli/exit_codes.h"
#include "cli/farm_main.h"

#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <exception>
#include <new>
#include <string>

namespace {

void say(const char* text) {
  ssize_t ignored = ::write(2, text, std::char_traits<char>::length(text));
  (void)ignored;
}

// An allocation failure that leaves a thread's function (a server thread, a render thread)
// would abort the process with SIGABRT and no word: it says so and exits 1 like any failure
// (docs/failures.md, "not enough memory"). Written with write(2): nothing allocated. Anything
// else that ends here is a bug: it is named, and aborts as before (a core to look at).
[[noreturn]] void on_terminate() {
  try {
    if (std::exception_ptr e = std::current_exception()) std::rethrow_exception(e);
  } catch (const std::bad_alloc&) {
    say("error: not enough memory (an allocation failed: std::bad_alloc)\n");
    std::_Exit(farm::k_exit_failure);
  } catch (const std::exception& e) {
    say("error: unexpected exception: ");
    say(e.what());
    say("\n");
  } catch (...) {
  }
  std::abort();
}

}  // namespace

int main(int argc, char** argv) {
  std::set_terminate(on_terminate);
  return farm::farm_main(argc, argv);
}
