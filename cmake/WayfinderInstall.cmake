# `cmake --install` of the client library: the library and the generated
# API code (static), the public header, the API headers, a CMake package
# (find_package(Wayfinder) -> Wayfinder::client) and a pkg-config file
# (wayfinder-client). Component "client"; the programs and the systemd unit
# are component "server" (cmake/WayfinderPackage.cmake makes a Debian
# package of each).
include(CMakePackageConfigHelpers)
set(WAYFINDER_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Wayfinder)

install(TARGETS wayfinder_client wayfinder_proto EXPORT WayfinderTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT client
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_SOURCE_DIR}/client/client.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/wayfinder/client COMPONENT client)
install(FILES ${PROJECT_BINARY_DIR}/proto/gen/wayfinder/v1/wayfinder.pb.h
              ${PROJECT_BINARY_DIR}/proto/gen/wayfinder/v1/wayfinder.grpc.pb.h
              ${PROJECT_SOURCE_DIR}/proto/wayfinder/v1/wayfinder.proto
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/wayfinder/v1 COMPONENT client)
install(EXPORT WayfinderTargets NAMESPACE Wayfinder:: DESTINATION ${WAYFINDER_CMAKE_DIR}
  COMPONENT client)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/WayfinderConfig.cmake.in
  ${PROJECT_BINARY_DIR}/WayfinderConfig.cmake INSTALL_DESTINATION ${WAYFINDER_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/WayfinderConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/WayfinderConfig.cmake
              ${PROJECT_BINARY_DIR}/WayfinderConfigVersion.cmake
  DESTINATION ${WAYFINDER_CMAKE_DIR} COMPONENT client)

# pkg-config, relocatable: the prefix is found from the .pc file's place.
file(RELATIVE_PATH WF_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
configure_file(${PROJECT_SOURCE_DIR}/cmake/wayfinder-client.pc.in
  ${PROJECT_BINARY_DIR}/wayfinder-client.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/wayfinder-client.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT client)

install(FILES ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/NOTICE
              ${PROJECT_SOURCE_DIR}/THIRD_PARTY.md
  DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/wayfinder-client-dev COMPONENT client)
