// MTL texture statements and OBJ mtllib statements from the same bytes: nothing may crash, hang
// or allocate without bound, and every statement found must be well formed (checked here, so a
// parser that returns nonsense is a finding too).
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

#include "scene/obj_references.h"

namespace {

void check(bool ok) {
  if (!ok) __builtin_trap();
}

bool has_edge_space(const std::string& s) {
  std::string_view space = " \t\v\f\r\n";
  return s.empty() || space.find(s.front()) != std::string_view::npos || space.find(s.back()) != std::string_view::npos;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    for (const rt::MtlTextureStatement& s : rt::parse_mtl_texture_statements(text)) {
      check(!s.keyword.empty() && !has_edge_space(s.file_name) && s.line >= 1 && s.column >= 1);
      check(s.file_name.size() <= rt::k_max_statement_line_bytes);
    }
  } catch (const std::runtime_error&) {
  }
  std::istringstream obj{std::string(text)};
  try {
    for (const rt::ObjMtllibStatement& s : rt::scan_obj_mtllib_statements(obj)) {
      check(!has_edge_space(s.whole.text) && !s.words.empty() && s.line >= 1 && s.whole.column >= 1);
      check(s.words.front().column == s.whole.column);
    }
  } catch (const std::runtime_error&) {
  }
  return 0;
}
