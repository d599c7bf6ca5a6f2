#!/usr/bin/env bash
# bench/gpu/remote.sh: runs ON the GPU box (device tool, `run`), from the repository's root there.
# Puts together the bundle bench/gpu/stage.sh made here, unpacks it, runs gpu-check then bench:gpu,
# and leaves the results in $OUT (which the device tool brings back).
#
#   bash bench/gpu/remote.sh receive          copy the carried parts (.gpu-stage/*) into $STAGE_DIR,
#                                             check each against SHA256SUMS, say which are missing
#   bash bench/gpu/remote.sh run [bench args] join, check sha256, unpack to $ROOT_DIR/cutout (with
#                                             $ROOT_DIR/shared/eval/dev beside it), then gpu-check
#                                             (args in $GPU_CHECK_ARGS), bench:photo-stages
#                                             ($STAGES_ARGS; with a staged model file, gpu-check
#                                             --model-file of it first: masks and load, batched),
#                                             bench:gpu [bench args; none: CUDA,
#                                             1 and 12 MP, c = 1/32/128], then one short bench:gpu
#                                             per variant of $BENCH_VARIANTS (|-separated; default
#                                             "--infer-workers 1|--photo-nice 10|CUTOUT_CUDA_OPTIONS=prefer_nhwc=1";
#                                             empty: none), all inside $RUN_BUDGET seconds (default
#                                             540); exits non-zero when gpu-check failed or bench:gpu did
#   bash bench/gpu/remote.sh check [args]     unpack if needed, gpu-check only
#   bash bench/gpu/remote.sh bench [args]     unpack if needed, bench:gpu only (no deadline unless given)
#   bash bench/gpu/remote.sh stages [args]    unpack if needed, bench:photo-stages only (the CPU side
#                                             of one photo, no model run: $STAGES_ARGS in `run`)
#   bash bench/gpu/remote.sh unpack           unpack if needed
#
# Environment: STAGE_DIR (default /root/stage), ROOT_DIR (default /root), OUT (the device tool sets
# it; default $ROOT_DIR/gpu-out), CARRIED (default .gpu-stage, where `carry` puts the parts),
# MODEL_FILE_CHECK_ARGS (more gpu-check flags for a staged model file: `--device cpu --photos 2` here),
# CUDA_LIB_DIRS (default the box's CUDA 13 and cuDNN 9 folders, NOTES-ENV "GPU"), RUN_BUDGET.
# Tested here on a CPU machine with STAGE_DIR/ROOT_DIR/OUT in a temporary folder and
# `GPU_CHECK_ARGS='--device cpu …' run --devices cpu …` (docs/gpu.md).
#
# The device-tool calls of a GPU session (after `npm ci && npm run gpu && bash bench/gpu/stage.sh`
# here; each call within the 30 s a machine stays warm after the last one; one part per call, since
# a call carries at most 64 MiB with the working tree; SHA256SUMS rides along every time):
#
#   run  command: bash bench/gpu/remote.sh receive
#        carry:   [".gpu-stage/SHA256SUMS", ".gpu-stage/cutout-gpu.tar.xz.part-aa"]      timeout_s 120
#   run  (the same for part-ab, part-ac, … up to the last part; `receive` prints what is still missing)
#   run  command: bash bench/gpu/remote.sh run                                             timeout_s 600
#        carry:   [".gpu-stage/SHA256SUMS"]
#
# `run`'s defaults are meant to fit one 10-minute call (the bench stops starting levels at the
# budget, gpu-check has no limit of its own, and what is in $OUT comes back even when the tool stops
# a call at its timeout): gpu-check in full (43 photos; batches 1..32, 20 runs, pinned on and off;
# 64 requests), bench:photo-stages, then bench:gpu on CUDA only (the CPU rows were measured on the
# first lease; `-- --devices cuda,cpu …` as run's arguments brings them back), 1 and 12 MP at
# concurrency 1/32/128 with 10 s per level (+10 s to drain), then the variants ($VARIANT_SECONDS,
# default 60, kept for each). Levels left out once the budget is spent are named in the JSON.
# Results written as they come: $OUT/gpu-check.json, photo-stages.json, gpu.json, gpu.md,
# variant-N/, remote.log. A second call, `bash bench/gpu/remote.sh bench --devices cpu …`, can fill
# in levels the budget left out (the bundle stays unpacked while the machine is warm).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
STAGE_DIR=${STAGE_DIR:-/root/stage}
ROOT_DIR=${ROOT_DIR:-/root}
OUT=${OUT:-$ROOT_DIR/gpu-out}
CARRIED=${CARRIED:-$REPO/.gpu-stage}
RUN_BUDGET=${RUN_BUDGET:-540}
CUDA_LIB_DIRS=${CUDA_LIB_DIRS:-$(ls -d /usr/local/cuda-13*/targets/x86_64-linux/lib 2>/dev/null | head -1):/usr/lib/x86_64-linux-gnu}
APP=$ROOT_DIR/cutout
NODE=$ROOT_DIR/node/bin/node
T0=$SECONDS

mkdir -p "$OUT"
say() { echo "remote: $*" | tee -a "$OUT/remote.log" >&2; }
die() { say "$*"; exit 1; }

archive_name() { awk '$2 !~ /\.part-/ { print $2; exit }' "$STAGE_DIR/SHA256SUMS"; }

receive() {
  mkdir -p "$STAGE_DIR"
  [[ -f $CARRIED/SHA256SUMS ]] || [[ -f $STAGE_DIR/SHA256SUMS ]] || die "no SHA256SUMS carried (carry .gpu-stage/SHA256SUMS with every part)"
  [[ -f $CARRIED/SHA256SUMS ]] && cp "$CARRIED/SHA256SUMS" "$STAGE_DIR/SHA256SUMS"
  local f got=0
  for f in "$CARRIED"/*.part-*; do
    [[ -f $f ]] || continue
    cp "$f" "$STAGE_DIR/"
    got=$((got + 1))
  done
  # Check what is here now: a part spoilt on the way is removed, to be carried again.
  local part want have=0 missing=()
  while read -r want part; do
    [[ $part == *.part-* ]] || continue
    if [[ -f $STAGE_DIR/$part ]] && [[ $(sha256sum "$STAGE_DIR/$part" | cut -d' ' -f1) == "$want" ]]; then
      have=$((have + 1))
    else
      [[ -f $STAGE_DIR/$part ]] && { say "$part does not match SHA256SUMS: removed, carry it again"; rm -f "$STAGE_DIR/$part"; }
      missing+=("$part")
    fi
  done < "$STAGE_DIR/SHA256SUMS"
  say "received $got part(s) this call; $have of $((have + ${#missing[@]})) in $STAGE_DIR${missing:+; missing: ${missing[*]}}"
  [[ ${#missing[@]} -eq 0 ]] && say "all parts here: next, bash bench/gpu/remote.sh run"
  return 0
}

unpack() {
  [[ -f $CARRIED/SHA256SUMS || -f $STAGE_DIR/SHA256SUMS ]] && receive >/dev/null 2>&1 || true
  [[ -f $STAGE_DIR/SHA256SUMS ]] || die "nothing received yet in $STAGE_DIR (bash bench/gpu/remote.sh receive, with the parts carried)"
  local name sum
  name=$(archive_name)
  sum=$(awk -v n="$name" '$2 == n { print $1 }' "$STAGE_DIR/SHA256SUMS")
  if [[ -f $APP/.bundle-sha256 && $(cat "$APP/.bundle-sha256") == "$sum" ]]; then
    say "bundle ${sum:0:12} already unpacked in $APP"
    return 0
  fi
  local parts=()
  mapfile -t parts < <(awk '$2 ~ /\.part-/ { print $2 }' "$STAGE_DIR/SHA256SUMS")
  for p in "${parts[@]}"; do [[ -f $STAGE_DIR/$p ]] || die "part $p is missing: carry it with bash bench/gpu/remote.sh receive"; done
  say "joining ${#parts[@]} part(s) into $name"
  (cd "$STAGE_DIR" && cat "${parts[@]}" > "$name" && sha256sum -c --quiet --ignore-missing SHA256SUMS) || die "the joined archive does not match SHA256SUMS"
  rm -rf "$APP" "$ROOT_DIR/node" "$ROOT_DIR/shared/eval/dev"
  mkdir -p "$ROOT_DIR"
  local start=$SECONDS
  case $name in
    *.tar.xz)
      if command -v xz >/dev/null; then xz -dc -T0 "$STAGE_DIR/$name" | tar -C "$ROOT_DIR" -xf -
      else say "no xz here: unpacking with python3's lzma"; python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), sys.stdout.buffer, 1 << 20)' "$STAGE_DIR/$name" | tar -C "$ROOT_DIR" -xf -
      fi ;;
    *.tar.zst) command -v zstd >/dev/null || die "no zstd on this machine: stage with COMPRESS=xz"; zstd -dc --long=27 "$STAGE_DIR/$name" | tar -C "$ROOT_DIR" -xf - ;;
    *) die "unknown archive $name" ;;
  esac
  rm -f "$STAGE_DIR/$name"
  echo "$sum" > "$APP/.bundle-sha256"
  say "unpacked to $ROOT_DIR in $((SECONDS - start)) s: $(head -1 "$ROOT_DIR/BUNDLE-INFO")"
}

# The first folder of LD_LIBRARY_PATH holding library $1, or "not found …".
find_lib() {
  local d
  local IFS=:
  for d in $LD_LIBRARY_PATH; do
    if [[ -e $d/$1 ]]; then echo "$d/$1"; return 0; fi
  done
  echo "not found on LD_LIBRARY_PATH"
}

environment() {
  export PATH=$ROOT_DIR/node/bin:$PATH
  export LD_LIBRARY_PATH=$CUDA_LIB_DIRS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export CUTOUT_EVAL_DIR=$ROOT_DIR/shared/eval/dev
  # What the box has, for the log; nothing here may stop the run.
  {
    echo "--- $(date -u +%FT%TZ) $(uname -m), $(nproc) cores, $(free -g | awk '/Mem:/ { print $2 }') GiB"
    nvidia-smi -L 2>&1 || echo "nvidia-smi -L failed"
    echo "/proc/driver/nvidia/gpus: $(ls /proc/driver/nvidia/gpus 2>&1 | tr '\n' ' ')"
    echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
    for l in libcudart.so.13 libcublasLt.so.13 libcudnn.so.9; do echo "$l: $(find_lib "$l")"; done
    echo "node $("$NODE" -v)"
  } >> "$OUT/remote.log" 2>&1 || true
}

check() {
  # A staged reference (stage.sh GPU_REFERENCE) stands in for the fp32 model, which is then not here.
  [[ -f $APP/bench/gpu-reference.bin ]] && GPU_REFERENCE_ARG="--reference bench/gpu-reference.bin"
  if [[ -f $APP/bench/gpu-reference.bin && " $* " != *" --reference "* ]]; then set -- --reference bench/gpu-reference.bin "$@"; fi
  say "gpu-check $*"
  (cd "$APP" && "$NODE" dist/bench/gpu-check.js --out "$OUT" "$@") 2>&1 | tee -a "$OUT/remote.log"
  return "${PIPESTATUS[0]}"
}

stages() {
  say "bench:photo-stages $*"
  (cd "$APP" && "$NODE" dist/bench/photo-stages.js --out "$OUT" "$@") 2>&1 | tee -a "$OUT/remote.log"
  return "${PIPESTATUS[0]}"
}

bench() {
  say "bench:gpu $*"
  (cd "$APP" && "$NODE" dist/bench/gpu.js --out "$OUT" "$@") 2>&1 | tee -a "$OUT/remote.log"
  return "${PIPESTATUS[0]}"
}

# bench:gpu again for each variant: leading NAME=value words go in the server's environment, the
# rest are serve flags; 1 MP at c = 32 and 128 on CUDA, results in $OUT/variant-N/ (gpu.json says
# which flags and environment). A variant's failure does not fail the run: it is an experiment.
DEFAULT_VARIANTS='--infer-workers 1|--photo-nice 10|CUTOUT_CUDA_OPTIONS=prefer_nhwc=1'
VARIANT_SECONDS=${VARIANT_SECONDS:-60}
variant_runs() {
  local i=0 v w envs flags left
  for v in "$@"; do
    i=$((i + 1))
    envs=()
    flags=()
    for w in $v; do
      if [[ ${#flags[@]} -eq 0 && $w =~ ^[A-Z_][A-Z0-9_]*= ]]; then envs+=("$w"); else flags+=("$w"); fi
    done
    left=$((RUN_BUDGET - (SECONDS - T0) - 20))
    if [[ $left -lt 30 ]]; then
      say "variant $i ($v): no time left"
      continue
    fi
    say "variant $i: ${envs[*]:-(no environment)} serve ${flags[*]:-(no flags)}"
    mkdir -p "$OUT/variant-$i"
    echo "$v" > "$OUT/variant-$i/variant.txt"
    (
      for w in "${envs[@]}"; do export "${w?}"; done
      bench --devices cuda --photos 1 --concurrency 32,128 --warmup 1 --level-seconds 10 --drain-seconds 10 \
        --deadline-seconds "$left" --out "$OUT/variant-$i" -- "${flags[@]}"
    ) || say "variant $i: bench:gpu exited with $?"
  done
}

cmd=${1:-}
[[ $# -gt 0 ]] && shift
case $cmd in
  receive) receive ;;
  unpack) unpack ;;
  check) unpack; environment; check "$@" ;;
  bench) unpack; environment; bench "$@" ;;
  stages) unpack; environment; stages "$@" ;;
  run)
    unpack
    environment
    rc=0
    # shellcheck disable=SC2086 # GPU_CHECK_ARGS is a list of flags
    check ${GPU_CHECK_ARGS:-} || rc=$?
    # A staged model file of one's own (stage.sh STAGE_MODEL_FILE): its masks and a loaded pool, batched
    # on the device; a failure fails the run as gpu-check's does.
    for f in "$APP"/models-own/*.onnx; do
      [[ -f $f ]] || continue
      mkdir -p "$OUT/model-file"
      say "gpu-check --model-file $(basename "$f")"
      (cd "$APP" && "$NODE" dist/bench/gpu-check.js --out "$OUT/model-file" --model-file "$f" --model-family "$(cat "$APP/models-own/FAMILY")" \
        --parts masks,load --load 16 ${GPU_REFERENCE_ARG:-} ${MODEL_FILE_CHECK_ARGS:-}) 2>&1 | tee -a "$OUT/remote.log" || rc=1
    done
    # The CPU side of a photo on this box's cores (~10 s; a failure here does not fail the run).
    # shellcheck disable=SC2086 # STAGES_ARGS is a list of flags
    stages ${STAGES_ARGS:---photos 1,12 --threads 1,$(nproc) --runs 3} || say "bench:photo-stages failed"
    # What is left of the budget, less one level's worst case (10 s + 10 s drain + the barrier);
    # the variants below get their share of it first.
    # shellcheck disable=SC2206 # one variant per |-separated item
    IFS='|' read -ra variants <<< "${BENCH_VARIANTS-$DEFAULT_VARIANTS}"
    reserve=$((${#variants[@]} * VARIANT_SECONDS))
    left=$((RUN_BUDGET - (SECONDS - T0) - 40 - reserve))
    if [[ $left -lt 30 ]]; then
      say "no time left for bench:gpu ($((SECONDS - T0)) s of $RUN_BUDGET used, $reserve s kept for the variants)"
    else
      brc=0
      # No arguments: the rows the next lease needs (docs/gpu.md, "On a GPU machine without npm or network").
      [[ $# -eq 0 ]] && set -- --devices cuda --photos 1,12 --concurrency 1,32,128
      bench --level-seconds 10 --drain-seconds 10 --deadline-seconds "$left" "$@" || brc=$?
      [[ $brc -ne 0 ]] && say "bench:gpu exited with $brc"
      [[ $rc -eq 0 ]] && rc=$brc
    fi
    variant_runs "${variants[@]}"
    say "done in $((SECONDS - T0)) s (rc $rc: 0 when gpu-check passed and bench:gpu finished)"
    exit "$rc"
    ;;
  *) sed -n '2,22p' "${BASH_SOURCE[0]}"; exit 2 ;;
esac
