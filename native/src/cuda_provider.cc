// SPDX-License-Identifier: MIT
#include "cuda_provider.h"

#include <stdexcept>
#include <unordered_map>

namespace cutout {

std::map<std::string, std::string> ParseCudaOptions(const std::string& text) {
  std::map<std::string, std::string> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find(';', pos);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(pos, end - pos);
    pos = end + 1;
    if (item.find_first_not_of(" \t") == std::string::npos) continue;
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size()) {
      throw std::invalid_argument("Expected key=value entries separated by ';' for the CUDA options but received '" +
                                  item + "'");
    }
    out[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return out;
}

std::map<std::string, std::string> CudaProviderOptions(int device_id,
                                                       const std::map<std::string, std::string>& overrides) {
  std::map<std::string, std::string> o = {
      {"device_id", std::to_string(device_id)},
      // cuDNN's heuristics pick each convolution's algorithm without trying them all. EXHAUSTIVE
      // (try every one per input shape) was the default until measured in the service on an H200
      // (bench:gpu, 1 MP photos, one server each, same box): 1.85 / 8.8 / 23.7 images/s at
      // concurrency 8 / 32 / 128 against 12.6 / 29.0 / 41.5 with HEURISTIC, and 9.3 s to start
      // against 2.9 s (docs/gpu.md, "Measured"). CUTOUT_CUDA_OPTIONS can still ask for EXHAUSTIVE.
      {"cudnn_conv_algo_search", "HEURISTIC"},
      {"cudnn_conv_use_max_workspace", "1"},
      // Grow the device arena by what is asked for, not to the next power of two: a batch of 16
      // at 1024² needs a few GB of activations, and doubling would waste as much again.
      {"arena_extend_strategy", "kSameAsRequested"},
      // Host↔device copies on the compute stream: no cross-stream synchronisation per run.
      {"do_copy_in_default_stream", "1"},
  };
  for (const auto& [k, v] : overrides) o[k] = v;
  return o;
}

void AppendCudaProvider(Ort::SessionOptions& opts, int device_id, const std::map<std::string, std::string>& overrides) {
  const auto options = CudaProviderOptions(device_id, overrides);
  try {
    Ort::CUDAProviderOptions cuda;
    cuda.Update(std::unordered_map<std::string, std::string>(options.begin(), options.end()));
    opts.AppendExecutionProvider_CUDA_V2(*cuda);
  } catch (const Ort::Exception& e) {
    throw CudaProviderError(std::string("the CUDA execution provider could not be loaded: ") + e.what());
  }
}

}  // namespace cutout
