#!/usr/bin/env bash
# Copyright 2026 gr-spead authors
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Builds gr-spead's Debian packages (dpkg-buildpackage -b -us -uc) from a copy of the
# source tree, then checks them as installed into /usr: the .debs are unpacked over
# /usr through an overlay in a private mount namespace (so this machine's /usr is not
# touched), where test_install.py --installed-prefix /usr runs the downstream project,
# pkg-config, Python and example checks. Needs root (the suite's network tests do too).
#
#     test_debian.sh SOURCE_DIR
set -euo pipefail
src="$(cd "$1" && pwd)"
work="$(mktemp -d /tmp/gr-spead-deb.XXXXXX)"
trap 'rm -rf "$work"' EXIT

version="$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version)"
tree="$work/gr-spead-$version"
mkdir "$tree"
tar -C "$src" --exclude=./.git --exclude=./build --exclude='./build-*' \
    --exclude='./obj-*' --exclude='__pycache__' -cf - . | tar -C "$tree" -xf -

start=$(date +%s)
echo "$ dpkg-buildpackage -b -us -uc   (in $tree)"
if ! (cd "$tree" && DEB_BUILD_OPTIONS="parallel=$(nproc)" dpkg-buildpackage -b -us -uc) \
    >"$work/build.log" 2>&1; then
    tail -80 "$work/build.log"
    echo "FAIL: dpkg-buildpackage (log above)"
    exit 1
fi
echo "dpkg-buildpackage took $(($(date +%s) - start)) s"

root="$work/root"
for package in gr-spead gr-spead-dev; do
    deb="$work/${package}_${version}_$(dpkg --print-architecture).deb"
    if [ ! -f "$deb" ]; then
        ls "$work"
        echo "FAIL: no $deb"
        exit 1
    fi
    echo "== $(basename "$deb"): $(dpkg-deb -f "$deb" Depends)"
    dpkg-deb -x "$deb" "$root"
done
# The -dev package holds what building against gr-spead needs, and only that.
dev_files="$(dpkg-deb -c "$work/gr-spead-dev_${version}_"*.deb)"
for needed in include/gnuradio/spead/source.h pkgconfig/gnuradio-spead.pc \
    gnuradio-speadConfig.cmake libgnuradio-spead.so; do
    if ! grep -q "$needed" <<<"$dev_files"; then
        echo "FAIL: gr-spead-dev lacks $needed"
        exit 1
    fi
done

unshare --mount sh -c "mount -t overlay overlay -o lowerdir=$root/usr:/usr /usr &&
    exec /usr/bin/python3 $src/tests/install/test_install.py --installed-prefix /usr \\
        --steps cmake,pkgconfig,python,example,cpp"
