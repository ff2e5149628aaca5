# What `cmake --install` puts where, and the Debian package CPack makes of it (`cpack -G DEB` in a
# build folder configured with -DCMAKE_INSTALL_PREFIX=/usr, as tools/package/build_deb.sh does):
# the farm binary (its live page and Blender bridge are built in), the bundled scenes, the docs,
# and systemd units for a worker that stays and for the farm service (farm serve).
include(GNUInstallDirs)

install(TARGETS farm RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/scenes/ DESTINATION ${CMAKE_INSTALL_DATADIR}/farm/scenes)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)
# The unit names the installed binary and settings: /usr/bin and /etc/default with the prefix /usr
# (a package's; GNUInstallDirs maps /usr's etc to /etc), /usr/local/... with the default prefix.
foreach(unit farm-worker farm-serve)
  configure_file(${CMAKE_CURRENT_LIST_DIR}/${unit}.service.in ${PROJECT_BINARY_DIR}/${unit}.service @ONLY)
  # systemd's unit folder under the prefix (/usr/lib/systemd/system in the package).
  install(FILES ${PROJECT_BINARY_DIR}/${unit}.service DESTINATION lib/systemd/system)
  # The unit's settings: a conffile of the package (dpkg keeps the admin's edits on upgrade).
  install(FILES ${CMAKE_CURRENT_LIST_DIR}/${unit}.default DESTINATION ${CMAKE_INSTALL_FULL_SYSCONFDIR}/default
          RENAME ${unit})
endforeach()

set(CPACK_PACKAGE_NAME farm)
set(CPACK_PACKAGE_VENDOR "the farm project")
set(CPACK_PACKAGE_CONTACT "farm maintainers <farm@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "distributed ray-tracing render farm with adaptive block sizing")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "Splits one image or an animation across many machines: a master hands out image
blocks over ZeroMQ to Embree-based (or POV-Ray, or Blender Cycles) workers and
assembles an image byte-identical to a single-node render.")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # farm_0.1.0_amd64.deb
set(CPACK_DEBIAN_PACKAGE_SECTION graphics)
# The shared libraries the binary links, as dpkg-shlibdeps finds them (libembree3, libOpenImageIO,
# libzmq5, ...), plus what it runs: bubblewrap confines POV-Ray and Blender; they are optional.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "bubblewrap")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "povray, povray-includes, blender")
# Files under /etc are the admin's: dpkg asks before replacing an edited one.
configure_file(${CMAKE_CURRENT_LIST_DIR}/conffiles.in ${PROJECT_BINARY_DIR}/conffiles @ONLY)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${PROJECT_BINARY_DIR}/conffiles)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
