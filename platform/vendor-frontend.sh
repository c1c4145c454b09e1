#!/usr/bin/env bash
# Rebuild static/vendor/ from the npm packages (run by hand when a version changes; the
# files are committed, so neither the server nor CI needs npm or the network).
#
#   three.js        0.187.0  MIT           static/vendor/three/
#   wavesurfer.js   8.0.1    BSD-3-Clause  static/vendor/wavesurfer/
#
# One change to upstream text: OrbitControls imports the bare specifier 'three', which a
# browser resolves only through an import map (an inline script, which the
# Content-Security-Policy forbids), so the copy imports '../three.module.js' instead.
set -euo pipefail
cd "$(dirname "$0")/.."
THREE=0.187.0
WAVESURFER=8.0.1
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "three@$THREE" "wavesurfer.js@$WAVESURFER" >/dev/null)
mkdir -p "$work/three" "$work/wavesurfer"
tar xzf "$work/three-$THREE.tgz" -C "$work/three"
tar xzf "$work/wavesurfer.js-$WAVESURFER.tgz" -C "$work/wavesurfer"

out=static/vendor/three
rm -rf "$out" && mkdir -p "$out/addons"
cp "$work/three/package/build/three.module.js" "$work/three/package/build/three.core.js" "$out/"
cp "$work/three/package/LICENSE" "$out/LICENSE"
sed "s#from 'three'#from '../three.module.js'#" \
  "$work/three/package/examples/jsm/controls/OrbitControls.js" > "$out/addons/OrbitControls.js"
echo "three.js $THREE (npm package 'three'), MIT licence: see LICENSE" > "$out/VERSION"

out=static/vendor/wavesurfer
rm -rf "$out" && mkdir -p "$out/plugins"
cp "$work/wavesurfer/package/dist/wavesurfer.esm.js" "$out/"
cp "$work/wavesurfer/package/dist/plugins/regions.esm.js" "$out/plugins/"
cp "$work/wavesurfer/package/LICENSE" "$out/LICENSE"
echo "wavesurfer.js $WAVESURFER (npm package 'wavesurfer.js'), BSD-3-Clause: see LICENSE" > "$out/VERSION"
echo "vendored three.js $THREE and wavesurfer.js $WAVESURFER into static/vendor/"
