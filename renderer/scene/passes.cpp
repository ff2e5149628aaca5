#include "scene/passes.h"

#include <cstring>
#include <sstream>

namespace rt {

namespace {

constexpr const char* k_layer = "ViewLayer";

constexpr PassInfo k_info[k_pass_kinds] = {
    {"albedo", "Denoising Albedo", "RGB"},  // what Blender's Denoise node takes as Albedo
    {"normal", "Normal", "XYZ"},
    {"depth", "Depth", "Z"},
    {"position", "Position", "XYZ"},
    {"object_id", "IndexOB", "X"},
    {"material_id", "IndexMA", "X"},
    {"sample_count", "Debug Sample Count", "X"},
    {"variance", "Variance", "X"},  // no Blender pass of this name: ours
};

std::string trimmed(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

}  // namespace

const PassInfo& pass_info(Pass p) { return k_info[static_cast<int>(p)]; }

int pass_channel_count(PassSet set) {
  int n = 0;
  for (int k = 0; k < k_pass_kinds; ++k) {
    if (has_pass(set, static_cast<Pass>(k))) n += static_cast<int>(std::strlen(k_info[k].channels));
  }
  return n;
}

std::vector<std::string> pass_channel_names(PassSet set) {
  std::vector<std::string> names;
  for (int k = 0; k < k_pass_kinds; ++k) {
    if (!has_pass(set, static_cast<Pass>(k))) continue;
    for (const char* c = k_info[k].channels; *c; ++c) {
      names.push_back(std::string(k_layer) + "." + k_info[k].exr_name + "." + *c);
    }
  }
  return names;
}

std::vector<std::string> combined_channel_names() {
  std::vector<std::string> names;
  for (const char* c : {"R", "G", "B", "A"}) names.push_back(std::string(k_layer) + ".Combined." + c);
  return names;
}

std::vector<std::string> layered_channel_names(PassSet set) {
  std::vector<std::string> names = combined_channel_names();
  for (std::string& name : pass_channel_names(set)) names.push_back(std::move(name));
  return names;
}

std::optional<PassSet> parse_pass_list(const std::string& text, std::string& error) {
  PassSet set = 0;
  std::istringstream in(text);
  for (std::string word; std::getline(in, word, ',');) {
    word = trimmed(word);
    if (word.empty() || word == "none") continue;
    if (word == "all") {
      set = k_all_passes;
      continue;
    }
    bool known = false;
    for (int k = 0; k < k_pass_kinds && !known; ++k) {
      if (word == k_info[k].key) {
        set |= 1u << k;
        known = true;
      }
    }
    if (!known) {
      error = "unknown pass '" + word + "' (passes: all";
      for (const PassInfo& p : k_info) error += std::string(", ") + p.key;
      error += ")";
      return std::nullopt;
    }
  }
  return set;
}

std::string pass_list_text(PassSet set) {
  std::string text;
  for (int k = 0; k < k_pass_kinds; ++k) {
    if (has_pass(set, static_cast<Pass>(k))) text += (text.empty() ? "" : ",") + std::string(k_info[k].key);
  }
  return text;
}

}  // namespace rt
