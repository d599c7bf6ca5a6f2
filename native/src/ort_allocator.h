// SPDX-License-Identifier: MIT
// ONNX Runtime's CPU memory, taken from the process's block cache (scratch.h) instead of an arena
// of ORT's own. Registered once with the process's Ort::Env; every session uses it
// (`session.use_env_allocators`). A tensor freed by one run is a mapped block for the next run or
// for the composite's scratch: no page faults while requests keep coming. The blocks go back to the
// system when the pool goes idle (ReleaseScratch), which ORT's own arena cannot do from outside a
// run (its only shrink is a run option that takes effect after every run: docs/memory.md).
// Pure C++ over ORT's C API, no N-API.
#pragma once

#include <onnxruntime_cxx_api.h>

#include <cstddef>

namespace cutout {

// Registers the allocator with `env` (once per process). Throws Ort::Exception when ORT refuses it.
void RegisterBlockAllocator(Ort::Env& env);

// Bytes ORT holds through the allocator now (live tensors, weights it packed), for tests and metrics.
size_t OrtBytesInUse();

}  // namespace cutout
