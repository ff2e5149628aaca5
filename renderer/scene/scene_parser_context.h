// Shared state of one scene parse: the document, the description being filled, and the
// named things (textures, materials, prototypes) later sections refer to. Internal to
// scene_parser.cpp and object_parser.cpp.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "scene/scene_desc.h"
#include "scene/toml_reader.h"

namespace rt {

// A `type` value and the keys that make sense for it.
template <typename Kind>
struct KindKeys {
  const char* name;
  Kind kind;
  std::vector<std::string> keys;
};

// Names defined by [[texture]], [[material]] or [[prototype]] in file order, for lookups
// and for "unknown material 'gold'; defined: red, glass".
class NameTable {
 public:
  explicit NameTable(std::string noun) : m_noun(std::move(noun)) {}
  // Registers the name read from `reader`'s "name" key; duplicates are errors naming both.
  int add(const TableReader& reader);
  // Index of the name in `reader`'s `key`; an unknown name is an error listing the defined.
  int lookup(const TableReader& reader, const std::string& key) const;
  int find(const std::string& name) const;
  const std::vector<std::string>& names() const { return m_names; }

 private:
  std::string m_noun;
  std::vector<std::string> m_names;
  std::vector<SourceLoc> m_locs;
  std::map<std::string, int> m_index;
};

struct ParseContext {
  ParseContext(const TomlDocument& d, const std::string& scene_path, const AssetSearch& search);

  // Resolves the asset path in `key` (required) to an existing file and records it in
  // SceneDesc::asset_files; `noun` names it in messages ("mesh file").
  std::string resolve_asset(const TableReader& reader, const std::string& key, const std::string& noun);
  // Records the files the mesh file in `key` reads in turn (glTF buffers and images, OBJ
  // MTL files and their textures); a missing one is an error at `key` naming who refers to it.
  void add_mesh_references(const TableReader& reader, const std::string& key, const std::string& mesh_path);

  const TomlDocument& doc;
  SceneDesc scene;
  std::vector<std::string> search_dirs;
  NameTable textures{"texture"};
  NameTable materials{"material"};
  NameTable prototypes{"prototype"};
};

// Reads `type` from `reader`, then rejects keys that are neither in `common` nor in that
// type's keys, saying so when a key belongs to another type ("'radius' does not apply to
// object type 'box' (it is for: sphere, cylinder)").
template <typename Kind>
const KindKeys<Kind>& read_kind(const TableReader& reader, const std::vector<KindKeys<Kind>>& kinds,
                                const std::vector<std::string>& common, const std::string& noun);

// The tables of an array-of-tables key (`[[key]]` sections or an inline array of inline tables).
std::vector<const toml::value*> tables_in(const TableReader& parent, const std::string& key,
                                          const std::string& header);

void read_prototypes(ParseContext& ctx, const TableReader& root);
void read_objects(ParseContext& ctx, const TableReader& root);

// Helpers of read_kind, defined in scene_parser.cpp.
[[noreturn]] void fail_unknown_kind(const TableReader& reader, const std::string& noun,
                                    const std::vector<std::string>& names);
void check_kind_keys(const TableReader& reader, const std::string& noun, const std::string& type,
                     const std::vector<std::string>& allowed,
                     const std::vector<std::pair<std::string, std::vector<std::string>>>& all_kinds);

template <typename Kind>
const KindKeys<Kind>& read_kind(const TableReader& reader, const std::vector<KindKeys<Kind>>& kinds,
                                const std::vector<std::string>& common, const std::string& noun) {
  std::vector<std::string> names;
  std::vector<std::pair<std::string, std::vector<std::string>>> all;
  for (const auto& k : kinds) {
    names.push_back(k.name);
    all.emplace_back(k.name, k.keys);
  }
  std::optional<std::string> type = reader.get_string("type");
  if (!type) reader.fail(reader.what() + " needs 'type': one of " + join_names(names));
  for (const auto& k : kinds) {
    if (*type != k.name) continue;
    std::vector<std::string> allowed = common;
    allowed.insert(allowed.end(), k.keys.begin(), k.keys.end());
    check_kind_keys(reader, noun, k.name, allowed, all);
    return k;
  }
  fail_unknown_kind(reader, noun, names);
}

}  // namespace rt
