// The materials both scene parser tests (scene_parser_test.cpp, scene_parser_errors_test.cpp)
// put in front of the objects they parse.
#pragma once

namespace scene_parser_fixture {

inline const char* k_materials = R"(
[[material]]
name = "red"
type = "diffuse"
albedo = [0.8, 0.1, 0.1]

[[material]]
name = "glass"
type = "glass"
ior = 1.5
)";

}  // namespace scene_parser_fixture
