// SPDX-License-Identifier: MIT
#include "composite_args.h"

#include <functional>

#include "napi_util.h"

namespace cutout {

namespace {
const char* TypeName(const Napi::Value& v) {
  return v.IsNull() ? "null" : v.IsNumber() ? "a number" : v.IsString() ? "a string" : "another type";
}
}  // namespace

CompositeParams CompositeOptionsArg(const Napi::Value& options, int w, int h) {
  CompositeParams p;
  if (!options.IsObject()) return p;
  Napi::Env env = options.Env();
  Napi::Object o = options.As<Napi::Object>();
  p.refine = o.Get("refine").ToBoolean();
  p.decontaminate = o.Get("decontaminate").ToBoolean();
  // Newer than refine/decontaminate, so strict: absent means on, anything but a boolean is a broken contract.
  Napi::Value matting = o.Get("matting");
  CUTOUT_THROW_TYPE_IF(!matting.IsUndefined() && !matting.IsBoolean(), env, "ERR_CUTOUT_ARG",
                       "Expected a boolean for matting but received ", TypeName(matting));
  if (matting.IsBoolean()) p.matting = matting.As<Napi::Boolean>().Value();
  // Absent means 1 (the caller's thread only); the bytes are the same for any count.
  Napi::Value threads = o.Get("threads");
  if (!threads.IsUndefined()) p.threads = IntArg(threads, "threads", 1, 64);
  // Tuning knobs for benchmarks; the defaults live in RefineParams.
  if (o.Get("refineRadius").IsNumber()) p.refine_params.radius = IntArg(o.Get("refineRadius"), "refineRadius", 1, 64);
  if (o.Get("refineEps").IsNumber()) {
    const float eps = o.Get("refineEps").As<Napi::Number>().FloatValue();
    CUTOUT_THROW_TYPE_IF(!(eps > 0 && eps < 1), env, "ERR_CUTOUT_ARG", "Expected a number in (0, 1) for refineEps");
    p.refine_params.eps = eps;
  }
  Napi::Value roi = o.Get("roi");
  if (roi.IsArray()) {
    Napi::Array a = roi.As<Napi::Array>();
    CUTOUT_THROW_TYPE_IF(a.Length() != 4, env, "ERR_CUTOUT_ARG", "Expected 4 numbers for roi");
    p.roi_x1 = IntArg(a.Get(0u), "roi[0]", 0, w);
    p.roi_y1 = IntArg(a.Get(1u), "roi[1]", 0, h);
    p.roi_x2 = IntArg(a.Get(2u), "roi[2]", 0, w);
    p.roi_y2 = IntArg(a.Get(3u), "roi[3]", 0, h);
  }
  return p;
}

Napi::Object RunComposite(Napi::Env env, uint8_t* rgba, int w, int h, const float* mask, int mw, int mh,
                          const CompositeParams& p) {
  // rgba is written while the mask is read (by several threads): they must not share bytes.
  const uint8_t* r0 = rgba;
  const uint8_t* r1 = r0 + static_cast<size_t>(w) * h * 4;
  const uint8_t* m0 = reinterpret_cast<const uint8_t*>(mask);
  const uint8_t* m1 = m0 + static_cast<size_t>(mw) * mh * sizeof(float);
  const std::less<const uint8_t*> before;
  CUTOUT_THROW_TYPE_IF(before(m0, r1) && before(r0, m1), env, "ERR_CUTOUT_ARG",
                       "Expected rgba and mask in separate memory but they overlap");
  Box box;
  try {
    box = CompositeAlpha(rgba, w, h, mask, mw, mh, p);
  } catch (const std::exception& e) {  // refinement scratch allocations can throw bad_alloc
    throw CodedError(env, "ERR_CUTOUT_COMPOSITE", Concat("Compositing failed: ", e.what()));
  }
  Napi::Object out = Napi::Object::New(env);
  out.Set("top", box.top);
  out.Set("left", box.left);
  out.Set("width", box.width);
  out.Set("height", box.height);
  return out;
}

// compositeMask(rgba, width, height, mask, maskWidth, maskHeight, options): what session.composite
// does, with a mask from elsewhere (a GPU pipeline's other thread). The options are read before the
// buffers, so a getter that detaches one is caught by the checks below.
Napi::Value JsCompositeMask(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const int w = IntArg(info[1], "width", 1, 1 << 16);
  const int h = IntArg(info[2], "height", 1, 1 << 16);
  const int mw = IntArg(info[4], "maskWidth", 1, 1 << 16);
  const int mh = IntArg(info[5], "maskHeight", 1, 1 << 16);
  const CompositeParams p = CompositeOptionsArg(info[6], w, h);
  ByteSpan rgba = BytesOf(info[0], "rgba");
  const size_t expected = static_cast<size_t>(w) * h * 4;
  CUTOUT_THROW_TYPE_IF(rgba.length != expected, env, "ERR_CUTOUT_BAD_LENGTH", "Expected ", expected, " bytes (", w, "x",
                       h, "x4) for rgba but received ", rgba.length);
  CUTOUT_THROW_TYPE_IF(!info[3].IsTypedArray() || info[3].As<Napi::TypedArray>().TypedArrayType() != napi_float32_array,
                       env, "ERR_CUTOUT_ARG", "Expected a Float32Array for mask but received ",
                       info[3].IsUndefined() ? "undefined" : TypeName(info[3]));
  Napi::Float32Array mask = info[3].As<Napi::Float32Array>();
  CUTOUT_THROW_IF(mask.ArrayBuffer().IsDetached(), env, "ERR_CUTOUT_DETACHED", "The buffer for mask is detached");
  const size_t floats = static_cast<size_t>(mw) * mh;
  CUTOUT_THROW_TYPE_IF(mask.ElementLength() != floats, env, "ERR_CUTOUT_BAD_LENGTH", "Expected ", floats,
                       " floats (", mw, "x", mh, ") for mask but received ", mask.ElementLength());
  return RunComposite(env, rgba.data, w, h, mask.Data(), mw, mh, p);
}

}  // namespace cutout
