// The textures of an assimp-imported material (OBJ/MTL, FBX): map_Kd, map_d, bump/map_bump,
// norm, map_Ke; each becomes a TextureRef into the mesh file's own texture list. Internal
// to the mesh loader.
#pragma once

#include <string>
#include <vector>

#include "scene/scene_desc.h"

struct aiMaterial;

namespace rt {

struct NamedTexture;

// Height of a white bump-map texel, in uv units (1 = the texture's width): a texel-to-texel
// step from black to white in a 512-texel map then tilts the normal by about 60 degrees.
constexpr float k_default_bump_scale = 0.004f;

class MeshTextureList {
 public:
  // `file_path`: the mesh file; relative texture names resolve against its folder.
  MeshTextureList(std::string file_path, std::vector<TextureDesc>& textures);
  // Adds the material's textures to `m` (and may turn it into a cut-out or an emitter).
  // A named texture that does not exist throws SceneError naming the file and material.
  void read(const aiMaterial& source, MaterialDesc& m);

 private:
  int slot(const NamedTexture& texture, const std::string& material);
  std::string m_file;
  std::string m_dir;
  std::vector<TextureDesc>& m_textures;
};

// The existing file `name` (as written in a material file) means, looked up in `dir`: as
// written, with backslashes as slashes, then by a case-insensitive match of its file name.
std::string find_material_texture(const std::string& dir, const std::string& name);

}  // namespace rt
