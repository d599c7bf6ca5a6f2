// Where ONNX Runtime's CUDA provider comes from: an npm package of Microsoft's build for the ORT
// version the addon links (1.29.0, from onnxruntime-node), CUDA 13 + cuDNN 9 (NOTES-ENV, "GPU").
// Pinned by the tarball's integrity and each library's sha256, so a changed upload is refused.
export interface ProviderPackage {
  /** npm spec given to `npm pack`. */
  spec: string;
  /** npm's Subresource Integrity of the tarball (sha512, base64). */
  integrity: string;
  /** Folder of the libraries inside the tarball. */
  dir: string;
  /** Library file name → sha256. */
  files: Readonly<Record<string, string>>;
}

export const CUDA_PROVIDER_PACKAGE: ProviderPackage = Object.freeze({
  spec: 'com.github.asus4.onnxruntime.linux-x64-gpu@0.4.9',
  integrity: 'sha512-FopIhNE/Ng+v2X65wVc9clPCBCvhvA53Hxo2U0Kf5fGdVsC7iCA+mZ0KLWggcQAj7TIZ6pNidR4AC10g74Xo6w==',
  dir: 'package/Plugins/Linux/x64',
  files: Object.freeze({
    'libonnxruntime_providers_shared.so': 'c6a12593396095f5670160e284c35d1700b7708cf3037b7042e2a5200ccae772',
    'libonnxruntime_providers_cuda.so': '56cf3254b118ad837ccc4ed8f6d1b23504bbf7ef91b34cbc0b289cb7f10b3037',
  }),
});
