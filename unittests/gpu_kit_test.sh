#!/bin/sh
# The GPU kit without a GPU. scripts/gpu-bundle packages this build's gpuparanoia; the kit, moved to
# another folder, runs from a clean environment (env -i):
# - the libraries it carries are the ones loaded (fmt, the Vulkan loader), under its 30 MiB;
# - `devices` lists the software Vulkan device;
# - gpu-audit with no NVIDIA device says so (exit 1) and still records the environment;
# - gpu-audit on the software Vulkan device in place of an NVIDIA one: a budget too short to start a
#   phase leaves them to the next call (exit 75), the next call does them (exit 0: a complete quick
#   result, summary.md with its table row, the kernels' SPIR-V in machine/code), a third finds nothing
#   left (exit 0, the result untouched).
#   With the lavapipe 26 fixture (GPUPARANOIA_LAVAPIPE26_ICD, README) the device has cooperative
#   matrices: each configuration is a phase of its own, its row in summary.md, its layout check run
#   first and listed there.
# Usage: gpu_kit_test.sh SOURCE_DIR BUILD_DIR
set -eu
src=$1
build=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
expect_exit() {  # expect_exit CODE command...
  want=$1
  shift
  set +e
  "$@"
  got=$?
  set -e
  [ "$got" -eq "$want" ] || fail "$* exited $got, not $want"
}
icd=${GPUPARANOIA_LAVAPIPE26_ICD:-}
[ -z "$icd" ] || [ -f "$icd" ] || icd=""
clean() { env -i PATH=/usr/bin:/bin ${icd:+VK_DRIVER_FILES=$icd} "$@"; }

"$src/scripts/gpu-bundle" --build-dir "$build" "$work/made/kit"
mkdir "$work/elsewhere"
mv "$work/made/kit" "$work/elsewhere/kit"
rm -rf "$work/made"
kit=$work/elsewhere/kit
[ -x "$kit/gpu-audit" ] || fail "no gpu-audit in the kit"
size=$(du -sb "$kit" | cut -f1)
[ "$size" -le $((30 * 1024 * 1024)) ] || fail "the kit is $size bytes"
carried="$kit/bin/../lib"  # as the RPATH \$ORIGIN/../lib resolves
clean ldd "$kit/bin/gpuparanoia" | grep -q "libfmt.so.[0-9]* => $carried/" || fail "libfmt is not the kit's"

clean "$kit/bin/gpuparanoia" devices --all >"$work/devices.txt" || fail "devices failed"
grep -q "^vulkan:0 " "$work/devices.txt" || fail "no vulkan:0 in: $(cat "$work/devices.txt")"
grep -q "Vulkan loader $carried/libvulkan.so.1" "$work/devices.txt" || fail "the Vulkan loader is not the kit's"

expect_exit 1 clean "$kit/gpu-audit" --budget 100 "$work/none"
grep -q "^- Vulkan:" "$work/none/environment.md" || fail "environment.md does not say which Vulkan driver"

expect_exit 75 clean "$kit/gpu-audit" --device vulkan:0 --quick-only --budget 70 "$work/out"
[ ! -f "$work/out/quick/vulkan-0-scalar.json" ] || fail "a phase ran without the time for it"
expect_exit 0 clean "$kit/gpu-audit" --device vulkan:0 --quick-only --budget 600 "$work/out"
result=$work/out/quick/vulkan-0-scalar.json
grep -q '"complete": *true' "$result" || fail "the quick result is not complete"
for f in quick/vulkan-0-scalar.md quick/vulkan-0-scalar.txt environment.md machine/devices.json summary.md; do
  [ -s "$work/out/$f" ] || fail "no $f"
done
grep -q "^| vulkan:0 | " "$work/out/summary.md" || fail "summary.md has no row of vulkan:0"
ls "$work/out/machine/code/vulkan_0/"*.spv >/dev/null 2>&1 || fail "no SPIR-V kept in machine/code/vulkan_0 (run --code)"
grep -q '"code": ".*machine/code/vulkan_0"' "$result" || fail "the result does not say where its kernels' code is"
if [ -n "$icd" ]; then
  configs=$(awk '/^[^ ]/ {id = $1} id == "vulkan:0" && $1 == "mma:"' "$work/out/machine/devices.txt" | wc -l)
  [ "$configs" -gt 0 ] || fail "the lavapipe 26 device lists no cooperative matrix"
  [ "$(ls "$work"/out/quick/vulkan-0-mma/*.json | wc -l)" -eq "$configs" ] || fail "not one result per configuration"
  grep -q "^| vulkan:0 | .* | [0-9]*x[0-9]*x[0-9]*:" "$work/out/summary.md" || fail "summary.md has no MMA row"
  [ "$(grep -c '^- vulkan-0 [0-9]*x[0-9]*x[0-9]*:.*\[mma.layout\]' "$work/out/summary.md")" -eq "$configs" ] ||
    fail "summary.md does not give each configuration's layout check: $(cat "$work/out/summary.md")"
fi
before=$(cksum <"$result")
expect_exit 0 clean "$kit/gpu-audit" --device vulkan:0 --quick-only --budget 600 "$work/out"
[ "$(cksum <"$result")" = "$before" ] || fail "a third call ran the done phase again"
echo "the kit ($((size / 1024)) KiB) ran from $kit"
