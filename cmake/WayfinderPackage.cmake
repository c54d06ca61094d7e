# make package (cpack -G DEB in the build directory): two Debian packages.
#   wayfinder-client-dev  the client library, headers, CMake and pkg-config
#                         files (component "client", cmake/WayfinderInstall.cmake)
#   wayfinder-server      wayfinder-server, wayfinder (CLI), wayfinder-load,
#                         wayfinder-probe, the systemd unit wayfinder.service
#                         with its conffile /etc/default/wayfinder, a system
#                         user "wayfinder" owning /var/lib/wayfinder
# Depends come from dpkg-shlibdeps on the programs (server); the -dev package
# depends on the -dev packages a program linking the static library needs.
install(TARGETS wayfinder-server wayfinder wayfinder-load wayfinder-probe
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT server)
install(FILES ${PROJECT_SOURCE_DIR}/packaging/wayfinder.service
  DESTINATION lib/systemd/system COMPONENT server)
# Absolute: /etc, not <prefix>/etc. `cmake --install` of this component
# writes there too; the tests install the client component only.
install(FILES ${PROJECT_SOURCE_DIR}/packaging/wayfinder.default
  DESTINATION /etc/default RENAME wayfinder COMPONENT server)
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/NOTICE
              ${PROJECT_SOURCE_DIR}/THIRD_PARTY.md ${PROJECT_SOURCE_DIR}/docs/operations.md
  DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/wayfinder-server COMPONENT server)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME wayfinder)
set(CPACK_PACKAGE_VENDOR "The Wayfinder Authors")
set(CPACK_PACKAGE_CONTACT "The Wayfinder Authors <wayfinder@localhost>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Pathfinding gRPC service for game servers")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES TRUE)
set(CPACK_COMPONENTS_ALL client server)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://example.invalid/wayfinder")

set(CPACK_DEBIAN_CLIENT_PACKAGE_NAME wayfinder-client-dev)
set(CPACK_DEBIAN_CLIENT_PACKAGE_SECTION libdevel)
set(CPACK_COMPONENT_CLIENT_DESCRIPTION
  "Wayfinder C++ client library (static), headers, CMake and pkg-config files.\nfind_package(Wayfinder) gives the target Wayfinder::client; pkg-config:\nwayfinder-client.")
set(CPACK_DEBIAN_CLIENT_PACKAGE_DEPENDS
  "libgrpc++-dev (>= 1.51), libprotobuf-dev (>= 3.21), libabsl-dev (>= 0~20220623), zlib1g-dev")

set(CPACK_DEBIAN_SERVER_PACKAGE_NAME wayfinder-server)
set(CPACK_COMPONENT_SERVER_DESCRIPTION
  "Wayfinder pathfinding gRPC service, CLI, load generator and probe.\nRuns as the systemd service wayfinder.service (settings in\n/etc/default/wayfinder, maps in /var/lib/wayfinder).")
set(CPACK_DEBIAN_SERVER_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_SERVER_PACKAGE_DEPENDS "adduser")
set(CPACK_DEBIAN_SERVER_PACKAGE_CONTROL_EXTRA
  ${PROJECT_SOURCE_DIR}/packaging/deb/postinst
  ${PROJECT_SOURCE_DIR}/packaging/deb/prerm
  ${PROJECT_SOURCE_DIR}/packaging/deb/postrm
  ${PROJECT_SOURCE_DIR}/packaging/deb/conffiles)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
