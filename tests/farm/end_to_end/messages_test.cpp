// What the farm says when input is bad, and where it says it (issue 26, items 3, 5 and 6):
// errors and warnings on stderr and results on stdout, outputs refused before rendering with
// the OS reason, one rule for where a glTF file's files may lie, and no blocking on a FIFO.
// Rows of docs/failures.md; keep the two in step.
#include <doctest/doctest.h>

#include <sys/mount.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "base/file_write.h"
#include "farm/farm_fixture.h"

TEST_SUITE_BEGIN("integration");

using namespace farm_fixture;

namespace {

struct Split {
  int code = -1;
  std::string out, err;
};

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Runs the farm with its stdout and stderr kept apart (the shell puts stderr in its own file).
Split run_split(const fs::path& dir, const std::vector<std::string>& args, double timeout = 30) {
  const std::string err = (dir / "stderr.txt").string(), out = (dir / "stdout.txt").string();
  std::vector<std::string> argv = {"/bin/sh", "-c", "exec \"$0\" \"$@\" 2>\"$FARM_TEST_ERR\"", k_farm};
  argv.insert(argv.end(), args.begin(), args.end());
  ::setenv("FARM_TEST_ERR", err.c_str(), 1);
  Child child(argv, out);
  Split s;
  s.code = child.wait(timeout);
  s.out = read_text(out);
  s.err = read_text(err);
  return s;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A read-only tmpfs on `dir` for the life of this object; mounted() is false where the test
// may not mount (not root, no CAP_SYS_ADMIN): root ignores a chmod 0555, a read-only file
// system it cannot.
struct ReadOnlyMount {
  fs::path dir;
  bool ok = false;
  std::string why;
  explicit ReadOnlyMount(fs::path d) : dir(std::move(d)) {
    fs::create_directories(dir);
    ok = ::mount("tmpfs", dir.c_str(), "tmpfs", MS_RDONLY, "size=64k") == 0;
    if (!ok) why = std::strerror(errno);
  }
  ~ReadOnlyMount() {
    if (ok) ::umount2(dir.c_str(), MNT_DETACH);
  }
};

// A tmpfs of 256 KiB on `dir` filled up to `free_bytes` (about: tmpfs counts whole pages) for
// the life of this object; mounted() as above.
struct FullMount {
  fs::path dir;
  bool ok = false;
  std::string why;
  FullMount(fs::path d, size_t free_bytes) : dir(std::move(d)) {
    fs::create_directories(dir);
    ok = ::mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=256k") == 0;
    if (!ok) {
      why = std::strerror(errno);
      return;
    }
    std::ofstream filler(dir / "filler", std::ios::binary);
    const std::string block(4096, 'x');
    for (size_t written = 0; written + free_bytes < 256 * 1024 && filler; written += block.size()) filler << block;
  }
  ~FullMount() {
    if (ok) ::umount2(dir.c_str(), MNT_DETACH);
  }
  // Every name in the folder but the filler: what a refused run left behind.
  std::vector<std::string> leftovers() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().filename() != "filler") names.push_back(e.path().filename().string());
    return names;
  }
};

// A glTF file whose one buffer has the URI `uri` (one triangle, if the buffer were read).
void write_gltf(const fs::path& path, const std::string& uri) {
  std::ofstream(path) << R"({"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0]}],"nodes":[{"mesh":0}],)"
                      << R"("meshes":[{"primitives":[{"attributes":{"POSITION":0}}]}],)"
                      << R"("accessors":[{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3",)"
                      << R"("min":[0,0,0],"max":[1,1,0]}],"bufferViews":[{"buffer":0,"byteLength":36}],)"
                      << R"("buffers":[{"uri":")" << uri << R"(","byteLength":36}]})";
}

}  // namespace

TEST_CASE("messages: single refuses an output it cannot write before rendering, naming the OS reason") {
  const fs::path dir = test_paths::temp_dir("msg_readonly");
  struct RemoveAll {  // declared first: runs after the mount is gone
    fs::path p;
    ~RemoveAll() { fs::remove_all(p); }
  } remove_all{dir};
  const std::string scene = write_scene(dir, 1);
  ReadOnlyMount ro(dir / "ro");
  if (!ro.ok) {
    MESSAGE("skipped: cannot mount a read-only tmpfs here (needs root): " << ro.why);
    return;
  }
  const std::string ro_dir = (dir / "ro").string(), ok_out = (dir / "ok.png").string();
  struct Case {
    std::vector<std::string> extra;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"-o", ro_dir + "/out.png"}, "error: cannot write output image '" + ro_dir + "/out.png': folder '" + ro_dir + "': Read-only file system"},
      {{"-o", ok_out, "--stats", ro_dir + "/s.json"}, "error: cannot write statistics file '" + ro_dir + "/s.json': folder '" + ro_dir + "': Read-only file system"},
      {{"-o", ok_out, "--cost-map", ro_dir + "/c.cost"}, "error: cannot write cost map '" + ro_dir + "/c.cost': folder '" + ro_dir + "': Read-only file system"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"single", scene, "--threads", "1"};
    args.insert(args.end(), c.extra.begin(), c.extra.end());
    Split s = run_split(dir, args);
    CHECK_MESSAGE(s.code == 2, (s.out + s.err));  // bad input, nothing done (was 1, after the render)
    CHECK_MESSAGE(contains(s.err, c.message), s.err);
    CHECK_FALSE(contains(s.out, "wrote"));  // refused before rendering
    CHECK_FALSE(fs::exists(ok_out));
  }
}

TEST_CASE("messages: an output on a full disk is refused before rendering, naming the reason, leaving nothing") {
  const fs::path dir = test_paths::temp_dir("msg_full");
  struct RemoveAll {  // declared first: runs after the mount is gone
    fs::path p;
    ~RemoveAll() { fs::remove_all(p); }
  } remove_all{dir};
  const std::string scene = write_scene(dir, 1);
  FullMount full(dir / "full", 16 * 1024);  // room for an empty file, not for the probe's 64 KiB
  if (!full.ok) {
    MESSAGE("skipped: cannot mount a tmpfs here (needs root): " << full.why);
    return;
  }
  const std::string f = (dir / "full").string(), ok_out = (dir / "ok.png").string();
  auto refusal = [&](const std::string& what, const std::string& path) {
    return "error: cannot write " + what + " '" + path + "': folder '" + f + "': No space left on device";
  };
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  // The statistics, trace and maps were written after the render with their failures unseen:
  // render and master exited 0 with an empty --stats file (found by the adversarial pass).
  const std::vector<Case> cases = {
      {{"single", scene, "--threads", "1", "-o", f + "/out.png"}, refusal("output image", f + "/out.png")},
      {{"single", scene, "--threads", "1", "-o", ok_out, "--stats", f + "/s.json"}, refusal("statistics file", f + "/s.json")},
      {{"render", scene, "--workers", "1", "-o", ok_out, "--stats", f + "/s.json"}, refusal("statistics file", f + "/s.json")},
      {{"render", scene, "--workers", "1", "-o", ok_out, "--trace", f + "/t.trace"}, refusal("trace", f + "/t.trace")},
      {{"render", scene, "--workers", "1", "-o", ok_out, "--tile-map", f + "/m.png"}, refusal("tile map", f + "/m.png")},
      {{"render", scene, "--workers", "1", "-o", ok_out, "--cost-map", f + "/c.cost"}, refusal("cost map", f + "/c.cost")},
  };
  for (const Case& c : cases) {
    Split s = run_split(dir, c.args);
    CHECK_MESSAGE(s.code == 2, (s.out + s.err));
    CHECK_MESSAGE(contains(s.err, c.message), s.err);
    CHECK_FALSE(contains(s.out + s.err, "wrote"));
    CHECK_FALSE(fs::exists(ok_out));
    CHECK_MESSAGE(full.leftovers().empty(), full.leftovers().front());
  }
}

TEST_CASE("messages: a whole file written to a disk that fills up fails with the reason and keeps the old file") {
  const fs::path dir = test_paths::temp_dir("msg_fills");
  struct RemoveAll {
    fs::path p;
    ~RemoveAll() { fs::remove_all(p); }
  } remove_all{dir};
  FullMount full(dir / "full", 32 * 1024);
  if (!full.ok) {
    MESSAGE("skipped: cannot mount a tmpfs here (needs root): " << full.why);
    return;
  }
  const std::string target = (full.dir / "stats.json").string();
  REQUIRE(farm::write_file_replacing(target, "old", "statistics file").ok());
  const farm::Status s = farm::write_file_replacing(target, std::string(128 * 1024, 'y'), "statistics file");
  CHECK_FALSE(s.ok());
  CHECK(s.message() == "cannot write statistics file '" + target + "': No space left on device");
  CHECK(read_text(target) == "old");  // the old file is kept whole, not truncated
  const std::vector<std::string> left = full.leftovers();
  CHECK_MESSAGE(left == std::vector<std::string>{"stats.json"}, left.size());  // no temporary file left
}

TEST_CASE("messages: errors and warnings go to stderr, results to stdout, usage errors in the same format") {
  const fs::path dir = test_paths::temp_dir("msg_streams");
  const std::string scene = write_scene(dir, 1);

  Split missing = run_split(dir, {"single", (dir / "nope.toml").string(), "-o", (dir / "x.png").string()});
  CHECK(missing.code == 2);
  CHECK_MESSAGE(contains(missing.err, "error: cannot open scene file '" + (dir / "nope.toml").string() + "'"), missing.err);
  CHECK_MESSAGE(missing.out.empty(), missing.out);

  // A glTF file with neither camera nor lights: two warnings, then the image.
  write_gltf(dir / "tri.gltf", "tri.bin");
  {
    std::ofstream bin(dir / "tri.bin", std::ios::binary);
    const float v[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
    bin.write(reinterpret_cast<const char*>(v), sizeof v);
  }
  Split warned = run_split(dir, {"single", (dir / "tri.gltf").string(), "-o", (dir / "tri.png").string(), "--width", "16",
                                 "--spp", "1", "--threads", "1"});
  CHECK_MESSAGE(warned.code == 0, (warned.out + warned.err));
  CHECK_MESSAGE(contains(warned.err, "warning: " + (dir / "tri.gltf").string() + ": the glTF file has no camera"), warned.err);
  CHECK_FALSE(contains(warned.out, "warning:"));
  CHECK_MESSAGE(contains(warned.out, "info: wrote " + (dir / "tri.png").string()), warned.out);
  CHECK_FALSE(contains(warned.err, "wrote"));

  // CLI11's range checks: readable bounds (not DBL_MAX spelled out), "error: " like the rest.
  Split frame = run_split(dir, {"single", scene, "-o", (dir / "x.png").string(), "--frame", "0"});
  CHECK(frame.code == 2);
  CHECK_MESSAGE(contains(frame.err, "error: --frame: 0 is too small (at least 1)"), frame.err);
  CHECK(frame.out.empty());
  Split spp = run_split(dir, {"single", scene, "-o", (dir / "x.png").string(), "--spp", "0"});
  CHECK_MESSAGE(contains(spp.err, "error: --spp: 0 is out of range (allowed: 1 to 65536)"), spp.err);
  Split fraction = run_split(dir, {"sim", "--cost-map", "c", "--cluster", "k", "--payload-ratio", "2"});
  CHECK_MESSAGE(contains(fraction.err, "error: --payload-ratio: 2 is out of range (allowed: 0 to 1)"), fraction.err);
  Split unknown = run_split(dir, {"single", scene, "-o", (dir / "x.png").string(), "--no-such-option"});
  CHECK(unknown.code == 2);
  CHECK_MESSAGE(contains(unknown.err, "error: `farm single` does not take: --no-such-option (`farm single --help` lists what it takes)"),
                unknown.err);
  fs::remove_all(dir);
}

TEST_CASE("messages: usage errors are said in plain words, and numbers are read as written") {
  // CLI11 read whole numbers with strtoull(base 0): --seed -1 and 2^64 both became 2^64-1
  // silently, and it said "A subcommand is required" for `farm bogus` (second adversarial pass).
  const fs::path dir = test_paths::temp_dir("msg_usage");
  const std::string scene = write_scene(dir, 1), out = (dir / "x.png").string();
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"bogus"}, "error: unknown command 'bogus' (commands: single, render, master, worker, relay, sim, plan, journal, keygen, serve, submit, jobs, job, pause, resume, cancel, priority, fetch, wait)"},
      {{}, "error: a command is required (single, render, master, worker, relay, sim, plan, journal, keygen, serve, submit, jobs, job, pause, resume, cancel, priority, fetch, wait)"},
      {{"single", scene, "-o", out, "--spp", "2", "--spp", "3"}, "error: --spp is given 2 times; it takes one value"},
      {{"single", scene, "-o", out, "extra", "--block", "8"}, "error: `farm single` does not take: extra --block 8"},
      {{"single", scene, "-o", out, "--seed", "-1"}, "error: --seed: '-1' is not a whole number"},
      {{"single", scene, "-o", out, "--seed", "18446744073709551616"},
       "error: --seed: 18446744073709551616 is out of range (allowed: 0 to 18446744073709551615)"},
      {{"single", scene, "-o", out, "--seed", "nan"}, "error: --seed: 'nan' is not a whole number"},
      {{"single", scene, "-o", out, "--spp", "0x10"}, "error: --spp: '0x10' is not a whole number"},
      {{"render", scene, "-o", out, "--liveness", "inf"}, "error: --liveness: 'inf' is not a whole number"},
      {{"render", scene, "-o", out, "--min-block", "64", "--block", "32"},
       "error: --min-block: 64 is larger than the block size 32 (--block)"},
      {{"render", scene, "-o", out, "--hosts", "h", "--join-timeout", "nan"},
       "error: --join-timeout: nan is out of range (allowed: 0.1 to 86400)"},
      {{"worker", "--connect", "tcp://127.0.0.1:5", "--give-up-after", "-1"},
       "error: --give-up-after: -1 is out of range (allowed: 0 to 1e+09)"},
      // Policies by name only: the enum's numbers were taken too, and named in the message.
      {{"render", scene, "-o", out, "--policy", "2"}, "error: --policy: 2 not in {fixed,seed,adaptive,factoring}"},
      {{"sim", "--cost-map", "c", "--cluster", "k", "--policy", "bogus"},
       "error: --policy: bogus not in {fixed,seed,adaptive,factoring}"},
  };
  for (const Case& c : cases) {
    Split s = run_split(dir, c.args);
    CAPTURE(c.message);
    CHECK(s.code == 2);
    CHECK_MESSAGE(contains(s.err, c.message), s.err);
    CHECK_FALSE(fs::exists(out));
  }
  // Help shows the policy names only ("ENUM:value in {adaptive->2,...} OR {2,3,0,1}" before).
  Split help = run_split(dir, {"sim", "--help"});
  CHECK_MESSAGE(contains(help.out, "--policy NAME:{fixed,seed,adaptive,factoring}=factoring"), help.out);
  CHECK_FALSE(contains(help.out, "->"));
  // An empty SLURM_JOB_ID is no allocation (it counted as one, and srun then failed).
  const char* saved_job = std::getenv("SLURM_JOB_ID");
  const std::string saved = saved_job ? saved_job : "";
  ::setenv("SLURM_JOB_ID", "", 1);
  Split slurm = run_split(dir, {"render", scene, "-o", out, "--slurm"});
  if (saved_job) ::setenv("SLURM_JOB_ID", saved.c_str(), 1); else ::unsetenv("SLURM_JOB_ID");
  CHECK(slurm.code == 2);
  CHECK_MESSAGE(contains(slurm.err, "error: --slurm: not inside a Slurm allocation (SLURM_JOB_ID is not set, or empty)"),
                slurm.err);
  // Control characters a file or an argument holds are shown, not sent to the terminal.
  const std::string hosts = (dir / "hosts.txt").string();
  std::ofstream(hosts) << "\x1b[31mred\x1b]0;title\x07\n";
  Split escaped = run_split(dir, {"render", scene, "-o", out, "--hosts", hosts});
  CHECK(escaped.code == 2);
  CHECK_MESSAGE(contains(escaped.err, "bad host name '\\x1b[31mred\\x1b]0;title\\x07'"), escaped.err);
  CHECK_FALSE(contains(escaped.err, "\x1b"));
  Split command = run_split(dir, {"\x1b[2Jbogus"});
  CHECK_MESSAGE(contains(command.err, "unknown command '\\x1b[2Jbogus'"), command.err);
  CHECK_FALSE(contains(command.err, "\x1b"));
  // A leading zero is decimal, not octal: --spp 010 renders with 10 samples, as `--spp 10` does.
  const std::string stats = (dir / "s.json").string();
  Split ten = run_split(dir, {"single", scene, "-o", out, "--spp", "010", "--stats", stats, "--width", "8", "--height", "8"});
  CHECK_MESSAGE(ten.code == 0, ten.err);
  CHECK_MESSAGE(contains(read_text(stats), "\"spp\": 10"), read_text(stats));
  fs::remove_all(dir);
}

TEST_CASE("messages: a glTF file's URIs stay inside the scene's folders, for single and render alike") {
  const fs::path dir = test_paths::temp_dir("msg_gltf_uri");
  fs::create_directories(dir / "a" / "b");
  const std::string gltf = (dir / "a" / "b" / "s.gltf").string();

  write_gltf(gltf, "/etc/passwd");  // exists, but no glTF file may name an absolute path
  Split absolute = run_split(dir, {"single", gltf, "-o", (dir / "x.png").string()});
  CHECK(absolute.code == 2);
  CHECK_MESSAGE(contains(absolute.err, "error: " + gltf + ": URI '/etc/passwd' is an absolute path; glTF files must refer to their files relatively"),
                absolute.err);
  CHECK_FALSE(contains(absolute.err, "not found"));

  // Climbing out: refused by single as the master's asset manifest refuses it for render.
  {
    std::ofstream bin(dir / "up.bin", std::ios::binary);
    bin << std::string(36, '\0');
  }
  write_gltf(gltf, "../../up.bin");
  const std::string message = "URI '../../up.bin' leads to '" + (dir / "up.bin").string() +
                              "', outside the scene's folder and every asset folder (--assets, FARM_ASSETS)";
  Split single = run_split(dir, {"single", gltf, "-o", (dir / "x.png").string()});
  CHECK(single.code == 2);
  CHECK_MESSAGE(contains(single.err, message), single.err);
  Split render = run_split(dir, {"render", gltf, "-o", (dir / "x.png").string(), "--workers", "1"});
  CHECK(render.code == 2);
  CHECK_MESSAGE(contains(render.err, message), render.err);
  // An --assets folder is a legitimate root: the same file is then read (and the image made).
  Split rooted = run_split(dir, {"single", gltf, "-o", (dir / "x.png").string(), "--assets", dir.string(), "--width", "8",
                                 "--spp", "1", "--threads", "1"});
  CHECK_MESSAGE(rooted.code == 0, rooted.err);
  fs::remove_all(dir);
}

TEST_CASE("messages: a symbolic link or a path out of the scene's folder is refused alike by single and render") {
  // The rule was judged on the spelling only: a link inside the folder led anywhere (the master
  // would ship ~/.ssh/id_rsa to its workers), a TOML mesh outside the folder rendered with single
  // and was refused by render, and an MTL file outside was read before it was refused, so its
  // text could surface in a parse error (second adversarial pass).
  const fs::path dir = test_paths::temp_dir("msg_links");
  const fs::path scene_dir = dir / "scene", outside = dir / "outside";
  fs::create_directories(scene_dir);
  fs::create_directories(outside);
  std::ofstream(outside / "tri.obj") << "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n";
  std::ofstream(outside / "secret.mtl") << "SECRET-TEXT not an mtl statement\nmap_Kd SECRET-NAME.png\n";
  fs::create_symlink(outside / "tri.obj", scene_dir / "linked.obj");
  auto scene_with_mesh = [&](const std::string& name, const std::string& mesh) {
    const std::string path = (scene_dir / name).string();
    std::ofstream(path) << "[render]\nwidth = 8\nheight = 8\nspp = 1\n[camera]\nposition = [0, 0, 3]\nlook_at = [0, 0, 0]\n"
                        << "[[material]]\nname = \"m\"\ntype = \"diffuse\"\n[[object]]\ntype = \"mesh\"\npath = \"" << mesh
                        << "\"\nmaterial = \"m\"\n";
    return path;
  };
  const std::string out = (dir / "x.png").string();
  const std::string linked = scene_with_mesh("linked.toml", "linked.obj");
  const std::string link_message = "mesh file '" + (scene_dir / "linked.obj").string() + "' is a symbolic link to '" +
                                   (outside / "tri.obj").string() + "', outside the scene's folder and every asset folder";
  const std::string far = scene_with_mesh("far.toml", (outside / "tri.obj").string());
  const std::string far_message = "mesh file '" + (outside / "tri.obj").string() +
                                  "' is outside the scene's folder and every asset folder (--assets, FARM_ASSETS): the "
                                  "farm ships only files under those folders to its workers; add the file's folder with --assets";
  for (const std::string command : {"single", "render"}) {
    CAPTURE(command);
    for (const auto& [scene, message] : {std::pair{linked, link_message}, std::pair{far, far_message}}) {
      std::vector<std::string> args = {command, scene, "-o", out};
      if (command == std::string("render")) args.insert(args.end(), {"--workers", "1"});
      Split s = run_split(dir, args);
      CHECK(s.code == 2);
      CHECK_MESSAGE(contains(s.err, message), s.err);
      CHECK_FALSE(fs::exists(out));
    }
  }
  // With the outside folder given as an asset folder, both are read and rendered.
  Split rooted = run_split(dir, {"single", far, "-o", out, "--assets", outside.string()});
  CHECK_MESSAGE(rooted.code == 0, rooted.err);
  // An OBJ in the folder whose mtllib leads out: refused before the MTL file is opened.
  std::ofstream(scene_dir / "mesh.obj") << "mtllib ../outside/secret.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n";
  Split mtl = run_split(dir, {"single", scene_with_mesh("mtl.toml", "mesh.obj"), "-o", out});
  CHECK(mtl.code == 2);
  CHECK_MESSAGE(contains(mtl.err, "mtllib file '" + (outside / "secret.mtl").string() +
                                      "' is outside the scene's folder and every asset folder"),
                mtl.err);
  CHECK_FALSE(contains(mtl.err, "SECRET"));
  fs::remove_all(dir);
}

TEST_CASE("messages: a FIFO is refused without blocking, wherever a file is read") {
  const fs::path dir = test_paths::temp_dir("msg_fifo");
  const std::string fifo = (dir / "fifo.toml").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const std::string out = (dir / "x.png").string();
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"single", fifo, "-o", out}, "error: scene file '" + fifo + "' is not a regular file"},
      {{"sim", "--cost-map", fifo, "--cluster", fifo}, "error: cost map '" + fifo + "' is a FIFO, not a regular file"},
      {{"worker", "--connect", "tcp://127.0.0.1:1", "--key", fifo, "--master-key", fifo},
       "key file '" + fifo + "' is a FIFO, not a regular file"},
      {{"render", write_scene(dir, 1), "-o", out, "--hosts", fifo}, "host file '" + fifo + "' is a FIFO, not a regular file"},
      {{"journal", fifo}, "the journal '" + fifo + "' is not a regular file"},  // it used to block
  };
  // What is not there at all gets the OS's reason too.
  Split missing = run_split(dir, {"single", (dir / "nope.toml").string(), "-o", out});
  CHECK(missing.code == 2);
  CHECK_MESSAGE(contains(missing.err, "error: cannot open scene file '" + (dir / "nope.toml").string() + "': No such file or directory"),
                missing.err);
  for (const Case& c : cases) {
    Split s = run_split(dir, c.args, 10);
    CHECK_MESSAGE(s.code == 2, c.args.front() << ": " << (s.out + s.err));  // -1: it blocked
    CHECK_MESSAGE(contains(s.err, c.message), s.err);
  }
  fs::remove_all(dir);
}

TEST_SUITE_END();
