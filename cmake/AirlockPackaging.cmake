# CPack: the Debian package `airlock` (`cpack -G DEB` in the build directory). See
# docs/packaging.md. Included at the end of the top-level CMakeLists.txt, after every install rule;
# installers/CMakeLists.txt provides the maintainer scripts and the package metadata.

set(CPACK_PACKAGE_NAME airlock)
set(CPACK_PACKAGE_VENDOR "The Airlock developers")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${AIRLOCK_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "microVM sandboxes for untrusted coding agents")
set(CPACK_PACKAGE_HOMEPAGE_URL "${AIRLOCK_HOMEPAGE_URL}")
set(CPACK_GENERATOR DEB)
set(CPACK_OUTPUT_FILE_PREFIX "${CMAKE_BINARY_DIR}/packages")

# Packages install into /usr whatever CMAKE_INSTALL_PREFIX the build was configured with. With
# DESTDIR staging, CMAKE_INSTALL_PREFIX is /usr while the install rules run, so the airlockd path
# written into airlockd.service is the installed one.
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_INSTALL_PREFIX /usr)
set(CPACK_SET_DESTDIR ON)
set(CPACK_STRIP_FILES ON)

# ---- Debian ----
set(CPACK_DEBIAN_PACKAGE_NAME airlock)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${AIRLOCK_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "${AIRLOCK_HOMEPAGE_URL}")
# The extended description; CPack puts the summary first and indents every line (deb-control(5)).
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "Airlock manages the microVM sandboxes in which people run untrusted coding
agents. The airlockd helper runs as a hardened system service and boots each
sandbox as a QEMU microvm guest under an unprivileged user and QEMU's seccomp
sandbox. The Airlock window and the airlockctl command line talk to it over a
socket that only members of the airlock group may use.

The default guest image (a Debian kernel and a busybox initramfs) is built
from Debian packages when the package is installed.")

# Libraries (Qt 6, libssh, spdlog, libvterm, libnftables, ldns, zstd, OpenSSL...) come from
# dpkg-shlibdeps on the installed executables; what they run or load at run time is listed here.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(_airlock_depends
    # the VMM, the guest's busybox, and the tools of the guest image builder (build-image.sh;
    # gzip, grep and dpkg-deb are essential)
    "qemu-system-x86"
    # qemu-img makes each sandbox's root disk overlay
    "qemu-utils"
    "busybox-static"
    "cpio"
    "xz-utils"
    "zstd"
    "apt"
    # Qt plugins, invisible to dpkg-shlibdeps: the SQLite driver (the registry) and the SVG
    # image and icon engines (the window's icons)
    "libqt6sql6-sqlite"
    "libqt6svg6"
    # the Public Suffix List data libpsl reads (policy wildcards on public suffixes are refused)
    "publicsuffix"
    # systemd-sysusers and systemd-tmpfiles in postinst; the units; deb-systemd-helper
    "systemd"
    "init-system-helpers (>= 1.54~)")
list(JOIN _airlock_depends ", " CPACK_DEBIAN_PACKAGE_DEPENDS)
# Wayland sessions: Qt's Wayland platform plugin; nftables: the nft tool for inspecting tables.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "qt6-wayland, nftables")
# The Debian guest image (build-image.sh --variant debian) needs debootstrap; the default does not.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "debootstrap")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${AIRLOCK_DEBIAN_CONTROL_EXTRA})
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

include(CPack)
