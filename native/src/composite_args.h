// SPDX-License-Identifier: MIT
// The JS side of compositing: composite options → CompositeParams (one parser for session.composite
// and compositeMask), and compositeMask itself, which composites a mask the caller passes in.
#pragma once

#include <napi.h>

#include "composite.h"

namespace cutout {

// { refine, matting?, decontaminate, roi?: [x1,y1,x2,y2], threads?: 1..64, refineRadius?, refineEps?,
// tuning? } for a w×h output: refine and decontaminate booleans, matting a boolean or absent (on).
// Anything but an object means the defaults of CompositeParams. Throws coded TypeErrors (ERR_CUTOUT_ARG).
CompositeParams CompositeOptionsArg(const Napi::Value& options, int w, int h);

// CompositeAlpha on checked buffers (rgba w*h*4 bytes, mask mw*mh floats, not overlapping: else an
// ERR_CUTOUT_ARG TypeError), its C++ failures (bad_alloc of the scratch) as ERR_CUTOUT_COMPOSITE, and
// the box as a JS { top, left, width, height }.
Napi::Object RunComposite(Napi::Env env, uint8_t* rgba, int w, int h, const float* mask, int mw, int mh,
                          const CompositeParams& p);

// compositeMask(rgba: Uint8Array, width, height, mask: Float32Array, maskWidth, maskHeight, options) → box
Napi::Value JsCompositeMask(const Napi::CallbackInfo& info);

}  // namespace cutout
