#!/usr/bin/env bash
# Coverage-guided fuzzing of drape with AFL++ (cargo-afl), on the stable toolchain.
#
#   fuzz/run.sh TARGET [EXECS]   fuzz TARGET (gltf | fbx | scene | pose) until EXECS executions
#                                (default: until Ctrl-C); findings in fuzz/out/TARGET/default/
#   fuzz/run.sh cmin TARGET      minimise the committed corpus plus what a run found back into
#                                fuzz/corpus/TARGET (afl-cmin; then commit it)
#   fuzz/run.sh replay TARGET FILE...   run inputs through the instrumented target (reproduce
#                                a crash: the panic message and backtrace are printed)
#
# Once per machine: `cargo install cargo-afl && cargo afl config --build` (builds AFL++).
# Seed corpus: fuzz/corpus/TARGET (written by `cargo test --test fuzz_regressions --
# --ignored write_fuzz_seeds`, then minimised). Every crash goes into tests/data/fuzz/TARGET/ as
# a regression input that tests/fuzz_regressions.rs replays (with the whole corpus) in CI.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"

usage() { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
[ $# -ge 1 ] || usage

check_target() {
    case "$1" in
        gltf | fbx | scene | pose) ;;
        *) echo "unknown target '$1' (gltf, fbx, scene, pose)" >&2; exit 2 ;;
    esac
}

build() {
    # Release with overflow checks and debug assertions (fuzz/Cargo.toml), AFL-instrumented.
    # FUZZ_NO_BUILD=1 uses the binary already built.
    [ -n "${FUZZ_NO_BUILD:-}" ] || cargo afl build --release --bin "$1" >&2
}

# The pose target's corpus starts with a 6-byte header; its files share the gltf dictionary.
dict_of() {
    case "$1" in
        pose) echo "$here/dict/gltf.dict" ;;
        *) echo "$here/dict/$1.dict" ;;
    esac
}

# AFL++ on a shared machine: no CPU binding, no frequency-scaling check, plain status lines
# when not on a terminal.
export AFL_SKIP_CPUFREQ=1 AFL_NO_AFFINITY=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1
[ -t 1 ] || export AFL_NO_UI=1

case "$1" in
    cmin)
        t="${2:?cmin TARGET}"; check_target "$t"; build "$t"
        tmp="$(mktemp -d)"; all="$tmp/all"; mkdir -p "$all"
        cp corpus/"$t"/* "$all"/ 2>/dev/null || true
        if [ -d out/"$t"/default/queue ]; then
            find out/"$t"/default/queue -maxdepth 1 -type f -exec cp {} "$all"/ \;
        fi
        # Inputs over 16 KiB slow AFL down and are left out; the pose target keeps only inputs up
        # to 4 KiB (its loaders have their own targets; this one is for posing and writing).
        cap=16k; [ "$t" = pose ] && cap=4k
        find "$all" -type f -size +"$cap" -delete
        # AFL++'s shell afl-cmin (its Python one finds no coverage in persistent-mode Rust
        # targets here), from cargo-afl's build of AFL++.
        bin="$(ls -d "$HOME"/.local/share/afl.rs/rustc-*/afl.rs-*/afl/bin | tail -n 1)"
        "$bin"/afl-cmin.bash -i "$all" -o "$tmp/min" -t 5000 -- target/release/"$t" \
            > "$tmp/log" 2>&1 || { tail -n 20 "$tmp/log"; exit 1; }
        [ -n "$(ls "$tmp/min")" ] || { echo "afl-cmin kept nothing; corpus unchanged" >&2; exit 1; }
        rm -rf corpus/"$t"; mkdir -p corpus/"$t"
        # Names that are plain and stable: the content's hash.
        for f in "$tmp"/min/*; do
            cp "$f" corpus/"$t"/"$(sha1sum "$f" | cut -c1-16)"
        done
        rm -rf "$tmp"
        echo "corpus/$t: $(ls corpus/"$t" | wc -l) files, $(du -sh corpus/"$t" | cut -f1)"
        ;;
    replay)
        t="${2:?replay TARGET FILE...}"; check_target "$t"; shift 2; build "$t"
        for f in "$@"; do
            echo "== $f"
            RUST_BACKTRACE=1 target/release/"$t" < "$f" || echo "exit status $?"
        done
        ;;
    *)
        t="$1"; check_target "$t"; build "$t"
        execs=()
        [ $# -ge 2 ] && execs=(-E "$2")
        mkdir -p out
        # -t: a hang is an input taking over 2 s (debug assertions on); resume if a run exists.
        input=corpus/"$t"
        [ -d out/"$t"/default/queue ] && input=-
        cargo afl fuzz -i "$input" -o out/"$t" -t 2000 -x "$(dict_of "$t")" "${execs[@]}" \
            -- target/release/"$t"
        n=$(find out/"$t"/default/crashes out/"$t"/default/hangs -type f -name 'id:*' | wc -l)
        grep -E 'execs_done|execs_per_sec|saved_crashes|saved_hangs|run_time' \
            out/"$t"/default/fuzzer_stats || true
        echo "$n crash/hang inputs in out/$t/default/{crashes,hangs}"
        ;;
esac
