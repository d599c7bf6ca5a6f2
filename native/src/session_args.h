// SPDX-License-Identifier: MIT
// Options shared by the JS classes Session and BatchSession: how the model is loaded (threads,
// memory pattern, device). JS validates them first (src/native/binding.ts callers); this re-checks
// what the C++ side relies on and throws coded TypeErrors (napi_util.h).
#pragma once

#include <napi.h>

#include "ort_env.h"
#include "postprocess.h"
#include "preprocess.h"

namespace cutout {

// { threads, memoryPattern?, device?: 'cpu'|'cuda', deviceId?, cudaOptions?: "k=v;k=v" } → ModelSettings.
ModelSettings ModelSettingsFrom(const Napi::Object& o);

// { activation?: 'none'|'sigmoid' (default 'none'), range?: 'unit'|'minmax' (default 'unit') } → MaskPostprocess.
MaskPostprocess MaskPostprocessFrom(const Napi::Object& o);

// options.mean and options.std: three numbers each (std positive), in the 0..255 units of the bytes.
Normalisation NormalisationFrom(const Napi::Object& o);

// options.outputRank: 4 (absent: the default, [N, 1, H, W]) or 3 ([N, H, W]).
int OutputRankFrom(const Napi::Object& o);

// options.layout: 'nchw' (absent: the default) or 'nhwc', the model input's layout; anything else throws.
bool InputIsNhwc(const Napi::Object& o);

// options[key] ('inputType' or 'outputType'): 'float32' (absent: the default) or 'float16', the
// element type of that tensor in the model file; anything else throws.
bool TensorIsHalf(const Napi::Object& o, const char* key);

}  // namespace cutout
