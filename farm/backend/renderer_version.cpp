#include "backend/renderer_version.h"

#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "backend/sandbox.h"
#include "image/image_io.h"

namespace farm {

std::string renderer_version(const VersionQuery& query) {
  static std::mutex mutex;
  static std::map<std::string, std::pair<std::string, std::string>> asked;  // program -> version, problem
  std::lock_guard<std::mutex> lock(mutex);
  auto it = asked.find(query.program);
  if (it == asked.end()) {
    std::string version, problem;
    const std::optional<std::string> said = unconfined_output({query.program, "--version"}, query.seconds);
    if (!said) {
      problem = std::string(query.name) + " is not installed here (no '" + query.program +
                "' on PATH): install Debian's " + query.program + " package";
    } else {
      std::istringstream in(*said);
      for (std::string line; std::getline(in, line);) {
        if (line.rfind(query.line_prefix, 0) == 0) {
          version = line;
          break;
        }
      }
      if (version.empty())
        problem = std::string("'") + query.program + " --version' printed no version: is Debian's " + query.program +
                  " package installed?";
    }
    it = asked.emplace(query.program, std::make_pair(version, problem)).first;
  }
  if (!it->second.second.empty()) throw std::runtime_error(it->second.second);
  return it->second.first;
}

const float* srgb8_to_linear_table() {
  static const struct Table {
    float v[256];
    Table() {
      for (int i = 0; i < 256; ++i) v[i] = rt::srgb_to_linear(static_cast<float>(i) / 255.0f);
    }
  } table;
  return table.v;
}

}  // namespace farm
