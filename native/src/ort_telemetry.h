// SPDX-License-Identifier: MIT
// ONNX Runtime 1.29's own telemetry (1DS) on Linux, off by default (docs/native.md, "ONNX Runtime
// telemetry"). Pure C++, no N-API.
#pragma once

namespace cutout {

// Sets ORT_DISABLE_TELEMETRY=1 unless the environment already gives it a value. Must run before
// the first Ort::Env is created: ORT reads the variable then and latches the decision for the
// process. Without it, creating an Env writes ~/.cache/Microsoft/DeveloperTools/.onnxruntime/
// (a device id and an SQLite event store), /tmp/.ses and an empty /tmp/mat-debug-<pid>.log.
// setenv is not safe against a concurrent getenv on another thread; the server sets the variable
// on its main thread before any worker starts, so this only writes for other embedders.
void DisableOrtTelemetryUnlessSet();

}  // namespace cutout
