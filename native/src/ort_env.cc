// SPDX-License-Identifier: MIT
#include "ort_env.h"

#include <map>
#include <mutex>
#include <stdexcept>

#include "cuda_provider.h"
#include "memory.h"
#include "ort_allocator.h"
#include "ort_telemetry.h"

namespace cutout {

namespace {
std::once_flag env_once;
Ort::Env* env_ptr = nullptr;  // Intentionally leaked: must outlive every worker thread's session.

std::mutex cache_mutex;
std::map<std::string, std::weak_ptr<SharedModel>>& Cache() {
  static auto* cache = new std::map<std::string, std::weak_ptr<SharedModel>>();
  return *cache;
}
}  // namespace

Ort::Env& ProcessEnv() {
  std::call_once(env_once, [] {
    const OrtApiBase* base = OrtGetApiBase();
    if (base->GetApi(ORT_API_VERSION) == nullptr) {
      throw std::runtime_error(std::string("libonnxruntime.so.1 (version ") + base->GetVersionString() +
                               ") does not provide the ONNX Runtime API version these headers were built for (" +
                               std::to_string(ORT_API_VERSION) + "); rebuild the addon against matching versions");
    }
    DisableOrtTelemetryUnlessSet();  // before the Env: ORT decides once, when the first one is created
    env_ptr = new Ort::Env(ORT_LOGGING_LEVEL_ERROR, "cutout");
    RegisterBlockAllocator(*env_ptr);
  });
  return *env_ptr;
}

std::string SettingsKey(const std::string& path, const ModelSettings& settings) {
  std::string key = path + "#" + std::to_string(settings.threads) + (settings.memory_pattern ? "#pattern" : "");
  if (settings.cuda_device >= 0) {
    key += "#cuda:" + std::to_string(settings.cuda_device);
    for (const auto& [k, v] : settings.cuda_options) key += ";" + k + "=" + v;
  }
  return key;
}

std::shared_ptr<SharedModel> AcquireModel(const std::string& path, const ModelSettings& settings) {
  Ort::Env& env = ProcessEnv();
  const int threads = settings.threads;
  const std::string key = SettingsKey(path, settings);
  std::lock_guard<std::mutex> lock(cache_mutex);
  auto& cache = Cache();
  auto it = cache.find(key);
  if (it != cache.end()) {
    if (auto live = it->second.lock()) return live;
  }
  Ort::SessionOptions opts;
  opts.SetGraphOptimizationLevel(GraphOptimizationLevel::ORT_ENABLE_ALL);
  opts.SetExecutionMode(ExecutionMode::ORT_SEQUENTIAL);
  opts.SetIntraOpNumThreads(threads);
  opts.SetInterOpNumThreads(1);
  // Workers already fill the cores; spinning pool threads would steal time from libvips and the
  // other workers between parallel sections.
  opts.AddConfigEntry("session.intra_op.allow_spinning", "0");
  // Tiny activations must not fall into the slow denormal path on some photos.
  opts.AddConfigEntry("session.set_denormal_as_zero", "1");
  // CPU tensors come from the process's block cache (ort_allocator.h), not from an arena of the
  // session's own: kept mapped from run to run while busy (without that every tensor is a fresh
  // allocation, page faults and all: +30 to +100% inference time), handed back when the pool goes idle.
  opts.AddConfigEntry("session.use_env_allocators", "1");
  // Loaded from the path, not from bytes we would read first: ORT would then hold the file twice
  // while it builds the session.
  if (!settings.memory_pattern) opts.DisableMemPattern();
  // Nodes the CUDA provider cannot run fall back to the CPU provider (ORT's default placement).
  if (settings.cuda_device >= 0) AppendCudaProvider(opts, settings.cuda_device, settings.cuda_options);
  auto model = std::make_shared<SharedModel>();
  model->path = path;
  model->settings = settings;
  model->session = std::make_unique<Ort::Session>(env, path.c_str(), opts);
  // Parsing and optimising the graph leaves freed heap behind (the ModelProto, graph copies).
  TrimMemory();
  cache[key] = model;
  return model;
}

size_t LoadedModelCount() {
  std::lock_guard<std::mutex> lock(cache_mutex);
  size_t n = 0;
  for (auto& [k, v] : Cache()) n += v.expired() ? 0 : 1;
  return n;
}

}  // namespace cutout
