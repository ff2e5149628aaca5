// Reading a glTF 2.0 file (.gltf with external or embedded buffers, or .glb) through tinygltf,
// hardened like the mesh loader: only regular files of bounded size are read, no URI may
// leave the file system as a relative path (no absolute paths, no URL schemes but data:),
// and every accessor, view and index is checked before use (gltf_accessors.h).
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "math/transform.h"
#include "scene/scene_desc.h"

namespace tinygltf {
class Model;
}

namespace rt {

// Thrown inside the glTF code with the reason only; the entry points add file and location.
struct GltfError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct GltfDocument {
  std::string path;  // absolute
  std::string dir;   // the folder relative URIs resolve against
  std::unique_ptr<tinygltf::Model> model;
  // External files the document reads, absolute, each once: buffers (.bin) and images.
  std::vector<std::string> referenced_files;
  GltfDocument();
  GltfDocument(GltfDocument&&) noexcept;
  ~GltfDocument();
};

// Parses and checks the document and loads its buffers (not its images). Throws GltfError.
// Every file it refers to must lie in the glTF file's folder (or below) or inside one of
// `roots` (asset_search_dirs of the scene: what the master's asset manifest ships), or it is
// refused before it is read; empty
// `roots` leave that check to the caller (the loader, after the scene's parse made it).
// Never reads an absolute URI or a file from the working directory.
GltfDocument read_gltf_document(const std::string& path, const std::vector<std::string>& roots);

// Empty if `path` (resolved from `uri`) lies inside `roots` or `roots` is empty, else the
// refusal naming both.
std::string outside_roots_message(const std::string& uri, const std::string& path, const std::vector<std::string>& roots);

// A node of the default scene reached from its roots, with its world transform.
struct GltfNodeInstance {
  int node = -1;
  Transform world_from_node;
};

// Every node of the default scene (or scene 0) in depth-first order; a node reached twice
// (a DAG) appears once per path. Throws GltfError on cycles, bad indices or a too deep tree.
std::vector<GltfNodeInstance> gltf_scene_nodes(const tinygltf::Model& model);

// The absolute path of a relative URI (percent-decoded) in `doc_dir`; throws GltfError on an
// absolute path or a URL scheme.
std::string resolve_gltf_uri(const std::string& doc_dir, const std::string& uri);

}  // namespace rt
