// SPDX-License-Identifier: MIT
// Shadows drawn from the alpha matte of a finished RGBA cut-out (remove.bg's shadow_type): `drop`, a
// soft offset copy of the silhouette; `3D`, the silhouette cast forward onto the ground from its
// contact line; `car`, a dark contact shadow under the lowest part with a wider, lighter halo. The
// subject is composited over the shadow in place (straight alpha): opaque subject pixels keep their
// bytes, transparent ones become black with the shadow's alpha. Pure C++, no N-API.
#pragma once

#include <cstdint>

namespace cutout {

enum class ShadowKind { kDrop, kGround, kCar };

struct ShadowParams {
  ShadowKind kind = ShadowKind::kDrop;
  // The darkest shadow alpha in percent, 0..100 (remove.bg's shadow_opacity); 0 draws nothing.
  int opacity = 0;
};

// Alpha at or above this is the subject whose box, contact line and size place the shadow ("opaque"):
// a faint halo of the matte neither moves the contact line down nor makes a shadow of its own.
constexpr uint8_t kShadowSubjectThreshold = 128;

// Draws the shadow under the subject of the w×h RGBA image in place, on the calling thread. Nothing
// changes when opacity is 0 or no pixel reaches kShadowSubjectThreshold. The shadow's own alpha is at
// most opacity × 255 / 100; it is clipped by the canvas.
void DrawShadow(uint8_t* rgba, int w, int h, const ShadowParams& p);

}  // namespace cutout
