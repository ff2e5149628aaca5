#!/usr/bin/env bash
# Measures candidate speed-ups of the README's first command INSIDE A THROWAWAY CLONE (the fresh
# root of first_command_fresh.sh): edits that clone's tools/setup.sh and farm/CMakeLists.txt,
# then runs first_command_stages.sh (issue 40, item 10; results/first_command.md).
#   first_command_variant.sh [unsafe-io] [main-in-cli] [farm-O2] [-- CMAKE_ARGS...]
#   unsafe-io    apt-get -o Dpkg::Options::=--force-unsafe-io (dpkg skips its fsync per file)
#   main-in-cli  cli/main.cpp compiled in farm_cli's unity batch (CLI11 and spdlog parsed and
#                instantiated once, not twice); the executable gets an empty source and main()
#                comes from libfarm_cli.a (fine for this measurement; the tests, which link
#                farm_cli with their own main, would need main() renamed instead)
#   farm-O2      -O2 for the farm/ layers (the renderer stays -O3)
# Refuses to run in a checkout that is not /root/farm of a throwaway root.
set -euo pipefail
cd "$(dirname "$0")/../.."
[[ "$(pwd)" == /root/farm && ! -d /work/main ]] || { echo "only in a throwaway root's /root/farm" >&2; exit 2; }
while [[ $# -gt 0 && "$1" != "--" ]]; do
  case "$1" in
    unsafe-io) sed -i 's/apt-get install -y -qq/apt-get install -o Dpkg::Options::=--force-unsafe-io -y -qq/' tools/setup.sh ;;
    main-in-cli)
      sed -i 's|  list(FILTER sources EXCLUDE REGEX ".\*/cli/main\\\\.cpp\$")|  # main.cpp stays in farm_cli (variant main-in-cli)|' farm/CMakeLists.txt
      sed -i 's|^add_executable(farm cli/main.cpp)|file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/empty_main.cpp "")\nadd_executable(farm ${CMAKE_CURRENT_BINARY_DIR}/empty_main.cpp)|' farm/CMakeLists.txt ;;
    farm-O2) sed -i 's|^  set_target_properties(${name} PROPERTIES UNITY_BUILD ${FARM_UNITY})$|&\n  target_compile_options(${name} PRIVATE -O2)|' farm/CMakeLists.txt ;;
    *) echo "unknown variant $1" >&2; exit 2 ;;
  esac
  shift
done
[[ "${1:-}" == "--" ]] && shift
grep -n "variant main-in-cli\|-O2)\|unsafe-io\|empty_main" farm/CMakeLists.txt tools/setup.sh >&2 || true
exec bash tools/bench/first_command_stages.sh "$@"
