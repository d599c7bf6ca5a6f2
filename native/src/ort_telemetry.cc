// SPDX-License-Identifier: MIT
#include "ort_telemetry.h"

#include <cstdlib>

namespace cutout {

void DisableOrtTelemetryUnlessSet() {
  const char* value = std::getenv("ORT_DISABLE_TELEMETRY");
  if (value == nullptr || *value == '\0') setenv("ORT_DISABLE_TELEMETRY", "1", 1);
}

}  // namespace cutout
