// SPDX-License-Identifier: MIT
// The process-wide Ort::Env and the process-wide cache of loaded models (one Ort::Session per
// model file and thread setting, shared by every worker thread: ORT sessions allow concurrent Run).
#pragma once

#include <onnxruntime_cxx_api.h>

#include <memory>
#include <string>

namespace cutout {

// Initialises the ORT API once and checks the header/library versions agree.
Ort::Env& ProcessEnv();

struct SharedModel {
  std::string path;
  int threads = 0;
  std::unique_ptr<Ort::Session> session;
};

// Returns the cached model for (path, threads) or loads it. Throws Ort::Exception / std::runtime_error.
std::shared_ptr<SharedModel> AcquireModel(const std::string& path, int threads);

// Number of distinct models currently loaded in this process (for tests of sharing).
size_t LoadedModelCount();

}  // namespace cutout
