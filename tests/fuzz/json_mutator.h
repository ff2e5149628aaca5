// Structure-aware mutation of JSON text for libFuzzer's custom mutators (fuzz_gltf).
//
// Why: byte mutations of a JSON document rarely turn a number into one that breaks offset
// arithmetic. A glTF accessor whose byteOffset is 2^64 - 16 wraps when added to its length
// and passed every bounds check (issue 26); fuzz_gltf ran 110k byte-mutated inputs without
// producing such a number. This mutator works on tokens: it finds every number outside a
// string, with the object key it belongs to, and replaces one with a value chosen to hurt
// (0, -1, powers of two and their neighbours, values just below 2^32 and 2^64, the value
// nudged, another field's value), or swaps an enum-like string for another of its family.
// The document stays valid JSON, so each input reaches the loader's arithmetic instead of
// dying in the JSON parser.
#pragma once

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace fuzz_json {

struct Token {
  size_t begin = 0, end = 0;  // byte range in the text
  std::string key;            // the last object key before it ("" at the top)
  bool is_string = false;     // a string value (quotes included in the range); else a number
};

// Numbers and string values (not keys) of `text`, in order. Tolerates broken JSON: it only
// tracks strings and the characters that may start a number.
inline std::vector<Token> json_value_tokens(const std::string& text) {
  std::vector<Token> out;
  std::string key;
  size_t i = 0;
  const size_t n = text.size();
  while (i < n) {
    char c = text[i];
    if (c == '"') {
      size_t j = i + 1;
      while (j < n && text[j] != '"') j += text[j] == '\\' ? 2 : 1;
      size_t end = j < n ? j + 1 : n;
      size_t k = end;
      while (k < n && (text[k] == ' ' || text[k] == '\n' || text[k] == '\r' || text[k] == '\t')) ++k;
      if (k < n && text[k] == ':') {
        key = end >= i + 2 ? text.substr(i + 1, end - i - 2) : std::string();
      } else {
        out.push_back({i, end, key, true});
      }
      i = end;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      size_t j = i + 1;
      while (j < n && (std::isdigit(static_cast<unsigned char>(text[j])) || text[j] == '.' || text[j] == 'e' ||
                       text[j] == 'E' || text[j] == '+' || text[j] == '-'))
        ++j;
      out.push_back({i, j, key, false});
      i = j;
    } else {
      ++i;
    }
  }
  return out;
}

// A number likely to break size and offset arithmetic, for a field that held `current`.
inline std::string hostile_number(std::mt19937_64& rng, const std::string& current, const std::string& key) {
  auto pick = [&](uint64_t n) { return static_cast<uint64_t>(rng() % n); };
  const uint64_t small = 1 + pick(64);
  uint64_t value = 0;
  bool parsed = false;
  try {
    size_t used = 0;
    value = std::stoull(current, &used);
    parsed = used == current.size();
  } catch (...) {
  }
  // Offsets, lengths, strides and counts get the wrap-around family more often.
  const bool sizeish = key == "byteOffset" || key == "byteLength" || key == "byteStride" || key == "count";
  switch (pick(sizeish ? 10 : 14)) {
    case 0: return std::to_string(UINT64_MAX - small + 1);           // 2^64 - k: wraps when added to k or more
    case 1: return std::to_string(UINT64_MAX - (parsed ? value : 0));  // 2^64 - 1 - v
    case 2: return std::to_string((uint64_t{1} << 32) - small);     // near 2^32
    case 3: return std::to_string((uint64_t{1} << (32 + pick(32))) + pick(3) - 1);  // 2^k, k >= 32, +-1
    case 4: return std::to_string((uint64_t{1} << pick(32)) - pick(2));           // 2^k or 2^k - 1
    case 5: return parsed ? std::to_string(value + small) : "1";
    case 6: return parsed && value >= small ? std::to_string(value - small) : "0";
    case 7: return parsed ? std::to_string(value * (2 + pick(3))) : "2";
    case 8: return std::to_string(pick(5));
    case 9: return "-" + std::to_string(small);
    case 10: return std::to_string(5120 + pick(7));  // glTF component types, 5124 is not one
    case 11: return "1e300";
    case 12: return "-0.0";
    default: return std::to_string(pick(3)) + "." + std::to_string(pick(100));
  }
}

// Enum-like string values of glTF, by family: a swap stays plausible but changes sizes.
inline std::string other_enum_string(std::mt19937_64& rng, const std::string& quoted) {
  static const std::vector<std::vector<std::string>> families = {
      {"SCALAR", "VEC2", "VEC3", "VEC4", "MAT2", "MAT3", "MAT4"},
      {"OPAQUE", "MASK", "BLEND"},
      {"perspective", "orthographic"},
      {"point", "spot", "directional"},
      {"image/png", "image/jpeg", "image/ktx2"},
  };
  const std::string inner = quoted.size() >= 2 ? quoted.substr(1, quoted.size() - 2) : quoted;
  for (const auto& f : families)
    for (const auto& s : f)
      if (s == inner) return "\"" + f[rng() % f.size()] + "\"";
  return quoted;
}

// Mutates `text` in place at the token level; false when it has no token to change.
inline bool mutate_json(std::string& text, std::mt19937_64& rng) {
  std::vector<Token> tokens = json_value_tokens(text);
  if (tokens.empty()) return false;
  std::vector<size_t> numbers, strings;
  for (size_t i = 0; i < tokens.size(); ++i) (tokens[i].is_string ? strings : numbers).push_back(i);
  const uint64_t op = rng() % 10;
  if (op < 2 && !strings.empty()) {  // an enum string for another of its family
    const Token& t = tokens[strings[rng() % strings.size()]];
    text.replace(t.begin, t.end - t.begin, other_enum_string(rng, text.substr(t.begin, t.end - t.begin)));
    return true;
  }
  if (numbers.empty()) return false;
  const Token& t = tokens[numbers[rng() % numbers.size()]];
  std::string replacement;
  if (op < 3) {  // another number's value: a count as an offset, an index as a length
    const Token& s = tokens[numbers[rng() % numbers.size()]];
    replacement = text.substr(s.begin, s.end - s.begin);
  } else {
    replacement = hostile_number(rng, text.substr(t.begin, t.end - t.begin), t.key);
  }
  text.replace(t.begin, t.end - t.begin, replacement);
  return true;
}

}  // namespace fuzz_json
