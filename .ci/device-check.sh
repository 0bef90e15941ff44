#!/bin/bash
# The GPU device check of session 22 (docs/BENCHMARKS.md, "On a 16-core Xeon with an NVIDIA
# H100"): the GPU tests on a real adapter, headless renders, the GPU skinning time and the
# dressed-ninja bench at 1..16 threads, in one call of the device tool. CI never runs it.
#
# Prepare on the build machine, in the repo root (both folders git-ignored locally through
# .git/info/exclude, and named in the call's `carry`):
#   .gl/   the Vulkan/GL loader packages: see the device tool's README
#          (apt-get download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2);
#   .dev/  bins.tar.xz: stripped release builds (default features) of the drape binary and of
#          the test binaries gpu_context, gpu_skin, gpu_render, gpu_character
#          (`cargo test --release --no-run --test gpu_…`, then `strip -o`), named without their
#          hash; shared/rigs: a copy of ../shared/rigs (the tests read ../shared, which does not
#          travel).
# The test binaries look for the repo and ../shared where they were built (CARGO_MANIFEST_DIR:
# /work/main on the build machine); the script links those paths to the copy it runs in.
# Then: run `bash .ci/device-check.sh` with carry [".gl", ".dev"] (about 100 s on an H100).
set -u
R=$OUT/r; mkdir -p $R
exec > >(tee $R/log.txt) 2>&1
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
nvidia-smi -L; nproc; lscpu | grep -i "model name"; cat /etc/os-release | head -1
ls /usr/share/vulkan/icd.d /etc/vulkan/icd.d /usr/local/nvidia/share/vulkan/icd.d 2>&1
if [ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ]; then
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
fi
mkdir -p /work; [ -e /work/main ] || ln -s "$PWD" /work/main; [ -e /work/shared ] || ln -s "$PWD/.dev/shared" /work/shared
ls -la /work
mkdir -p /tmp/b; tar xJf .dev/bins.tar.xz -C /tmp/b
cd /work/main
export DRAPE_REQUIRE_GPU=1 DRAPE_NO_SETTINGS=1 TMPDIR=$R
T="timeout 150"
echo "=== gpu_context"; $T /tmp/b/gpu_context --include-ignored --nocapture
echo "=== gpu_skin"; $T /tmp/b/gpu_skin --include-ignored --nocapture --test-threads 1
echo "=== gpu_render"; $T /tmp/b/gpu_render --nocapture
echo "=== gpu_character"; $T /tmp/b/gpu_character --nocapture
D=/tmp/b/drape
echo "=== render ninja"; $T $D render --garments all --clip roundhouse_kick --frames 24..=24 --out /tmp/rn && cp /tmp/rn/frame_0024.png $R/ninja.png
echo "=== render robot"; $T $D render --rig /work/shared/rigs/cc0/RobotExpressive/RobotExpressive.glb --garments hakama,sash,headband --clip Dance --frames 45..=45 --out /tmp/rr && cp /tmp/rr/frame_0045.png $R/robot.png
echo "=== render whole kick, gif"; /usr/bin/time -v $T $D render --garments all --clip roundhouse_kick --no-png --gif $R/kick.gif 2>&1 | grep -v "^\s*\(Minor\|Major\|Vol\|Invol\|Swaps\|File\|Socket\|Signals\|Page\|Average\|Exit\)"
for n in 1 2 4 8 16; do
  rep=1; [ $n = 16 ] && rep=5; [ $n = 8 ] && rep=3
  echo "=== bench scene, $n threads"; RAYON_NUM_THREADS=$n $T $D bench scene --model both --repeat $rep
done
cd $OUT && tar czf all.tgz r && cp r/log.txt r/*.png . 2>/dev/null; rm -rf r
ls -la $OUT
