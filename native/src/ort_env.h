// SPDX-License-Identifier: MIT
// The process-wide Ort::Env and the process-wide cache of loaded models (one Ort::Session per
// model file and thread setting, shared by every worker thread: ORT sessions allow concurrent Run).
#pragma once

#include <onnxruntime_cxx_api.h>

#include <map>
#include <memory>
#include <string>

namespace cutout {

// Initialises the ORT API once and checks the header/library versions agree.
Ort::Env& ProcessEnv();

// How a model's session is set up; sessions are shared per distinct (path, settings).
struct ModelSettings {
  int threads = 1;
  // ORT's memory pattern: plans one block for all activations from the first run and allocates it
  // on every later run. Off: that block came on top of what the arena already held, and a run only
  // needs its live tensors (docs/memory.md).
  bool memory_pattern = false;
  // GPU that runs the model through ONNX Runtime's CUDA provider; -1 = the CPU.
  int cuda_device = -1;
  // CUDA provider options over our defaults (cuda_provider.h).
  std::map<std::string, std::string> cuda_options;
};

// The cache key of a model setting: sessions are shared only between identical settings.
std::string SettingsKey(const std::string& path, const ModelSettings& settings);

struct SharedModel {
  std::string path;
  ModelSettings settings;
  std::unique_ptr<Ort::Session> session;
};

// Returns the cached model for (path, settings) or loads it. Throws Ort::Exception / std::runtime_error.
std::shared_ptr<SharedModel> AcquireModel(const std::string& path, const ModelSettings& settings);

// Number of distinct models currently loaded in this process (for tests of sharing).
size_t LoadedModelCount();

}  // namespace cutout
