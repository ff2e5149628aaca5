"""The farm CLI's flag names are spelled in cli/ (where they are declared) and, for now, in the
messages of the layers listed in STILL_SPELLED (and two renderer files); every other layer of farm/
and renderer/ words its messages without them,
so renaming a flag touches cli/ and those layers only. The test reads the flag names from the
add_option/add_flag calls in farm/cli/ and looks for them in the string literals of farm/'s other
layers."""
import os
import re
import unittest

import toolbox  # noqa: F401  (tools/ as the import root, as the tools have it)
from farmtools import ROOT  # noqa: E402
FARM = os.path.join(ROOT, "farm")
DECLARED = re.compile(r'add_(?:option|flag)\(\s*"([^"]+)"')
LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
# Layers whose user messages still name flags (a hint such as "pass --resume"), and launch/,
# which writes the command line of the workers it starts.
STILL_SPELLED = {"job", "master", "live", "worker", "assets", "launch"}
# Files that write another program's command line, whose flags share names with ours.
OTHER_PROGRAMS = {"backend/blender_renderer.cpp": "the arguments of Blender's bridge script",
                  "backend/sandbox.cpp": "bubblewrap's command line"}
# The renderer names the asset folders as the farm's --assets sets them (its one CLI hint).
RENDERER_SPELLED = {"scene/asset_search.cpp", "scene/scene_parser.cpp"}


def cli_flags():
    flags = set()
    for name in os.listdir(os.path.join(FARM, "cli")):
        if name.endswith(".cpp"):
            with open(os.path.join(FARM, "cli", name), encoding="utf-8") as f:
                for m in DECLARED.finditer(f.read()):
                    for part in m.group(1).split(","):
                        part = part.strip().lstrip("!")
                        if part.startswith("--"):
                            flags.add(part)
    return flags


def spelled_flags(path, shown, ours):
    """'shown:line: --flag' for each of our flags in a string literal of a code line of `path`."""
    found = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if line.lstrip().startswith("//"):
                continue
            for literal in LITERAL.findall(line):
                found += [f"{shown}:{number}: {flag}" for flag in re.findall(r"--[a-z][a-z-]*", literal) if flag in ours]
    return found


class FlagNamesTest(unittest.TestCase):
    def test_flags_are_found(self):
        flags = cli_flags()
        for flag in ("--allow", "--master-key", "--insecure", "--bind", "--spp"):
            self.assertIn(flag, flags)

    def test_layers_below_the_cli_do_not_spell_its_flags(self):
        # The renderers' own flags (povray --version, blender --python) are not the farm's.
        ours = cli_flags() - {"--version", "--python"}
        found = []
        for library, skipped in (("farm", set(OTHER_PROGRAMS)), ("renderer", RENDERER_SPELLED)):
            top = os.path.join(ROOT, library)
            for directory, _, names in sorted(os.walk(top)):
                rel_dir = os.path.relpath(directory, top)
                layer = rel_dir.split(os.sep)[0]
                if library == "farm" and (layer in ("cli", ".") or layer in STILL_SPELLED):
                    continue
                for name in sorted(names):
                    rel = os.path.normpath(os.path.join(rel_dir, name))
                    if name.endswith((".h", ".cpp")) and rel not in skipped:
                        found += spelled_flags(os.path.join(directory, name), f"{library}/{rel}", ours)
        self.assertEqual(found, [], "flag names outside cli/:\n" + "\n".join(found))


if __name__ == "__main__":
    unittest.main()
