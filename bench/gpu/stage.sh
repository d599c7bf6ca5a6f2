#!/usr/bin/env bash
# bench/gpu/stage.sh: pack what cutout needs on a GPU box into parts the device tool can carry.
#
# The GPU box has no node, no npm and no network, and each device-tool call carries at most 64 MiB
# (the repository's working tree included). So, here, after `npm ci && npm run gpu`:
#
#   bash bench/gpu/stage.sh            → .gpu-stage/cutout-gpu.tar.xz.part-aa, -ab, … (45 MiB each)
#                                        + .gpu-stage/SHA256SUMS (every part and the whole archive)
#
# The archive holds (paths inside it):
#   node/bin/node                      this machine's node (x86-64, glibc; Node 20 for uWS's binary)
#   cutout/package.json, dist/         the compiled service, benches and gpu-check (npm run build:ts first)
#   cutout/build/Release/              cutout.node, libonnxruntime.so.1 and ONNX Runtime's two CUDA
#                                      provider libraries (npm run gpu)
#   cutout/models/                     manifest.json, isnet-fp16-batch, isnet-fp32 (gpu-check's
#                                      reference), isnet-int8 (the CPU default) + their .sha256
#   cutout/node_modules/               the run-time closure of the packages dist/ imports (found by
#                                      grepping dist/), linux-x64 binaries only; build-time packages
#                                      (onnxruntime-node, onnx-proto, @imgly/…) and dev ones left out
#   cutout/bench/.photos/              bench:gpu's photos (the files, not the Debian packages)
#   shared/eval/dev/                   the evaluation photos (../shared beside a checkout does not travel)
#
# bench/gpu/remote.sh unpacks it on the box (its header lists the device-tool calls).
#
# Environment: STAGE_DIR (default <repo>/.gpu-stage, git-ignored), PART_SIZE (default 45M),
# COMPRESS=xz|zstd (default xz: as small as zstd -19 here and 3x faster to make, and the box can
# always unpack it, with python3's lzma if it has no xz), XZ_LEVEL (default 6), BENCH_PHOTOS (sizes
# to stage, default 0.5,1,4,12,20), NO_BUILD=1 (use dist/ as it is), STAGE_MODELS (default
# "isnet-fp16-batch isnet-fp32 isnet-int8"), GPU_REFERENCE (a file made here by
# `node dist/bench/gpu-check.js --device cpu --write-reference F`: the fp32 CPU masks of the eval
# photos, staged as cutout/bench/gpu-reference.bin, which remote.sh hands to gpu-check; with it
# STAGE_MODELS can leave isnet-fp32 out, ~80 MB of xz less, i.e. one or two parts fewer),
# STAGE_MODEL_FILE (a model file of one's own with a symbolic batch, staged as cutout/models-own/,
# which remote.sh run then checks batched on CUDA with gpu-check --model-file; family from
# STAGE_MODEL_FAMILY, default isnet; docs/gpu.md: the float16-ended ISNet, ~45 MB of xz).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
STAGE_DIR=${STAGE_DIR:-$REPO/.gpu-stage}
PART_SIZE=${PART_SIZE:-45M}
COMPRESS=${COMPRESS:-xz}
XZ_LEVEL=${XZ_LEVEL:-6}
BENCH_PHOTOS=${BENCH_PHOTOS:-0.5,1,4,12,20}
STAGE_MODELS=${STAGE_MODELS:-isnet-fp16-batch isnet-fp32 isnet-int8}
GPU_REFERENCE=${GPU_REFERENCE:-}
STAGE_MODEL_FILE=${STAGE_MODEL_FILE:-}
STAGE_MODEL_FAMILY=${STAGE_MODEL_FAMILY:-isnet}
NODE_BIN=$(command -v node)
# Packages dist/ imports only on paths the box never takes (model assembly and calibration, the
# peer benchmark): never staged.
BUILD_ONLY='^(onnxruntime-node|onnx-proto|@imgly/background-removal-node)$'

say() { echo "stage: $*" >&2; }
die() { say "$*"; exit 1; }

cd "$REPO"
[[ $(uname -m) == x86_64 ]] || die "the GPU box is x86-64; this machine is $(uname -m)"
[[ $("$NODE_BIN" -p 'process.versions.modules') == 115 ]] || die "node $("$NODE_BIN" -v) is not Node 20 (ABI 115): uWebSockets.js has no binary for it"
for f in build/Release/cutout.node build/Release/libonnxruntime.so.1 build/Release/libonnxruntime_providers_shared.so build/Release/libonnxruntime_providers_cuda.so; do
  [[ -f $f ]] || die "$f is missing: run npm ci && npm run gpu first"
done
[[ -z $GPU_REFERENCE || -f $GPU_REFERENCE ]] || die "GPU_REFERENCE=$GPU_REFERENCE does not exist"
[[ -z $STAGE_MODEL_FILE || -f $STAGE_MODEL_FILE ]] || die "STAGE_MODEL_FILE=$STAGE_MODEL_FILE does not exist"
[[ $STAGE_MODELS == *isnet-fp32* || -n $GPU_REFERENCE ]] || die "without isnet-fp32 gpu-check needs GPU_REFERENCE (its masks)"
for m in $STAGE_MODELS; do
  [[ -f models/$m.onnx && -f models/$m.onnx.sha256 ]] || die "models/$m.onnx is missing: run npm run model -- $m (npm run gpu makes isnet-fp16-batch)"
done
if [[ ${NO_BUILD:-} != 1 ]]; then
  say "npm run build:ts"
  npm run --silent build:ts >/dev/null
fi

EVAL_DIR=$("$NODE_BIN" --input-type=module -e "import { evalDir } from '$REPO/dist/bench/quality/eval-dir.js'; console.log(evalDir())")
[[ -f $EVAL_DIR/manifest.csv ]] || die "no evaluation photos at $EVAL_DIR (set CUTOUT_EVAL_DIR)"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/cutout-stage.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
B=$WORK/bundle
mkdir -p "$B/node/bin" "$B/cutout/build/Release" "$B/cutout/models" "$B/cutout/node_modules" "$B/shared/eval"

say "node $("$NODE_BIN" -v) from $NODE_BIN"
cp "$NODE_BIN" "$B/node/bin/node"
cp package.json "$B/cutout/"
cp -r dist "$B/cutout/dist"
cp build/Release/cutout.node build/Release/libonnxruntime.so.1 build/Release/libonnxruntime_providers_shared.so build/Release/libonnxruntime_providers_cuda.so "$B/cutout/build/Release/"
cp models/manifest.json models/isnet-int8.calibration.json "$B/cutout/models/"
for m in $STAGE_MODELS; do cp "models/$m.onnx" "models/$m.onnx.sha256" "$B/cutout/models/"; done
if [[ -n $GPU_REFERENCE ]]; then mkdir -p "$B/cutout/bench"; cp "$GPU_REFERENCE" "$B/cutout/bench/gpu-reference.bin"; fi
if [[ -n $STAGE_MODEL_FILE ]]; then
  mkdir -p "$B/cutout/models-own"
  cp "$STAGE_MODEL_FILE" "$B/cutout/models-own/"
  echo "$STAGE_MODEL_FAMILY" > "$B/cutout/models-own/FAMILY"
fi
cp -r "$EVAL_DIR" "$B/shared/eval/dev"

# Run-time packages: what dist/ imports, and everything those depend on (optional ones too, where
# installed: they are the native binaries for this platform).
ROOTS=$(grep -rhoE "(from |import\(|require\()['\"][^'\".][^'\"]*['\"]" dist/src dist/bench dist/test/harness |
  sed -E "s/^(from |import\(|require\()//; s/['\"]//g" | grep -v '^node:' | grep -E '^(@[A-Za-z0-9._-]+/)?[A-Za-z0-9._-]+$' |
  grep -vE "$BUILD_ONLY" | sort -u)
say "run-time packages imported by dist/: $(echo $ROOTS)"
MODULES=$("$NODE_BIN" --input-type=module -e '
import fs from "node:fs"; import path from "node:path";
const root = process.cwd(); const seen = new Set();
const find = (name, from) => {
  for (let d = from; ; d = path.dirname(d)) {
    if (path.basename(d) === "node_modules") continue;
    const c = path.join(d, "node_modules", name);
    if (fs.existsSync(path.join(c, "package.json"))) return c;
    if (d === root) return null;
  }
};
const walk = (name, from, optional) => {
  const dir = find(name, from);
  if (!dir) { if (!optional) throw new Error(`${name} (needed by ${path.relative(root, from) || "dist"}) is not installed`); return; }
  if (seen.has(dir)) return;
  seen.add(dir);
  const pj = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));
  for (const d of Object.keys(pj.dependencies ?? {})) walk(d, dir, false);
  for (const d of Object.keys(pj.optionalDependencies ?? {})) walk(d, dir, true);
};
for (const r of process.argv.slice(1)) walk(r, root, false);
for (const d of [...seen].sort()) console.log(path.relative(root, d));
' $ROOTS)
for m in $MODULES; do
  # A nested package comes with its parent's folder.
  [[ -e $B/cutout/$m ]] && continue
  mkdir -p "$B/cutout/$(dirname "$m")"
  cp -r "$m" "$B/cutout/$m"
done
# Binaries for other platforms and Node versions: uWS ships 18 (92 MB); keep Node 20's linux-x64.
UWS=$B/cutout/node_modules/uWebSockets.js
if [[ -d $UWS ]]; then
  find "$UWS/binaries" -type f ! -name 'uws_linux_x64_115.node' -delete
  find "$UWS/dist" -name '*.node' -delete
  rm -rf "$UWS/docs"
fi
find "$B/cutout/node_modules" -path '*/@lmdb/lmdb-linux-x64/*' \( -name '*musl*' -o -name 'node.abi*.node' ! -name 'node.abi115.*' \) -delete
say "node_modules: $(echo $MODULES | wc -w) packages, $(du -sh "$B/cutout/node_modules" | cut -f1)"

# bench:gpu's photos: the files it would read, at the same paths (the eval photo is in shared/).
mkdir -p "$B/cutout/bench"
"$NODE_BIN" dist/bench/gpu.js --list-photos --photos "$BENCH_PHOTOS" | while read -r f; do
  case $f in
    "$REPO"/*) rel=${f#"$REPO"/}; mkdir -p "$B/cutout/$(dirname "$rel")"; cp "$f" "$B/cutout/$rel" ;;
  esac
done
say "photos: $(find "$B/cutout/bench/.photos" -type f | wc -l) files, $(du -sh "$B/cutout/bench/.photos" | cut -f1); eval: $(du -sh "$B/shared/eval/dev" | cut -f1)"

{
  echo "built $(date -u +%FT%TZ) on $(hostname) from $(git -C "$REPO" rev-parse --short HEAD)$(git -C "$REPO" diff --quiet HEAD -- src bench || echo ' (+ uncommitted changes)')"
  echo "node $("$NODE_BIN" -v); ort $(basename "$(readlink -f build/Release/libonnxruntime.so.1)")"
  (cd "$B" && find . -type f -printf '%s %p\n' | sort -k2)
} > "$B/BUNDLE-INFO"
say "bundle: $(du -sh --apparent-size "$B" | cut -f1) in $(find "$B" -type f | wc -l) files"

rm -rf "$STAGE_DIR"
mkdir -p "$STAGE_DIR"
case $COMPRESS in
  xz) EXT=tar.xz; PACK=(xz -T0 "-$XZ_LEVEL" -c) ;;
  zstd) EXT=tar.zst; PACK=(zstd -q -T0 -19 --long=27 -c) ;;
  *) die "COMPRESS must be xz or zstd" ;;
esac
ARCHIVE=$STAGE_DIR/cutout-gpu.$EXT
say "packing with ${PACK[*]} …"
start=$SECONDS
tar -C "$B" -cf - . | "${PACK[@]}" > "$ARCHIVE"
say "$(basename "$ARCHIVE"): $(stat -c %s "$ARCHIVE") bytes ($((SECONDS - start)) s)"
(cd "$STAGE_DIR" && split -b "$PART_SIZE" "$(basename "$ARCHIVE")" "$(basename "$ARCHIVE").part-")
(cd "$STAGE_DIR" && sha256sum "$(basename "$ARCHIVE")" "$(basename "$ARCHIVE")".part-* > SHA256SUMS)
rm "$ARCHIVE"
cp "$B/BUNDLE-INFO" "$STAGE_DIR/BUNDLE-INFO"
n=$(ls "$STAGE_DIR" | grep -c '\.part-')
say "$n part(s) of at most $PART_SIZE in $STAGE_DIR:"
ls -l "$STAGE_DIR" >&2
