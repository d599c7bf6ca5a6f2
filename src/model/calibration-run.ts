// One calibration pass for static int8 quantisation: a float model run on real photos with every
// activation tensor quantizeInt8 needs fetched, each into its histogram, and the clipping range taken
// from each. Shared by `npm run model:calibrate` (the bundled int8 model's committed table) and
// `npm run model -- --from FILE --int8` (a user's own fp32 file).
import path from 'node:path';
import { activationTensors, Histogram, percentileClipRange } from './calibration.js';
import { debianFiles } from './debian-files.js';
import { PACKAGE_ROOT } from './manifest.js';
import { decodeModel, encodeModel, loadOnnx } from './onnx-transform.js';
import type { CalibrationTable } from './quantize.js';

/** People, animals, objects and scenes, in colour: what a background remover is asked to cut. */
export const CALIBRATION_PHOTOS: Record<string, string[]> = {
  'mate-backgrounds': [
    'abstract/Elephants.jpg',
    'nature/Aqua.jpg',
    'nature/Blinds.jpg',
    'nature/Dune.jpg',
    'nature/FreshFlower.jpg',
    'nature/Garden.jpg',
    'nature/GreenMeadow.jpg',
    'nature/LadyBird.jpg',
    'nature/RainDrops.jpg',
    'nature/Storm.jpg',
    'nature/TwoWings.jpg',
    'nature/Wood.jpg',
    'nature/YellowFlower.jpg',
  ].map((f) => `usr/share/backgrounds/mate/${f}`),
  'lomiri-wallpapers-20.04': ['Fossa_by_Jasper_Roks.jpg', 'Kleiber_by_Lukas_Baubkus.jpg'].map((f) => `usr/share/backgrounds/${f}`),
  'ukui-wallpapers': ['firstgeneration.jpg', 'string.jpg', 'the-mouse.jpg'].map((f) => `usr/share/backgrounds/${f}`),
  'opencv-doc': [
    'aero1.jpg',
    'apple.jpg',
    'baboon.jpg',
    'basketball1.png',
    'basketball2.png',
    'building.jpg',
    'butterfly.jpg',
    'fruits.jpg',
    'home.jpg',
    'messi5.jpg',
    'orange.jpg',
    'squirrel_cls.jpg',
  ].map((f) => `usr/share/doc/opencv-doc/examples/data/${f}`),
  'python3-skimage': ['astronaut.png', 'chelsea.png', 'coffee.png', 'motorcycle_left.png', 'rocket.jpg'].map(
    (f) => `usr/lib/python3/dist-packages/skimage/data/${f}`,
  ),
};

/** Where the calibration photos are extracted (ignored by git). */
export const CALIBRATION_PHOTO_CACHE = path.join(PACKAGE_ROOT, 'models', '.calibration-photos');

/** The 35 calibration photos, fetched from Debian (`apt-get download`) into `cache` on first use. */
export function defaultCalibrationPhotos(cache = CALIBRATION_PHOTO_CACHE): string[] {
  return Object.entries(CALIBRATION_PHOTOS).flatMap(([pkg, files]) => debianFiles(cache, pkg, files));
}

/** The calibration photos' names as the table records them (`package:file`). */
export function calibrationPhotoNames(): string[] {
  return Object.entries(CALIBRATION_PHOTOS).flatMap(([pkg, files]) => files.map((f) => `${pkg}:${path.basename(f)}`));
}

/** How the model is fed: its input's name and size, mean and std in the 0..255 units of the bytes. */
export interface CalibrationInput {
  name: string;
  width: number;
  height: number;
  mean: readonly number[];
  std: readonly number[];
  /** 'nchw' (absent) or 'nhwc': channels last. */
  layout?: 'nchw' | 'nhwc';
}

/** Output tensors fetched per session run: bounds the memory of one calibration pass (~3 GB at 1024²). */
const GROUP = 100;

/** A photo as the model's float input, NCHW or NHWC (stretched to its size, as the service feeds it). */
export async function calibrationInput(file: string, input: CalibrationInput): Promise<Float32Array> {
  const sharp = (await import('sharp')).default;
  const { width, height, mean, std } = input;
  const rgb = await sharp(file).rotate().resize(width, height, { fit: 'fill' }).removeAlpha().toColourspace('srgb').raw().toBuffer();
  const plane = width * height;
  const x = new Float32Array(3 * plane);
  const nhwc = input.layout === 'nhwc';
  for (let i = 0; i < plane; i++) {
    for (let c = 0; c < 3; c++) x[nhwc ? i * 3 + c : c * plane + i] = (rgb[i * 3 + c]! - mean[c]!) / std[c]!;
  }
  return x;
}

/** The input tensor's dims for one photo. */
function inputDims(input: CalibrationInput): number[] {
  return input.layout === 'nhwc' ? [1, input.height, input.width, 3] : [1, 3, input.height, input.width];
}

/**
 * The clipping range of every activation tensor quantizeInt8 reads (calibration.ts): the float model
 * `bytes` run on `inputs` with those tensors fetched, GROUP at a time ('basic' optimisation keeps
 * every intermediate tensor; fusions would drop some of the names fetched).
 */
export async function measureRanges(
  bytes: Uint8Array,
  input: CalibrationInput,
  inputs: Float32Array[],
  progress: (text: string) => void = () => {},
): Promise<CalibrationTable['ranges']> {
  const ort = (await import('onnxruntime-node')).default;
  const onnx = loadOnnx();
  const names = activationTensors(decodeModel(bytes));
  const hists = new Map(names.map((n) => [n, new Histogram()]));
  for (let g = 0; g < names.length; g += GROUP) {
    const group = names.slice(g, g + GROUP);
    const model = decodeModel(bytes);
    const outputs = new Set(model.graph.output.map((o: { name: string }) => o.name));
    for (const n of group) if (!outputs.has(n)) model.graph.output.push(onnx.ValueInfoProto.create({ name: n, type: { tensorType: { elemType: 1 } } }));
    const session = await ort.InferenceSession.create(encodeModel(model), { graphOptimizationLevel: 'basic' });
    for (const [i, x] of inputs.entries()) {
      const res = await session.run({ [input.name]: new ort.Tensor('float32', x, inputDims(input)) }, group);
      for (const n of group) hists.get(n)!.add(res[n]!.data as Float32Array);
      progress(`tensors ${g + 1}-${g + group.length} of ${names.length}, photo ${i + 1}/${inputs.length}`);
    }
    await session.release();
  }
  const ranges: CalibrationTable['ranges'] = {};
  for (const [n, h] of hists) ranges[n] = percentileClipRange(h).map((v) => Number(v.toPrecision(7))) as [number, number];
  return ranges;
}

export const CALIBRATION_DESCRIPTION = 'uint8 activation ranges per tensor: 0.01%/99.99% quantiles of a 2048-bin histogram pooled over the photos';
