// What the master needs to know of a .pov scene before any rendering: the files it reads
// besides itself (every #include, image map, height field and font it names by a literal
// string), found by scanning the text, not by running POV-Ray. Files under the scene's folder
// and the asset folders travel to the workers; the rest must be POV-Ray's own include files
// (its Library_Path in /etc/povray/3.7/povray.ini), which every worker's povray has, so their
// version is part of the job's identity. Names built at parse time (macros, concat) are not
// seen here: a worker's POV-Ray then reports them, and the job ends with its message.
#pragma once

#include <string>
#include <vector>

namespace farm {

// What a scan found. `files`: absolute paths to ship, each once, in order of first mention (not
// the scene itself). `warnings`: located messages for the user's log: a name found nowhere
// inside a conditional block (#if, #ifdef, #ifndef, #switch, #while, #for, #macro) or in a file
// included from one: POV-Ray reads it only if that branch runs, which a scan cannot tell
// (Debian's desk.pov names desk3.png for clock=4 only, a file its earlier frames write). If
// POV-Ray does need it, the render fails with POV-Ray's message.
// `whole_frame`: located reasons why this scene's frames must each be rendered whole, by one
// single-threaded povray: features drawing from POV-Ray's random stream, which runs on as it
// renders (and is shared by its threads), or that sample the region it is given, so a region's
// pixels differ from the same pixels of a full frame (radiosity, crand, jitter in an area light
// or a media, media method 1, subsurface: povray_scene.cpp, whole_frame_feature). The first use
// of each, in the scene's own files, or in POV-Ray's library files inside a declaration the
// scene's files use (textures.inc's EMBWood1 has crand), directly or through other declarations.
// Names built at parse time (macros, strings) are not followed.
struct PovraySceneFiles {
  std::vector<std::string> files;
  std::vector<std::string> warnings;
  std::vector<std::string> whole_frame;
};

// Throws rt::SceneError located at the naming statement for a file found nowhere outside any
// conditional: "desk.pov:12:10: #include 'wood.inc' not found in the scene's folder, the asset
// folders or POV-Ray's include folders (/usr/share/povray-3.7/include, ...)".
PovraySceneFiles povray_scene_files(const std::string& scene_path, const std::vector<std::string>& roots);

// POV-Ray's own library folders (Library_Path of /etc/povray/3.7/povray.ini).
std::vector<std::string> povray_library_dirs();

}  // namespace farm
