// The few pieces of JSON the statistics writers need (no JSON library among the dependencies).
#pragma once

#include <string>

namespace farm {

// A JSON string literal: quotes, backslashes and control characters escaped.
std::string json_string(const std::string& s);
// A number with a fixed number of decimals ("%.*f").
std::string fixed(double v, int decimals = 6);

}  // namespace farm
