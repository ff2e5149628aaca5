// What the renderers behind the seam share besides running a process (renderer_process.h): the
// renderer's version line, asked once per process, and 8-bit display values back to the linear
// floats the farm's encoder turns into the same bytes.
#pragma once

#include <cstdint>
#include <string>

namespace farm {

struct VersionQuery {
  const char* program;      // "povray": run as `program --version`, unconfined (it reads no scene)
  const char* line_prefix;  // "POV-Ray ": the version is the first line that starts so
  const char* name;         // "POV-Ray": in what the farm says
  double seconds;           // how long it may take
};

// The version line, asked once per process and kept (a failure too). Throws std::runtime_error
// saying what to install when the program is missing or prints no version.
std::string renderer_version(const VersionQuery& query);

// 8-bit sRGB to linear floats, 256 entries: exact both ways (rt::linear_to_srgb8 gives every
// byte back), so a renderer's 8-bit image passes through the farm unchanged.
const float* srgb8_to_linear_table();

}  // namespace farm
