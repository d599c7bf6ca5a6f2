// SPDX-License-Identifier: MIT
// ONNX Runtime's CUDA execution provider for a session: our defaults, the operator's overrides, and a
// load failure turned into one sentence that says what is missing. Pure C++ (ORT C++ API), no N-API.
#pragma once

#include <onnxruntime_cxx_api.h>

#include <map>
#include <stdexcept>
#include <string>

namespace cutout {

// The provider (or a library it needs) could not be loaded, or refused the options.
class CudaProviderError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses "key=value;key=value" (CUTOUT_CUDA_OPTIONS) into provider options. Throws
// std::invalid_argument naming the malformed entry.
std::map<std::string, std::string> ParseCudaOptions(const std::string& text);

// The provider options for GPU `device_id`: our defaults (below, in the .cc), then `overrides`
// (keys as ONNX Runtime names them, e.g. cudnn_conv_algo_search, prefer_nhwc, gpu_mem_limit).
std::map<std::string, std::string> CudaProviderOptions(int device_id,
                                                       const std::map<std::string, std::string>& overrides);

// Appends the CUDA provider to `opts`. libonnxruntime_providers_cuda.so is loaded here (beside
// libonnxruntime.so.1) together with the CUDA 13 / cuDNN 9 libraries it needs; when that fails
// ORT's message names the missing library, and we throw CudaProviderError with it.
void AppendCudaProvider(Ort::SessionOptions& opts, int device_id, const std::map<std::string, std::string>& overrides);

}  // namespace cutout
