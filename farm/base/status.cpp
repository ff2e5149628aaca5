#include "base/status.h"

namespace farm {

void fail_check(const char* condition, const char* file, int line) {
  throw InvariantError(std::string("internal error: check '") + condition + "' failed at " + file + ":" +
                       std::to_string(line));
}

}  // namespace farm
